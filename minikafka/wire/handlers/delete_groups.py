"""DeleteGroups (key 42), v0-v3: delete empty groups and their committed offsets.
A group with members answers NON_EMPTY_GROUP; an unknown one GROUP_ID_NOT_FOUND. Share
groups (kafka-share-groups.sh --delete) go to the share-group coordinator. v3's per-group
ErrorMessage stays null: those codes say it all."""
from __future__ import annotations

from ...core.api import authz
from ..messages import DeleteGroupsRequest, DeleteGroupsResponse
from ..registry import RequestContext
from ._common import caller, serving_broker

API_KEY = 42
MIN_VERSION = 0
MAX_VERSION = 3

_Result = DeleteGroupsResponse.DeletableGroupResult


def handle(ctx: RequestContext, request: DeleteGroupsRequest) -> DeleteGroupsResponse:
    serving_broker(ctx)
    share = ctx.cluster.share_groups
    names = list(request.groups_names)
    refused = authz.delete_groups(ctx.cluster, caller(ctx), names)
    allowed = [g for g in names if g not in refused]
    results = ctx.cluster.groups.delete_groups(
        ctx.broker_id, [g for g in allowed if g not in share.groups])
    for group_id in allowed:
        if group_id in share.groups:
            results[group_id] = share.delete_group(group_id, ctx.broker_id)
    results = {g: refused.get(g) or results[g] for g in names}
    return DeleteGroupsResponse(
        version=ctx.api_version, throttle_time_ms=0,
        results=[_Result(group_id=g, error_code=code) for g, code in results.items()])
