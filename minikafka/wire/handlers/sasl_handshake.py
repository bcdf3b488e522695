"""SaslHandshake (key 17), v0-v1, once a connection needs none: on a listener without
SASL, or after the connection authenticated (wire/sasl.py serves it before that).
Kafka's KafkaApis answers ILLEGAL_SASL_STATE then."""
from __future__ import annotations

from kafka.protocol.sasl import SaslHandshakeRequest, SaslHandshakeResponse

from ...core import errors
from ..registry import RequestContext

API_KEY = 17
MIN_VERSION = 0
MAX_VERSION = 1


def handle(ctx: RequestContext, request: SaslHandshakeRequest) -> SaslHandshakeResponse:
    return SaslHandshakeResponse(version=ctx.api_version, error_code=errors.ILLEGAL_SASL_STATE,
                                 mechanisms=[])
