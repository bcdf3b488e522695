"""CreateAcls (key 30), v1-v3: ACLs into the metadata log (kafka-acls --add).

Needs ALTER on the cluster (else CLUSTER_AUTHORIZATION_FAILED for each); without an
authorizer, SECURITY_DISABLED, as Kafka. An invalid ACL (ANY resource type, a pattern
other than LITERAL or PREFIXED, a principal without "Type:", a CLUSTER not named
kafka-cluster ...) gets INVALID_REQUEST with Kafka's message; an ACL already there is
kept once.
"""
from __future__ import annotations

from kafka.protocol.admin import CreateAclsRequest, CreateAclsResponse

from ...core import errors
from ..registry import RequestContext
from ._acls import SECURITY_DISABLED_MESSAGE, authorizer_configured, binding
from ._common import may_call, serving_broker

API_KEY = 30
MIN_VERSION = 1
MAX_VERSION = 3

_Result = CreateAclsResponse.AclCreationResult


def handle(ctx: RequestContext, request: CreateAclsRequest) -> CreateAclsResponse:
    serving_broker(ctx)
    version = ctx.api_version
    if not authorizer_configured(ctx):
        results = [_Result(error_code=errors.SECURITY_DISABLED,
                           error_message=SECURITY_DISABLED_MESSAGE) for _ in request.creations]
    elif not may_call(ctx, "CreateAcls"):
        results = [_Result(error_code=errors.CLUSTER_AUTHORIZATION_FAILED,
                           error_message=None) for _ in request.creations]
    else:
        created = ctx.cluster.create_acls([binding(c) for c in request.creations])
        results = [_Result(error_code=code, error_message=message or None)
                   for _, code, message in created]
    return CreateAclsResponse(version=version, throttle_time_ms=0, results=results)
