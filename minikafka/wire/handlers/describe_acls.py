"""DescribeAcls (key 29), v1-v3: the ACLs a filter matches, grouped by resource pattern
(kafka-acls --list); the rules are core.api.acls.describe_acls."""
from __future__ import annotations

from kafka.protocol.admin import DescribeAclsRequest, DescribeAclsResponse

from ...core.api import acls
from ..registry import RequestContext
from ._acls import acl_filter
from ._common import caller, serving_broker

API_KEY = 29
MIN_VERSION = 1
MAX_VERSION = 3

_Resource = DescribeAclsResponse.DescribeAclsResource
_Acl = _Resource.AclDescription


def handle(ctx: RequestContext, request: DescribeAclsRequest) -> DescribeAclsResponse:
    serving_broker(ctx)
    error, found = acls.describe_acls(ctx.cluster, caller(ctx), acl_filter(request))
    grouped: dict[tuple, list] = {}
    for acl in found:
        key = (int(acl.resource_type), acl.resource_name, int(acl.pattern_type))
        grouped.setdefault(key, []).append(_Acl(
            principal=acl.principal, host=acl.host, operation=int(acl.operation),
            permission_type=int(acl.permission_type)))
    return DescribeAclsResponse(
        version=ctx.api_version, throttle_time_ms=0, error_code=error.code,
        error_message=error.message, resources=[
            _Resource(resource_type=t, resource_name=n, pattern_type=p, acls=entries)
            for (t, n, p), entries in grouped.items()])
