"""Handler registry and the sans-IO request pipeline of one connection.

A handler serves one API key over a version range::

    def handle(ctx: RequestContext, request) -> response | bytes | Deferred | None

`request` is the kafka-python request object (e.g. MetadataRequest) decoded at
`ctx.api_version`. The handler returns a kafka-python response object (its
version defaults to the request's), a body it already encoded at that version,
a `Deferred` to park the request (Fetch long-poll, Produce acks=all), or None
for no response at all (Produce acks=0). It may raise `CloseConnection`.

`Session` is what a socket (server.py) or a test (`exchange`) drives: it takes
bytes, runs requests one at a time in arrival order, the way Kafka's
SocketServer mutes a channel until its response is out, and returns response
bytes plus, when the connection must go, the reason.
"""
from __future__ import annotations

import importlib
import logging
import pkgutil
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from kafka.protocol.api_message import ApiMessage

from ..core.acl import ANONYMOUS
from ..core.security_config import ListenerConfig
from .codec import (
    API_VERSIONS_KEY,
    DEFAULT_MAX_REQUEST_BYTES,
    BodyDecoder,
    FrameDecoder,
    KafkaRequest,
    RequestError,
    Response,
    decode_request,
    kafka_version_range,
    request_class,
    response_parts,
)
from .sasl import SaslAuthenticator, SaslStep

if TYPE_CHECKING:
    from ..core.api.port import ClusterPort

__all__ = [
    "CloseConnection",
    "Deferred",
    "Handler",
    "HandlerFailed",
    "HandlerRegistry",
    "HandlerResult",
    "Registration",
    "RequestContext",
    "Session",
    "SessionOutput",
    "SessionStats",
    "default_registry",
    "exchange",
    "valid_client_software",
]

log = logging.getLogger("minikafka.wire")

# connection.failed.authentication.delay.ms, Kafka's default
FAILED_AUTHENTICATION_DELAY_MS = 100

# KIP-511: ClientSoftwareName/Version must match this (Kafka's ApiVersionsRequest.isValid).
_SOFTWARE_RE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


def valid_client_software(name: str | None, version: str | None) -> bool:
    """True if both strings are what Kafka accepts in ApiVersions v3+."""
    return bool(name and version and _SOFTWARE_RE.fullmatch(name) and _SOFTWARE_RE.fullmatch(version))


@dataclass(slots=True)
class RequestContext:
    """Everything about one request except its body."""

    broker_id: int
    cluster: ClusterPort  # the minikafka Cluster, through the port core.api works on
    registry: HandlerRegistry
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str
    client_host: str
    client_port: int
    now_ms: int  # the server's clock; Deferred deadlines use it too
    # KIP-511: what the client said in its ApiVersions v3+ on this connection.
    client_software_name: str = ""
    client_software_version: str = ""
    # Who the connection authenticated as (SASL, or a TLS client certificate), as Kafka's
    # KafkaPrincipal prints it; the authorizer (core.acl) decides with it and client_host.
    principal: str = ANONYMOUS
    listener: str = ""  # the listener's name (PLAINTEXT, SASL_PLAINTEXT, ...)
    security_protocol: str = "PLAINTEXT"  # the listener's protocol
    token_authenticated: bool = False  # the login was a delegation token's
    # Set by a handler whose answer carries throttle_time_ms (a client quota): the
    # session then mutes the connection that long, as Kafka's broker does.
    throttle_ms: int = 0


class Deferred:
    """A parked request: `poll()` gives the response once ready, else None.

    The session polls it whenever it runs (each tick of the server and each
    `WireServer.notify()`); at `deadline_ms` (server clock) it polls once more,
    then answers with `on_timeout()`. Requests behind it on the same connection
    wait, as in Kafka.
    """

    __slots__ = ("deadline_ms", "poll", "on_timeout")

    def __init__(self, deadline_ms: int, poll: Callable[[], Response | None],
                 on_timeout: Callable[[], Response | None]) -> None:
        self.deadline_ms = deadline_ms
        self.poll = poll
        self.on_timeout = on_timeout


HandlerResult = Response | Deferred | None


class Handler(Protocol):
    def __call__(self, ctx: RequestContext, request: ApiMessage) -> HandlerResult: ...


