"""Where each broker of a served cluster listens, as Metadata, FindCoordinator and
DescribeCluster advertise it (Kafka's advertised.listeners).

serve() records the bound ports here, per listener name: a client is told the
endpoints of the listener it connected through, as Kafka does. Without a server (the
in-memory `exchange` pair in tests) brokers are advertised on 127.0.0.1 from port 9092
up, in id order.
"""
from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..core.api.port import ClusterPort

__all__ = ["advertise", "endpoint", "forget", "is_served"]

# cluster -> listener name -> broker id -> (host, port); the first listener is the default
_ADVERTISED: weakref.WeakKeyDictionary[ClusterPort, dict[str, dict[int, tuple[str, int]]]] = \
    weakref.WeakKeyDictionary()


def advertise(cluster: ClusterPort, host: str, ports: dict[int, int], listener: str = "") -> None:
    _ADVERTISED.setdefault(cluster, {})[listener] = {b: (host, p) for b, p in ports.items()}


def is_served(cluster: ClusterPort) -> bool:
    return cluster in _ADVERTISED


def forget(cluster: ClusterPort) -> None:
    _ADVERTISED.pop(cluster, None)


def endpoint(cluster: ClusterPort, broker_id: int, listener: str = "") -> tuple[str, int]:
    by_listener = _ADVERTISED.get(cluster)
    if by_listener:
        known = by_listener.get(listener) or next(iter(by_listener.values()))
        if broker_id in known:
            return known[broker_id]
    return "127.0.0.1", 9092 + sorted(cluster.brokers).index(broker_id)
