"""Shared test configuration.

Hypothesis profiles:
- ``ci`` (used when CI=true): derandomized, so a run is reproducible from the commit alone,
  with a bounded number of examples and a generous deadline for a 2-core machine.
- ``dev`` (default elsewhere): random exploration, Hypothesis's usual example count.
Pick one explicitly with HYPOTHESIS_PROFILE=ci|dev|thorough.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

REPO_ROOT = Path(__file__).resolve().parent.parent

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=50,
    deadline=timedelta(seconds=5),
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=100, deadline=timedelta(seconds=2))
settings.register_profile("thorough", max_examples=1000, deadline=None)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") == "true" else "dev")
)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository's root folder (lessons/, labs/, grading/ live here)."""
    return REPO_ROOT


# -- real Apache Kafka (tests marked real_kafka) ----------------------------------------------

# Not 9092: the embedded lab server and a student's own cluster use 9092-9094.
REAL_KAFKA_PORT = int(os.environ.get("MINIKAFKA_TEST_KAFKA_PORT", "9192"))
# Retention and the log cleaner check every second instead of every 5 min / 15 s, so a test
# sees their outcome in seconds; what they delete or compact is unchanged.
REAL_KAFKA_TEST_SETTINGS = {"log.retention.check.interval.ms": "1000",
                            "log.cleaner.backoff.ms": "1000"}


@pytest.fixture(scope="session")
def real_kafka_session(tmp_path_factory):
    """Apache Kafka's three native nodes, started once for the whole run (fetching the jars
    from Maven the first time) and stopped at the end. Use `real_kafka`, which also brings
    back any node a test stopped."""
    from minikafka.realkafka.nodes import NativeKafka

    cluster = NativeKafka(tmp_path_factory.mktemp("real-kafka"), port=REAL_KAFKA_PORT,
                          overrides=REAL_KAFKA_TEST_SETTINGS)
    try:
        cluster.up()  # inside: a node that fails to start must not leave the others running
        yield cluster
    finally:
        cluster.down()


@pytest.fixture
def real_kafka(real_kafka_session):
    """The running real cluster, every node up (a test that stopped one left it down)."""
    real_kafka_session.up()
    return real_kafka_session
