"""Kafka wire protocol for minikafka.

`codec` (sans-IO bytes <-> kafka-python messages), `registry` (handlers, the
per-connection Session and the in-memory `exchange`), `handlers/` (one module
per API key) and `server` (asyncio TCP listeners on a background thread).
"""
from .codec import (
    DEFAULT_MAX_REQUEST_BYTES,
    FrameDecoder,
    FrameTooLarge,
    KafkaRequest,
    MalformedRequest,
    RequestError,
    UnknownApiKey,
    UnsupportedVersion,
    decode_request,
    encode_request,
    encode_response,
)
from .registry import (
    CloseConnection,
    Deferred,
    HandlerFailed,
    HandlerRegistry,
    RequestContext,
    Session,
    SessionOutput,
    default_registry,
    exchange,
)
from .server import WireServer

__all__ = [
    "DEFAULT_MAX_REQUEST_BYTES",
    "CloseConnection",
    "Deferred",
    "FrameDecoder",
    "FrameTooLarge",
    "HandlerFailed",
    "HandlerRegistry",
    "KafkaRequest",
    "MalformedRequest",
    "RequestContext",
    "RequestError",
    "Session",
    "SessionOutput",
    "UnknownApiKey",
    "UnsupportedVersion",
    "WireServer",
    "decode_request",
    "default_registry",
    "encode_request",
    "encode_response",
    "exchange",
]
