"""ShareAcknowledge (key 79), v1-v2: a share consumer's acknowledgements without a fetch
(commitSync, and on close with epoch -1, which also closes the share session and releases
the records the member still holds). Epoch 0 is INVALID_SHARE_SESSION_EPOCH: only a
ShareFetch opens a session. v2 adds IsRenewAck and AcquisitionLockTimeoutMs."""
from __future__ import annotations

from ...core import errors
from ...core.api import share as api
from ...wire.messages import ShareAcknowledgeRequest, ShareAcknowledgeResponse
from ..registry import RequestContext
from ._common import caller, serving_broker
from ._share import known_acknowledgements, topic_id

API_KEY = 79
MIN_VERSION = 1
MAX_VERSION = 2

_Topic = ShareAcknowledgeResponse.ShareAcknowledgeTopicResponse
_Partition = _Topic.PartitionData
_Leader = _Partition.LeaderIdAndEpoch


def handle(ctx: RequestContext, request: ShareAcknowledgeRequest) -> ShareAcknowledgeResponse:
    serving_broker(ctx)
    cluster = ctx.cluster
    acks, unknown = known_acknowledgements(ctx, request.topics)
    # READ on the group and on each topic (core.api.share.share_acknowledge)
    result = api.share_acknowledge(cluster, ctx.broker_id, api.ShareAcknowledgeRequest(
        request.group_id or "", request.member_id or "", request.share_session_epoch, acks),
        caller(ctx))
    if result.error_code == errors.GROUP_AUTHORIZATION_FAILED:
        unknown = []
    topics: dict = {}
    for (name, index), code in result.partitions.items():
        topics.setdefault(topic_id(cluster, name), []).append(_Partition(
            partition_index=index, error_code=code,
            current_leader=_Leader(leader_id=-1, leader_epoch=-1)))
    for key, index, code in unknown:
        topics.setdefault(key, []).append(_Partition(
            partition_index=index, error_code=code,
            current_leader=_Leader(leader_id=-1, leader_epoch=-1)))
    return ShareAcknowledgeResponse(
        version=ctx.api_version, throttle_time_ms=0, error_code=result.error_code,
        error_message=result.error_message,
        acquisition_lock_timeout_ms=result.acquisition_lock_timeout_ms,
        responses=[_Topic(topic_id=t, partitions=ps) for t, ps in topics.items()],
        node_endpoints=[])
