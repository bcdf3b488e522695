"""ListGroups (key 16), v0-v5: the groups this broker coordinates (a client asks
every broker to list them all), with their state (v4+, filterable) and type (v5+,
"classic" for consumer groups, "share" for share groups, KIP-932)."""
from __future__ import annotations

from kafka.protocol.admin import ListGroupsRequest, ListGroupsResponse

from ...core import errors
from ..registry import RequestContext
from ._common import serving_broker

API_KEY = 16
MIN_VERSION = 0
MAX_VERSION = 5

CLASSIC = "classic"
SHARE = "share"
_Group = ListGroupsResponse.ListedGroup


def handle(ctx: RequestContext, request: ListGroupsRequest) -> ListGroupsResponse:
    serving_broker(ctx)
    version = ctx.api_version
    states = list(request.states_filter or []) if version >= 4 else []
    types = {t.lower() for t in request.types_filter or []} if version >= 5 else set()
    listed = [] if types and CLASSIC not in types else \
        ctx.cluster.groups.list_groups(ctx.broker_id, states or None)
    groups = [_Group(group_id=g, protocol_type=protocol_type, group_state=state,
                     group_type=CLASSIC) for g, protocol_type, state in listed]
    if version >= 5 and (not types or SHARE in types):  # a client before v5 knows no types
        groups += [_Group(group_id=g, protocol_type=SHARE, group_state=state, group_type=SHARE)
                   for g, state in ctx.cluster.share_groups.list_groups(ctx.broker_id,
                                                                         states or None)]
    return ListGroupsResponse(version=version, throttle_time_ms=0, error_code=errors.NONE,
                              groups=groups)
