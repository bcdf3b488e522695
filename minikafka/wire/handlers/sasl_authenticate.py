"""SaslAuthenticate (key 36), v0-v2, once a connection needs none: on a listener without
SASL, or after the connection authenticated (wire/sasl.py serves it before that).
Kafka's KafkaApis answers ILLEGAL_SASL_STATE then."""
from __future__ import annotations

from kafka.protocol.sasl import SaslAuthenticateRequest, SaslAuthenticateResponse

from ...core import errors
from ..registry import RequestContext

API_KEY = 36
MIN_VERSION = 0
MAX_VERSION = 2


def handle(ctx: RequestContext, request: SaslAuthenticateRequest) -> SaslAuthenticateResponse:
    return SaslAuthenticateResponse(
        version=ctx.api_version, error_code=errors.ILLEGAL_SASL_STATE,
        error_message="SaslAuthenticate request received after successful authentication",
        auth_bytes=b"", session_lifetime_ms=0)
