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


# -- parallel runs (pytest-xdist; ./test.sh runs two workers) -------------------------------

# Files whose tests use a native Kafka cluster without naming the session's fixture (the
# fidelity suite asks for it by name, the security and tiered checks start their own nodes),
# and the group each joins; every other test of the session's cluster joins "native_kafka".
NATIVE_KAFKA_FILES = {"tests/fidelity/": "native_kafka_fidelity",
                      "tests/realkafka/test_security_fidelity.py": "native_kafka",
                      "tests/realkafka/test_tiered_storage_fidelity.py": "native_kafka"}


def native_kafka_group(item: pytest.Item) -> str | None:
    """The xdist group of a test that uses native Kafka: the fidelity suite in one, the
    rest in another, so two workers share the work, each with a cluster of its own."""
    path = item.path.relative_to(REPO_ROOT).as_posix()
    for prefix, group in NATIVE_KAFKA_FILES.items():
        if path.startswith(prefix):
            return group
    return "native_kafka" if "real_kafka_session" in getattr(item, "fixturenames", ()) else None


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]):
    """Under `--dist loadgroup`, the tests of the native Kafka cluster run in two groups, each
    on one worker: that worker's three JVMs start once, and a test that stops a node cannot
    pull it from under another worker's test (each worker's cluster has its own ports)."""
    xdist = config.pluginmanager.hasplugin("xdist")
    if xdist:
        for item in items:
            group = native_kafka_group(item)
            if group is not None:
                item.add_marker(pytest.mark.xdist_group(group))
    yield  # pytest-xdist's own hook appends "@group" to the node ids here
    if xdist and getattr(config.option, "loadgroup", False):
        for item in items:
            _keep_xdist_group(item)


def _keep_xdist_group(item: pytest.Item) -> None:
    """pytest 9.2 keeps a node id in `_id`, where pytest-xdist 3.8's "@group" suffix no longer
    lands (pytest-xdist#1386): without it loadgroup spreads a group over every worker."""
    groups = {str(m.args[0] if m.args else m.kwargs.get("name", "default"))
              for m in item.iter_markers("xdist_group")}
    suffix = "@" + "_".join(sorted(groups))
    if groups and not item.nodeid.endswith(suffix) and hasattr(item, "_id"):
        item._id = type(item._id).parse(item.nodeid + suffix)


@pytest.fixture(scope="session")
def lite_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The browser edition's site (`minikafka lite build`), built once per process: the lite
    tests share one xdist group, so one worker builds it and they all read it."""
    from minikafka.lite.build import build

    return build(tmp_path_factory.mktemp("lite") / "site")


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository's root folder (lessons/, labs/, grading/ live here)."""
    return REPO_ROOT


# -- real Apache Kafka (tests marked real_kafka) ----------------------------------------------

# Not 9092: the embedded lab server and a student's own cluster use 9092-9094.
BASE_KAFKA_PORT = int(os.environ.get("MINIKAFKA_TEST_KAFKA_PORT", "9192"))


def worker_kafka_port(worker: str | None = os.environ.get("PYTEST_XDIST_WORKER")) -> int:
    """The session cluster's first port on this xdist worker ("gw<n>"): 300 apart, so that
    each worker's cluster (its port and the two after it, + 10000 and + 20001 for the
    internal and controller listeners) misses the others' and the fixed ports the security,
    tiered and authentication checks take from the base (+ 10 ... + 62).

    >>> worker_kafka_port(None) == BASE_KAFKA_PORT, worker_kafka_port("gw2") - BASE_KAFKA_PORT
    (True, 600)
    """
    index = int(worker[2:]) if worker and worker.startswith("gw") else 0
    return BASE_KAFKA_PORT + 300 * index


REAL_KAFKA_PORT = worker_kafka_port()
# Retention and the log cleaner check every second instead of every 5 min / 15 s, so a test
# sees their outcome in seconds; what they delete or compact is unchanged. KIP-848 consumer
# and KIP-932 share group members heartbeat every second instead of every 5 s (each step
# of a join or a leave waits for the next heartbeat), and a share group may lock records
# for as little as 1 s (Kafka's lowest bound; 15 s by default), so a scenario can let a lock
# run out in seconds. The fidelity suite gives minikafka the same (tests/fidelity/doors.py).
GROUP_TEST_SETTINGS = {"group.consumer.heartbeat.interval.ms": "1000",
                       "group.consumer.min.heartbeat.interval.ms": "1000",
                       "group.share.heartbeat.interval.ms": "1000",
                       "group.share.min.heartbeat.interval.ms": "1000",
                       "group.share.min.record.lock.duration.ms": "1000"}
REAL_KAFKA_TEST_SETTINGS = {"log.retention.check.interval.ms": "1000",
                            "log.cleaner.backoff.ms": "1000",
                            **GROUP_TEST_SETTINGS,
                            # Kafka's first retention check comes 30 s after a node
                            # starts (an internal setting minikafka does not have; it
                            # checks from its start): at once.
                            "log.initial.task.delay.ms": "0"}


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
        cluster.down(kill=True)  # its data goes with the session's temporary folder


@pytest.fixture
def real_kafka(real_kafka_session):
    """The running real cluster, every node up (a test that stopped one left it down)."""
    real_kafka_session.up()
    return real_kafka_session
