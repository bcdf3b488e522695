"""Serve a Cluster to real Kafka clients: one loopback listener per broker.

    with serve(cluster, port=9092) as server:        # or cluster.serve(port=9092)
        KafkaProducer(bootstrap_servers=server.bootstrap_servers) ...
        with cluster.lock:
            cluster.stop_broker(2)                    # its listener closes

Broker ids map to consecutive ports in id order (9092, 9093, 9094; port=0 gives
ephemeral ones). While served, the simulated clock follows real time: it jumps to
wall-clock epoch milliseconds at start (so client timestamps and retention agree
with it) and then advances with the server's ticks; a notebook that advances it by
hand moves it further, and real time carries on from there. Time never goes back.
Every tick also opens or closes listeners to match which brokers are running.

The notebook's thread and the server's both touch the cluster: hold `cluster.lock`
around calls into the cluster while it is served.

Records written before serving keep the simulated times they were written at, so
the jump to today can make them older than retention.ms, and retention deletes
them then, as Kafka would. Serve first and then produce, or keep such topics with
retention.ms=-1.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Protocol

from ..core.api.port import ClusterPort
from ..core.security_config import ListenerConfig
from .listeners import advertise, forget, is_served
from .registry import HandlerRegistry, default_registry
from .server import WireServer
from .tls import server_context

__all__ = ["ClusterServer", "serve"]

# Ticks advance the simulated clock (replication, timeouts) and re-poll parked
# requests: every 2 ms while a request waits, every 25 ms when nothing does (an
# idle served cluster costs well under 1% of a core; a request arriving after a
# quiet spell ticks first).
DEFAULT_TICK_MS = 2
IDLE_TICK_MS = 25


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


def _monotonic_ms() -> int:
    return time.monotonic_ns() // 1_000_000


class ServedCluster(ClusterPort, Protocol):
    """The cluster a server runs: the port (with the lock its thread shares with the
    caller's, and the clock it keeps at wall time) and a way to move that clock."""

    def advance_to(self, when_ms: int) -> None:
        """Run everything due up to `when_ms` of simulated time."""


class ClusterServer:
    """A running WireServer bound to a cluster, with its clock and broker lifecycle."""

    def __init__(self, cluster: ServedCluster, port: int = 9092, host: str = "127.0.0.1", *,
                 tick_ms: int = DEFAULT_TICK_MS, idle_tick_ms: int = IDLE_TICK_MS,
                 registry: HandlerRegistry | None = None,
                 advertised_host: str | None = None,
                 listeners: Sequence[ListenerConfig] | None = None) -> None:
        self.cluster = cluster
        self.host = host
        # advertised.listeners: the host clients are told to connect to (default: host)
        self.advertised_host = advertised_host or host
        ids = sorted(cluster.brokers)
        self._offset = 0  # simulated ms minus monotonic ms
        self._listening = dict.fromkeys(ids, True)
        registry = registry or default_registry()
        # One WireServer per listener (PLAINTEXT, SASL_SSL, ...); the first also ticks.
        # `port` and `host` are the first listener's; each counts its brokers up from its
        # own port, as `port` does.
        specs = list(listeners) if listeners else [ListenerConfig("PLAINTEXT", host, port)]
        self.wires: dict[str, WireServer] = {}
        for i, spec in enumerate(specs):
            base = port if i == 0 else spec.port
            ports = [0] * len(ids) if base == 0 else [base + n for n in range(len(ids))]
            self.wires[spec.name] = WireServer(
                cluster, (host if i == 0 else spec.host) or host, ports, ids,
                registry=registry, lock=cluster.lock, tick_ms=tick_ms,
                idle_tick_ms=idle_tick_ms, on_tick=self._tick if i == 0 else None,
                clock=_monotonic_ms,
                max_request_bytes=int(cluster.broker_config["socket.request.max.bytes"]),
                send_buffer_bytes=int(cluster.broker_config["socket.send.buffer.bytes"]),
                receive_buffer_bytes=int(cluster.broker_config["socket.receive.buffer.bytes"]),
                connections_max_idle_ms=int(cluster.broker_config["connections.max.idle.ms"]),
                # Every listener, PLAINTEXT too, by name: a client is told the endpoints
                # of the listener it connected through (Metadata, FindCoordinator).
                listener=spec,
                ssl_context=server_context(spec.ssl) if spec.tls else None)
        self.wire = next(iter(self.wires.values()))

    # -- lifecycle ----------------------------------------------------------------
    def start(self) -> ClusterServer:
        cluster = self.cluster
        if is_served(cluster):
            raise RuntimeError("this cluster is already served; stop that server first")
        with cluster.lock:
            wall = _wall_ms()
            if wall > cluster.clock.now_ms:
                cluster.advance_to(wall)
            self._offset = cluster.clock.now_ms - _monotonic_ms()
        started = []
        try:
            for name, wire in self.wires.items():
                wire.start()
                started.append(wire)
                host = self.advertised_host if wire is self.wire else wire.host
                advertise(cluster, host, wire.bound_ports, name)
        except BaseException:
            for wire in started:
                wire.stop()
            forget(cluster)
            raise
        with cluster.lock:
            stopped = [b for b, broker in cluster.brokers.items() if not broker.running]
        for b in stopped:  # outside the lock: the loop thread may be waiting for it
            for wire in self.wires.values():
                wire.stop_listener(b)
            self._listening[b] = False
        return self

    def stop(self) -> None:
        for wire in self.wires.values():
            wire.stop()
        forget(self.cluster)

    close = stop

    def __enter__(self) -> ClusterServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- views ----------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.wire.running

    @property
    def ports(self) -> dict[int, int]:
        """broker id -> bound port."""
        return self.wire.bound_ports

    @property
    def bootstrap_servers(self) -> str:
        return self.wire.bootstrap_servers

    def listening(self, broker_id: int) -> bool:
        return self.wire.listening(broker_id)

    def notify(self) -> None:
        """Re-poll parked requests now (after changing the cluster from another thread)."""
        for wire in self.wires.values():
            wire.notify()

    def listener_bootstrap(self, name: str) -> str:
        """bootstrap.servers of the listener `name` (e.g. "SASL_SSL")."""
        return self.wires[name].bootstrap_servers

    def __repr__(self) -> str:
        return f"<ClusterServer {self.bootstrap_servers} running={self.running}>"

    # -- the server's tick (loop thread, under cluster.lock) ----------------------------
    def _tick(self, now_ms: int) -> None:
        cluster = self.cluster
        target = now_ms + self._offset
        simulated = cluster.clock.now_ms
        if simulated > target:  # advanced by hand: real time carries on from there
            self._offset = simulated - now_ms
        elif target > simulated:
            cluster.advance_to(target)
        for b, broker in cluster.brokers.items():
            # A restarted broker opens its listener only once the controller has unfenced
            # it, as Kafka's BrokerServer enables request processing after the initial
            # unfence: a fenced broker is in no Metadata answer, not even its own. One
            # fenced later (lost controller) keeps serving, as in Kafka.
            want = broker.running and (self._listening[b] or not _fenced(cluster, b))
            if want != self._listening[b]:
                self._listening[b] = want
                if want:
                    self.wire.start_listener(b)
                else:
                    self.wire.stop_listener(b)
                for wire in self.wires.values():
                    if wire is not self.wire:
                        wire.schedule_listener(b, want)


def _fenced(cluster: ClusterPort, broker_id: int) -> bool:
    reg = cluster.controller.brokers.get(broker_id)
    return reg is None or reg.fenced


def serve(cluster: ServedCluster, port: int = 9092, host: str = "127.0.0.1", **options: Any) -> ClusterServer:
    """Start serving `cluster` on `host` (loopback unless told), brokers on consecutive
    ports from `port` (0: ephemeral); returns the running server (a context manager)."""
    return ClusterServer(cluster, port, host, **options).start()
