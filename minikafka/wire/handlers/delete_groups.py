"""DeleteGroups (key 42), v0-v2: delete empty groups and their committed offsets.
A group with members answers NON_EMPTY_GROUP; an unknown one GROUP_ID_NOT_FOUND. Share
groups (kafka-share-groups.sh --delete) go to the share-group coordinator."""
from __future__ import annotations

from kafka.protocol.admin import DeleteGroupsRequest, DeleteGroupsResponse

from ..registry import RequestContext
from ._common import serving_broker

API_KEY = 42
MIN_VERSION = 0
MAX_VERSION = 2

_Result = DeleteGroupsResponse.DeletableGroupResult


def handle(ctx: RequestContext, request: DeleteGroupsRequest) -> DeleteGroupsResponse:
    serving_broker(ctx)
    share = ctx.cluster.share_groups
    names = list(request.groups_names)
    results = ctx.cluster.groups.delete_groups(
        ctx.broker_id, [g for g in names if g not in share.groups])
    for group_id in names:
        if group_id in share.groups:
            results[group_id] = share.delete_group(group_id, ctx.broker_id)
    return DeleteGroupsResponse(
        version=ctx.api_version, throttle_time_ms=0,
        results=[_Result(group_id=g, error_code=code) for g, code in results.items()])
