"""Fetch (key 1) for one partition, as the leader answers a consumer.

Records go up to the high watermark, or to the last stable offset under read_committed,
where the answer also lists the aborted transactions among them (producer id, first
offset) so the reader can drop their records, as Kafka's FetchResponse does. The log
start offset, HW and LSO come with every answer; an offset outside the log is
OFFSET_OUT_OF_RANGE. The broker (waiting for fetch.min.bytes) and the wire handler
(encoding the answer) both read through `fetch_partition`.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .. import errors
from ..isolation import READ_UNCOMMITTED, IsolationLevel
from ..records import ABORT_MARKER, control_marker_type

if TYPE_CHECKING:
    from ..records import RecordBatch
    from ..replica import Replica


@dataclass(frozen=True)
class FetchPartition:
    """One partition of a Fetch request."""

    topic: str
    partition: int
    fetch_offset: int
    max_bytes: int = 1 << 20
    isolation_level: IsolationLevel = READ_UNCOMMITTED


@dataclass
class FetchedPartition:
    """What the leader answers for one partition. `aborted_transactions` is None under
    read_uncommitted (Kafka sends null), else the (producer id, first offset) pairs of
    the aborted transactions overlapping the returned batches."""

    error_code: int = errors.NONE
    batches: list[RecordBatch] = field(default_factory=list)
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    aborted_transactions: list[tuple[int, int]] | None = None


def readable_end(replica: Replica, isolation: IsolationLevel) -> int:
    """Where a consumer's reads stop: the LSO under read_committed, else the HW."""
    return replica.last_stable_offset if isolation == IsolationLevel.READ_COMMITTED \
        else replica.high_watermark


def fetch_partition(replica: Replica, request: FetchPartition) -> FetchedPartition:
    """Read one led partition (the caller checked leadership: see led_replica)."""
    committed = request.isolation_level == IsolationLevel.READ_COMMITTED
    log = replica.log
    start = log.log_start_offset
    out = FetchedPartition(errors.NONE, [], replica.high_watermark, replica.last_stable_offset,
                           start, [] if committed else None)
    offset = request.fetch_offset
    tier = replica.tier
    if tier is not None:  # the log start offset is the whole log's, remote included
        out.log_start_offset = tier.log_start_offset
    remote = tier is not None and tier.log_start_offset <= offset < start
    if not remote and (offset < start or offset > log.log_end_offset):
        out.error_code = errors.OFFSET_OUT_OF_RANGE
        out.aborted_transactions = None
        return out
    limit = out.last_stable_offset if committed else out.high_watermark
    if offset >= limit or request.max_bytes <= 0:
        return out
    if remote:  # below the local log: the remote tier serves it, or fails
        read = tier.read(offset, limit, request.max_bytes)  # type: ignore[union-attr]
        if read.error_code != errors.NONE:
            out.error_code = read.error_code
            out.aborted_transactions = None
            return out
        batches = read.batches
    else:
        batches = log.read(offset, limit, request.max_bytes)
    out.batches = batches
    if committed and batches:
        end = batches[-1].next_offset
        out.aborted_transactions = [
            (a.producer_id, a.first_offset) for a in replica.producers.aborted
            if a.last_offset >= offset and a.first_offset < end]
    return out


def committed_batches(batches: list[RecordBatch],
                      aborted: list[tuple[int, int]] | None) -> Iterator[RecordBatch]:
    """The data batches a reader returns from a fetched list: control batches never, and
    under read_committed none of an aborted transaction's. Kafka's consumer does it this
    way (Fetcher's CompletedFetch): an aborted transaction listed with first offset F
    becomes active for its producer once the read reaches F; that producer's
    transactional batches are skipped while it is active; its ABORT marker ends it."""
    pending = sorted(aborted or (), key=lambda a: a[1])
    active: set[int] = set()
    i = 0
    for batch in batches:
        while i < len(pending) and pending[i][1] <= batch.last_offset:
            active.add(pending[i][0])
            i += 1
        if batch.is_control:
            if control_marker_type(batch) == ABORT_MARKER:
                active.discard(batch.producer_id)
            continue
        if batch.is_transactional and batch.producer_id in active:
            continue
        yield batch
