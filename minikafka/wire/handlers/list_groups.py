"""ListGroups (key 16), v0-v5: the groups this broker coordinates (a client asks
every broker to list them all), with their state (v4+, filterable) and type (v5+,
filterable: "classic", "consumer" for KIP-848's consumer groups, "share" for KIP-932's
share groups)."""
from __future__ import annotations

from kafka.protocol.admin import ListGroupsRequest, ListGroupsResponse

from ...core import errors
from ...core.api import authz
from ..registry import RequestContext
from ._common import caller, serving_broker

API_KEY = 16
MIN_VERSION = 0
MAX_VERSION = 5

SHARE = "share"
_Group = ListGroupsResponse.ListedGroup


def handle(ctx: RequestContext, request: ListGroupsRequest) -> ListGroupsResponse:
    serving_broker(ctx)
    version = ctx.api_version
    states = list(request.states_filter or []) if version >= 4 else []
    types = list(request.types_filter or []) if version >= 5 else []
    listed = ctx.cluster.groups.list_groups(ctx.broker_id, states or None, types or None)
    groups = [_Group(group_id=g, protocol_type=protocol_type, group_state=state,
                     group_type=kind) for g, protocol_type, state, kind in listed]
    wanted = {t.lower() for t in types}
    if version >= 5 and (not wanted or SHARE in wanted):  # a client before v5 knows no types
        groups += [_Group(group_id=g, protocol_type=SHARE, group_state=state, group_type=SHARE)
                   for g, state in ctx.cluster.share_groups.list_groups(ctx.broker_id,
                                                                        states or None)]
    hidden = authz.hidden_groups(ctx.cluster, caller(ctx), [g.group_id for g in groups])
    groups = [g for g in groups if g.group_id not in hidden]
    return ListGroupsResponse(version=version, throttle_time_ms=0, error_code=errors.NONE,
                              groups=groups)
