"""LeaveGroup (key 13), v0-v5: members leave at once instead of waiting out their
session timeout, so the group rebalances immediately.

v0-v2 name one member and answer with its error; v3+ (KIP-345) name several, by
member id or group instance id (the admin client's removeMembersFromConsumerGroup),
and answer per member, the top-level error being only the coordinator's.
"""
from __future__ import annotations

from kafka.protocol.consumer.group import LeaveGroupRequest, LeaveGroupResponse

from ...core import api, errors
from ..registry import RequestContext
from ._common import (
    caller,
    serving_broker,
)

API_KEY = 13
MIN_VERSION = 0
MAX_VERSION = 5

_Member = LeaveGroupResponse.MemberResponse


def handle(ctx: RequestContext, request: LeaveGroupRequest) -> LeaveGroupResponse:
    serving_broker(ctx)
    version = ctx.api_version
    if version < 3:
        code, per_member = api.leave_group(ctx.cluster, caller(ctx), ctx.broker_id,
                                           request.group_id, [(request.member_id, None)])
        if code == errors.NONE and per_member:
            code = per_member[0]
        return LeaveGroupResponse(version=version, throttle_time_ms=0, error_code=code)
    members = [(m.member_id, m.group_instance_id) for m in request.members]
    reasons = {(m.reason if version >= 5 else None) for m in request.members} - {None, ""}
    reason = reasons.pop() if len(reasons) == 1 else api.DEFAULT_LEAVE_REASON
    code, per_member = api.leave_group(ctx.cluster, caller(ctx), ctx.broker_id,
                                       request.group_id, members, reason)
    answers = [] if code != errors.NONE else [
        _Member(member_id=m, group_instance_id=instance, error_code=c)
        for (m, instance), c in zip(members, per_member)]
    return LeaveGroupResponse(version=version, throttle_time_ms=0, error_code=code,
                              members=answers)
