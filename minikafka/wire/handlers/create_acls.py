"""CreateAcls (key 30), v1-v3: ACLs into the metadata log (kafka-acls --add); the rules are
core.api.acls.create_acls."""
from __future__ import annotations

from kafka.protocol.admin import CreateAclsRequest, CreateAclsResponse

from ...core.api import acls
from ..registry import RequestContext
from ._acls import binding
from ._common import caller, serving_broker

API_KEY = 30
MIN_VERSION = 1
MAX_VERSION = 3

_Result = CreateAclsResponse.AclCreationResult


def handle(ctx: RequestContext, request: CreateAclsRequest) -> CreateAclsResponse:
    serving_broker(ctx)
    created = acls.create_acls(ctx.cluster, caller(ctx), [binding(c) for c in request.creations])
    return CreateAclsResponse(version=ctx.api_version, throttle_time_ms=0, results=[
        _Result(error_code=r.code, error_message=r.message) for r in created])
