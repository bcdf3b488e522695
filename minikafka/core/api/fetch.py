"""Fetch (key 1) for one partition, as the leader answers a consumer.

Records go up to the high watermark, or to the last stable offset under read_committed,
where the answer also lists the aborted transactions among them (producer id, first
offset) so the reader can drop their records, as Kafka's FetchResponse does. The log
start offset, HW and LSO come with every answer; an offset outside the log is
OFFSET_OUT_OF_RANGE.

A whole Fetch request is `FetchRequest`; both doors (Broker.handle_fetch for the
in-process consumer, the wire handler for real clients) run it through the same three
steps, as Kafka's ReplicaManager.fetchMessages and DelayedFetch do:

- `fetch`: every partition read now (the leader check with KIP-320's leader-epoch
  fencing first, fetch.max.bytes shared across them), or None when the request waits for
  fetch.min.bytes (`answers_now` decides);
- `retry_fetch`: a waiting request woken, answered once one of its partitions errs or enough
  bytes are ready (`fetch_ready`, without reading), else None; at max_wait_ms the door reads
  once more with `read_fetch`;
- `fetch_throttle_ms`: the answer's bytes counted against the client's consumer_byte_rate
  quota on the broker that answers (journaled as "fetch.throttled").
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from .. import errors
from ..isolation import READ_UNCOMMITTED, IsolationLevel
from ..records import ABORT_MARKER, control_marker_type
from .client_quotas import Entity, record_and_get_throttle_ms
from .leader import ReplicaHost, led_replica

if TYPE_CHECKING:
    from ..controller import TopicMetadata
    from ..journal import Journal
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
    # The leader epoch the client's metadata shows (KIP-320, Fetch v9+); -1 for none.
    current_leader_epoch: int = -1


@dataclass(frozen=True)
class FetchRequest:
    """A Fetch: its partitions, in the order answered, and how long it may wait.
    `max_bytes` (fetch.max.bytes) is shared by the partitions in order; `min_bytes`
    (fetch.min.bytes) and `max_wait_ms` (fetch.max.wait.ms) make it wait for data; the
    principal and client id name the quota it counts against."""

    partitions: tuple[FetchPartition, ...]
    max_bytes: int = 52_428_800
    min_bytes: int = 1
    max_wait_ms: int = 500
    principal: str = "User:ANONYMOUS"
    client_id: str = ""


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


@dataclass
class FetchResult:
    """A Fetch's answer: its partitions in the request's order, and the throttle time
    the client's fetch quota gives (0 when within it)."""

    partitions: list[FetchedPartition]
    throttle_ms: int = 0


def readable_end(replica: Replica, isolation: IsolationLevel) -> int:
    """Where a consumer's reads stop: the LSO under read_committed, else the HW."""
    return replica.last_stable_offset if isolation == IsolationLevel.READ_COMMITTED \
        else replica.high_watermark


def fetch_partition(replica: Replica, request: FetchPartition,
                    max_bytes: int | None = None) -> FetchedPartition:
    """Read one led partition (the caller checked leadership: see led_replica), up to
    `max_bytes` when given (what the request's fetch.max.bytes leaves), else the
    partition's own max_bytes."""
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
    if max_bytes is None:
        max_bytes = request.max_bytes
    if offset >= limit or max_bytes <= 0:
        return out
    if remote:  # below the local log: the remote tier serves it, or fails
        read = tier.read(offset, limit, max_bytes)  # type: ignore[union-attr]
        if read.error_code != errors.NONE:
            out.error_code = read.error_code
            out.aborted_transactions = None
            return out
        batches = read.batches
    else:
        batches = log.read(offset, limit, max_bytes)
    out.batches = batches
    if committed and batches:
        end = batches[-1].next_offset
        out.aborted_transactions = [
            (a.producer_id, a.first_offset) for a in replica.producers.aborted
            if a.last_offset >= offset and a.first_offset < end]
    return out


class FetchHost(ReplicaHost, Protocol):
    """A broker as Fetch sees it: its id, the replicas it holds and the bytes each client
    quota entity fetched from it lately (each broker throttles on its own share)."""

    id: int
    quota_samples: dict[tuple, list[tuple[int, int]]]


