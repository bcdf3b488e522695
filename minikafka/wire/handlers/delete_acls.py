"""DeleteAcls (key 31), v1-v3: remove the ACLs each filter matches (kafka-acls --remove);
each filter's result lists the ACLs it removed. The rules are core.api.acls.delete_acls."""
from __future__ import annotations

from kafka.protocol.admin import DeleteAclsRequest, DeleteAclsResponse

from ...core import errors
from ...core.api import acls
from ..registry import RequestContext
from ._acls import acl_filter
from ._common import caller, serving_broker

API_KEY = 31
MIN_VERSION = 1
MAX_VERSION = 3

_Result = DeleteAclsResponse.DeleteAclsFilterResult
_Matching = _Result.DeleteAclsMatchingAcl


def handle(ctx: RequestContext, request: DeleteAclsRequest) -> DeleteAclsResponse:
    serving_broker(ctx)
    removed = acls.delete_acls(ctx.cluster, caller(ctx), [acl_filter(f) for f in request.filters])
    return DeleteAclsResponse(version=ctx.api_version, throttle_time_ms=0, filter_results=[
        _Result(error_code=error.code, error_message=error.message, matching_acls=[
            _Matching(error_code=errors.NONE, error_message=None,
                      resource_type=int(a.resource_type), resource_name=a.resource_name,
                      pattern_type=int(a.pattern_type), principal=a.principal, host=a.host,
                      operation=int(a.operation), permission_type=int(a.permission_type))
            for a in gone])
        for error, gone in removed])
