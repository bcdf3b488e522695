"""One replica's partition log: segments of record batches, indexes, leader epochs.

Offsets are dense when written and never reused. A segment holds a run of batches;
the last one (the active segment) takes appends and rolls by segment.bytes or
segment.ms. Retention and compaction work on closed segments only (minikafka.core.cleaner).
An optional store (minikafka.core.storage) mirrors every change into segment files.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator

from .records import RecordBatch

INDEX_INTERVAL_BYTES = 4096  # index.interval.bytes: one index entry per ~4 KiB


class Segment:
    """A run of batches starting at base_offset, with a sparse offset and time index."""

    __slots__ = (
        "base_offset", "batches", "bases", "size_bytes", "created_ms", "max_timestamp",
        "offset_index", "time_index", "_bytes_since_index", "largest_ts_offset",
    )

    def __init__(self, base_offset: int, created_ms: int) -> None:
        self.base_offset = base_offset
        self.batches: list[RecordBatch] = []
        self.bases: list[int] = []
        self.size_bytes = 0
        self.created_ms = created_ms
        self.max_timestamp = -1
        self.largest_ts_offset = -1
        # (offset, byte position) and (timestamp, offset), sparse as in Kafka's .index/.timeindex:
        # an entry only after more than index.interval.bytes since the last one.
        self.offset_index: list[tuple[int, int]] = []
        self.time_index: list[tuple[int, int]] = []
        self._bytes_since_index = 0

    def append(self, batch: RecordBatch) -> None:
        """Kafka's LogSegment.append: max timestamp first, then maybe one entry in each index."""
        if batch.max_timestamp > self.max_timestamp:
            self.max_timestamp = batch.max_timestamp
            self.largest_ts_offset = batch.last_offset
        if self._bytes_since_index > INDEX_INTERVAL_BYTES:
            self.offset_index.append((batch.last_offset, self.size_bytes))
            self._maybe_time_entry()
            self._bytes_since_index = 0
        self.batches.append(batch)
        self.bases.append(batch.base_offset)
        self.size_bytes += batch.size_bytes
        self._bytes_since_index += batch.size_bytes

    def _maybe_time_entry(self) -> None:
        # The time index only grows: an entry is added when the max timestamp is newer.
        if self.max_timestamp >= 0 and (
                not self.time_index or self.max_timestamp > self.time_index[-1][0]):
            self.time_index.append((self.max_timestamp, self.largest_ts_offset))

    def close(self) -> None:
        """The segment stops being active: its time index gets a final entry (Kafka's
        onBecomeInactiveSegment), so a time lookup can find its largest timestamp."""
        self._maybe_time_entry()

    @property
    def next_offset(self) -> int:
        return self.batches[-1].next_offset if self.batches else self.base_offset

    @property
    def rolling_timestamp(self) -> int:
        """segment.ms counts from the first batch's max timestamp (Kafka's rollingBasedTimestamp)."""
        return self.batches[0].max_timestamp if self.batches else -1

    def rebuild(self, batches: list[RecordBatch]) -> None:
        """Replace the contents (truncation, compaction) and rebuild the indexes."""
        base, created = self.base_offset, self.created_ms
        self.__init__(base, created)
        for batch in batches:
            self.append(batch)


def take_batches(batches: Iterable[RecordBatch], max_offset: int,
                 max_bytes: int) -> list[RecordBatch]:
    """From batches in offset order (the first holding the wanted offset), those below
    max_offset within max_bytes; the first always, however large."""
    out: list[RecordBatch] = []
    size = 0
    for batch in batches:
        if batch.last_offset >= max_offset:
            break
        size += batch.size_bytes
        if out and size > max_bytes:
            break
        out.append(batch)
    return out


