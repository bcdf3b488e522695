"""Kafka wire codec, sans-IO: bytes in, typed requests out; responses in, bytes out.

Nothing here touches a socket or a clock (the h11 way): `FrameDecoder` is fed
whatever bytes arrived and hands back whole frames; `decode_request` turns one
frame into a `KafkaRequest` or a typed `RequestError`; `encode_response` turns a
response into one size-prefixed frame.

Message bodies are decoded and encoded by kafka-python 3.x's classes, which are
generated from Kafka's own JSON message specs. Headers are parsed and written
here by hand: they are four fixed fields, and doing them with kafka-python's
generic machinery cost ~7 us to parse and ~14 us to write per request, the
per-request overhead DESIGN.md names as a hot spot. Tests check both against
kafka-python byte for byte.
"""
from __future__ import annotations

import io
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from struct import Struct
from typing import Any

# Importing these packages runs kafka-python's class definitions, which is what
# makes every request/response class visible to ApiMessage.__subclasses__().
import kafka.protocol.admin
import kafka.protocol.consumer
import kafka.protocol.metadata
import kafka.protocol.producer
import kafka.protocol.sasl  # noqa: F401 - imported for its side effect, like the four above
from kafka.protocol.api_header import RequestHeader
from kafka.protocol.api_message import ApiMessage

from . import messages  # noqa: F401 - the APIs kafka-python lacks, found the same way

__all__ = [
    "API_VERSIONS_KEY",
    "BodyDecoder",
    "DEFAULT_MAX_REQUEST_BYTES",
    "FrameDecoder",
    "FrameTooLarge",
    "KafkaRequest",
    "MalformedRequest",
    "RequestError",
    "Response",
    "UnknownApiKey",
    "UnsupportedVersion",
    "VersionRanges",
    "decode_request",
    "encode_request",
    "encode_response",
    "kafka_version_range",
    "response_parts",
    "request_class",
    "response_class",
]

# Kafka's socket.request.max.bytes default (100 MiB).
DEFAULT_MAX_REQUEST_BYTES = 104_857_600

API_VERSIONS_KEY = 18

# api_key -> (min_version, max_version), inclusive.
VersionRanges = Mapping[int, tuple[int, int]]

# (request body, api version) -> request object; raises ValueError on bad input.
BodyDecoder = Callable[[memoryview, int], Any]

_INT32 = Struct(">i")
_REQUEST_PREFIX = Struct(">hhih")  # api key, api version, correlation id, client id length
_RESPONSE_PREFIX = Struct(">ii")  # frame size, correlation id


def _all_subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found.append(sub)
        found.extend(_all_subclasses(sub))
    return found


def _primary_classes(kind: str) -> dict[int, type[ApiMessage]]:
    # Versioned wrappers (Foo[3]) are subclasses too; only primaries have
    # _class_version None.
    classes: dict[int, type[ApiMessage]] = {}
    for cls in _all_subclasses(ApiMessage):
        if cls._class_version is None and cls.type == kind:
            # minikafka.wire.messages carries Kafka 4.4.0's newer versions of a few APIs
            # kafka-python has: of two classes for one key, the one with more versions.
            known = classes.get(cls.API_KEY)
            if known is None or cls.valid_versions[1] > known.valid_versions[1]:
                classes[cls.API_KEY] = cls
    return dict(sorted(classes.items()))


_REQUEST_CLASSES = _primary_classes("request")
_RESPONSE_CLASSES = _primary_classes("response")


def request_class(api_key: int) -> type[ApiMessage] | None:
    """The request class for `api_key` (kafka-python's, or minikafka.wire.messages' where
    it has none or an older one), or None."""
    return _REQUEST_CLASSES.get(api_key)


def response_class(api_key: int) -> type[ApiMessage] | None:
    """The response class for `api_key`, chosen as request_class chooses, or None."""
    return _RESPONSE_CLASSES.get(api_key)


