"""Fixtures for the wire tests that serve a Cluster to real clients on loopback."""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest

from minikafka.cluster import Cluster
from minikafka.wire.serve import ClusterServer


@pytest.fixture
def served() -> Iterator[tuple[Cluster, ClusterServer]]:
    """A 3-broker cluster served on ephemeral loopback ports."""
    cluster = Cluster(brokers=3, seed=11)
    with cluster.serve(port=0) as server:
        yield cluster, server


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {timeout} s")
        time.sleep(0.02)
