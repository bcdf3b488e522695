"""ShareGroupHeartbeat (key 76), v1: join a share group (epoch 0), stay in it, leave it
(epoch -1); the answer carries the member epoch, the heartbeat interval and, when it
changed, the member's assignment by topic id (KIP-932). The member id is the client's own
(KIP-1082): an empty one is INVALID_REQUEST. Authorization and the answer are
core.api.share_groups.share_group_heartbeat's, as the in-process share consumer's."""
from __future__ import annotations

from ...core.api import share_groups as api
from ...wire.messages import ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse
from ..registry import RequestContext
from ._common import caller, serving_broker
from ._groups import member_host
from ._share import topic_id

API_KEY = 76
MIN_VERSION = 1
MAX_VERSION = 1

_Assignment = ShareGroupHeartbeatResponse.Assignment


def handle(ctx: RequestContext, request: ShareGroupHeartbeatRequest) -> ShareGroupHeartbeatResponse:
    serving_broker(ctx)
    result = api.share_group_heartbeat(
        ctx.cluster, caller(ctx), ctx.broker_id, request.group_id, request.member_id,
        request.member_epoch, request.subscribed_topic_names, request.rack_id, ctx.client_id,
        member_host(ctx))
    assignment = None
    if result.assignment is not None:
        assignment = _Assignment(topic_partitions=[
            _Assignment.TopicPartitions(topic_id=topic_id(ctx.cluster, t), partitions=ps)
            for t, ps in sorted(result.assignment.items())])
    return ShareGroupHeartbeatResponse(
        version=ctx.api_version, throttle_time_ms=0, error_code=result.error_code,
        error_message=result.error_message, member_id=result.member_id,
        member_epoch=result.member_epoch, heartbeat_interval_ms=result.heartbeat_interval_ms,
        assignment=assignment)
