"""ListGroups (key 16), v0-v5: the groups this broker coordinates (a client asks
every broker to list them all), with their state (v4+, filterable) and type (v5+,
filterable: "classic", "consumer" for KIP-848's consumer groups, "share" for KIP-932's
share groups)."""
from __future__ import annotations

from kafka.protocol.admin import ListGroupsRequest, ListGroupsResponse

from ...core import api, errors
from ..registry import RequestContext
from ._common import caller, serving_broker

API_KEY = 16
MIN_VERSION = 0
MAX_VERSION = 5

_Group = ListGroupsResponse.ListedGroup


def handle(ctx: RequestContext, request: ListGroupsRequest) -> ListGroupsResponse:
    serving_broker(ctx)
    version = ctx.api_version
    listed = api.list_groups(ctx.cluster, caller(ctx), ctx.broker_id,
                             request.states_filter if version >= 4 else None,
                             request.types_filter if version >= 5 else None,
                             with_share=version >= 5)
    return ListGroupsResponse(
        version=version, throttle_time_ms=0, error_code=errors.NONE,
        groups=[_Group(group_id=g, protocol_type=protocol_type, group_state=state,
                       group_type=kind) for g, protocol_type, state, kind in listed])
