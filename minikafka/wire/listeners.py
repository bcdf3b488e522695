"""Where each broker of a served cluster listens, as Metadata, FindCoordinator and
DescribeCluster advertise it (Kafka's advertised.listeners).

serve() records the bound ports here; without a server (the in-memory `exchange`
pair in tests) brokers are advertised on 127.0.0.1 from port 9092 up, in id order.
"""
from __future__ import annotations

import weakref
from typing import Any

__all__ = ["advertise", "endpoint", "forget", "is_served"]

_ADVERTISED: weakref.WeakKeyDictionary[Any, dict[int, tuple[str, int]]] = \
    weakref.WeakKeyDictionary()


def advertise(cluster: Any, host: str, ports: dict[int, int]) -> None:
    _ADVERTISED[cluster] = {b: (host, p) for b, p in ports.items()}


def is_served(cluster: Any) -> bool:
    return cluster in _ADVERTISED


def forget(cluster: Any) -> None:
    _ADVERTISED.pop(cluster, None)


def endpoint(cluster: Any, broker_id: int) -> tuple[str, int]:
    known = _ADVERTISED.get(cluster)
    if known and broker_id in known:
        return known[broker_id]
    return "127.0.0.1", 9092 + sorted(cluster.brokers).index(broker_id)