def kafka_version_range(api_key: int) -> tuple[int, int]:
    """Kafka's own (min, max) for `api_key`, from the JSON spec's validVersions.

    kafka-python reports min_version 0 for every class (it resets it so a client
    can talk to old brokers); the spec's real floor (Kafka 4.x, KIP-896) is kept
    in `valid_versions`, which is what a broker must advertise.
    """
    cls = _REQUEST_CLASSES[api_key]
    low, high = cls.valid_versions
    return low, high


# ---------------------------------------------------------------------------
# Framing


@dataclass(frozen=True, slots=True)
class RequestError:
    """A request the broker cannot serve; the connection must be closed.

    This is what Kafka 4.x does for each case here: SocketServer closes the
    channel on an oversized or malformed frame, an unknown API key, or a
    version the broker has not enabled (ApiVersions excepted, see KIP-511).
    """

    reason: str
    api_key: int | None = None
    api_version: int | None = None
    correlation_id: int | None = None


@dataclass(frozen=True, slots=True)
class FrameTooLarge(RequestError):
    """Frame size above socket.request.max.bytes, or negative."""


@dataclass(frozen=True, slots=True)
class MalformedRequest(RequestError):
    """Header or body could not be parsed."""


@dataclass(frozen=True, slots=True)
class UnknownApiKey(RequestError):
    """API key not served by this broker."""


@dataclass(frozen=True, slots=True)
class UnsupportedVersion(RequestError):
    """Version outside the range this broker serves for a known API key."""


class FrameDecoder:
    """Splits a byte stream into request payloads (the 4-byte size stripped).

    Feed it with `receive_data`; call `next_frame` until it returns None. Chunks
    are kept as received and joined once per frame, so a large request costs one
    copy however it was split on the wire. An oversized size field is reported
    as soon as it is read, before any of the payload is buffered.
    """

    __slots__ = ("max_request_bytes", "_chunks", "_offset", "_buffered", "_size", "_failed")

    def __init__(self, max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES) -> None:
        self.max_request_bytes = max_request_bytes
        self._chunks: list[bytes] = []
        self._offset = 0  # read position in _chunks[0]
        self._buffered = 0  # unread bytes across _chunks
        self._size = -1  # payload size of the frame being read, -1 before its prefix
        self._failed: FrameTooLarge | None = None

    @property
    def buffered(self) -> int:
        """Bytes received and not yet returned in a frame."""
        return self._buffered

    @property
    def mid_frame(self) -> bool:
        """True if part of a frame has arrived (a close now cuts a request)."""
        return self._buffered > 0 or self._size >= 0

    def receive_data(self, data: bytes) -> None:
        if data:
            self._chunks.append(bytes(data))
            self._buffered += len(data)

    def next_frame(self) -> bytes | FrameTooLarge | None:
        """The next whole payload, a FrameTooLarge (sticky), or None for need-more."""
        if self._failed is not None:
            return self._failed
        if self._size < 0:
            if self._buffered < 4:
                return None
            size = _INT32.unpack(self._take(4))[0]
            if size < 0 or size > self.max_request_bytes:
                self._failed = FrameTooLarge(
                    f"frame size {size} outside 0..{self.max_request_bytes} (socket.request.max.bytes)"
                )
                self._chunks.clear()
                self._buffered = 0
                return self._failed
            self._size = size
        if self._buffered < self._size:
            return None
        payload = self._take(self._size)
        self._size = -1
        return payload

    def _take(self, n: int) -> bytes:
        if n == 0:
            return b""
        first = self._chunks[0]
        start = self._offset
        end = start + n
        if end <= len(first):
            piece = first if start == 0 and end == len(first) else first[start:end]
            if end == len(first):
                self._chunks.pop(0)
                self._offset = 0
            else:
                self._offset = end
            self._buffered -= n
            return piece
        parts = []
        need = n
        while need:
            chunk = self._chunks[0]
            view = memoryview(chunk)[self._offset:]
            if len(view) <= need:
                parts.append(view)
                need -= len(view)
                self._chunks.pop(0)
                self._offset = 0
            else:
                parts.append(view[:need])
                self._offset += need
                need = 0
        self._buffered -= n
        return b"".join(parts)


