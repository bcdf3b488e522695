"""DeleteGroups (key 42), v0-v3: delete empty groups and their committed offsets.
A group with members answers NON_EMPTY_GROUP; an unknown one GROUP_ID_NOT_FOUND. Share
groups (kafka-share-groups.sh --delete) go to the share-group coordinator. v3's per-group
ErrorMessage stays null: those codes say it all."""
from __future__ import annotations

from ...core import api
from ..messages import DeleteGroupsRequest, DeleteGroupsResponse
from ..registry import RequestContext
from ._common import caller, serving_broker

API_KEY = 42
MIN_VERSION = 0
MAX_VERSION = 3

_Result = DeleteGroupsResponse.DeletableGroupResult


def handle(ctx: RequestContext, request: DeleteGroupsRequest) -> DeleteGroupsResponse:
    serving_broker(ctx)
    results = api.delete_groups(ctx.cluster, caller(ctx), ctx.broker_id,
                                request.groups_names)
    return DeleteGroupsResponse(
        version=ctx.api_version, throttle_time_ms=0,
        results=[_Result(group_id=g, error_code=code) for g, code in results.items()])
