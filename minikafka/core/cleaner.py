"""Retention and compaction: Kafka's log cleaning, as functions over one PartitionLog.

Retention (cleanup.policy=delete) deletes whole segments from the old end of the log
and moves the log start offset past them. It walks segments oldest first and stops at
the first one that must stay, so what goes is always a prefix of the log; a segment
holding offsets at or above the high watermark never goes. When every segment would
go, Kafka first rolls a new, empty active segment, so the log is never without one.

Compaction (cleanup.policy=compact) keeps the latest record of every key. Like Kafka's
Cleaner it builds a key -> latest offset map over the dirty part of the log (from the
cleaner checkpoint to the first uncleanable offset: the active segment, the last stable
offset and min.compaction.lag.ms bound it), then rewrites every segment before that
point, dropping superseded records. Records keep their offsets, so gaps appear; batches
keep their base offset and header. Tombstones (value None) and transaction markers
stay until delete.retention.ms after the cleaning that first saw them (the batch's
delete horizon, KIP-534); aborted transactional records are dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .log import PartitionLog, Segment
from .producer_state import AbortedTxn, ProducerStateManager
from .records import ABORT_MARKER, RecordBatch, control_marker_type

NEVER = 2**63 - 1


def policies(config) -> set[str]:
    """The parts of cleanup.policy: {'delete'}, {'compact'} or both."""
    return set(str(config["cleanup.policy"]).split(","))


# -- retention ------------------------------------------------------------------------


@dataclass(frozen=True)
class RetentionResult:
    reason: str  # "log start offset", "retention.bytes" or "retention.ms"
    deleted: tuple[int, ...]  # base offsets of the deleted segments
    log_start_offset: int


def _deletable_prefix(log: PartitionLog, high_watermark: int,
                      predicate: Callable[[Segment, Segment | None], bool]) -> int:
    """How many of the oldest segments may go (Kafka's deletableSegments)."""
    segments = log.segments
    count = 0
    for i, seg in enumerate(segments):
        nxt = segments[i + 1] if i + 1 < len(segments) else None
        if nxt is None and not seg.batches:
            break  # an empty active segment would only be recreated
        upper = nxt.base_offset if nxt is not None else log.log_end_offset
        # The log start offset must never pass the high watermark.
        if high_watermark < upper or not predicate(seg, nxt):
            break
        count += 1
    return count


def _delete(log: PartitionLog, now_ms: int, high_watermark: int, reason: str,
            predicate: Callable[[Segment, Segment | None], bool]) -> RetentionResult | None:
    count = _deletable_prefix(log, high_watermark, predicate)
    deleted = log.delete_oldest_segments(count, now_ms)
    if not deleted:
        return None
    start = log.log_start_offset
    log.delete_horizons = {b: h for b, h in log.delete_horizons.items() if b >= start}
    log.cleaner_offset = max(log.cleaner_offset, start)
    return RetentionResult(reason, tuple(s.base_offset for s in deleted), start)


def delete_old_segments(log: PartitionLog, config, now_ms: int,
                        high_watermark: int) -> list[RetentionResult]:
    """One retention pass over a log (Kafka's UnifiedLog.deleteOldSegments).

    Segments wholly below the log start offset always go; with cleanup.policy
    delete, so do the oldest segments while the log is over retention.bytes and
    segments whose largest timestamp is more than retention.ms old.
    """
    results = [_delete(log, now_ms, high_watermark, "log start offset",
                       lambda seg, nxt: nxt is not None
                       and nxt.base_offset <= log.log_start_offset)]
    if "delete" in policies(config):
        retention_bytes = int(config["retention.bytes"])
        size = log.size_bytes
        if retention_bytes >= 0 and size >= retention_bytes:
            excess = [size - retention_bytes]

            def over_size(seg: Segment, nxt: Segment | None) -> bool:
                if excess[0] - seg.size_bytes < 0:
                    return False
                excess[0] -= seg.size_bytes
                return True

            results.append(_delete(log, now_ms, high_watermark, "retention.bytes", over_size))
        retention_ms = int(config["retention.ms"])
        if retention_ms >= 0:
            results.append(_delete(log, now_ms, high_watermark, "retention.ms",
                                   lambda seg, nxt: now_ms - seg.max_timestamp > retention_ms))
    return [r for r in results if r is not None]


def next_retention_ms(log: PartitionLog, config, now_ms: int) -> int | None:
    """When time alone may next make a segment deletable (None: only new data can).

    Deletion stops at the oldest segment that must stay, so only it matters: it
    expires retention.ms after its largest timestamp.
    """
    if "delete" not in policies(config) or int(config["retention.ms"]) < 0:
        return None
    oldest = log.segments[0]
    if not oldest.batches:
        return None
    return max(now_ms, oldest.max_timestamp + int(config["retention.ms"]) + 1)


# -- compaction -----------------------------------------------------------------------


@dataclass(frozen=True)
class CleanResult:
    first_dirty_offset: int
    end_offset: int  # the new cleaner checkpoint: everything below it is clean
    segments_before: int
    segments_after: int
    records_before: int
    records_after: int
    bytes_before: int
    bytes_after: int


@dataclass(frozen=True)
class Cleanable:
    """What the cleaner sees of a log (Kafka's LogToClean)."""

    first_dirty_offset: int
    first_uncleanable_offset: int
    clean_bytes: int
    cleanable_bytes: int
    need_compaction_now: bool  # max.compaction.lag.ms passed for some dirty record

    @property
    def dirty_ratio(self) -> float:
        total = self.clean_bytes + self.cleanable_bytes
        return self.cleanable_bytes / total if total else 0.0


def _next_base(log: PartitionLog, i: int) -> int:
    segs = log.segments
    return segs[i + 1].base_offset if i + 1 < len(segs) else log.log_end_offset


def cleanable(log: PartitionLog, config, now_ms: int, last_stable_offset: int) -> Cleanable:
    """Kafka's LogCleanerManager.cleanableOffsets and calculateCleanableBytes."""
    segs = log.segments
    first_dirty = log.cleaner_offset
    if not log.log_start_offset <= first_dirty <= log.log_end_offset:
        first_dirty = log.log_start_offset  # a stale checkpoint: clean everything again
    bounds = [last_stable_offset, segs[-1].base_offset]
    lag = int(config["min.compaction.lag.ms"])
    max_lag = int(config["max.compaction.lag.ms"])
    need_now = False
    for i, seg in enumerate(segs[:-1]):
        if _next_base(log, i) <= first_dirty:
            continue
        if lag > 0 and seg.max_timestamp > now_ms - lag:
            bounds.append(seg.base_offset)
            break
        if seg.batches and max_lag < NEVER and now_ms - seg.rolling_timestamp > max_lag:
            need_now = True
    uncleanable = min(bounds)
    # The cleaner works in whole segments: round down to the segment holding that offset.
    upper = segs[0].base_offset
    for seg in segs:
        if seg.base_offset > uncleanable:
            break
        upper = seg.base_offset
    start = min(first_dirty, upper)
    clean_bytes = sum(s.size_bytes for s in segs if s.base_offset < first_dirty)
    dirty_bytes = sum(s.size_bytes for i, s in enumerate(segs)
                      if s.base_offset < upper and _next_base(log, i) > start)
    return Cleanable(first_dirty, upper, clean_bytes, dirty_bytes, need_now)


def needs_cleaning(c: Cleanable, config) -> bool:
    """The cleaner picks a log whose dirty ratio passed min.cleanable.dirty.ratio, or one
    with records older than max.compaction.lag.ms."""
    return (c.need_compaction_now and c.cleanable_bytes > 0) or \
        c.dirty_ratio > float(config["min.cleanable.dirty.ratio"])


class _Transactions:
    """Which batches belong to aborted transactions, and which markers still guard records
    (Kafka's CleanedTransactionMetadata)."""

    def __init__(self, aborted: Iterable[AbortedTxn]) -> None:
        self.pending = sorted(aborted, key=lambda a: a.first_offset)
        self.next = 0
        self.aborted: dict[int, list] = {}  # producer id -> [txn, saw a batch of it]
        self.committed: set[int] = set()

    def _reach(self, offset: int) -> None:
        while self.next < len(self.pending) and self.pending[self.next].first_offset <= offset:
            txn = self.pending[self.next]
            self.aborted[txn.producer_id] = [txn, False]
            self.next += 1

    def on_batch(self, batch: RecordBatch) -> bool:
        """True when a data batch belongs to an aborted transaction."""
        self._reach(batch.last_offset)
        if batch.is_transactional:
            entry = self.aborted.get(batch.producer_id)
            if entry is not None:
                entry[1] = True
                return True
            self.committed.add(batch.producer_id)
        return False

    def on_marker(self, batch: RecordBatch) -> bool:
        """True when a marker no longer guards any record of its transaction."""
        self._reach(batch.last_offset)
        if not batch.records:
            return True
        if control_marker_type(batch) == ABORT_MARKER:
            entry = self.aborted.pop(batch.producer_id, None)
            return not (entry is not None and entry[1])
        if batch.producer_id in self.committed:
            self.committed.discard(batch.producer_id)
            return False
        return True


def _group_by_size(segments: list[Segment], max_size: int) -> list[list[Segment]]:
    """Consecutive segments merged while their total fits in segment.bytes, so cleaned
    segments do not shrink forever (Kafka's groupSegmentsBySize)."""
    groups: list[list[Segment]] = []
    for seg in segments:
        if groups and sum(s.size_bytes for s in groups[-1]) + seg.size_bytes <= max_size:
            groups[-1].append(seg)
        else:
            groups.append([seg])
    return groups


def _last_data_offsets(producers: ProducerStateManager | None) -> dict[int, tuple[int, int]]:
    """Producer id -> (epoch, last offset of its last data batch, or -1): the batches the
    cleaner keeps, even empty, so producer state survives cleaning."""
    if producers is None:
        return {}
    return {pid: (e.epoch, e.batches[-1][3] if e.batches else -1)
            for pid, e in producers.producers.items()}


def compact(log: PartitionLog, config, now_ms: int, last_stable_offset: int,
            producers: ProducerStateManager | None = None,
            force: bool = False) -> CleanResult | None:
    """One cleaning of a log (Kafka's Cleaner.doClean); None when there is nothing to do.

    Without force the log must pass min.cleanable.dirty.ratio (or max.compaction.lag.ms),
    as it must for Kafka's cleaner thread to pick it.
    """
    c = cleanable(log, config, now_ms, last_stable_offset)
    if c.first_uncleanable_offset <= c.first_dirty_offset or c.cleanable_bytes == 0:
        return None
    if not force and not needs_cleaning(c, config):
        return None
    aborted = producers.aborted if producers is not None else ()
    first_dirty, upper = c.first_dirty_offset, c.first_uncleanable_offset

    # 1. Map every key in the dirty range to its latest offset.
    latest: dict[bytes, int] = {}
    latest_offset = -1
    txns = _Transactions(aborted)
    for seg in log.segments:
        if seg.base_offset >= upper:
            break
        for batch in seg.batches:
            if batch.last_offset >= upper:
                break
            if batch.is_control:
                txns.on_marker(batch)
            elif not txns.on_batch(batch):
                base = batch.base_offset
                for delta, _, key, _, _ in batch.records:
                    if key is not None and base + delta >= first_dirty:
                        latest[key] = base + delta
            if batch.last_offset >= first_dirty:
                latest_offset = batch.last_offset
    end = latest_offset + 1
    if end <= first_dirty:
        return None

    # 2. Rewrite every segment below the end of the map, a group at a time.
    before = [s for s in log.segments[:-1] if s.base_offset < end]
    records_before = sum(len(b.records) for s in before for b in s.batches)
    bytes_before = sum(s.size_bytes for s in before)
    txns = _Transactions(aborted)
    last_data = _last_data_offsets(producers)
    horizon_ms = now_ms + int(config["delete.retention.ms"])
    horizons = log.delete_horizons
    after: list[Segment] = []
    for group in _group_by_size(before, log.segment_bytes):
        kept: list[RecordBatch] = []
        for seg in group:
            for batch in seg.batches:
                out = _clean_batch(batch, txns, latest, latest_offset, end, last_data,
                                   horizons, now_ms, horizon_ms)
                if out is not None:
                    kept.append(out)
        after.append(log.replace_segments(group, kept))
    log.cleaner_offset = end
    live = {b.base_offset for s in log.segments for b in s.batches}
    log.delete_horizons = {b: h for b, h in horizons.items() if b in live}
    return CleanResult(first_dirty, end, len(before), len(after), records_before,
                       sum(len(b.records) for s in after for b in s.batches),
                       bytes_before, sum(s.size_bytes for s in after))


def _clean_batch(batch: RecordBatch, txns: _Transactions, latest: dict, latest_offset: int,
                 end: int, last_data: dict, horizons: dict, now_ms: int,
                 horizon_ms: int) -> RecordBatch | None:
    """The batch as the cleaner writes it back, or None when it goes entirely."""
    base = batch.base_offset
    horizon = horizons.get(base)
    can_discard = txns.on_marker(batch) if batch.is_control else txns.on_batch(batch)
    if batch.is_control:
        discard_records = can_discard and horizon is not None and horizon <= now_ms
    else:
        discard_records = can_discard
    # An active producer's last batch (or last marker) stays, even empty, to keep its
    # sequence and epoch; so does the last batch of the round, to keep the last offset.
    entry = last_data.get(batch.producer_id) if batch.producer_id >= 0 else None
    producer_last = entry is not None and (
        batch.last_offset == entry[1] if entry[1] >= 0
        else batch.is_control and batch.producer_epoch == entry[0])
    retain_empty = producer_last or batch.next_offset == end
    if discard_records and not retain_empty:
        return None
    if discard_records:
        records = []
    elif batch.is_control:
        records = batch.records
    else:
        keep_deletes = horizon is None or now_ms < horizon
        records = [r for r in batch.records
                   if base + r[0] > latest_offset
                   or (r[2] is not None and base + r[0] >= latest.get(r[2], -1)
                       and (r[3] is not None or keep_deletes))]
    if not records and not retain_empty:
        return None
    has_tombstones = not batch.is_control and any(r[3] is None for r in records)
    if horizon is None and (has_tombstones or (can_discard and batch.is_control)):
        horizons[base] = horizon_ms
    if len(records) == len(batch.records):
        return batch
    return batch.with_records(records)


def next_compaction_ms(log: PartitionLog, config, now_ms: int,
                       last_stable_offset: int) -> int | None:
    """When time alone may next let the cleaner take this log: a dirty segment leaving
    min.compaction.lag.ms, or one passing max.compaction.lag.ms."""
    lag = int(config["min.compaction.lag.ms"])
    max_lag = int(config["max.compaction.lag.ms"])
    first_dirty = max(log.cleaner_offset, log.log_start_offset)
    due = []
    for i, seg in enumerate(log.segments[:-1]):
        if _next_base(log, i) <= first_dirty or not seg.batches:
            continue
        if lag > 0 and seg.max_timestamp > now_ms - lag:
            due.append(seg.max_timestamp + lag)
            break
        if max_lag < NEVER and now_ms - seg.rolling_timestamp <= max_lag:
            due.append(seg.rolling_timestamp + max_lag + 1)
    return min(due) if due else None
