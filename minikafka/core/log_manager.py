"""Kafka's background log tasks on the simulated clock.

The retention check runs every log.retention.check.interval.ms (5 minutes) over the
logs that are not compacted; the log cleaner wakes every log.cleaner.backoff.ms
(15 seconds) for compacted ones, cleans those past min.cleanable.dirty.ratio and then
applies their retention. Every replica on every running broker does this for itself,
leaders and followers alike, as every Kafka broker runs its own LogManager.

A task is only scheduled while some log may have work: appends arm it, and a pass
re-arms it only for a time it can name (a segment expiring, a compaction lag ending).
So an idle cluster can advance a week in a handful of events.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .cleaner import (
    CleanResult,
    RetentionResult,
    compact,
    delete_old_segments,
    next_compaction_ms,
    next_retention_ms,
    policies,
)
from .replica import Replica
from .tiered import tiered_enabled

RETENTION, CLEANER = "retention", "cleaner"


def apply_retention(replica: Replica, now_ms: int) -> list[RetentionResult]:
    """Retention on one replica, with the producer state following the log start offset."""
    results = delete_old_segments(replica.log, replica.config, now_ms, replica.high_watermark)
    if results:
        start = replica.log_start_offset
        producers = replica.producers
        # Kafka points an open transaction that lost its start at the log start offset.
        producers.ongoing = {p: max(o, start) for p, o in producers.ongoing.items()}
        producers.aborted = [a for a in producers.aborted if a.last_offset >= start]
    return results


def clean_replica(replica: Replica, now_ms: int, force: bool = False) -> CleanResult | None:
    """Compaction of one replica's log, bounded by its last stable offset."""
    return compact(replica.log, replica.config, now_ms, replica.last_stable_offset,
                   replica.producers, force)


class LogManager:
    def __init__(self, clock: Any, journal: Any, broker_config: dict,
                 replicas: Callable[[], Iterable[tuple[int, Replica]]]) -> None:
        self.clock = clock
        self.journal = journal
        self.broker_config = broker_config
        self.replicas = replicas  # (broker id, replica) of every running broker
        self.origin_ms = clock.now_ms
        self._timers: dict[str, Any] = {RETENTION: None, CLEANER: None}
        self.intervals = {
            RETENTION: max(1, int(broker_config["log.retention.check.interval.ms"])),
            CLEANER: max(1, int(broker_config["log.cleaner.backoff.ms"])),
        }

    def arm(self, task: str, not_before: int) -> None:
        """Schedule `task` on its period's next tick at or after not_before."""
        interval = self.intervals[task]
        ticks = -(-(not_before - self.origin_ms) // interval)
        when = self.origin_ms + ticks * interval
        timer = self._timers[task]
        if timer is not None and not timer.cancelled and timer.when <= when:
            return
        if timer is not None:
            timer.cancel()
        self._timers[task] = self.clock.call_at(when, self._run, task)

    def on_log_changed(self, replica: Replica) -> None:
        """New data (or a config change) may give the task for this log work to do."""
        task = CLEANER if "compact" in replica.config["cleanup.policy"] else RETENTION
        timer = self._timers[task]
        now = self.clock.now_ms
        # Called on every high watermark move: usually a pass is already due within a
        # period (timers sit on period ticks, so that is the next tick), and that is all.
        if timer is not None and timer.when - now < self.intervals[task] and not timer.cancelled:
            return
        self.arm(task, now)

    def arm_all(self) -> None:
        self.arm(RETENTION, self.clock.now_ms)
        self.arm(CLEANER, self.clock.now_ms)

    def scheduled(self) -> dict[str, int | None]:
        """When each task runs next (None: idle)."""
        return {task: (t.when if t is not None and not t.cancelled else None)
                for task, t in self._timers.items()}

    def _run(self, task: str) -> None:
        self._timers[task] = None
        now = self.clock.now_ms
        due = self.run_pass(task)
        if due is not None:
            self.arm(task, max(due, now + 1))

    def run_pass(self, task: str, force: bool = False) -> int | None:
        """One pass of `task` over every replica; returns when it next has work, if known."""
        now = self.clock.now_ms
        due: list[int] = []
        for broker_id, replica in self.replicas():
            compacted = "compact" in policies(replica.config)
            if compacted != (task == CLEANER):
                continue
            if tiered_enabled(self.broker_config, replica.config):
                continue  # its retention is the remote log manager's (core.tiered)
            tp = {"topic": replica.topic, "partition": replica.partition, "broker": broker_id}
            if compacted:
                result = clean_replica(replica, now, force)
                if result is not None:
                    self.journal.record(now, "log.cleaned", **tp,
                                        first_dirty_offset=result.first_dirty_offset,
                                        end_offset=result.end_offset,
                                        records=[result.records_before, result.records_after],
                                        segments=[result.segments_before, result.segments_after])
                nxt = next_compaction_ms(replica.log, replica.config, now,
                                         replica.last_stable_offset)
                if nxt is not None:
                    due.append(nxt)
            deleted = apply_retention(replica, now)
            for r in deleted:
                self.journal.record(now, "log.retention", **tp, reason=r.reason,
                                    segments=list(r.deleted), log_start_offset=r.log_start_offset)
            nxt = next_retention_ms(replica.log, replica.config, now)
            if deleted:
                nxt = now  # followers learn the new log start offset and must follow
            if nxt is not None:
                due.append(nxt)
        return min(due) if due else None

    def run_now(self, force: bool = False) -> None:
        """Both tasks at once (the cleaner first, as a forced cleaning would be), then
        their usual schedule."""
        now = self.clock.now_ms
        for task in (CLEANER, RETENTION):
            due = self.run_pass(task, force)
            if due is not None:
                self.arm(task, max(due, now + 1))
