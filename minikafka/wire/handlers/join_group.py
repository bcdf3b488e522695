"""JoinGroup (key 11), v0-v9: a member joins the group's next generation.

The answer waits at the rebalance barrier (a Deferred) until every known member
has rejoined or the rebalance timeout passes; the leader's answer carries every
member's subscription so it can run the assignor.

KIP-394 (v4+): a new dynamic member first gets MEMBER_ID_REQUIRED and its id, and
joins again with it. Older versions cannot do that round trip, so the handler does
it for them at once, as Kafka's coordinator adds such members directly.
"""
from __future__ import annotations

from kafka.protocol.consumer.group import JoinGroupRequest, JoinGroupResponse

from ...core import api, errors
from ...core.groups.classic import JoinResult
from ..registry import RequestContext
from ._common import caller, serving_broker
from ._groups import answer_later, member_host

API_KEY = 11
MIN_VERSION = 0
MAX_VERSION = 9

_Member = JoinGroupResponse.JoinGroupResponseMember


def _response(version: int, r: JoinResult) -> JoinGroupResponse:
    # Before v7 the protocol name is not nullable: Kafka sends "" on errors.
    name = r.protocol_name if r.protocol_name is not None or version >= 7 else ""
    return JoinGroupResponse(
        version=version, throttle_time_ms=0, error_code=r.error, generation_id=r.generation_id,
        protocol_type=r.protocol_type, protocol_name=name, leader=r.leader,
        skip_assignment=r.skip_assignment, member_id=r.member_id,
        members=[_Member(member_id=m, group_instance_id=instance, metadata=metadata)
                 for m, instance, metadata in r.members])


def handle(ctx: RequestContext, request: JoinGroupRequest):
    serving_broker(ctx)
    version = ctx.api_version
    instance_id = request.group_instance_id if version >= 5 else None
    # v0 has no rebalance timeout: the session timeout serves for both.
    rebalance_ms = request.rebalance_timeout_ms if version >= 1 else request.session_timeout_ms
    protocols = [(p.name, bytes(p.metadata)) for p in request.protocols]
    reason = (request.reason if version >= 8 else None) or ""
    who = caller(ctx)

    def join(member_id: str, respond) -> None:
        api.join_group(
            ctx.cluster, who, ctx.broker_id, request.group_id, member_id, instance_id,
            ctx.client_id, member_host(ctx), request.protocol_type, protocols,
            request.session_timeout_ms, rebalance_ms, respond, reason)

    def start(respond) -> None:
        def first(result: JoinResult) -> None:
            if result.error == errors.MEMBER_ID_REQUIRED and version < 4:
                join(result.member_id, respond)
            else:
                respond(result)
        join(request.member_id, first)

    def timed_out() -> JoinGroupResponse:
        return _response(version, JoinResult(errors.REBALANCE_IN_PROGRESS, request.member_id))

    return answer_later(ctx, start, lambda r: _response(version, r),
                        max(rebalance_ms, request.session_timeout_ms), timed_out)
