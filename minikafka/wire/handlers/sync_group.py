"""SyncGroup (key 14), v0-v5: the leader hands in the assignment, every member gets
its share.

A follower's SyncGroup waits (a Deferred) until the leader's assignment has been
written to __consumer_offsets, or until the coordinator gives up on the leader.
v5 carries the protocol type and name, which must match the group's.
"""
from __future__ import annotations

from kafka.protocol.consumer.group import SyncGroupRequest, SyncGroupResponse

from ...core import api, errors
from ...core.groups.classic import SyncResult
from ..registry import RequestContext
from ._common import caller, serving_broker
from ._groups import answer_later, group_rebalance_timeout

API_KEY = 14
MIN_VERSION = 0
MAX_VERSION = 5


def _response(version: int, r: SyncResult) -> SyncGroupResponse:
    return SyncGroupResponse(version=version, throttle_time_ms=0, error_code=r.error,
                             protocol_type=r.protocol_type, protocol_name=r.protocol_name,
                             assignment=r.assignment)


def handle(ctx: RequestContext, request: SyncGroupRequest):
    serving_broker(ctx)
    version = ctx.api_version
    group_id = request.group_id
    instance_id = request.group_instance_id if version >= 3 else None
    protocol_type = request.protocol_type if version >= 5 else None
    protocol_name = request.protocol_name if version >= 5 else None
    assignments = {a.member_id: bytes(a.assignment) for a in request.assignments}
    wait_ms = group_rebalance_timeout(ctx, group_id)

    def start(respond) -> None:
        api.sync_group(ctx.cluster, caller(ctx), ctx.broker_id, group_id, request.member_id,
                       instance_id, request.generation_id, protocol_type, protocol_name,
                       assignments, respond)

    return answer_later(ctx, start, lambda r: _response(version, r), wait_ms,
                        lambda: _response(version, SyncResult(errors.REBALANCE_IN_PROGRESS)))
