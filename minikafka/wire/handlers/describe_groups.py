"""DescribeGroups (key 15), v0-v6: state, protocol and members of groups.

As Kafka's coordinator describes them: a Stable group shows its protocol and each
member's subscription and assignment; in any other state the members are listed
without them. An unknown group is Dead, with GROUP_ID_NOT_FOUND from v6 on
(KIP-1043); so is a consumer group (KIP-848), which ConsumerGroupDescribe describes.
DESCRIBE on the group is needed (GROUP_AUTHORIZATION_FAILED); authorized_operations (v3+,
when asked) are the principal's.
"""
from __future__ import annotations

from kafka.protocol.admin import DescribeGroupsRequest, DescribeGroupsResponse

from ...core import api, errors
from ...core.acl import ResourceType
from ...core.groups.classic import STABLE
from ..registry import RequestContext
from ._common import authorized_operations, caller, serving_broker

API_KEY = 15
MIN_VERSION = 0
MAX_VERSION = 6

_Group = DescribeGroupsResponse.DescribedGroup
_Member = _Group.DescribedGroupMember


def _describe(ctx: RequestContext, group_id: str, wanted: bool) -> _Group:
    d = api.describe_group(ctx.cluster, caller(ctx), ctx.broker_id, group_id)
    code, message = d.error, d.error_message
    operations = authorized_operations(ctx, ResourceType.GROUP, group_id) \
        if wanted and code != errors.GROUP_AUTHORIZATION_FAILED else None
    if code == errors.GROUP_ID_NOT_FOUND and ctx.api_version < 6:  # before KIP-1043
        code, message = errors.NONE, None
    stable = d.state == STABLE
    members = [_Member(member_id=m.member_id, group_instance_id=m.group_instance_id,
                       client_id=m.client_id, client_host=m.client_host,
                       member_metadata=m.metadata if stable else b"",
                       member_assignment=m.assignment if stable else b"")
               for m in d.members]
    return _Group(error_code=code, error_message=message, group_id=group_id,
                  group_state=d.state, protocol_type=d.protocol_type,
                  protocol_data=d.protocol_name if stable else "", members=members,
                  authorized_operations=operations if code == errors.NONE else None)


def handle(ctx: RequestContext, request: DescribeGroupsRequest) -> DescribeGroupsResponse:
    serving_broker(ctx)
    version = ctx.api_version
    # a set of AclOperation bits in kafka-python; None encodes "not requested"
    wanted = version >= 3 and request.include_authorized_operations
    return DescribeGroupsResponse(
        version=version, throttle_time_ms=0,
        groups=[_describe(ctx, g, wanted) for g in request.groups])
