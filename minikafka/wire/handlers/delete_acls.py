"""DeleteAcls (key 31), v1-v3: remove the ACLs each filter matches (kafka-acls
--remove); each filter's result lists the ACLs it removed. Needs ALTER on the
cluster; without an authorizer, SECURITY_DISABLED."""
from __future__ import annotations

from kafka.protocol.admin import DeleteAclsRequest, DeleteAclsResponse

from ...core import errors
from ..registry import RequestContext
from ._acls import SECURITY_DISABLED_MESSAGE, acl_filter, authorizer_configured, invalid_filter
from ._common import may_call, serving_broker

API_KEY = 31
MIN_VERSION = 1
MAX_VERSION = 3

_Result = DeleteAclsResponse.DeleteAclsFilterResult
_Matching = _Result.DeleteAclsMatchingAcl


def handle(ctx: RequestContext, request: DeleteAclsRequest) -> DeleteAclsResponse:
    serving_broker(ctx)
    version = ctx.api_version

    def failed(code: int, message: str | None = None) -> _Result:
        return _Result(error_code=code, error_message=message, matching_acls=[])

    if not authorizer_configured(ctx):
        results = [failed(errors.SECURITY_DISABLED, SECURITY_DISABLED_MESSAGE)
                   for _ in request.filters]
    elif not may_call(ctx, "DeleteAcls"):
        results = [failed(errors.CLUSTER_AUTHORIZATION_FAILED) for _ in request.filters]
    else:
        filters = [acl_filter(f) for f in request.filters]
        valid = [f for f in filters if invalid_filter(f) is None]
        removed = iter(ctx.cluster.delete_acls(valid))
        results = []
        for flt in filters:
            problem = invalid_filter(flt)
            if problem:
                results.append(failed(errors.INVALID_REQUEST, problem))
                continue
            results.append(_Result(error_code=errors.NONE, error_message=None, matching_acls=[
                _Matching(error_code=errors.NONE, error_message=None,
                          resource_type=int(a.resource_type), resource_name=a.resource_name,
                          pattern_type=int(a.pattern_type), principal=a.principal, host=a.host,
                          operation=int(a.operation), permission_type=int(a.permission_type))
                for a in next(removed)]))
    return DeleteAclsResponse(version=version, throttle_time_ms=0, filter_results=results)
