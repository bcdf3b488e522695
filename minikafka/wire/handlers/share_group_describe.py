"""ShareGroupDescribe (key 77), v1: a share group's state, epochs, assignor ("simple") and
members with their subscriptions and assignments; an unknown group is GROUP_ID_NOT_FOUND."""
from __future__ import annotations

from ...core.acl import ResourceType
from ...core.api import authz
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
    for group_id in request.group_ids:
        refused = authz.describe_group(ctx.cluster, caller(ctx), group_id)
        if refused:
            groups.append(_Group(
                error_code=refused, error_message=None,
                group_id=group_id, group_state="", group_epoch=0, assignment_epoch=0,
                assignor_name="", members=[], authorized_operations=NOT_REQUESTED))
            continue
        d = cluster.share_groups.describe(ctx.broker_id, group_id)
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
            assignment_epoch=d.assignment_epoch, assignor_name=d.assignor, members=members,
            # the field is a plain int32 of AclOperation bits here
            authorized_operations=sum(1 << op for op in authorized_operations(
                ctx, ResourceType.GROUP, group_id))
            if request.include_authorized_operations else NOT_REQUESTED))
    return ShareGroupDescribeResponse(version=ctx.api_version, throttle_time_ms=0, groups=groups)
