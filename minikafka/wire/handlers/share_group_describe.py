"""ShareGroupDescribe (key 77), v1: a share group's state, epochs, assignor ("simple") and
members with their subscriptions and assignments; an unknown group is GROUP_ID_NOT_FOUND
(core.api.share_groups.share_group_describe, with its authorization)."""
from __future__ import annotations

from ...core import errors
from ...core.acl import ResourceType
from ...core.api import share_groups as api
from ...wire.messages import ShareGroupDescribeRequest, ShareGroupDescribeResponse
from ..registry import RequestContext
from ._common import NOT_REQUESTED, authorized_operations, caller, serving_broker
from ._share import topic_id

API_KEY = 77
MIN_VERSION = 1
MAX_VERSION = 1

_Group = ShareGroupDescribeResponse.DescribedGroup
_Member = _Group.Member
_Assignment = _Member.Assignment
_TopicPartitions = _Assignment.TopicPartitions


def handle(ctx: RequestContext, request: ShareGroupDescribeRequest) -> ShareGroupDescribeResponse:
    serving_broker(ctx)
    cluster = ctx.cluster
    groups = []
    who = caller(ctx)
    for group_id in request.group_ids:
        d = api.share_group_describe(cluster, who, ctx.broker_id, group_id)
        refused = d.error_code == errors.GROUP_AUTHORIZATION_FAILED
        members = [_Member(
            member_id=m.member_id, rack_id=m.rack_id, member_epoch=m.member_epoch,
            client_id=m.client_id, client_host=m.client_host,
            subscribed_topic_names=list(m.subscribed_topics),
            assignment=_Assignment(topic_partitions=[
                _TopicPartitions(topic_id=topic_id(cluster, t), topic_name=t, partitions=ps)
                for t, ps in sorted(m.assignment.items())]))
            for m in d.members]
        groups.append(_Group(
            error_code=d.error_code, error_message=d.error_message, group_id=group_id,
            group_state=d.state if not d.error_code else "", group_epoch=d.group_epoch,
            assignment_epoch=d.assignment_epoch, assignor_name="" if refused else d.assignor,
            members=members,
            # the field is a plain int32 of AclOperation bits here
            authorized_operations=sum(1 << op for op in authorized_operations(
                ctx, ResourceType.GROUP, group_id))
            if request.include_authorized_operations and not refused else NOT_REQUESTED))
    return ShareGroupDescribeResponse(version=ctx.api_version, throttle_time_ms=0, groups=groups)
