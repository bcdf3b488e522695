"""DescribeAcls (key 29), v1-v3: the ACLs a filter matches, grouped by resource pattern
(kafka-acls --list). Needs DESCRIBE on the cluster; without an authorizer,
SECURITY_DISABLED."""
from __future__ import annotations

from kafka.protocol.admin import DescribeAclsRequest, DescribeAclsResponse

from ...core import errors
from ..registry import RequestContext
from ._acls import SECURITY_DISABLED_MESSAGE, acl_filter, authorizer_configured, invalid_filter
from ._common import may_call, serving_broker

API_KEY = 29
MIN_VERSION = 1
MAX_VERSION = 3

_Resource = DescribeAclsResponse.DescribeAclsResource
_Acl = _Resource.AclDescription


def handle(ctx: RequestContext, request: DescribeAclsRequest) -> DescribeAclsResponse:
    serving_broker(ctx)
    version = ctx.api_version

    def answer(code: int, message: str | None = None, resources=()) -> DescribeAclsResponse:
        return DescribeAclsResponse(version=version, throttle_time_ms=0, error_code=code,
                                    error_message=message, resources=list(resources))

    if not authorizer_configured(ctx):
        return answer(errors.SECURITY_DISABLED, SECURITY_DISABLED_MESSAGE)
    if not may_call(ctx, "DescribeAcls"):
        return answer(errors.CLUSTER_AUTHORIZATION_FAILED)
    flt = acl_filter(request)
    problem = invalid_filter(flt)
    if problem:
        return answer(errors.INVALID_REQUEST, problem)
    grouped: dict[tuple, list] = {}
    for acl in ctx.cluster.describe_acls(flt):
        key = (int(acl.resource_type), acl.resource_name, int(acl.pattern_type))
        grouped.setdefault(key, []).append(_Acl(
            principal=acl.principal, host=acl.host, operation=int(acl.operation),
            permission_type=int(acl.permission_type)))
    return answer(errors.NONE, None, [
        _Resource(resource_type=t, resource_name=n, pattern_type=p, acls=acls)
        for (t, n, p), acls in grouped.items()])
