"""One share-partition: a topic partition as one share group consumes it (KIP-932).

Every member of a share group may fetch from the same partition; the share-partition
decides which records each fetch gets. Its window runs from the share-partition start
offset (SPSO) to the end offset (SPEO, the last offset ever handed out); every offset
in it is in flight, in one of Kafka's four record states::

    AVAILABLE --acquire--> ACQUIRED --ACCEPT--> ACKNOWLEDGED
        ^                     |  |---REJECT--> ARCHIVED
        +--RELEASE / lock ----+  +---RELEASE / lock timeout, delivery count at the limit--> ARCHIVED
           timeout

A fetch acquires records for one member: first those AVAILABLE again (released or timed
out), then new ones past the SPEO, while fewer than `group.share.partition.max.record.locks`
are in flight. Each acquisition counts a delivery and takes a lock that times out after
`group.share.record.lock.duration.ms` on the simulated clock. A record whose delivery
count has reached `group.share.delivery.count.limit` is archived instead of made
available again (the poison-record rule). Once the records at the SPSO are ACKNOWLEDGED
or ARCHIVED, the SPSO moves past them and they leave the window.

A worked example (limit 2, lock 30 s): offsets 0-2 acquired by member A (delivery 1);
A accepts 0, releases 1 and lets its lock on 2 run out. Now SPSO = 1; 1 and 2 are
AVAILABLE; member B's fetch acquires them (delivery 2); B rejects 1 and releases 2,
which is at the limit: both ARCHIVED, SPSO = 3, nothing in flight.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING

from .. import errors

if TYPE_CHECKING:
    from ..clock import SimClock, Timer
    from ..records import RecordBatch
    from ..replica import Replica



class RecordState(IntEnum):
    """Kafka's record states, with the ids its share-group state records store."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4


class AcknowledgeType(IntEnum):
    """The acknowledge types of ShareFetch/ShareAcknowledge (0 marks a gap: an offset
    with no record, such as a transaction marker or a compacted-away record)."""

    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4


@dataclass(frozen=True)
class ShareSettings:
    """What a share-partition is configured with (broker defaults, or the group's own)."""

    record_lock_duration_ms: int = 30_000
    delivery_count_limit: int = 5
    max_record_locks: int = 2_000


@dataclass(slots=True)
class InFlightRecord:
    state: RecordState
    delivery_count: int = 0
    member_id: str = ""
    acquisition: int = 0  # which acquisition (lock) holds it


@dataclass(frozen=True)
class AcquiredRange:
    """Consecutive offsets acquired together with one delivery count (AcquiredRecords)."""

    first_offset: int
    last_offset: int
    delivery_count: int


@dataclass
class Acquisition:
    """What a fetch acquired: the ranges, and the log batches holding them (a batch may
    hold records not acquired; the reader keeps only the acquired offsets)."""

    ranges: list[AcquiredRange] = field(default_factory=list)
    batches: list[RecordBatch] = field(default_factory=list)

    @property
    def count(self) -> int:
        return sum(r.last_offset - r.first_offset + 1 for r in self.ranges)


@dataclass(frozen=True)
class AcknowledgementBatch:
    """first..last (inclusive) and one type for all, or one type per offset."""

    first_offset: int
    last_offset: int
    types: tuple[int, ...]

    def each(self) -> Iterator[tuple[int, int]]:
        for i, offset in enumerate(range(self.first_offset, self.last_offset + 1)):
            yield offset, self.types[0] if len(self.types) == 1 else self.types[i]

    def valid(self) -> bool:
        n = self.last_offset - self.first_offset + 1
        return n >= 1 and len(self.types) in (1, n) and all(
            t in AcknowledgeType._value2member_map_ for t in self.types)


