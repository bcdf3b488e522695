"""Heartbeat (key 12), v0-v4: a member is alive; REBALANCE_IN_PROGRESS tells it to
rejoin. A member whose heartbeats stop for session.timeout.ms is removed by the
coordinator's timer, which runs on the served cluster's real-time clock."""
from __future__ import annotations

from kafka.protocol.consumer.group import HeartbeatRequest, HeartbeatResponse

from ...core import api
from ..registry import RequestContext
from ._common import (
    caller,
    serving_broker,
)

API_KEY = 12
MIN_VERSION = 0
MAX_VERSION = 4


def handle(ctx: RequestContext, request: HeartbeatRequest) -> HeartbeatResponse:
    serving_broker(ctx)
    instance_id = request.group_instance_id if ctx.api_version >= 3 else None
    code = api.heartbeat(ctx.cluster, caller(ctx), ctx.broker_id, request.group_id,
                         request.member_id, instance_id, request.generation_id)
    return HeartbeatResponse(version=ctx.api_version, throttle_time_ms=0, error_code=code)
