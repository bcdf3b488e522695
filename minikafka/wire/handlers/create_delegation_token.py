"""CreateDelegationToken (key 38), v1-v3: a token for the caller or another owner (kafka-delegation-tokens.sh --create); the rules
and Kafka's errors live in core/api/delegation_tokens.py."""
from __future__ import annotations

from ...core import errors
from ...core.api import delegation_tokens as api
from ..messages import CreateDelegationTokenRequest, CreateDelegationTokenResponse
from ..registry import RequestContext
from ._common import serving_broker

API_KEY = 38
MIN_VERSION = 1
MAX_VERSION = 3


def _principal(principal_type: str | None, name: str | None) -> str | None:
    return f"{principal_type or api.USER_TYPE}:{name}" if name else None


def handle(ctx: RequestContext, request: CreateDelegationTokenRequest
           ) -> CreateDelegationTokenResponse:
    serving_broker(ctx)
    version = ctx.api_version
    owner = (_principal(getattr(request, "owner_principal_type", None),
                        getattr(request, "owner_principal_name", None)) or ctx.principal)
    renewers = [f"{r.principal_type}:{r.principal_name}" for r in request.renewers]
    if not api.allow_token_requests(ctx.security_protocol, ctx.principal, ctx.token_authenticated):
        error, token = errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, None
    else:
        error, token = api.create(ctx.cluster, ctx.principal, owner, renewers,
                                  request.max_lifetime_ms)
    owner_type, _, owner_name = owner.partition(":")
    requester_type, _, requester_name = ctx.principal.partition(":")
    return CreateDelegationTokenResponse(
        version=version, error_code=error, principal_type=owner_type, principal_name=owner_name,
        token_requester_principal_type=requester_type,
        token_requester_principal_name=requester_name,
        issue_timestamp_ms=token.issue_ms if token else -1,
        expiry_timestamp_ms=token.expiry_ms if token else -1,
        max_timestamp_ms=token.max_ms if token else -1,
        token_id=token.token_id if token else "", hmac=token.hmac if token else b"",
        throttle_time_ms=0)