def fetched_bytes(fetched: list[FetchedPartition]) -> int:
    """The record bytes an answer carries (what min_bytes and the quota count)."""
    return sum(b.size_bytes for p in fetched for b in p.batches)


def read_fetch(broker: ReplicaHost, topics: Mapping[str, TopicMetadata],
         request: FetchRequest) -> list[FetchedPartition]:
    """Every partition of the request as its leader answers it now: the leader check
    (with the client's leader epoch) first, then the records, from what fetch.max.bytes
    leaves after the partitions before it."""
    budget = request.max_bytes
    out = []
    for wanted in request.partitions:
        code, replica = led_replica(broker, topics, wanted.topic, wanted.partition,
                                    wanted.current_leader_epoch)
        if replica is None:
            out.append(FetchedPartition(code))
            continue
        fetched = fetch_partition(replica, wanted, min(wanted.max_bytes, budget))
        budget -= sum(b.size_bytes for b in fetched.batches)
        out.append(fetched)
    return out


def answers_now(request: FetchRequest, fetched: list[FetchedPartition]) -> bool:
    """Kafka answers a Fetch at once when a partition erred, when told not to wait, or
    when what it read (the first batch whole) is min_bytes or more."""
    if request.max_wait_ms <= 0 or request.min_bytes <= 0 or not fetched:
        return True
    if any(p.error_code for p in fetched):
        return True
    return fetched_bytes(fetched) >= request.min_bytes


def fetch(broker: ReplicaHost, topics: Mapping[str, TopicMetadata],
          request: FetchRequest) -> list[FetchedPartition] | None:
    """The request's answer now, or None when it waits for min_bytes (then `retry_fetch` it
    when its partitions grow, and `read_fetch` it at max_wait_ms)."""
    fetched = read_fetch(broker, topics, request)
    return fetched if answers_now(request, fetched) else None


def fetch_ready(broker: ReplicaHost, topics: Mapping[str, TopicMetadata],
          request: FetchRequest) -> bool:
    """Can a waiting Fetch be answered? Kafka's DelayedFetch.tryComplete, without reading
    the records: a partition no longer led here (or at another epoch), an offset now
    outside the log, or min_bytes ready across the partitions, each counting for at most
    its max_bytes (so a max_bytes below min_bytes waits out max_wait_ms)."""
    total = 0
    for wanted in request.partitions:
        code, replica = led_replica(broker, topics, wanted.topic, wanted.partition,
                                    wanted.current_leader_epoch)
        if replica is None:
            return True
        offset = wanted.fetch_offset
        log = replica.log
        if offset > log.log_end_offset:
            return True
        limit = readable_end(replica, wanted.isolation_level)
        if offset >= limit:
            continue
        if offset < log.log_start_offset:
            return True  # the remote tier's, or out of range: either answers now
        need = request.min_bytes - total
        total += min(log.bytes_ready(offset, limit, need), wanted.max_bytes) if need > 1 \
            else need
        if total >= request.min_bytes:
            return True
    return False


def retry_fetch(broker: ReplicaHost, topics: Mapping[str, TopicMetadata],
          request: FetchRequest) -> list[FetchedPartition] | None:
    """A waiting Fetch, woken: its answer once `fetch_ready`, else None."""
    return read_fetch(broker, topics, request) if fetch_ready(broker, topics, request) else None


def fetch_throttle_ms(broker: FetchHost, quotas: dict[Entity, dict[str, float]],
                journal: Journal, request: FetchRequest, fetched: list[FetchedPartition],
                now_ms: int) -> int:
    """Count the answer's bytes against the client's consumer_byte_rate quota on this
    broker: the throttle_time_ms Kafka's ClientQuotaManager sends with it (KIP-219: the
    client waits that long before fetching from this broker again)."""
    ms = record_and_get_throttle_ms(broker.quota_samples, quotas, "consumer_byte_rate",
                                    request.principal, request.client_id,
                                    fetched_bytes(fetched), now_ms)
    if ms:
        journal.record(now_ms, "fetch.throttled", client=request.client_id, broker=broker.id,
                       throttle_time_ms=ms)
    return ms


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