class CloseConnection(Exception):
    """Raised by a handler to drop the connection without a response."""


@dataclass(frozen=True, slots=True)
class HandlerFailed(RequestError):
    """A handler raised; the connection is closed (and the error logged)."""


@dataclass(frozen=True, slots=True)
class Registration:
    api_key: int
    min_version: int
    max_version: int
    handler: Handler
    decoder: BodyDecoder | None = None


class HandlerRegistry:
    """API key -> handler and the version range it implements.

    ApiVersions advertises `version_ranges()`, so what a client is told is
    what is registered (save Produce's listed minimum, as in Kafka: see
    handlers/api_versions.py). `memo` is a scratch dict for handlers' caches
    (e.g. the encoded ApiVersions body), emptied whenever registrations change.
    """

    def __init__(self) -> None:
        self._by_key: dict[int, Registration] = {}
        self._ranges: Mapping[int, tuple[int, int]] = MappingProxyType({})
        self._decoders: Mapping[int, BodyDecoder] = MappingProxyType({})
        self.generation = 0
        self.memo: dict[Any, Any] = {}

    def register(self, api_key: int, handler: Handler, min_version: int, max_version: int,
                 decoder: BodyDecoder | None = None) -> None:
        """Serve `api_key` v`min_version`..v`max_version` with `handler` (replacing any).

        `decoder(body, version)`, if given, parses request bodies instead of
        kafka-python (a hot path's own parser); it raises ValueError on bad input.
        """
        cls = request_class(api_key)
        if cls is None:
            raise ValueError(f"kafka-python has no request class for API key {api_key}")
        low, high = kafka_version_range(api_key)
        if not low <= min_version <= max_version <= high:
            raise ValueError(
                f"{cls.name}: v{min_version}-v{max_version} outside Kafka's v{low}-v{high}"
            )
        self._by_key[api_key] = Registration(api_key, min_version, max_version, handler, decoder)
        self._changed()

    def handles(self, api_key: int, min_version: int, max_version: int) -> Callable[[Handler], Handler]:
        """Decorator form of `register`."""
        def decorate(handler: Handler) -> Handler:
            self.register(api_key, handler, min_version, max_version)
            return handler
        return decorate

    def unregister(self, api_key: int) -> None:
        if self._by_key.pop(api_key, None) is not None:
            self._changed()

    def get(self, api_key: int) -> Registration | None:
        return self._by_key.get(api_key)

    def decoders(self) -> Mapping[int, BodyDecoder]:
        """Read-only {api_key: decoder} of the handlers that parse their own bodies."""
        return self._decoders

    def version_ranges(self) -> Mapping[int, tuple[int, int]]:
        """Read-only {api_key: (min, max)} in key order; what ApiVersions advertises."""
        return self._ranges

    def __contains__(self, api_key: object) -> bool:
        return api_key in self._by_key

    def __iter__(self) -> Iterator[Registration]:
        return iter([self._by_key[k] for k in sorted(self._by_key)])

    def __len__(self) -> int:
        return len(self._by_key)

    def _changed(self) -> None:
        self._ranges = MappingProxyType(
            {k: (r.min_version, r.max_version) for k, r in sorted(self._by_key.items())}
        )
        self._decoders = MappingProxyType(
            {k: r.decoder for k, r in self._by_key.items() if r.decoder is not None})
        self.generation += 1
        self.memo.clear()


