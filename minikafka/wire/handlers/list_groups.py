"""ListGroups (key 16), v0-v5: the groups this broker coordinates (a client asks
every broker to list them all), with their state (v4+, filterable) and type (v5+,
"classic": minikafka's groups use the classic protocol, not KIP-848's)."""
from __future__ import annotations

from kafka.protocol.admin import ListGroupsRequest, ListGroupsResponse

from ...core import errors
from ...core.acl import AclOperation, ResourceType
from ..registry import RequestContext
from ._common import authorize, serving_broker

API_KEY = 16
MIN_VERSION = 0
MAX_VERSION = 5

CLASSIC = "classic"
_Group = ListGroupsResponse.ListedGroup


def handle(ctx: RequestContext, request: ListGroupsRequest) -> ListGroupsResponse:
    serving_broker(ctx)
    version = ctx.api_version
    states = list(request.states_filter or []) if version >= 4 else []
    types = {t.lower() for t in request.types_filter or []} if version >= 5 else set()
    listed = [] if types and CLASSIC not in types else \
        ctx.cluster.groups.list_groups(ctx.broker_id, states or None)
    # DESCRIBE on the cluster lists every group, else those the principal may DESCRIBE.
    if not authorize(ctx, AclOperation.DESCRIBE, ResourceType.CLUSTER):
        listed = [g for g in listed
                  if authorize(ctx, AclOperation.DESCRIBE, ResourceType.GROUP, g[0])]
    return ListGroupsResponse(
        version=version, throttle_time_ms=0, error_code=errors.NONE,
        groups=[_Group(group_id=g, protocol_type=protocol_type, group_state=state,
                       group_type=CLASSIC) for g, protocol_type, state in listed])
