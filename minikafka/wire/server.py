"""The Kafka TCP front door: one listener per broker, served from a background thread.

The only asyncio module. It owns an event loop on its own thread, so a notebook
keeps its prompt (and its own loop) while clients talk to the cluster. Each
connection is a `registry.Session`; this module only moves bytes between the
socket and the session, and decides when to run parked (Deferred) requests:
on every tick, on `notify()`, and after any connection has run requests (a
Produce on one connection may be what a Fetch on another is waiting for).
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable, Coroutine, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ..core.acl import ANONYMOUS
from ..core.security_config import ListenerConfig
from ..core.ssl_principal import NoMatchingRule, SslPrincipalMapper
from .codec import DEFAULT_MAX_REQUEST_BYTES, RequestError
from .registry import HandlerRegistry, Session, SessionStats, default_registry
from .tls import principal_from_cert

if TYPE_CHECKING:
    from ..core.api.port import ClusterPort

__all__ = ["WireServer"]

log = logging.getLogger("minikafka.wire")

# Stop reading from a client whose head request is parked once this much
# unprocessed input is buffered (Kafka mutes such a channel altogether).
_READ_PAUSE_BYTES = 1 << 20
# Output goes to the transport this much at a time, and only while the socket has
# taken everything so far: asyncio copies what a send leaves over (for a large
# write, twice), so a multi-MiB Fetch response written whole costs three copies of
# itself; in chunks, at most one chunk's tail is copied.
_WRITE_CHUNK = 64 * 1024


def _monotonic_ms() -> int:
    return time.monotonic_ns() // 1_000_000


def _size_buffers(sock: socket.socket | None, send: int, receive: int) -> None:
    """Kafka's socket.send.buffer.bytes / socket.receive.buffer.bytes (-1: the OS's own,
    autotuned). A fixed send buffer makes a large Fetch response reach the client as a
    stream of buffer-sized writes, as it does from Kafka, not in one burst."""
    if sock is None:
        return
    with contextlib.suppress(OSError):
        if send != -1:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send)
        if receive != -1:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive)


class _Connection(asyncio.Protocol):
    __slots__ = ("server", "broker_id", "transport", "session", "peer", "pending", "write_paused",
                 "read_paused", "active_ms", "tls")

    def __init__(self, server: WireServer, broker_id: int) -> None:
        self.server = server
        self.broker_id = broker_id
        self.transport: asyncio.Transport | None = None
        self.session: Session | None = None
        self.peer = ("", 0)
        self.pending: deque[memoryview] = deque()  # output not yet handed to the transport
        self.write_paused = False  # output is waiting: run no more requests until it is sent
        self.read_paused = False
        self.active_ms = server.now_ms()  # last read or write: connections.max.idle.ms
        self.tls = server.ssl_context is not None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        server = self.server
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        peer = transport.get_extra_info("peername") or ("", 0)
        self.peer = (str(peer[0]), int(peer[1]))
        _size_buffers(transport.get_extra_info("socket"), server.send_buffer_bytes,
                      server.receive_buffer_bytes)
        # On TLS, a verified client certificate names the principal (SASL may rename it).
        try:
            principal = principal_from_cert(transport.get_extra_info("peercert"),
                                            server.principal_mapper) \
                if server.ssl_context is not None else None
        except NoMatchingRule as exc:
            # Kafka: "Failed to map name for '<dn>' based on SSL principal mapping rules."
            log.warning("closing %s:%s: %s", self.peer[0], self.peer[1], exc)
            transport.abort()
            return
        self.session = Session(
            server.registry, broker_id=self.broker_id, cluster=server.cluster,
            client_host=self.peer[0], client_port=self.peer[1], lock=server.lock,
            max_request_bytes=server.max_request_bytes, stats=server.stats,
            listener=server.listener, principal=principal or ANONYMOUS,
        )
        if not self.tls:
            # pause_writing() as soon as a send falls short. (asyncio's TLS transport keeps
            # its default limits: it counts TLS records not yet handed to the socket, and
            # with a limit of 0 it would pause before the first write and never resume.)
            transport.set_write_buffer_limits(high=0)
        if self.broker_id in server._stopped:
            # Accepted just before its listener closed: the broker is gone.
            transport.abort()
            return
        server._connections[self.broker_id].add(self)

    def data_received(self, data: bytes) -> None:
        session = self.session
        if session is None or session.close_reason is not None:
            return
        self.active_ms = self.server.now_ms()
        session.receive_data(data)
        self.server._hurry_tick()
        if not self.write_paused:
            self.pump()

    def pump(self) -> None:
        """Run what can run, write the responses, close if the session says so."""
        session, transport = self.session, self.transport
        if session is None or transport is None or transport.is_closing():
            return
        served = session.stats.requests
        out = session.process(self.server.now_ms())
        if out.close is not None and session.close_delay_ms and self.server._loop is not None:
            # A failed login: Kafka holds the answer back for
            # connection.failed.authentication.delay.ms, then sends it and closes.
            self.server._record_close(self, out.close)
            transport.pause_reading()
            self.pending.append(memoryview(out.data))
            self.server._loop.call_later(session.close_delay_ms / 1000, self._close_now)
            return
        if out.data:
            self.active_ms = self.server.now_ms()
            self.pending.append(memoryview(out.data))
            self._flush()
        if out.close is not None:
            self.server._record_close(self, out.close)
            self._close_now()
            return
        server = self.server
        if session.parked:
            server._waiting.add(self)
            server._hurry_tick(now=False)
        else:
            server._waiting.discard(self)
        self._update_reading()
        if session.stats.requests != served and server._waiting:
            server._schedule_poll()
        muted_ms = session.muted_until_ms - server.now_ms()
        if muted_ms > 0 and session.frames.buffered and server._loop is not None:
            # A throttled client's next request waits until its channel is unmuted.
            server._loop.call_later(muted_ms / 1000, self.pump)

    def _close_now(self) -> None:
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        while self.pending:
            transport.write(self.pending.popleft())
        transport.close()  # flushes what was written first

    def _update_reading(self) -> None:
        session, transport = self.session, self.transport
        assert session is not None and transport is not None
        pause = self.write_paused or (session.parked and session.frames.buffered > _READ_PAUSE_BYTES)
        if pause != self.read_paused:
            self.read_paused = pause
            if pause:
                transport.pause_reading()
            else:
                transport.resume_reading()

    def _flush(self) -> None:
        transport, pending = self.transport, self.pending
        assert transport is not None
        if self.tls:
            # TLS: hand everything over; the transport's own flow control pauses us.
            while pending and not transport.is_closing():
                transport.write(pending.popleft())  # may call pause_writing()
            return
        # A send that failed (the client hung up) closes the transport at once but reports
        # connection_lost later: writing on would log a warning per remaining chunk.
        while pending and not transport.get_write_buffer_size() and not transport.is_closing():
            view = pending[0]
            if len(view) > _WRITE_CHUNK:
                pending[0] = view[_WRITE_CHUNK:]
                view = view[:_WRITE_CHUNK]
            else:
                pending.popleft()
            transport.write(view)  # may call pause_writing()
        self.write_paused = bool(pending) or bool(transport.get_write_buffer_size())

    def idle(self, now_ms: int, max_idle_ms: int) -> bool:
        """Neither read nor written for max_idle_ms, with no request parked and no
        output waiting (Kafka's Selector closes such a channel)."""
        session = self.session
        return (now_ms - self.active_ms >= max_idle_ms and not self.pending
                and session is not None and not session.parked)

    def pause_writing(self) -> None:
        self.write_paused = True
        self._update_reading()

    def resume_writing(self) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        if self.tls:
            self.write_paused = False
        self._flush()
        if not self.write_paused:
            self.pump()

    def connection_lost(self, exc: Exception | None) -> None:
        server = self.server
        server._connections[self.broker_id].discard(self)
        server._waiting.discard(self)
        unsent = sum(len(v) for v in self.pending)
        self.pending.clear()
        session = self.session
        if unsent:
            log.info("broker %d: %s:%d disconnected with %d response bytes unsent",
                     self.broker_id, *self.peer, unsent)
        elif session is not None and session.close_reason is None and session.frames.mid_frame:
            log.debug("broker %d: %s:%d disconnected mid-request", self.broker_id, *self.peer)
        self.session = None


class WireServer:
    """Serve `cluster` over the Kafka protocol, one TCP listener per broker id.

    ``with WireServer(cluster, ports=[0, 0, 0], broker_ids=[1, 2, 3]) as srv:``
    binds ephemeral ports (see `bound_ports`, `bootstrap_servers`) and serves
    until the block ends. Handlers run under `lock` (default: `cluster.lock`,
    else a new RLock), so the notebook thread and the server never touch the
    cluster at once. `on_tick(now_ms)` runs under the lock every `tick_ms` while
    a request is parked, else every `idle_tick_ms` (default: `tick_ms`); a request
    arriving after a quiet spell ticks first, so on_tick has run within `tick_ms`
    of every request (an idle server hardly wakes up, a busy one ticks at pace).
    """

    def __init__(self, cluster: ClusterPort | None = None, host: str = "127.0.0.1", ports: Sequence[int] = (9092,),
                 broker_ids: Iterable[int] | None = None, *, registry: HandlerRegistry | None = None,
                 lock: AbstractContextManager[Any] | None = None,
                 max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES, tick_ms: int = 5,
                 on_tick: Callable[[int], None] | None = None,
                 clock: Callable[[], int] = _monotonic_ms,
                 idle_tick_ms: int | None = None,
                 send_buffer_bytes: int = -1, receive_buffer_bytes: int = -1,
                 connections_max_idle_ms: int = 600_000,
                 listener: ListenerConfig | None = None,
                 ssl_context: ssl.SSLContext | None = None) -> None:
        ids = list(broker_ids) if broker_ids is not None else list(range(len(ports)))
        if len(ids) != len(ports) or len(set(ids)) != len(ids):
            raise ValueError(f"need one distinct broker id per port: ids={ids} ports={list(ports)}")
        self.cluster = cluster
        self.host = host
        # The listener's security (SASL, TLS): None is PLAINTEXT, every client anonymous.
        self.listener = listener
        self.ssl_context = ssl_context
        # ssl.principal.mapping.rules: a client certificate's subject to its principal.
        self.principal_mapper = SslPrincipalMapper(
            listener.ssl.get("ssl.principal.mapping.rules") if listener is not None else None)
        self.registry = registry if registry is not None else default_registry()
        if lock is None:
            lock = getattr(cluster, "lock", None) or threading.RLock()
        self.lock = lock
        self.max_request_bytes = max_request_bytes
        self.send_buffer_bytes = send_buffer_bytes
        self.receive_buffer_bytes = receive_buffer_bytes
        self.connections_max_idle_ms = connections_max_idle_ms
        self._idle_checked_ms = 0
        self.tick_ms = tick_ms
        self.idle_tick_ms = max(tick_ms, idle_tick_ms if idle_tick_ms is not None else tick_ms)
        self.on_tick = on_tick
        self.now_ms = clock
        self.stats = SessionStats()
        # Protocol-level closes, newest last: (broker_id, "host:port", reason).
        self.closed_connections: deque[tuple[int, str, RequestError]] = deque(maxlen=256)
        self._ports = dict(zip(ids, ports))
        self._listeners: dict[int, asyncio.base_events.Server] = {}
        self._connections: dict[int, set[_Connection]] = {b: set() for b in ids}
        self._waiting: set[_Connection] = set()
        self._stopped: set[int] = set()  # broker ids whose listener was stopped
        self._poll_scheduled = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._tick_handle: asyncio.TimerHandle | None = None
        self._last_tick_ms = 0
        self._tick_due_ms = 0

    # -- public API ---------------------------------------------------------

    @property
    def broker_ids(self) -> list[int]:
        return list(self._ports)

    @property
    def bound_ports(self) -> dict[int, int]:
        """broker id -> port (the real one once bound, also for port 0)."""
        return dict(self._ports)

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"{self.host}:{p}" for p in self._ports.values())

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def listening(self, broker_id: int) -> bool:
        return broker_id in self._listeners

    def connection_count(self, broker_id: int | None = None) -> int:
        ids = [broker_id] if broker_id is not None else list(self._connections)
        return sum(len(self._connections[b]) for b in ids)

    def start(self, timeout: float = 10.0) -> WireServer:
        """Start the loop thread and every listener; returns once they are bound."""
        if self.running:
            return self
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=self._run_loop, name="minikafka-wire", daemon=True)
        self._thread.start()
        try:
            self._call(self._start_all(), timeout)
        except BaseException:
            self.stop(timeout)
            raise
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Close every listener and connection and end the loop thread."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if threading.current_thread() is thread:
            raise RuntimeError("WireServer.stop() called from its own loop thread")
        if thread.is_alive():
            try:
                self._call(self._stop_all(), timeout)
            finally:
                loop.call_soon_threadsafe(loop.stop)
                thread.join(timeout)
        if not thread.is_alive():
            loop.close()
        self._loop = self._thread = None

    def stop_listener(self, broker_id: int, timeout: float = 10.0) -> None:
        """The broker goes offline: its listener closes and its connections drop."""
        self._call(self._stop_listener(broker_id), timeout)

    def start_listener(self, broker_id: int, timeout: float = 10.0) -> None:
        """The broker comes back, on the same port as before."""
        self._call(self._start_listener(broker_id), timeout)

    def schedule_listener(self, broker_id: int, listening: bool) -> None:
        """start_listener or stop_listener without waiting for it: from another server's
        loop thread (a served cluster's other listeners), which holds the cluster lock
        this loop may be waiting for."""
        loop = self._loop
        if loop is None or not self.running:
            return
        coro = self._start_listener(broker_id) if listening else self._stop_listener(broker_id)
        asyncio.run_coroutine_threadsafe(coro, loop)

    def notify(self) -> None:
        """Re-poll parked requests soon. Safe from any thread."""
        self._schedule_poll()

    def __enter__(self) -> WireServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- loop thread --------------------------------------------------------

    def _run_loop(self) -> None:
        loop = self._loop
        assert loop is not None
        asyncio.set_event_loop(loop)
        loop.run_forever()

    def _call(self, coro: Coroutine[Any, Any, None], timeout: float) -> None:
        loop = self._loop
        if loop is None or not self.running:
            coro.close()
            raise RuntimeError("WireServer is not running")
        if threading.current_thread() is self._thread:
            # Called from a handler or on_tick: waiting would deadlock the loop.
            loop.create_task(coro)
            return
        asyncio.run_coroutine_threadsafe(coro, loop).result(timeout)

    async def _start_all(self) -> None:
        for broker_id in self._ports:
            await self._start_listener(broker_id)
        self._last_tick_ms = self.now_ms()
        self._arm_tick(self.tick_ms)

    async def _stop_all(self) -> None:
        if self._tick_handle is not None:
            self._tick_handle.cancel()
            self._tick_handle = None
        for broker_id in list(self._listeners):
            await self._stop_listener(broker_id)

    async def _start_listener(self, broker_id: int) -> None:
        if broker_id in self._listeners:
            return
        if broker_id not in self._ports:
            raise KeyError(f"unknown broker id {broker_id}")
        self._stopped.discard(broker_id)
        loop = asyncio.get_running_loop()
        listener = await loop.create_server(
            lambda: _Connection(self, broker_id), self.host, self._ports[broker_id],
            reuse_address=True, backlog=128, ssl=self.ssl_context,
        )
        self._ports[broker_id] = listener.sockets[0].getsockname()[1]
        self._listeners[broker_id] = listener
        log.info("broker %d listening on %s:%d", broker_id, self.host, self._ports[broker_id])

    async def _stop_listener(self, broker_id: int) -> None:
        self._stopped.add(broker_id)
        listener = self._listeners.pop(broker_id, None)
        if listener is None:
            return
        # asyncio leaks a connection accepted just before Server.close() (its transport
        # cannot attach to a closed server, and the socket lingers until garbage
        # collection). So: stop accepting, let accepts in flight attach (connection_made
        # aborts them), then close; the kernel resets whatever is still in the backlog.
        loop = asyncio.get_running_loop()
        try:
            for sock in listener.sockets:
                loop.remove_reader(sock.fileno())
        except NotImplementedError:  # proactor loops (Windows) accept differently
            pass
        for _ in range(2):
            await asyncio.sleep(0)
        listener.close()
        for conn in list(self._connections[broker_id]):
            if conn.transport is not None:
                conn.transport.abort()
        await listener.wait_closed()
        log.info("broker %d stopped listening", broker_id)

    @property
    def tick_interval_ms(self) -> int:
        """The interval the next tick was armed with (tick_ms or idle_tick_ms)."""
        return self._tick_due_ms - self._last_tick_ms

    def _tick(self) -> None:
        self._last_tick_ms = self.now_ms()
        if self.on_tick is not None:
            try:
                with self.lock:
                    self.on_tick(self._last_tick_ms)
            except Exception:
                log.exception("on_tick failed")
        self._close_idle(self._last_tick_ms)
        self._poll_waiting()
        if self._tick_handle is not None:  # not stopping
            self._arm_tick(self.tick_ms if self._waiting else self.idle_tick_ms)

    def _close_idle(self, now_ms: int) -> None:
        """Close connections idle for connections.max.idle.ms (scanned at most every
        second, or every max_idle ms when that is shorter)."""
        max_idle = self.connections_max_idle_ms
        if max_idle < 0 or now_ms - self._idle_checked_ms < min(1000, max_idle):
            return
        self._idle_checked_ms = now_ms
        for conns in self._connections.values():
            for conn in [c for c in conns if c.idle(now_ms, max_idle)]:
                log.debug("broker %d: closing %s:%d, idle for %d ms", conn.broker_id,
                          *conn.peer, now_ms - conn.active_ms)
                if conn.transport is not None:
                    conn.transport.close()

    def _arm_tick(self, delay_ms: int) -> None:
        loop = self._loop
        assert loop is not None
        if self._tick_handle is not None:
            self._tick_handle.cancel()
        self._tick_due_ms = self._last_tick_ms + delay_ms
        self._tick_handle = loop.call_later(max(0, self._tick_due_ms - self.now_ms()) / 1000,
                                            self._tick)

    def _hurry_tick(self, now: bool = True) -> None:
        """Traffic after a quiet spell: tick at once if one is due (with `now`), and
        bring an idle-paced tick forward to `tick_ms` after the last one."""
        if self._tick_handle is None or self.idle_tick_ms == self.tick_ms:
            return
        if now and self.now_ms() - self._last_tick_ms >= self.tick_ms:
            self._tick()
        elif self._tick_due_ms > self._last_tick_ms + self.tick_ms:
            self._arm_tick(self.tick_ms)

    def _schedule_poll(self) -> None:
        loop = self._loop
        if self._poll_scheduled or loop is None:
            return
        self._poll_scheduled = True
        try:
            loop.call_soon_threadsafe(self._poll_waiting)
        except RuntimeError:  # loop closed: nothing left to poll
            self._poll_scheduled = False

    def _poll_waiting(self) -> None:
        self._poll_scheduled = False
        for conn in list(self._waiting):
            if not conn.write_paused:
                conn.pump()

    def _record_close(self, conn: _Connection, reason: RequestError) -> None:
        peer = f"{conn.peer[0]}:{conn.peer[1]}"
        self.closed_connections.append((conn.broker_id, peer, reason))
        log.warning("broker %d: closing connection from %s: %s", conn.broker_id, peer, reason.reason)