# ---------------------------------------------------------------------------
# Requests


@dataclass(slots=True)
class KafkaRequest:
    """One decoded request: the header fields and the kafka-python body.

    For an ApiVersions request above the supported maximum, Kafka (KIP-511) does
    not parse the body: `body` is then an empty v0 ApiVersionsRequest while
    `api_version` keeps the version the client sent, and the answer goes out in
    v0 with UNSUPPORTED_VERSION.
    """

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str
    body: ApiMessage
    size: int  # payload bytes, header included

    @property
    def unsupported_api_versions(self) -> bool:
        return self.api_key == API_VERSIONS_KEY and self.body.version != self.api_version


def _header_end(payload: bytes, client_id_len: int, flexible: bool) -> int:
    """Offset of the body after a v1 (or flexible v2) request header."""
    pos = 10 + max(client_id_len, 0)
    if flexible:
        if payload[pos] == 0:  # no tagged fields: the usual case, one byte
            return pos + 1
        # Tagged fields present: let kafka-python walk them.
        stream = io.BytesIO(payload)
        RequestHeader.decode(stream, flexible=True)
        return stream.tell()
    return pos


def decode_request(payload: bytes, versions: VersionRanges | None = None,
                   decoders: Mapping[int, BodyDecoder] | None = None) -> KafkaRequest | RequestError:
    """Decode one frame payload (size prefix already stripped).

    `versions` maps each served API key to its (min, max); keys outside it are
    unknown and versions outside its range unsupported. Without it, every key
    kafka-python knows is served over Kafka's own range. `decoders` replaces
    kafka-python's body decoder for some keys (the hot paths).
    """
    if len(payload) < 10:
        return MalformedRequest(f"request header truncated ({len(payload)} bytes)")
    api_key, api_version, correlation_id, client_id_len = _REQUEST_PREFIX.unpack_from(payload)
    cls = _REQUEST_CLASSES.get(api_key)
    served = versions.get(api_key) if versions is not None else (
        cls.valid_versions if cls is not None else None
    )
    if cls is None or served is None:
        return UnknownApiKey(f"unknown API key {api_key}", api_key, api_version, correlation_id)
    low, high = served
    too_new_api_versions = api_key == API_VERSIONS_KEY and api_version > high
    if not too_new_api_versions and not low <= api_version <= high:
        return UnsupportedVersion(
            f"{cls.name} v{api_version} not enabled (serves v{low}-v{high})",
            api_key, api_version, correlation_id,
        )
    # Header v2 (flexible) iff the body version is flexible; for ApiVersions
    # above our max Kafka still reads header v2, as v3+ is flexible.
    flexible = cls.flexible_version_q(api_version)
    try:
        if client_id_len < -1 or 10 + client_id_len > len(payload):
            raise ValueError(f"client id length {client_id_len}")
        client_id = sys.intern(payload[10:10 + client_id_len].decode("utf-8", "replace")) \
            if client_id_len > 0 else ""  # kept by the journal: one copy per client
        body_at = _header_end(payload, client_id_len, flexible)
        decoder = decoders.get(api_key) if decoders else None
        if too_new_api_versions:
            body = cls(version=0)
        elif decoder is not None:
            body = decoder(memoryview(payload)[body_at:], api_version)
        else:
            body = cls.decode(memoryview(payload)[body_at:], version=api_version, header=False)
            null = _null_field(body, _null_plan(cls, api_version))
            if null is not None:
                raise ValueError(f"null {null}, which is not nullable")
    except Exception as exc:
        return MalformedRequest(
            f"cannot parse {cls.name} v{api_version}: {type(exc).__name__}: {exc}",
            api_key, api_version, correlation_id,
        )
    return KafkaRequest(api_key, api_version, correlation_id, client_id, body, len(payload))


