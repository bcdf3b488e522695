"""Lesson 21's windowed count as a Java Kafka Streams 4.4.0 application (tests/java/
TruckWindowCounts.java: 60 s tumbling windows, 30 s grace, exactly_once_v2), run with
`group.protocol=streams` (KIP-1071) against Apache Kafka 4.4.0's native cluster.

The broker needs no setting for it: Kafka 4.4.0's `group.coordinator.rebalance.protocols`
defaults to classic,consumer,streams and a new cluster finalizes `streams.version` 1, so
StreamsGroupHeartbeat is served without `unstable.api.versions.enable` (the first test
reads both from the running cluster). minikafka's server does not serve
StreamsGroupHeartbeat, so the streams protocol runs here against real Kafka only; the same
counts are what minikafka.course.streams computes in process.
"""
from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from minikafka.course.streams import TimeWindows, WindowedCount
from minikafka.realkafka.jars import fetch

from .jvm import compile_java, kafka_classpath, run_java

pytestmark = [pytest.mark.real_kafka, pytest.mark.slow, pytest.mark.timeout(900)]

SOURCE = Path(__file__).resolve().parents[1] / "java" / "TruckWindowCounts.java"
LOG4J2 = SOURCE.with_name("streams-log4j2.properties")
START = 1_714_982_400_000  # the program's 8:00


@pytest.fixture(scope="module")
def streams_libs() -> Path:
    """Kafka Streams 4.4.0 and its runtime closure (RocksDB among them), fetched once."""
    return fetch("kafka-streams-4.4.0", ["org.apache.kafka:kafka-streams:4.4.0"])


@pytest.fixture(scope="module")
def classes(streams_libs):
    return compile_java([SOURCE], streams_libs / "*")


def run_app(classes, streams_libs, bootstrap: str, protocol: str, log: Path) -> dict:
    done = run_java("TruckWindowCounts", bootstrap, f"w-{uuid.uuid4().hex[:8]}", protocol,
                    classpath=kafka_classpath(classes, streams_libs / "*"), timeout=600,
                    options=[f"-Dlog4j2.configurationFile=file:{LOG4J2}",
                             f"-Dstreams.log={log}"])
    assert done.returncode == 0, (done.stdout[-3000:] + done.stderr[-3000:]
                                  + "\nthe application's log, last lines:\n"
                                  + "\n".join(_log_tail(log)))
    [line] = [line for line in done.stdout.splitlines() if line.startswith("{")]
    return json.loads(line)


def _log_tail(log: Path, lines: int = 60) -> list[str]:
    """The application's warnings and state changes: what a failed run needs explained."""
    if not log.exists():
        return ["(no log written)"]
    kept = [line for line in log.read_text(errors="replace").splitlines()
            if "] WARN " in line or "] ERROR " in line or "State transition" in line
            or "assignment" in line.lower() or "status" in line.lower()]
    return [line[:400] for line in kept[-lines:]]


def in_process_counts() -> dict[str, int]:
    """The same reports through minikafka.course.streams' WindowedCount."""
    from minikafka import Cluster

    cluster = Cluster(brokers=3, seed=21)
    cluster.create_topic("truck-positions", partitions=3, replication_factor=3)
    app = WindowedCount(cluster, TimeWindows(60_000, grace_ms=30_000))
    arrivals = sorted((85 if (truck, t) == (1, 50) else 155 if (truck, t) == (1, 110) else t,
                       truck, t) for t in range(0, 180, 10) for truck in (1, 2))
    for offset, (_, truck, t) in enumerate(arrivals):
        # One task per truck here: each truck's stream time is its own, as when the two
        # trucks' keys land in different partitions.
        app.process(truck, offset, f"truck-0{truck}", START + t * 1000)
    return {f"{k}@{(s - START) // 1000}": n for (k, s, e), n in app.counts().items()}


def test_the_broker_serves_streams_groups_with_its_defaults(real_kafka) -> None:
    listed = run_java("org.apache.kafka.tools.FeatureCommand", "--bootstrap-server",
                      real_kafka.bootstrap_servers, "describe")
    assert listed.returncode == 0, listed.stderr
    streams = [line for line in listed.stdout.splitlines() if "Feature: streams.version" in line]
    assert streams and "FinalizedVersionLevel: 1" in streams[0], listed.stdout
    configs = run_java("org.apache.kafka.tools.ConfigCommand", "--bootstrap-server",
                       real_kafka.bootstrap_servers, "--entity-type", "brokers",
                       "--entity-name", "1", "--describe", "--all")
    assert configs.returncode == 0, configs.stderr
    text = configs.stdout
    assert "group.coordinator.rebalance.protocols=classic,consumer,streams" in text, text[-2000:]
    # Nothing in the nodes' server.properties switches streams groups or unstable APIs on.
    for node in (1, 2, 3):
        props = real_kafka.properties(node)
        assert "unstable.api.versions.enable" not in props
        assert "group.coordinator.rebalance.protocols" not in props


def test_a_streams_group_counts_each_window_once(real_kafka, classes, streams_libs,
                                                 tmp_path) -> None:
    seen = run_app(classes, streams_libs, real_kafka.bootstrap_servers, "streams",
                   tmp_path / "streams.log")
    assert seen["state"] == "RUNNING"
    assert seen["group_type"] == "Streams" and seen["members"] == 1
    assert seen["subtopologies"] == 1
    # The 0:50 report came 35 s behind its truck's stream time, inside the grace; the 1:50
    # one 45 s behind, after [1:00, 2:00) closed: dropped and counted in the metric.
    assert seen["dropped"] == 1, seen
    assert seen["counts"] == {"truck-01@0": 6, "truck-01@60": 5, "truck-01@120": 6,
                              "truck-02@0": 6, "truck-02@60": 6, "truck-02@120": 6}, seen
    assert seen["counts"] == in_process_counts()
