"""DescribeUserScramCredentials (key 50), v0: each user's SCRAM mechanisms and
iterations, never the keys (kafka-configs --describe --entity-type users). All users
with a credential, or the ones asked for (RESOURCE_NOT_FOUND for a user without one,
DUPLICATE_RESOURCE for one asked twice). Needs DESCRIBE on the cluster."""
from __future__ import annotations

from kafka.protocol.admin import (
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
)

from ...core import errors
from ...core.errors import DUPLICATE_RESOURCE
from ..registry import RequestContext
from ._common import may_call, serving_broker
from ._scram import CODE

API_KEY = 50
MIN_VERSION = 0
MAX_VERSION = 0

_Result = DescribeUserScramCredentialsResponse.DescribeUserScramCredentialsResult
_Info = _Result.CredentialInfo


def handle(ctx: RequestContext, request: DescribeUserScramCredentialsRequest
           ) -> DescribeUserScramCredentialsResponse:
    serving_broker(ctx)
    version = ctx.api_version
    if not may_call(ctx, "DescribeUserScramCredentials"):
        return DescribeUserScramCredentialsResponse(
            version=version, throttle_time_ms=0, error_code=errors.CLUSTER_AUTHORIZATION_FAILED,
            error_message=None, results=[])
    by_user: dict[str, list] = {}
    for (user, mechanism), credential in sorted(ctx.cluster.controller.scram_credentials.items()):
        by_user.setdefault(user, []).append(
            _Info(mechanism=CODE[mechanism], iterations=credential.iterations))
    asked = [u.name for u in request.users] if request.users else sorted(by_user)
    results = []
    for user in dict.fromkeys(asked):
        if asked.count(user) > 1:
            results.append(_Result(user=user, error_code=DUPLICATE_RESOURCE,
                                   error_message="Cannot describe SCRAM credentials for the same "
                                                 "user twice in a single request",
                                   credential_infos=[]))
        elif user not in by_user:
            results.append(_Result(user=user, error_code=errors.RESOURCE_NOT_FOUND,
                                   error_message="Attempt to describe a user credential that "
                                                 "does not exist", credential_infos=[]))
        else:
            results.append(_Result(user=user, error_code=errors.NONE, error_message=None,
                                   credential_infos=by_user[user]))
    return DescribeUserScramCredentialsResponse(
        version=version, throttle_time_ms=0, error_code=errors.NONE, error_message=None,
        results=results)
