"""The fidelity suite's clusters: the session's real Kafka (tests/conftest.py), one served
minikafka cluster for the session, and a fresh in-process cluster per scenario."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from .doors import SHARED_BROKER_SETTINGS, RealFaults, ServedFaults, WireDoor
from .results import RESULTS, save_and_report


@pytest.fixture(scope="session")
def served_session() -> Iterator[tuple]:
    from minikafka import Cluster
    cluster = Cluster(brokers=3, seed=19, broker_config=SHARED_BROKER_SETTINGS)
    with cluster.serve(port=0) as server:
        yield cluster, server


@pytest.fixture
def serve_door(served_session) -> Iterator[WireDoor]:
    cluster, server = served_session
    faults = ServedFaults(cluster, server)
    faults.restart_all()  # a scenario that stopped a broker left it down
    door = WireDoor("serve", server.bootstrap_servers, faults, metadata_lag=False)
    yield door
    door.close()


@pytest.fixture
def real_door(real_kafka) -> Iterator[WireDoor]:
    door = WireDoor("kafka", real_kafka.bootstrap_servers, RealFaults(real_kafka))
    yield door
    door.close()


def pytest_sessionfinish(session, exitstatus) -> None:
    if RESULTS:
        save_and_report()
