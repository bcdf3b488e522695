"""ExpireDelegationToken (key 40), v1-v2: an earlier expiry, or removal now with a negative period (kafka-delegation-tokens.sh --expire); the rules
and Kafka's errors live in core/api/delegation_tokens.py."""
from __future__ import annotations

from ...core import errors
from ...core.api import delegation_tokens as api
from ..messages import ExpireDelegationTokenRequest, ExpireDelegationTokenResponse
from ..registry import RequestContext
from ._common import serving_broker

API_KEY = 40
MIN_VERSION = 1
MAX_VERSION = 2


def handle(ctx: RequestContext, request: ExpireDelegationTokenRequest
           ) -> ExpireDelegationTokenResponse:
    serving_broker(ctx)
    if not api.allow_token_requests(ctx.security_protocol, ctx.principal, ctx.token_authenticated):
        error, expiry = errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, -1
    else:
        error, expiry = api.expire(ctx.cluster, ctx.principal, bytes(request.hmac),
                                   request.expiry_time_period_ms)
    return ExpireDelegationTokenResponse(version=ctx.api_version, error_code=error,
                                         expiry_timestamp_ms=expiry if not error else -1,
                                         throttle_time_ms=0)
