"""Tiered storage (KIP-405): one partition's log in two tiers, local disk and a remote store.

With `remote.log.storage.system.enable=true` on the broker and `remote.storage.enable=true`
on the topic, the leader's remote log manager wakes every
remote.log.manager.task.interval.ms (30 s) and, per partition:

1. copies every closed segment below the last stable offset that is not yet remote to
   the remote store, oldest first, and records it in the remote log metadata (its base
   and end offsets, largest timestamp, size, state COPY_SEGMENT_FINISHED); the highest
   copied offset is the log's highestOffsetInRemoteStorage;
2. expires remote segments by the topic's total retention, `retention.ms` and
   `retention.bytes` (remote bytes plus the local bytes not yet remote), moving the
   log start offset past them.

The local log then keeps only `local.retention.ms` / `local.retention.bytes` (-2: the
total retention), and only ever deletes segments already copied (Kafka's
UnifiedLog.isSegmentEligibleForDeletion): so while the remote store is down, copies
fail, the copy lag grows and the local log keeps everything. Two log start offsets
follow: the log start offset (the whole log, the earliest a consumer can read) and the
local log start offset (the first offset on the broker's disk). A consumer's fetch
between them is served from the remote store (ReplicaManager.handleOffsetOutOfRangeError);
when the store cannot be read it fails with UNKNOWN_SERVER_ERROR, since Kafka's
RemoteStorageException is no ApiException.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import errors
from .cleaner import delete_old_segments
from .config import TopicConfig
from .log import PartitionLog, Segment, take_batches
from .records import RecordBatch

if TYPE_CHECKING:
    from .replica import Replica

Config = Mapping[str, object] | TopicConfig  # a topic's effective config

COPY_SEGMENT_FINISHED = "COPY_SEGMENT_FINISHED"
TASK_INTERVAL_MS = 30_000  # remote.log.manager.task.interval.ms


class RemoteStorageError(Exception):
    """The remote store did not answer (Kafka's RemoteStorageException)."""


@dataclass
class RemoteSegment:
    """One entry of the remote log metadata (RemoteLogSegmentMetadata)."""

    base_offset: int
    end_offset: int  # the segment's last offset, inclusive
    max_timestamp: int
    size_bytes: int
    copied_ms: int
    state: str = COPY_SEGMENT_FINISHED
    batches: list[RecordBatch] = field(default_factory=list, repr=False)


class RemoteStore:
    """The remote storage manager's store (an object store, HDFS, ...), shared by brokers.

    `available` is the fault switch: while False every copy and read raises."""

    def __init__(self) -> None:
        self.available = True
        self.segments: dict[tuple[str, int], list[RemoteSegment]] = {}

    def copy(self, tp: tuple[str, int], segment: Segment, end_offset: int,
             now_ms: int) -> RemoteSegment:
        if not self.available:
            raise RemoteStorageError("remote storage unavailable")
        remote = RemoteSegment(segment.base_offset, end_offset, segment.max_timestamp,
                               segment.size_bytes, now_ms, batches=list(segment.batches))
        self.segments.setdefault(tp, []).append(remote)
        return remote

    def read(self, remote: RemoteSegment) -> list[RecordBatch]:
        if not self.available:
            raise RemoteStorageError("remote storage unavailable")
        return remote.batches

    def delete(self, tp: tuple[str, int], remote: RemoteSegment) -> None:
        if not self.available:
            raise RemoteStorageError("remote storage unavailable")
        self.segments[tp].remove(remote)


def tiered_enabled(broker_config: Mapping[str, object], topic_config: Config) -> bool:
    """Both switches on: the broker's system switch and the topic's."""
    return (str(broker_config.get("remote.log.storage.system.enable", "false")).lower() == "true"
            and str(topic_config["remote.storage.enable"]).lower() == "true")


def effective_local(config: Config, key: str) -> int:
    """local.retention.ms/bytes, where -2 means the total retention.* value."""
    value = int(config[f"local.{key}"])  # type: ignore[call-overload]
    return int(config[key]) if value == -2 else value  # type: ignore[call-overload]


def validate_topic(config: Config, system_enabled: bool) -> None:
    """Kafka's LogConfig checks of a topic with remote.storage.enable=true, in its order,
    each INVALID_CONFIG with Kafka's message: the broker's system switch must be on, the
    topic not compacted, and local retention within the total unless that is unlimited."""
    if str(config["remote.storage.enable"]).lower() != "true":
        return
    if not system_enabled:
        raise errors.KafkaCoreError(
            errors.INVALID_CONFIG, "Tiered Storage functionality is disabled in the broker. "
            "Topic cannot be configured with remote log storage.")
    if "compact" in str(config["cleanup.policy"]).lower():
        raise errors.KafkaCoreError(
            errors.INVALID_CONFIG, "Remote log storage is unsupported for the compacted topics")
    for key in ("retention.bytes", "retention.ms"):
        total, local = int(config[key]), effective_local(config, key)  # type: ignore[call-overload]
        if total != -1 and (local == -1 or local > total):
            raise errors.KafkaCoreError(
                errors.INVALID_CONFIG,
                f"Value must not be -1 as {key} value is set as {total}." if local == -1
                else f"Value must not be more than {key} property value: {total}")


@dataclass
class TieredRead:
    """A read of one partition: batches, or an error code, with the tier it came from."""

    error_code: int
    tier: str  # "local", "remote" or ""
    batches: list[RecordBatch]


@dataclass
class PassResult:
    """What one remote log manager pass did."""

    copied: list[int] = field(default_factory=list)  # base offsets copied
    copy_error: str | None = None
    remote_deleted: list[int] = field(default_factory=list)
    local_deleted: list[int] = field(default_factory=list)


class TieredPartition:
    """One partition's log under tiered storage: the local PartitionLog, its remote log
    metadata, and the remote log manager's copy and expiration tasks."""

    def __init__(self, log: PartitionLog, store: RemoteStore, tp: tuple[str, int],
                 config: Config) -> None:
        self.log = log
        self.store = store
        self.tp = tp
        self.config = config
        self.metadata: list[RemoteSegment] = []  # remote log metadata, oldest first
        self.highest_offset_in_remote = -1
        self.log_start_offset = log.log_start_offset
        self.failed_copies = 0

    @property
    def local_log_start_offset(self) -> int:
        return self.log.log_start_offset

    def copy_lag(self) -> tuple[int, int]:
        """(segments, bytes) closed locally but not yet remote: what the copy lags by."""
        waiting = [s for s in self.log.segments[:-1]
                   if s.base_offset > self.highest_offset_in_remote]
        return len(waiting), sum(s.size_bytes for s in waiting)

    # -- the remote log manager's tasks -----------------------------------------------
    def copy_segments(self, now_ms: int, last_stable_offset: int, out: PassResult) -> None:
        """RLMCopyTask: closed segments wholly below the LSO, oldest first; a failure
        stops the pass (the next pass retries from the same segment)."""
        segments = self.log.segments
        for seg, nxt in zip(segments, segments[1:]):
            end = nxt.base_offset - 1
            if end <= self.highest_offset_in_remote or not seg.batches:
                continue
            if nxt.base_offset > last_stable_offset:
                break
            try:
                remote = self.store.copy(self.tp, seg, end, now_ms)
            except RemoteStorageError as exc:
                self.failed_copies += 1
                out.copy_error = str(exc)
                return
            self.metadata.append(remote)
            self.highest_offset_in_remote = end
            out.copied.append(seg.base_offset)

    def expire_remote(self, now_ms: int, out: PassResult) -> None:
        """RLMExpirationTask: total retention over the remote segments, oldest first."""
        retention_ms = int(self.config["retention.ms"])  # type: ignore[call-overload]
        retention_bytes = int(self.config["retention.bytes"])  # type: ignore[call-overload]
        local_only = sum(s.size_bytes for s in self.log.segments
                         if s.base_offset > self.highest_offset_in_remote)
        excess = sum(r.size_bytes for r in self.metadata) + local_only - retention_bytes
        while self.metadata:
            oldest = self.metadata[0]
            by_time = retention_ms >= 0 and now_ms - oldest.max_timestamp > retention_ms
            by_size = retention_bytes >= 0 and excess - oldest.size_bytes >= 0
            if not (by_time or by_size):
                break
            try:
                self.store.delete(self.tp, oldest)
            except RemoteStorageError as exc:
                out.copy_error = out.copy_error or str(exc)
                return
            excess -= oldest.size_bytes
            self.metadata.pop(0)
            self.log_start_offset = max(self.log_start_offset, oldest.end_offset + 1)
            out.remote_deleted.append(oldest.base_offset)

    def delete_local(self, now_ms: int, high_watermark: int, out: PassResult) -> None:
        """The log manager's retention with local.retention.*, over copied segments only."""
        local = {"cleanup.policy": self.config["cleanup.policy"],
                 "retention.ms": effective_local(self.config, "retention.ms"),
                 "retention.bytes": effective_local(self.config, "retention.bytes")}
        # A segment may go once its last offset is remote: cap the bound retention
        # respects (offsets below it may be deleted) at the highest remote offset + 1.
        bound = min(high_watermark, self.highest_offset_in_remote + 1)
        for result in delete_old_segments(self.log, local, now_ms, bound):
            out.local_deleted.extend(result.deleted)
        if self.log.log_start_offset < self.log_start_offset:  # total retention passed it
            self.log.maybe_increment_log_start_offset(self.log_start_offset)
            for result in delete_old_segments(self.log, local, now_ms, bound):
                out.local_deleted.extend(result.deleted)
        self._roll_expired_active(now_ms, high_watermark, local)

    def _roll_expired_active(self, now_ms: int, high_watermark: int,
                             local: Mapping[str, object]) -> None:
        """Kafka's deletableSegments under tiered storage: when retention's walk reaches a
        non-empty active segment that breaches local retention too, the log rolls it, so
        the next pass copies it and then deletes it. An idle partition so ends with every
        record remote and an empty local log (earliest local = log end offset)."""
        log = self.log
        active = log.segments[-1]
        if (len(log.segments) != 1 or not active.batches
                or high_watermark < log.log_end_offset
                or "delete" not in str(local["cleanup.policy"])):
            return
        ms, limit = int(local["retention.ms"]), int(local["retention.bytes"])  # type: ignore[call-overload]
        size = log.size_bytes
        if ((ms >= 0 and now_ms - active.max_timestamp > ms)
                or (0 <= limit <= size and size - limit >= active.size_bytes)):
            log.roll(now_ms)

    def run(self, now_ms: int, high_watermark: int, last_stable_offset: int | None = None
            ) -> PassResult:
        """One pass: copy, expire remote segments, then local retention."""
        out = PassResult()
        lso = high_watermark if last_stable_offset is None else last_stable_offset
        self.copy_segments(now_ms, min(lso, high_watermark), out)
        self.expire_remote(now_ms, out)
        self.delete_local(now_ms, high_watermark, out)
        return out

    # -- reading ----------------------------------------------------------------------
    def read(self, offset: int, max_offset: int, max_bytes: int = 1 << 20) -> TieredRead:
        """A consumer's fetch at `offset`: local at or above the local log start, remote
        between the log start offsets, OFFSET_OUT_OF_RANGE outside the log."""
        if offset < self.log_start_offset or offset > self.log.log_end_offset:
            return TieredRead(errors.OFFSET_OUT_OF_RANGE, "", [])
        if offset >= self.local_log_start_offset:
            return TieredRead(errors.NONE, "local", self.log.read(offset, max_offset, max_bytes))
        remote = next((r for r in self.metadata if r.base_offset <= offset <= r.end_offset), None)
        if remote is None:  # between segments only if metadata and log disagree
            return TieredRead(errors.OFFSET_OUT_OF_RANGE, "", [])
        try:
            batches = self.store.read(remote)
        except RemoteStorageError:
            return TieredRead(errors.UNKNOWN_SERVER_ERROR, "remote", [])
        # As a local read: whole batches from the one holding `offset`, the first always.
        wanted = (b for b in batches if b.last_offset >= offset)
        return TieredRead(errors.NONE, "remote", take_batches(wanted, max_offset, max_bytes))

    def list_offset(self, timestamp: int) -> int:
        """ListOffsets' special timestamps: -2 earliest (the log start offset), -4 earliest
        local, -5 latest tiered (the highest remote offset, -1 if none), -1 latest."""
        return {-2: self.log_start_offset, -4: self.local_log_start_offset,
                -5: self.highest_offset_in_remote, -1: self.log.log_end_offset}[timestamp]

    def tiers(self) -> dict[str, object]:
        """The partition's two tiers as plain data, for pictures and tables."""
        return {
            "log_start_offset": self.log_start_offset,
            "local_log_start_offset": self.local_log_start_offset,
            "highest_offset_in_remote": self.highest_offset_in_remote,
            "log_end_offset": self.log.log_end_offset,
            "remote": [(r.base_offset, r.end_offset, r.size_bytes) for r in self.metadata],
            "local": [(s.base_offset, s.next_offset - 1, s.size_bytes)
                      for s in self.log.segments if s.batches],
        }


class RemoteLogManager:
    """The broker's remote log manager on the simulated clock: every
    remote.log.manager.task.interval.ms, one pass over the tiered partitions it leads.

    The passes sit on that period's ticks from the clock's start, but only run while some
    tiered partition exists (new data arms them, as core.log_manager's tasks): a served
    cluster whose clock jumps to the wall clock's time then has no idle ticks to replay.

    `leaders` gives the leader replicas (Replica objects: log, config, high watermark,
    last stable offset); `history` keeps (time, (topic, partition), PassResult), and a pass
    that did something writes a `log.tiered` event to the journal, if one is given."""

    def __init__(self, clock: Any, store: RemoteStore, broker_config: Mapping[str, object],
                 leaders: Callable[[], Iterable[Replica]], journal: Any = None) -> None:
        self.clock = clock
        self.journal = journal
        self.store = store
        self.broker_config = broker_config
        self.leaders = leaders
        self.interval_ms = int(broker_config.get(  # type: ignore[call-overload]
            "remote.log.manager.task.interval.ms", TASK_INTERVAL_MS))
        self.partitions: dict[tuple[str, int], TieredPartition] = {}
        self.history: list[tuple[int, tuple[str, int], PassResult]] = []
        self.origin_ms = clock.now_ms
        self._timer: Any = None
        self.arm()  # one pass finds any tiered partition already there (a reopened cluster)

    def arm(self) -> None:
        """Schedule a pass on the period's next tick after now, unless one is due."""
        if self._timer is not None and not self._timer.cancelled:
            return
        ticks = (self.clock.now_ms - self.origin_ms) // self.interval_ms + 1
        self._timer = self.clock.call_at(self.origin_ms + ticks * self.interval_ms, self._tick)

    def on_log_changed(self, replica: Replica) -> None:
        """New data in a tiered partition: its leader's passes must run."""
        if tiered_enabled(self.broker_config, replica.config):
            self.arm()

    def _tick(self) -> None:
        self._timer = None
        if self.run_pass():
            self.arm()

    def partition(self, topic: str, partition: int) -> TieredPartition | None:
        return self.partitions.get((topic, partition))

    def run_pass(self) -> bool:
        """One pass over the tiered partitions this broker leads; False if there are none."""
        now = self.clock.now_ms
        seen = False
        for replica in self.leaders():
            if not tiered_enabled(self.broker_config, replica.config):
                continue
            seen = True
            tp = (replica.topic, replica.partition)
            part = self.partitions.get(tp)
            if part is None or part.log is not replica.log:  # new, or a new leader
                old = part
                part = self.partitions[tp] = TieredPartition(replica.log, self.store, tp,
                                                             replica.config)
                if old is not None:  # the remote log metadata outlives a leader change
                    part.metadata = old.metadata
                    part.highest_offset_in_remote = old.highest_offset_in_remote
                    part.log_start_offset = old.log_start_offset
                replica.tier = part
            result = part.run(now, replica.high_watermark, replica.last_stable_offset)
            self.history.append((now, tp, result))
            if self.journal is not None and (result.copied or result.copy_error or
                                             result.remote_deleted or result.local_deleted):
                self.journal.record(now, "log.tiered", topic=tp[0], partition=tp[1],
                                    broker=replica.broker_id, copied=result.copied,
                                    copy_error=result.copy_error,
                                    remote_deleted=result.remote_deleted,
                                    local_deleted=result.local_deleted,
                                    log_start_offset=part.log_start_offset,
                                    local_log_start_offset=part.local_log_start_offset)
        return seen