class SharePartition:
    """The in-flight records of one (group, topic, partition) and the rules above.

    `on_change(self)` runs after every state change that must survive a restart (the
    share coordinator writes it to its state store, as Kafka's writes __share_group_state).
    """

    def __init__(self, group_id: str, topic: str, partition: int, start_offset: int,
                 clock: SimClock, settings: Callable[[], ShareSettings],
                 on_change: Callable[[SharePartition], None] | None = None,
                 journal: Callable[..., None] | None = None) -> None:
        self.group_id = group_id
        self.topic = topic
        self.partition = partition
        self.start_offset = start_offset  # SPSO
        self.next_offset = start_offset  # the first offset never yet acquired
        self.records: dict[int, InFlightRecord] = {}  # every offset in [SPSO, next_offset)
        self.state_epoch = 0
        self.clock = clock
        self.settings = settings
        self.on_change = on_change
        # journal(kind, **fields): share.acquired, share.acknowledged, share.lock.expired,
        # share.released (what a lesson's timeline shows).
        self.journal = journal
        self._acquisitions = 0
        self._locks: dict[int, Timer] = {}  # acquisition -> its lock timer
        self.written: dict = self.state()  # as last written to the state store

    # -- what a picture or a describe shows ---------------------------------------------
    @property
    def end_offset(self) -> int:
        """Kafka's share-partition end offset: the last offset in flight, or the SPSO
        when nothing is."""
        return self.next_offset - 1 if self.records else self.start_offset

    def in_flight(self) -> list[tuple[int, InFlightRecord]]:
        return sorted(self.records.items())

    def rows(self) -> list[dict]:
        """The window as a table (one row per in-flight offset), for a lesson to show."""
        return [{"offset": o, "state": r.state.name, "delivery_count": r.delivery_count,
                 "member": r.member_id or None} for o, r in self.in_flight()]

    def state_of(self, offset: int) -> RecordState | None:
        rec = self.records.get(offset)
        if rec is not None:
            return rec.state
        return RecordState.ACKNOWLEDGED if offset < self.start_offset else None

    def delivery_complete_count(self) -> int:
        """In-flight records already done with (acknowledged or archived)."""
        return sum(1 for r in self.records.values()
                   if r.state in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED))

    # -- acquire --------------------------------------------------------------------------
    def acquire(self, member_id: str, replica: Replica, max_records: int,
                max_bytes: int = 1 << 20, readable_end: int | None = None) -> Acquisition:
        """Acquire up to `max_records` for `member_id` from the leader's log, up to its
        high watermark (or `readable_end`)."""
        out = Acquisition()
        log = replica.log
        if self.start_offset < log.log_start_offset:  # retention or DeleteRecords
            self._move_start(log.log_start_offset)
        end = replica.high_watermark if readable_end is None else readable_end
        first = self._first_available()
        if first is None:
            if not self._may_grow():
                return out
            first = self.next_offset
        if first >= end or max_records <= 0:
            return out
        settings = self.settings()
        acquisition = self._acquisitions + 1
        taken: list[tuple[int, int]] = []
        for batch in log.read(first, end, max_bytes):
            used = False
            present = None if batch.is_control else {batch.base_offset + r[0] for r in batch.records}
            for offset in range(max(batch.base_offset, first), batch.last_offset + 1):
                if len(taken) >= max_records:
                    break
                if offset >= self.next_offset:
                    if not self._may_grow(settings):
                        break
                    self.next_offset = offset + 1
                    if present is None or offset not in present:  # a marker or a gap
                        self.records[offset] = InFlightRecord(RecordState.ARCHIVED)
                        continue
                    rec = self.records[offset] = InFlightRecord(RecordState.AVAILABLE)
                else:
                    rec = self.records.get(offset)
                    if rec is None or rec.state != RecordState.AVAILABLE:
                        continue
                rec.state = RecordState.ACQUIRED
                rec.delivery_count += 1
                rec.member_id = member_id
                rec.acquisition = acquisition
                taken.append((offset, rec.delivery_count))
                used = True
            if used:
                out.batches.append(batch)
            if len(taken) >= max_records:
                break
        if taken:
            self._acquisitions = acquisition
            self._locks[acquisition] = self.clock.call_later(
                settings.record_lock_duration_ms, self._lock_expired, acquisition)
            out.ranges = list(_ranges(taken))
            self._note("share.acquired", member=member_id,
                       ranges=[[r.first_offset, r.last_offset, r.delivery_count]
                               for r in out.ranges])
        self._advance()
        return out

    def has_available(self, replica: Replica) -> bool:
        """Would a fetch acquire something now? (What a waiting fetch watches for.)"""
        if any(r.state == RecordState.AVAILABLE for r in self.records.values()):
            return True
        return self.next_offset < replica.high_watermark and self._may_grow()

    def _may_grow(self, settings: ShareSettings | None = None) -> bool:
        limit = (settings or self.settings()).max_record_locks
        return self.next_offset - self.start_offset < limit

    def _first_available(self) -> int | None:
        for offset in sorted(self.records):
            if self.records[offset].state == RecordState.AVAILABLE:
                return offset
        return None

    # -- acknowledge ------------------------------------------------------------------------
    def acknowledge(self, member_id: str, batches: Iterable[AcknowledgementBatch]) -> int:
        """Apply a member's acknowledgements; every offset must be ACQUIRED by it, else
        errors.INVALID_RECORD_STATE and nothing changes (INVALID_REQUEST for a malformed batch)."""
        batches = list(batches)
        for batch in batches:
            if not batch.valid():
                return errors.INVALID_REQUEST
            for offset, _ in batch.each():
                rec = self.records.get(offset)
                if rec is None or rec.state != RecordState.ACQUIRED or rec.member_id != member_id:
                    return errors.INVALID_RECORD_STATE
        limit = self.settings().delivery_count_limit
        renewed: list[int] = []
        for batch in batches:
            for offset, kind in batch.each():
                rec = self.records[offset]
                if kind == AcknowledgeType.RENEW:
                    renewed.append(offset)
                    continue
                self._finish(rec, kind, limit)
        if renewed:
            self._renew(renewed)
        self._note("share.acknowledged", member=member_id,
                   batches=[[b.first_offset, b.last_offset,
                             [AcknowledgeType(t).name for t in b.types]] for b in batches])
        self._write_then_advance()
        return errors.NONE

    def _finish(self, rec: InFlightRecord, kind: int, limit: int) -> None:
        if kind == AcknowledgeType.ACCEPT:
            rec.state = RecordState.ACKNOWLEDGED
        elif kind == AcknowledgeType.RELEASE:
            rec.state = RecordState.ARCHIVED if rec.delivery_count >= limit \
                else RecordState.AVAILABLE
        else:  # REJECT, GAP
            rec.state = RecordState.ARCHIVED
        rec.member_id = ""
        rec.acquisition = 0

    def _renew(self, offsets: list[int]) -> None:
        """RENEW (KIP-1222): the records stay acquired under a fresh lock."""
        acquisition = self._acquisitions = self._acquisitions + 1
        for offset in offsets:
            self.records[offset].acquisition = acquisition
        self._locks[acquisition] = self.clock.call_later(
            self.settings().record_lock_duration_ms, self._lock_expired, acquisition)

    def release_member(self, member_id: str) -> int:
        """Release every record `member_id` holds (its share session closed or it left
        the group); returns how many."""
        limit = self.settings().delivery_count_limit
        n = 0
        for rec in self.records.values():
            if rec.state == RecordState.ACQUIRED and rec.member_id == member_id:
                self._finish(rec, AcknowledgeType.RELEASE, limit)
                n += 1
        if n:
            self._note("share.released", member=member_id, records=n)
            self._write_then_advance()
        return n

    def _lock_expired(self, acquisition: int) -> None:
        self._locks.pop(acquisition, None)
        limit = self.settings().delivery_count_limit
        n = 0
        expired: list[list] = []
        for offset, rec in sorted(self.records.items()):
            if rec.state == RecordState.ACQUIRED and rec.acquisition == acquisition:
                expired.append([offset, rec.member_id, rec.delivery_count])
                self._finish(rec, AcknowledgeType.RELEASE, limit)
                n += 1
        if n:
            self._note("share.lock.expired", records=expired)
            self._write_then_advance()

    # -- the window -----------------------------------------------------------------------
    def _advance(self) -> None:
        """Move the SPSO past records that are done with."""
        start = self.start_offset
        records = self.records
        while start < self.next_offset:
            rec = records.get(start)
            if rec is not None and rec.state not in (RecordState.ACKNOWLEDGED,
                                                     RecordState.ARCHIVED):
                break
            records.pop(start, None)
            start += 1
        self.start_offset = start

    def _move_start(self, offset: int) -> None:
        """The log no longer has records below `offset`: they leave the window."""
        for o in [o for o in self.records if o < offset]:
            del self.records[o]
        self.start_offset = offset
        self.next_offset = max(self.next_offset, offset)
        self._changed()

    def reset_to(self, offset: int) -> None:
        """AlterShareGroupOffsets: start again at `offset` with nothing in flight."""
        self.records.clear()
        self.start_offset = self.next_offset = offset
        self.state_epoch += 1
        self._changed()

    def _note(self, kind: str, **fields) -> None:
        if self.journal is not None:
            self.journal(kind, **fields)

    def _write_then_advance(self) -> None:
        """Kafka writes the new record states to __share_group_state with the start offset
        as it was, and moves the SPSO once the write is done: what DescribeShareGroupOffsets
        reads (`written`) is one step behind. After the last in-flight record is accepted,
        the written start offset is that record's, with the record ACKNOWLEDGED (lag 0)."""
        self.written = self.state()
        self._advance()
        if self.on_change is not None:
            self.on_change(self)

    def _changed(self) -> None:
        self.written = self.state()
        if self.on_change is not None:
            self.on_change(self)

    def written_start_and_done(self) -> tuple[int, int]:
        """(start offset, records done with at or past it) of the last state written."""
        state = self.written
        start = state["start_offset"]
        done = sum(last - max(first, start) + 1 for first, last, st, _ in state["batches"]
                   if last >= start and st in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED))
        return start, done

    # -- persistence (what __share_group_state keeps) ---------------------------------------
    def state(self) -> dict:
        """The durable state: SPSO, state epoch and the in-flight records' states and
        delivery counts. As in Kafka, an acquisition is not written: an acquired record is
        stored AVAILABLE with the delivery count it had before (its lock does not survive)."""
        batches: list[list[int]] = []
        for offset, rec in sorted(self.records.items()):
            state, count = rec.state, rec.delivery_count
            if state == RecordState.ACQUIRED:
                state, count = RecordState.AVAILABLE, count - 1
            if batches and batches[-1][1] == offset - 1 and batches[-1][2:] == [int(state), count]:
                batches[-1][1] = offset
            else:
                batches.append([offset, offset, int(state), count])
        return {"start_offset": self.start_offset, "state_epoch": self.state_epoch,
                "batches": batches}

    def reload(self) -> None:
        """A new leader loads the share-partition from the state store (its leader moved):
        records acquired on the old leader are available again, with the delivery counts
        last written."""
        for timer in self._locks.values():
            timer.cancel()
        self._locks.clear()
        self.restore(self.state())

    def restore(self, state: dict) -> None:
        self.start_offset = int(state["start_offset"])
        self.state_epoch = int(state.get("state_epoch", 0))
        self.records = {}
        for first, last, st, count in state.get("batches", []):
            for offset in range(first, last + 1):
                if offset >= self.start_offset:
                    self.records[offset] = InFlightRecord(RecordState(st), count)
        self.next_offset = max([self.start_offset, *(o + 1 for o in self.records)])
        self.written = dict(state)
        self._advance()


def _ranges(taken: list[tuple[int, int]]) -> Iterator[AcquiredRange]:
    """Runs of consecutive offsets with the same delivery count."""
    first = last = count = None
    for offset, n in taken:
        if first is not None and offset == last + 1 and n == count:
            last = offset
            continue
        if first is not None:
            yield AcquiredRange(first, last, count)
        first = last = offset
        count = n
    if first is not None:
        yield AcquiredRange(first, last, count)
