"""ShareAcknowledge (key 79), v1-v2: a share consumer's acknowledgements without a fetch
(commitSync, and on close with epoch -1, which also closes the share session and releases
the records the member still holds). Epoch 0 is INVALID_SHARE_SESSION_EPOCH: only a
ShareFetch opens a session. v2 adds IsRenewAck and AcquisitionLockTimeoutMs."""
from __future__ import annotations

from ...core.api import share as api
from ...wire.messages import ShareAcknowledgeRequest, ShareAcknowledgeResponse
from ..registry import RequestContext
from ._common import serving_broker
from ._share import acknowledgements, topic_id, topic_name

API_KEY = 79
MIN_VERSION = 1
MAX_VERSION = 2

_Topic = ShareAcknowledgeResponse.ShareAcknowledgeTopicResponse
_Partition = _Topic.PartitionData
_Leader = _Partition.LeaderIdAndEpoch
UNKNOWN_TOPIC_ID = 100


def handle(ctx: RequestContext, request: ShareAcknowledgeRequest) -> ShareAcknowledgeResponse:
    serving_broker(ctx)
    cluster = ctx.cluster
    acks: dict[tuple[str, int], list] = {}
    unknown: list[tuple] = []
    for topic in request.topics:
        name = topic_name(cluster, topic.topic_id)
        for p in topic.partitions:
            if name is None:
                unknown.append((topic.topic_id, p.partition_index))
            else:
                acks[(name, p.partition_index)] = acknowledgements(p.acknowledgement_batches)
    result = api.share_acknowledge(cluster, ctx.broker_id, api.ShareAcknowledgeRequest(
        request.group_id or "", request.member_id or "", request.share_session_epoch, acks))
    topics: dict = {}
    for (name, index), code in result.partitions.items():
        topics.setdefault(topic_id(cluster, name), []).append(_Partition(
            partition_index=index, error_code=code,
            current_leader=_Leader(leader_id=-1, leader_epoch=-1)))
    for key, index in unknown:
        topics.setdefault(key, []).append(_Partition(
            partition_index=index, error_code=UNKNOWN_TOPIC_ID,
            current_leader=_Leader(leader_id=-1, leader_epoch=-1)))
    return ShareAcknowledgeResponse(
        version=ctx.api_version, throttle_time_ms=0, error_code=result.error_code,
        error_message=result.error_message,
        acquisition_lock_timeout_ms=result.acquisition_lock_timeout_ms,
        responses=[_Topic(topic_id=t, partitions=ps) for t, ps in topics.items()],
        node_endpoints=[])
