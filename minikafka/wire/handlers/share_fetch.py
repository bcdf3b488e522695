"""ShareFetch (key 78), v1-v2: a share consumer's fetch (KIP-932). Acknowledgements it
carries are applied first, then the member's share session moves on (epoch 0 opens it,
-1 closes it and releases what the member holds), then records are acquired for the
member from the session's partitions this broker leads. Each partition's answer has the
log batches holding the acquired records, the acquired ranges with their delivery counts,
and the acknowledgement's own error code.

When nothing could be acquired the request waits up to MaxWaitMs (a Deferred the server
re-polls), as Kafka's DelayedShareFetch does; acknowledgements are never held back.
v2 adds ShareAcquireMode and IsRenewAck (RENEW acknowledgements, KIP-1222): minikafka
acquires record by record up to MaxRecords, which serves both acquire modes.
"""
from __future__ import annotations

from ...core import errors
from ...core.api import share as api
from ...core.api.share import ShareFetchedPartition, ShareFetchResult
from ...core.errors import NOT_LEADER_OR_FOLLOWER
from ...core.share.sessions import FINAL_EPOCH
from ...wire.messages import ShareFetchRequest, ShareFetchResponse
from ..registry import Deferred, RequestContext
from ._common import caller, current_leader, node_endpoints, serving_broker
from ._share import known_acknowledgements, records_bytes, topic_id, topic_name

API_KEY = 78
MIN_VERSION = 1
MAX_VERSION = 2

_Topic = ShareFetchResponse.ShareFetchableTopicResponse
_Partition = _Topic.PartitionData
_Leader = _Partition.LeaderIdAndEpoch
_Acquired = _Partition.AcquiredRecords
_Endpoint = ShareFetchResponse.NodeEndpoint


def handle(ctx: RequestContext, request: ShareFetchRequest) -> ShareFetchResponse | Deferred:
    broker = serving_broker(ctx)
    cluster = ctx.cluster
    fetch, unknown = known_acknowledgements(ctx, request.topics)
    forgotten = [(name, p) for t in request.forgotten_topics_data
                 if (name := topic_name(cluster, t.topic_id)) is not None for p in t.partitions]
    core = api.ShareFetchRequest(
        request.group_id or "", request.member_id or "", request.share_session_epoch, fetch,
        forgotten, request.max_records if request.max_records > 0 else 500,
        request.max_bytes)
    # READ on the group and on each topic (core.api.share.share_fetch)
    result = api.share_fetch(cluster, ctx.broker_id, core, caller(ctx))
    if result.error_code == errors.GROUP_AUTHORIZATION_FAILED:
        return _answer(ctx, result, [])
    if (result.error_code or not result.may_wait or request.max_wait_ms <= 0
            or core.share_session_epoch == FINAL_EPOCH):
        return _answer(ctx, result, unknown)

    def poll() -> ShareFetchResponse | None:
        if not broker.running:
            return None
        more = api.acquire_for_session(cluster, ctx.broker_id, core.group_id, core.member_id,
                                       core.max_records, core.max_bytes)
        if not any(p.acquired or p.error_code for p in more):
            return None
        return _answer(ctx, _merge(result, more), unknown)

    def on_timeout() -> ShareFetchResponse:
        return _answer(ctx, result, unknown)

    return Deferred(ctx.now_ms + request.max_wait_ms, poll, on_timeout)


def _merge(result: ShareFetchResult, more: list[ShareFetchedPartition]) -> ShareFetchResult:
    """The first pass's answer (acknowledgement outcomes) with what a later pass acquired."""
    by_tp = {(p.topic, p.partition): p for p in result.partitions}
    for p in more:
        mine = by_tp.get((p.topic, p.partition))
        if mine is None:
            if p.acquired or p.error_code:
                result.partitions.append(p)
            continue
        mine.batches, mine.acquired, mine.error_code = p.batches, p.acquired, p.error_code
    return result


def _answer(ctx: RequestContext, result: ShareFetchResult, unknown: list) -> ShareFetchResponse:
    cluster = ctx.cluster
    topics: dict = {}
    leaders: set[int] = set()
    for p in result.partitions:
        leader = None
        if p.error_code == NOT_LEADER_OR_FOLLOWER:
            hint = current_leader(cluster, p.topic, p.partition)
            if hint is not None:
                leader = _Leader(leader_id=hint[0], leader_epoch=hint[1])
                leaders.add(hint[0])
        topics.setdefault(topic_id(cluster, p.topic), []).append(_Partition(
            partition_index=p.partition, error_code=p.error_code, error_message=p.error_message,
            acknowledge_error_code=p.acknowledge_error_code, acknowledge_error_message=None,
            current_leader=leader or _Leader(leader_id=-1, leader_epoch=-1),
            records=records_bytes(p.batches),
            acquired_records=[_Acquired(first_offset=r.first_offset, last_offset=r.last_offset,
                                        delivery_count=r.delivery_count) for r in p.acquired]))
    for key, index, code in unknown:
        topics.setdefault(key, []).append(_Partition(
            partition_index=index, error_code=code,
            current_leader=_Leader(leader_id=-1, leader_epoch=-1), records=None,
            acquired_records=[]))
    return ShareFetchResponse(
        version=ctx.api_version, throttle_time_ms=0, error_code=result.error_code,
        error_message=result.error_message,
        acquisition_lock_timeout_ms=result.acquisition_lock_timeout_ms,
        responses=[_Topic(topic_id=t, partitions=ps) for t, ps in topics.items()],
        node_endpoints=[_Endpoint(node_id=n, host=h, port=port, rack=r)
                        for n, h, port, r in node_endpoints(cluster, leaders)])
