"""ShareFetch (key 78) and ShareAcknowledge (key 79), as a partition leader answers a share
consumer (KIP-932), and the share-partitions' start offsets DescribeShareGroupOffsets
(key 90, core.api.share_groups) reads.

A ShareFetch first applies the acknowledgements it carries, then moves the member's share
session on (open with epoch 0, close with -1, else the expected next epoch), then
acquires records for the member from each partition of the session that this broker
leads. What comes back per partition is the log batches holding the acquired records and
the acquired ranges with their delivery counts; the reader keeps only acquired offsets.
The heartbeat, describe and offsets APIs of share groups are in `core.api.share_groups`.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from .. import errors
from ..share.partition import AcknowledgementBatch, AcquiredRange
from ..share.sessions import FINAL_EPOCH, INITIAL_EPOCH
from . import authz
from .authz import Caller
from .leader import led_replica
from .port import ClusterPort

if TYPE_CHECKING:
    from ..records import RecordBatch
    from ..share.coordinator import ShareGroupCoordinator

TP = tuple[str, int]

__all__ = [
    "DescribedShareOffset",
    "ShareAcknowledgeRequest",
    "ShareAcknowledgeResult",
    "ShareFetchRequest",
    "ShareFetchResult",
    "ShareFetchedPartition",
    "acquire_for_session",
        "share_acknowledge",
    "share_fetch",
    "share_group_offsets",
]


@dataclass(frozen=True)
class ShareFetchRequest:
    """`fetch` lists the partitions to add to the session, each with the acknowledgements
    riding along (possibly none); `forgotten` the partitions to drop from it."""

    group_id: str
    member_id: str
    share_session_epoch: int
    fetch: Mapping[TP, Sequence[AcknowledgementBatch]] = field(default_factory=dict)
    forgotten: Sequence[TP] = ()
    max_records: int = 500
    max_bytes: int = 52_428_800


@dataclass
class ShareFetchedPartition:
    topic: str
    partition: int
    error_code: int = errors.NONE
    error_message: str | None = None
    acknowledge_error_code: int = errors.NONE
    batches: list[RecordBatch] = field(default_factory=list)
    acquired: list[AcquiredRange] = field(default_factory=list)
    acknowledged: bool = False  # the request carried acknowledgements for it


@dataclass
class ShareFetchResult:
    error_code: int = errors.NONE
    error_message: str | None = None
    partitions: list[ShareFetchedPartition] = field(default_factory=list)
    acquisition_lock_timeout_ms: int = 0
    # Whether a fetch that acquired nothing may wait for records (a live session).
    may_wait: bool = False

    @property
    def record_count(self) -> int:
        return sum(r.last_offset - r.first_offset + 1 for p in self.partitions
                   for r in p.acquired)


@dataclass(frozen=True)
class ShareAcknowledgeRequest:
    group_id: str
    member_id: str
    share_session_epoch: int
    acknowledgements: Mapping[TP, Sequence[AcknowledgementBatch]] = field(default_factory=dict)


@dataclass
class ShareAcknowledgeResult:
    error_code: int = errors.NONE
    error_message: str | None = None
    partitions: dict[TP, int] = field(default_factory=dict)  # tp -> error code
    acquisition_lock_timeout_ms: int = 0


def _coordinator(cluster: ClusterPort) -> ShareGroupCoordinator:
    return cluster.share_groups  # type: ignore[attr-defined]


def _acknowledge(cluster: ClusterPort, broker_id: int, group_id: str, member_id: str,
                 tp: TP, batches: Sequence[AcknowledgementBatch]) -> int:
    broker = cluster.brokers[broker_id]
    code, replica = led_replica(broker, cluster.controller.topics, tp[0], tp[1])
    if replica is None:
        return code
    sp = _coordinator(cluster).partitions.get((group_id, tp[0], tp[1]))
    if sp is None:
        return errors.INVALID_RECORD_STATE
    return sp.acknowledge(member_id, batches)


def share_fetch(cluster: ClusterPort, broker_id: int, request: ShareFetchRequest,
                caller: Caller = Caller()) -> ShareFetchResult:
    """READ on the group (else GROUP_AUTHORIZATION_FAILED and nothing else) and on each
    topic asked (else its partitions answer TOPIC_AUTHORIZATION_FAILED, their
    acknowledgements unapplied and the session without them), as Kafka's KafkaApis checks;
    then acknowledge, move the session on, acquire (the broker must be running)."""
    code, refused = authz.share_group_offsets(cluster, caller, request.group_id,
                                              {t for t, _ in request.fetch})
    if code:
        return ShareFetchResult(code)
    if not refused:
        return _share_fetch(cluster, broker_id, request)
    out = _share_fetch(cluster, broker_id, replace(request, fetch={
        tp: b for tp, b in request.fetch.items() if tp[0] not in refused}))
    out.partitions += [ShareFetchedPartition(t, p, refused[t]) for t, p in request.fetch
                       if t in refused]
    return out


def _share_fetch(cluster: ClusterPort, broker_id: int, request: ShareFetchRequest
                 ) -> ShareFetchResult:
    share = _coordinator(cluster)
    cache = share.session_cache(broker_id)
    group_id, member_id, epoch = request.group_id, request.member_id, request.share_session_epoch
    has_acks = any(request.fetch.values())
    if not group_id or not member_id:
        return ShareFetchResult(errors.INVALID_REQUEST, "GroupId and MemberId are required")
    code = cache.check(group_id, member_id, epoch, has_acks)
    if code:
        return ShareFetchResult(code, _SESSION_MESSAGES.get(code))
    if epoch == FINAL_EPOCH and request.fetch and not has_acks:
        return ShareFetchResult(errors.INVALID_REQUEST,
                                "The final share fetch may carry only acknowledgements")
    out = ShareFetchResult(acquisition_lock_timeout_ms=share.settings(group_id)
                           .record_lock_duration_ms)
    acked: dict[TP, ShareFetchedPartition] = {}
    for tp, batches in request.fetch.items():
        if batches:
            p = acked[tp] = ShareFetchedPartition(tp[0], tp[1], acknowledged=True)
            p.acknowledge_error_code = _acknowledge(cluster, broker_id, group_id, member_id,
                                                    tp, batches)
    if epoch == FINAL_EPOCH:
        session = cache.close(group_id, member_id)
        if session is not None:
            _release(share, group_id, member_id, session.partitions)
        out.partitions = list(acked.values())
        return out
    if epoch == INITIAL_EPOCH:
        session = cache.open(group_id, member_id, request.fetch)
    else:
        session = cache.next(group_id, member_id)
        session.add(request.fetch)
        session.forget(request.forgotten)
    fetched = acquire_for_session(cluster, broker_id, group_id, member_id,
                                  request.max_records, request.max_bytes)
    by_tp = {(p.topic, p.partition): p for p in fetched}
    for tp in session.partitions:
        p = by_tp.get(tp)
        a = acked.get(tp)
        if a is not None:
            if p is None:
                p = by_tp[tp] = a
            else:
                p.acknowledged, p.acknowledge_error_code = True, a.acknowledge_error_code
        if p is not None and (epoch == INITIAL_EPOCH or p.acquired or p.error_code
                              or p.acknowledged):
            out.partitions.append(p)
        elif epoch == INITIAL_EPOCH:
            out.partitions.append(ShareFetchedPartition(*tp))
    for tp, a in acked.items():  # acknowledged, then forgotten in the same request
        if tp not in session.partitions:
            out.partitions.append(a)
    out.may_wait = not any(p.acquired or p.error_code for p in out.partitions)
    return out


def acquire_for_session(cluster: ClusterPort, broker_id: int, group_id: str, member_id: str,
                        max_records: int, max_bytes: int) -> list[ShareFetchedPartition]:
    """Acquire for the member from each partition of its session on this broker: one
    entry per partition, records or an error or nothing."""
    share = _coordinator(cluster)
    session = share.session_cache(broker_id).get(group_id, member_id)
    if session is None:
        return []
    broker = cluster.brokers[broker_id]
    topics = cluster.controller.topics
    out = []
    budget, left = max_bytes, max_records
    for topic, partition in session.partitions:
        p = ShareFetchedPartition(topic, partition)
        out.append(p)
        code, replica = led_replica(broker, topics, topic, partition)
        if replica is None:
            p.error_code = code
            continue
        if left <= 0 or budget <= 0:
            continue
        sp = share.share_partition(group_id, topic, partition)
        got = sp.acquire(member_id, replica, left, budget)
        p.batches, p.acquired = got.batches, got.ranges
        left -= got.count
        budget -= sum(b.size_bytes for b in got.batches)
    return out


def _release(share: ShareGroupCoordinator, group_id: str, member_id: str,
             tps: Sequence[TP]) -> None:
    for topic, partition in tps:
        sp = share.partitions.get((group_id, topic, partition))
        if sp is not None:
            sp.release_member(member_id)


def share_acknowledge(cluster: ClusterPort, broker_id: int, request: ShareAcknowledgeRequest,
                      caller: Caller = Caller()) -> ShareAcknowledgeResult:
    """ShareAcknowledge: READ on the group (else GROUP_AUTHORIZATION_FAILED) and on each
    topic (else its partitions answer TOPIC_AUTHORIZATION_FAILED, unapplied); never on
    the opening epoch; epoch -1 also closes the session."""
    code, refused = authz.share_group_offsets(cluster, caller, request.group_id,
                                              {t for t, _ in request.acknowledgements})
    if code:
        return ShareAcknowledgeResult(code)
    if not refused:
        return _share_acknowledge(cluster, broker_id, request)
    out = _share_acknowledge(cluster, broker_id, replace(request, acknowledgements={
        tp: b for tp, b in request.acknowledgements.items() if tp[0] not in refused}))
    out.partitions.update({tp: refused[tp[0]] for tp in request.acknowledgements
                           if tp[0] in refused})
    return out


def _share_acknowledge(cluster: ClusterPort, broker_id: int, request: ShareAcknowledgeRequest
                       ) -> ShareAcknowledgeResult:
    share = _coordinator(cluster)
    cache = share.session_cache(broker_id)
    group_id, member_id, epoch = request.group_id, request.member_id, request.share_session_epoch
    if epoch == INITIAL_EPOCH:
        return ShareAcknowledgeResult(errors.INVALID_SHARE_SESSION_EPOCH,
                                      "A share acknowledge may not open a share session")
    code = cache.check(group_id, member_id, epoch, True)
    if code:
        return ShareAcknowledgeResult(code, _SESSION_MESSAGES.get(code))
    out = ShareAcknowledgeResult(acquisition_lock_timeout_ms=share.settings(group_id)
                                 .record_lock_duration_ms)
    for tp, batches in request.acknowledgements.items():
        out.partitions[tp] = _acknowledge(cluster, broker_id, group_id, member_id, tp, batches)
    if epoch == FINAL_EPOCH:
        session = cache.close(group_id, member_id)
        if session is not None:
            _release(share, group_id, member_id, session.partitions)
    else:
        cache.next(group_id, member_id)
    return out


_SESSION_MESSAGES = {
    errors.INVALID_REQUEST: "Acknowledge data present in the initial share fetch",
    errors.SHARE_SESSION_NOT_FOUND: "The share session was not found",
    errors.INVALID_SHARE_SESSION_EPOCH: "The share session epoch is invalid",
}


@dataclass(frozen=True)
class DescribedShareOffset:
    topic: str
    partition: int
    start_offset: int  # the SPSO; -1 for a partition the group has no state for
    leader_epoch: int = -1
    lag: int = -1
    error_code: int = errors.NONE


def share_group_offsets(cluster: ClusterPort, group_id: str,
                        topics: Mapping[str, Sequence[int]] | None = None
                        ) -> list[DescribedShareOffset]:
    """DescribeShareGroupOffsets' read (its authorization is share_groups'): each
    share-partition's start offset and lag (the records below the high watermark the group
    has yet to finish with), as last written to the share state (see
    SharePartition.written); all of the group's share-partitions when `topics` is None."""
    share = _coordinator(cluster)
    if topics is None:
        wanted = sorted((t, p) for g, t, p in share.partitions if g == group_id)
    else:
        wanted = [(t, p) for t, ps in topics.items() for p in ps]
    out = []
    for topic, partition in wanted:
        sp = share.partitions.get((group_id, topic, partition))
        meta = cluster.controller.topics.get(topic)
        if meta is None or not 0 <= partition < len(meta.partitions):
            out.append(DescribedShareOffset(topic, partition, -1,
                                            error_code=errors.UNKNOWN_TOPIC_OR_PARTITION))
            continue
        if sp is None:
            out.append(DescribedShareOffset(topic, partition, -1))
            continue
        leader = cluster.leader_replica(topic, partition)  # type: ignore[attr-defined]
        start, done = sp.written_start_and_done()
        lag, epoch = -1, -1
        if leader is not None:
            lag, epoch = max(0, leader.high_watermark - start - done), leader.leader_epoch
        out.append(DescribedShareOffset(topic, partition, start, epoch, lag))
    return out
