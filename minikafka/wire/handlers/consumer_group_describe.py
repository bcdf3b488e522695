"""ConsumerGroupDescribe (key 69), v0-v1: what `kafka-consumer-groups.sh --describe` and
the Java Admin read for a consumer group (KIP-848): its state, group and assignment
epochs, assignor, and each member's epoch, assignment and target assignment. A classic
group answers GROUP_ID_NOT_FOUND ("... is not a consumer group"), as in Kafka; the
authorization is core.api.consumer_group_describe's."""
from __future__ import annotations

import uuid

from ...core import api
from ...core.acl import ResourceType
from ..messages import ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse
from ..registry import RequestContext
from ._common import NOT_REQUESTED, authorized_operations, caller, serving_broker

API_KEY = 69
MIN_VERSION = 0
MAX_VERSION = 1

_Group = ConsumerGroupDescribeResponse.DescribedGroup
_Member = _Group.Member
_Assignment = _Member.Assignment
_TopicPartitions = _Assignment.TopicPartitions



def _assignment(ctx: RequestContext, rows) -> _Assignment:
    groups = ctx.cluster.groups.consumer
    return _Assignment(topic_partitions=[
        _TopicPartitions(topic_id=uuid.UUID(t), topic_name=groups.topic_name(t),
                         partitions=list(ps)) for t, ps in rows])


def handle(ctx: RequestContext,
           request: ConsumerGroupDescribeRequest) -> ConsumerGroupDescribeResponse:
    serving_broker(ctx)
    version = ctx.api_version
    out = []
    who = caller(ctx)
    for group_id in request.group_ids:
        g = api.consumer_group_describe(ctx.cluster, who, ctx.broker_id, group_id)
        # a bit field of AclOperation codes; INT32_MIN means "not requested"
        operations = sum(1 << op for op in authorized_operations(
            ctx, ResourceType.GROUP, group_id)) \
            if request.include_authorized_operations and not g.error else NOT_REQUESTED
        out.append(_Group(
            error_code=g.error, error_message=g.error_message, group_id=group_id,
            group_state=g.state, group_epoch=g.group_epoch,
            assignment_epoch=g.assignment_epoch, assignor_name=g.assignor_name,
            members=[_Member(
                member_id=m.member_id, instance_id=m.instance_id, rack_id=m.rack_id,
                member_epoch=m.member_epoch, client_id=m.client_id, client_host=m.client_host,
                subscribed_topic_names=list(m.subscribed_topic_names),
                subscribed_topic_regex=m.subscribed_topic_regex,
                assignment=_assignment(ctx, m.assignment),
                target_assignment=_assignment(ctx, m.target_assignment),
                member_type=m.member_type) for m in g.members],
            authorized_operations=operations))
    return ConsumerGroupDescribeResponse(version=version, throttle_time_ms=0, groups=out)