def default_registry() -> HandlerRegistry:
    """A registry with every handler module in `minikafka.wire.handlers`.

    A handler module defines API_KEY, MIN_VERSION, MAX_VERSION and
    `handle(ctx, request)`, and optionally `decode(body, version)` to parse its
    requests itself; dropping one into the package is enough to serve (and
    advertise) it. Modules are loaded in name order.
    """
    from . import handlers

    registry = HandlerRegistry()
    for info in sorted(pkgutil.iter_modules(handlers.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{handlers.__name__}.{info.name}")
        if not all(hasattr(module, n) for n in ("API_KEY", "MIN_VERSION", "MAX_VERSION", "handle")):
            continue
        if module.API_KEY in registry:
            raise ValueError(f"two handler modules for API key {module.API_KEY}: {info.name}")
        registry.register(module.API_KEY, module.handle, module.MIN_VERSION, module.MAX_VERSION,
                          getattr(module, "decode", None))
    return registry


# ---------------------------------------------------------------------------
# One connection


@dataclass(frozen=True, slots=True)
class SessionOutput:
    """What to write (possibly b"") and, if the connection must close, why."""

    data: bytes
    close: RequestError | None = None


_PENDING = object()


@dataclass(slots=True)
class _Parked:
    request: KafkaRequest
    deferred: Deferred
    ctx: RequestContext | None = None


@dataclass(slots=True)
class SessionStats:
    """Requests dispatched, in total and per (api_key, api_version)."""

    requests: int = 0
    by_api: dict[tuple[int, int], int] = field(default_factory=dict)


class Session:
    """The sans-IO state of one client connection.

    `receive_data(bytes)` then `process(now_ms)`, again and again; write what
    `process` returns and close if it says so. Requests run one at a time in
    arrival order, so responses leave in request order even when one is parked.
    Handlers and deferred polls run under `lock` (shared with the cluster).
    """

    def __init__(self, registry: HandlerRegistry, *, broker_id: int = 0,
                 cluster: ClusterPort | None = None,
                 client_host: str = "", client_port: int = 0,
                 lock: AbstractContextManager[Any] | None = None,
                 max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
                 stats: SessionStats | None = None, listener: ListenerConfig | None = None,
                 principal: str = ANONYMOUS) -> None:
        self.registry = registry
        self.broker_id = broker_id
        self.cluster = cluster
        self.client_host = client_host
        self.client_port = client_port
        self.lock: AbstractContextManager[Any] = lock if lock is not None else nullcontext()
        self.frames = FrameDecoder(max_request_bytes)
        self.stats = stats if stats is not None else SessionStats()
        self.client_software_name = ""
        self.client_software_version = ""
        self.close_reason: RequestError | None = None
        self._parked: _Parked | None = None
        # After a failed login the server sends the answer and closes this much later
        # (Kafka's connection.failed.authentication.delay.ms).
        self.close_delay_ms = 0
        self.listener = listener.name if listener is not None else ""
        self.security_protocol = listener.protocol if listener is not None else "PLAINTEXT"
        self.token_authenticated = False
        self.principal = principal
        # A SASL listener's connections authenticate first (wire/sasl.py).
        self.sasl = SaslAuthenticator(listener, cluster) \
            if listener is not None and listener.sasl else None
        # A client over its quota: no request is read before this (Kafka mutes the channel
        # for throttle_time_ms after sending the response).
        self.muted_until_ms = 0

    @property
    def parked(self) -> bool:
        """A request is waiting on a Deferred."""
        return self._parked is not None

    @property
    def deadline_ms(self) -> int | None:
        return self._parked.deferred.deadline_ms if self._parked is not None else None

    def receive_data(self, data: bytes) -> None:
        if self.close_reason is None:
            self.frames.receive_data(data)

    def process(self, now_ms: int) -> SessionOutput:
        """Run every request that can run now; return their responses, in order."""
        out: list[bytes] = []
        while self.close_reason is None:
            if self._parked is not None:
                if self._resume(now_ms, out) is _PENDING:
                    break
                continue
            if now_ms < self.muted_until_ms:
                break
            frame = self.frames.next_frame()
            if frame is None:
                break
            if isinstance(frame, RequestError):
                self._close(frame)
                break
            sasl = self.sasl
            if sasl is not None and sasl.raw_tokens and not sasl.complete:
                self._raw_token(sasl, frame, out)
                continue
            registry = self.registry
            request = decode_request(frame, registry.version_ranges(), registry.decoders())
            if isinstance(request, RequestError):
                self._close(request)
                break
            if sasl is not None and not sasl.complete:
                with self.lock:
                    step = sasl.receive(request)
                if not step.passthrough:
                    self._sasl_step(sasl, step, request, out)
                    continue
            self._dispatch(request, now_ms, out)
        return SessionOutput(b"".join(out), self.close_reason)

    def _sasl_step(self, sasl: SaslAuthenticator, step: SaslStep, request: KafkaRequest,
                   out: list[bytes]) -> None:
        if step.response is not None:
            out.extend(response_parts(step.response, request.api_key, request.api_version,
                                      request.correlation_id))
        if step.close is not None:
            if step.response is not None:
                self.close_delay_ms = FAILED_AUTHENTICATION_DELAY_MS
            self._close(RequestError(step.close, request.api_key, request.api_version,
                                     request.correlation_id))
        elif sasl.complete:
            self.principal = sasl.principal or ANONYMOUS
            self.token_authenticated = sasl.token_authenticated

    def _raw_token(self, sasl: SaslAuthenticator, frame: bytes, out: list[bytes]) -> None:
        """A SASL token after a v0 SaslHandshake: a bare frame each way."""
        with self.lock:
            answer, close = sasl.receive_token(bytes(frame))
        if answer is not None:
            out.append(len(answer).to_bytes(4, "big") + answer)
        if close is not None:
            self._close(RequestError(close))
        elif sasl.complete:
            self.principal = sasl.principal or ANONYMOUS
            self.token_authenticated = sasl.token_authenticated

    def _dispatch(self, request: KafkaRequest, now_ms: int, out: list[bytes]) -> None:
        registration = self.registry.get(request.api_key)
        assert registration is not None  # decode_request checked the key
        ctx = RequestContext(
            self.broker_id, self.cluster, self.registry, request.api_key, request.api_version,
            request.correlation_id, request.client_id, self.client_host, self.client_port, now_ms,
            self.client_software_name, self.client_software_version, self.principal,
            self.listener, self.security_protocol, self.token_authenticated,
        )
        stats = self.stats
        stats.requests += 1
        key = (request.api_key, request.api_version)
        stats.by_api[key] = stats.by_api.get(key, 0) + 1
        try:
            with self.lock:
                result = registration.handler(ctx, request.body)
                if isinstance(result, Deferred):
                    self._parked = _Parked(request, result, ctx)
                    return
                if result is not None:
                    out.extend(response_parts(result, request.api_key, request.api_version,
                                               request.correlation_id))
                self._mute(ctx, now_ms)
        except CloseConnection as exc:
            self._close(HandlerFailed(f"handler closed the connection: {exc}", request.api_key,
                                      request.api_version, request.correlation_id))
            return
        except Exception as exc:
            log.exception("handler for API key %d v%d failed", request.api_key, request.api_version)
            self._close(HandlerFailed(f"{type(exc).__name__}: {exc}", request.api_key,
                                      request.api_version, request.correlation_id))
            return
        body = request.body
        if (request.api_key == API_VERSIONS_KEY and body.version >= 3
                and valid_client_software(body.client_software_name, body.client_software_version)):
            self.client_software_name = body.client_software_name
            self.client_software_version = body.client_software_version

    def _resume(self, now_ms: int, out: list[bytes]) -> object:
        parked = self._parked
        assert parked is not None
        request, deferred = parked.request, parked.deferred
        try:
            with self.lock:
                result = deferred.poll()
                if result is None:
                    if now_ms < deferred.deadline_ms:
                        return _PENDING
                    result = deferred.on_timeout()
                self._parked = None
                if result is not None:
                    out.extend(response_parts(result, request.api_key, request.api_version,
                                               request.correlation_id))
                if parked.ctx is not None:
                    self._mute(parked.ctx, now_ms)
        except Exception as exc:
            log.exception("deferred API key %d v%d failed", request.api_key, request.api_version)
            self._parked = None
            self._close(HandlerFailed(f"{type(exc).__name__}: {exc}", request.api_key,
                                      request.api_version, request.correlation_id))
        return None

    def _mute(self, ctx: RequestContext, now_ms: int) -> None:
        if ctx.throttle_ms > 0:
            self.muted_until_ms = max(self.muted_until_ms, now_ms + ctx.throttle_ms)

    def _close(self, reason: RequestError) -> None:
        self.close_reason = reason
        self._parked = None


def exchange(registry: HandlerRegistry, data: bytes, *, now_ms: int = 0, **session_args: Any) -> SessionOutput:
    """The in-memory pair: request frames in, response frames (and close decision) out.

    Same decoder, registry and handlers as the TCP server, no sockets.
    """
    session = Session(registry, **session_args)
    session.receive_data(data)
    return session.process(now_ms)

