"""DescribeDelegationToken (key 41), v1-v3: the tokens the caller may see (kafka-delegation-tokens.sh --describe); the rules
and Kafka's errors live in core/api/delegation_tokens.py."""
from __future__ import annotations

from ...core import errors
from ...core.api import delegation_tokens as api
from ..messages import DescribeDelegationTokenRequest, DescribeDelegationTokenResponse
from ..registry import RequestContext
from ._common import serving_broker

API_KEY = 41
MIN_VERSION = 1
MAX_VERSION = 3

_Token = DescribeDelegationTokenResponse.DescribedDelegationToken
_Renewer = _Token.DescribedDelegationTokenRenewer


def handle(ctx: RequestContext, request: DescribeDelegationTokenRequest
           ) -> DescribeDelegationTokenResponse:
    serving_broker(ctx)
    owners = None if request.owners is None else [
        f"{o.principal_type}:{o.principal_name}" for o in request.owners]
    if not api.allow_token_requests(ctx.security_protocol, ctx.principal, ctx.token_authenticated):
        error, tokens = errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, []
    else:
        error, tokens = api.describe(ctx.cluster, ctx.principal, owners)
    described = []
    for t in tokens:
        owner_type, _, owner_name = t.owner.partition(":")
        requester_type, _, requester_name = t.requester.partition(":")
        described.append(_Token(
            principal_type=owner_type, principal_name=owner_name,
            token_requester_principal_type=requester_type,
            token_requester_principal_name=requester_name, issue_timestamp=t.issue_ms,
            expiry_timestamp=t.expiry_ms, max_timestamp=t.max_ms, token_id=t.token_id,
            hmac=t.hmac, renewers=[_Renewer(principal_type=r.partition(":")[0],
                                            principal_name=r.partition(":")[2])
                                   for r in t.renewers]))
    return DescribeDelegationTokenResponse(version=ctx.api_version, error_code=error,
                                           tokens=described, throttle_time_ms=0)
