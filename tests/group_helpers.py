"""Helpers shared by the in-process consumer-group tests (test_admin.py, test_offsets.py).

A plain module, not fixtures: the tests' own helpers call these too. Pytest's default
("prepend") import mode puts tests/ on sys.path, so the test files import it by name.
"""

from __future__ import annotations

from minikafka.cluster import Cluster

TOPIC = "orders"


def consumer(cluster: Cluster, name: str = "c", group_id: str = "billing", **config):
    """A member of `group_id` subscribed to TOPIC that reads from the earliest offset and
    commits only when told."""
    config.setdefault("auto_offset_reset", "earliest")
    config.setdefault("enable_auto_commit", False)
    return cluster.consumer(TOPIC, group_id=group_id, client_id=name, **config)


def drain(c, ms: int = 10_000) -> list:
    """Every record `c` polls during the next `ms` of simulated time."""
    out = []
    end = c.cluster.now_ms + ms
    while c.cluster.now_ms < end:
        for records in c.poll(timeout_ms=200).values():
            out.extend(records)
    return out