class PartitionLog:
    """Append-only log of one replica; followers share batch objects with their leader."""

    def __init__(self, segment_bytes: int = 1 << 30, segment_ms: int = 7 * 24 * 3600 * 1000,
                 now_ms: int = 0) -> None:
        self.segment_bytes = segment_bytes
        self.segment_ms = segment_ms
        self.segments: list[Segment] = [Segment(0, now_ms)]
        self.log_start_offset = 0
        self.log_end_offset = 0
        # Leader epoch cache (leader-epoch-checkpoint): (epoch, start offset), ascending.
        self.epochs: list[tuple[int, int]] = []
        # The log cleaner's progress (cleaner-offset-checkpoint): offsets below it are clean.
        self.cleaner_offset = 0
        # Batch base offset -> delete horizon (KIP-534): when its tombstones and markers may go.
        self.delete_horizons: dict[int, int] = {}
        # A minikafka.core.storage store mirroring this log into files, or None (in memory).
        self.store = None

    # -- writing -----------------------------------------------------------------
    def append(self, batch: RecordBatch, now_ms: int) -> None:
        """Append a batch whose offsets are already assigned (by the leader)."""
        active = self.segments[-1]
        if active.batches and (
            active.size_bytes + batch.size_bytes > self.segment_bytes
            or batch.max_timestamp - active.rolling_timestamp > self.segment_ms
        ):
            active = self.roll(now_ms, batch.base_offset)
        elif not active.batches:
            active.base_offset = batch.base_offset
        epoch = batch.partition_leader_epoch
        if epoch >= 0 and (not self.epochs or epoch > self.epochs[-1][0]):
            self.epochs.append((epoch, batch.base_offset))
        batch.append_time_ms = batch.append_time_ms or now_ms
        active.append(batch)
        self.log_end_offset = batch.next_offset
        if self.store is not None:
            self.store.append(self, active, batch)

    def roll(self, now_ms: int, base_offset: int | None = None) -> Segment:
        """Close the active segment and open a new one (a new .log/.index/.timeindex).

        An empty active segment is reused rather than followed by another empty one.
        """
        base = self.log_end_offset if base_offset is None else base_offset
        active = self.segments[-1]
        if not active.batches:
            active.base_offset = base
            return active
        active.close()
        seg = Segment(base, now_ms)
        self.segments.append(seg)
        if self.store is not None:
            self.store.rolled(self, active)
        return seg

    def truncate_to(self, offset: int) -> None:
        """Drop every batch from the one holding `offset` onwards (a follower's divergent tail)."""
        if offset >= self.log_end_offset:
            # Nothing to drop, but epochs that start at or after it never held data here.
            while self.epochs and self.epochs[-1][1] >= offset:
                self.epochs.pop()
            return
        while len(self.segments) > 1 and self.segments[-1].base_offset >= offset:
            self.segments.pop()
        seg = self.segments[-1]
        keep = [b for b in seg.batches if b.last_offset < offset]
        seg.rebuild(keep)
        if not keep:
            seg.base_offset = max(min(offset, seg.base_offset), self.log_start_offset)
        self.log_end_offset = keep[-1].next_offset if keep else max(
            self._prev_end(), self.log_start_offset)
        while self.epochs and self.epochs[-1][1] >= self.log_end_offset:
            self.epochs.pop()
        self.cleaner_offset = min(self.cleaner_offset, self.log_end_offset)
        if self.store is not None:
            self.store.rewritten(self, [seg])

    def _prev_end(self) -> int:
        for seg in reversed(self.segments):
            if seg.batches:
                return seg.batches[-1].next_offset
        return self.segments[0].base_offset

    def truncate_fully_and_start_at(self, offset: int, now_ms: int) -> None:
        """Empty the log and restart it at `offset` (a replica behind the leader's log start)."""
        self.segments = [Segment(offset, now_ms)]
        self.log_start_offset = offset
        self.log_end_offset = offset
        self.epochs = []
        self.cleaner_offset = offset
        self.delete_horizons = {}
        if self.store is not None:
            self.store.rewritten(self, self.segments)

    # -- retention and cleaning (driven by minikafka.core.cleaner) ---------------------
    def maybe_increment_log_start_offset(self, offset: int) -> bool:
        """Move the log start offset forward; the leader epoch cache forgets epochs before it."""
        offset = min(offset, self.log_end_offset)
        if offset <= self.log_start_offset:
            return False
        self.log_start_offset = offset
        # Kafka's truncateFromStart: the last epoch starting at or before the new log
        # start offset is kept, starting there.
        kept = [e for e in self.epochs if e[1] > offset]
        before = [e for e in self.epochs if e[1] <= offset]
        self.epochs = ([(before[-1][0], offset)] if before else []) + kept
        return True

    def delete_oldest_segments(self, count: int, now_ms: int) -> list[Segment]:
        """Delete the `count` oldest segments and move the log start offset past them.

        A log always keeps one segment: when every segment goes, a new empty active
        segment is rolled first, as Kafka's deleteSegments does.
        """
        count = min(count, len(self.segments))
        if count <= 0:
            return []
        if count == len(self.segments):
            if not self.segments[-1].batches:
                count -= 1  # an empty active segment stays instead of being recreated
            else:
                self.roll(now_ms)
        deleted = self.segments[:count]
        if not deleted:
            return []
        del self.segments[:count]
        self.maybe_increment_log_start_offset(self.segments[0].base_offset)
        if self.store is not None:
            self.store.rewritten(self, [])
        return deleted

    def replace_segments(self, old: list[Segment], batches: list[RecordBatch]) -> Segment:
        """Swap one cleaned segment in for a run of closed segments (the cleaner's
        replaceSegments): same base offset, offsets of the kept records unchanged."""
        first = next((i for i, s in enumerate(self.segments) if s is old[0]), -1)
        if first < 0 or first + len(old) >= len(self.segments) or any(
                a is not b for a, b in zip(self.segments[first:first + len(old)], old)):
            raise ValueError("only a run of closed segments can be replaced")
        seg = Segment(old[0].base_offset, old[-1].created_ms)
        for batch in batches:
            seg.append(batch)
        seg.close()
        self.segments[first:first + len(old)] = [seg]
        if self.store is not None:
            self.store.rewritten(self, [seg])
        return seg

    # -- reading -----------------------------------------------------------------
    def _locate(self, offset: int) -> tuple[int, int]:
        """(segment index, batch index) of the first batch with last_offset >= offset."""
        segments = self.segments
        si = max(0, bisect_right([s.base_offset for s in segments], offset) - 1) \
            if len(segments) > 1 else 0
        while si < len(segments):
            seg = segments[si]
            bi = max(0, bisect_right(seg.bases, offset) - 1)
            batches = seg.batches
            while bi < len(batches) and batches[bi].last_offset < offset:
                bi += 1
            if bi < len(batches):
                return si, bi
            si += 1
        return len(segments), 0

    def read(self, offset: int, max_offset: int, max_bytes: int = 1 << 20) -> list[RecordBatch]:
        """Batches holding offsets from `offset` up to (not including) max_offset.

        Like Kafka, the first batch is returned whole even when it is larger than
        max_bytes (so a consumer is never stuck behind one big batch), and a batch
        may start before `offset`: the reader skips the records it did not ask for.
        """
        if offset >= max_offset:
            return []
        return take_batches(self._batches_from(offset), max_offset, max_bytes)

    def bytes_ready(self, offset: int, max_offset: int, enough: int) -> int:
        """Bytes of the batches holding offsets from `offset` below max_offset, counted
        until `enough` (what a delayed fetch compares with fetch.min.bytes)."""
        size = 0
        for batch in self._batches_from(offset):
            if batch.last_offset >= max_offset or size >= enough:
                break
            size += batch.size_bytes
        return size

    def _batches_from(self, offset: int) -> Iterator[RecordBatch]:
        """The batches in offset order, from the one holding `offset` (by index: no
        copies of a segment's batch list)."""
        si, bi = self._locate(offset)
        segments = self.segments
        while si < len(segments):
            batches = segments[si].batches
            for i in range(bi, len(batches)):
                yield batches[i]
            si += 1
            bi = 0

    def batches(self) -> Iterator[RecordBatch]:
        for seg in self.segments:
            yield from seg.batches

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record with timestamp >= `timestamp`."""
        for seg in self.segments:
            if seg.max_timestamp < timestamp:
                continue
            for batch in seg.batches:
                if batch.max_timestamp < timestamp:
                    continue
                for rec in batch.iter_records():
                    if rec.timestamp >= timestamp and rec.offset >= self.log_start_offset:
                        return rec.offset, rec.timestamp
        return None

    @property
    def size_bytes(self) -> int:
        return sum(s.size_bytes for s in self.segments)

    # -- leader epochs -------------------------------------------------------------
    @property
    def latest_epoch(self) -> int:
        return self.epochs[-1][0] if self.epochs else -1

    def assign_epoch(self, epoch: int, start_offset: int) -> None:
        if not self.epochs or epoch > self.epochs[-1][0]:
            self.epochs.append((epoch, start_offset))

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """(largest epoch <= `epoch`, its end offset): the OffsetsForLeaderEpoch answer.

        The end offset of an epoch is the start offset of the next larger epoch, or the
        log end offset for the latest epoch. A follower truncates its log to it.
        """
        if not self.epochs or epoch < self.epochs[0][0]:
            return -1, -1
        for i, (e, _) in enumerate(self.epochs):
            if e > epoch:
                return self.epochs[i - 1][0], self.epochs[i][1]
        if self.epochs[-1][0] == epoch:
            return epoch, self.log_end_offset
        return self.epochs[-1][0], self.log_end_offset