# kafka-python decodes a -1 length as None even where the schema does not allow
# null; Kafka refuses such a request as malformed, and so do we (handlers can
# then iterate arrays and use strings without checking).
_NULLABLE_TYPES = frozenset({"string", "bytes", "records"})


@cache
def _null_plan(cls: type, version: int) -> tuple:
    return _plan(cls._struct._fields, version)


def _plan(fields, version: int) -> tuple:
    """(name, nullable, sub-plan or None, is an array of structs, is an array of strings
    or bytes) for each field that can decode as None at `version`. Kafka's schemas never
    allow a null element in an array, whatever the array's own nullability."""
    plan = []
    for field in fields:
        if not field.for_version_q(version) or field.tagged_field_q(version):
            continue
        elements = False
        if field.is_struct_array() or field.is_struct():
            sub = _plan(field.fields.values(), version)
        elif field.is_array():
            sub = None
            elements = getattr(field, "array_of", None) is not None and \
                field.array_of.type_str in _NULLABLE_TYPES
        elif field.type_str in _NULLABLE_TYPES:
            sub = None
        else:
            continue
        plan.append((field.name, field.nullable_for_version_q(version), sub,
                     field.is_struct_array(), elements))
    return tuple(plan)


def _null_field(obj: Any, plan: tuple) -> str | None:
    """The name of a non-nullable field (or array element) that is None, if any."""
    for name, nullable, sub, many, elements in plan:
        value = getattr(obj, name, None)
        if value is None:
            if not nullable:
                return name
            continue
        if elements and any(item is None for item in value):
            return f"element in {name}"
        if sub:
            for item in (value if many else (value,)):
                bad = _null_field(item, sub)
                if bad is not None:
                    return f"{name}.{bad}"
    return None


def encode_request(request: ApiMessage, correlation_id: int, client_id: str | None = "minikafka",
                   version: int | None = None) -> bytes:
    """A whole request frame, for tests and in-process clients (kafka-python's encoder)."""
    if version is not None:
        request.API_VERSION = version
    request.with_header(correlation_id=correlation_id, client_id=client_id)
    return bytes(request.encode(header=True, framed=True))


# ---------------------------------------------------------------------------
# Responses

# A kafka-python response object, or a body already encoded at the request's
# version: in one piece, or as a list of pieces to concatenate (a Fetch body of
# record batches, which is then copied once, when the frame is written).
Response = ApiMessage | bytes | bytearray | memoryview | list


def response_parts(response: Response, api_key: int, api_version: int,
                   correlation_id: int) -> list:
    """One response frame as a list of buffers: size and header, then the body.

    `response` is a kafka-python response object (encoded at its own version,
    or at `api_version` if it has none) or a body already encoded at
    `api_version`. The header is v1 (correlation id + empty tagged fields) for
    flexible versions, v0 otherwise, and always v0 for ApiVersions: clients
    parse that header before they know our versions (KIP-511), and librdkafka
    2.0.2 fails with "Bad message format" on a flexible one.
    """
    if isinstance(response, ApiMessage):
        if response.API_VERSION is None:
            response.API_VERSION = api_version
        api_version = response.API_VERSION
        body = [response.encode()]
    elif isinstance(response, list):
        body = response
    else:
        body = [response]
    size = sum(len(part) for part in body)
    flexible = api_key != API_VERSIONS_KEY and _RESPONSE_CLASSES[api_key].flexible_version_q(api_version)
    if flexible:
        return [_RESPONSE_PREFIX.pack(size + 5, correlation_id), b"\x00", *body]
    return [_RESPONSE_PREFIX.pack(size + 4, correlation_id), *body]


def encode_response(response: Response, api_key: int, api_version: int, correlation_id: int) -> bytes:
    """One response frame (size, header, body) as bytes; see `response_parts`."""
    return b"".join(response_parts(response, api_key, api_version, correlation_id))
