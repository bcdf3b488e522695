"""Lesson 20's tiered storage on minikafka (served over the wire) and on Kafka 4.4.0's native
nodes with LocalTieredStorage (`minikafka kafka up --tiered-storage`), through the same
kafka-python calls.

The scenario is the lesson's, in seconds instead of minutes: a topic `trucks` with
remote.storage.enable=true, a segment rolled every 2 s (segment.ms), 4 s on local disk
(local.retention.ms), ten minutes in all; one report every 0.5 s. Both brokers run the remote
log manager and the retention check every second (Kafka's defaults are 30 s and 5 min), and
the test waits for them with bounded polls. What a student is taught must agree:

- closed segments are copied to the remote tier while the producer runs (ListOffsets -5,
  latest tiered, becomes >= 0; on Kafka, LocalTieredStorage's files appear);
- the local log shrinks to local retention: ListOffsets -4 (earliest local, KIP-1005) moves
  forward while -2 (earliest) stays 0, and never past what is already remote;
- once the partition is idle, Kafka rolls the expired active segment, copies it and deletes
  it locally: every record is remote and earliest local is the log end offset;
- a consumer seeking to offset 0 reads every record, served from the remote tier.

Not compared: a remote store that is down (LocalTieredStorage has no switch for it; the
lesson's outage runs on minikafka only) and the retention check's own schedule (Kafka
deletes local segments on log.retention.check.interval.ms, minikafka on the remote log
manager's pass; both are 1 s here).
"""
from __future__ import annotations

import os
import time

import pytest

from minikafka import Cluster
from minikafka.quiet import kafka_python_quiet
from minikafka.realkafka import jars
from minikafka.realkafka.nodes import NativeKafka, tiered_storage_settings

from .nodes_meanwhile import started_meanwhile

# Ports: after the other real-Kafka fidelity tests' (MINIKAFKA_TEST_KAFKA_PORT + 10 ... + 40).
REAL_PORT = int(os.environ.get("MINIKAFKA_TEST_KAFKA_PORT", "9192")) + 60

TOPIC = "trucks"
TOPIC_CONFIG = {"remote.storage.enable": "true", "segment.ms": "2000",
                "local.retention.ms": "4000", "retention.ms": "600000"}
# The remote log manager's pass and the retention check every second, on both brokers.
INTERVALS = {"remote.log.manager.task.interval.ms": "1000",
             "log.retention.check.interval.ms": "1000"}
# And Kafka's first retention check at once (log.initial.task.delay.ms, an internal setting
# minikafka does not have, 30 s by default: a fresh node deletes nothing in its first 30 s).
KAFKA_ONLY = {"log.initial.task.delay.ms": "0"}
REPORTS, EVERY_S = 24, 0.5
SETTLE_S = 90  # bound on waiting for the idle partition to end all remote


def offsets(admin, tp) -> tuple[int, int, int, int]:
    """ListOffsets -2 (earliest), -4 (earliest local), -5 (latest tiered), -1 (latest)."""
    from kafka.admin import OffsetSpec

    specs = (OffsetSpec.EARLIEST, OffsetSpec.EARLIEST_LOCAL, OffsetSpec.LATEST_TIERED,
             OffsetSpec.LATEST)
    return tuple(admin.list_partition_offsets({tp: spec})[tp].offset for spec in specs)


def observe(bootstrap: str) -> dict:
    """Run the scenario against one cluster; what a student would see."""
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import NewTopic
    from kafka.errors import KafkaError

    tp = TopicPartition(TOPIC, 0)
    seen: dict = {}
    with kafka_python_quiet():
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30_000)
        admin.create_topics([NewTopic(TOPIC, 1, 3, topic_configs=TOPIC_CONFIG)])
        deadline = time.monotonic() + 30  # the new topic's leader, on every broker
        while time.monotonic() < deadline:
            try:
                offsets(admin, tp)
                break
            except KafkaError:  # UnknownTopicOrPartition, NotLeaderForPartition, ...
                time.sleep(0.5)
        producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=0)
        samples = []
        for i in range(REPORTS):
            producer.send(TOPIC, key=b"truck-1", value=f"report {i}".encode()).get(30)
            time.sleep(EVERY_S)
            samples.append(offsets(admin, tp))
        producer.close()
        seen["copied while producing"] = max(s[2] for s in samples) >= 0
        deadline = time.monotonic() + SETTLE_S
        final = offsets(admin, tp)
        while final[1] < final[3] and time.monotonic() < deadline:
            time.sleep(1)
            final = offsets(admin, tp)
            samples.append(final)
        seen["earliest, over the run"] = sorted({s[0] for s in samples})
        seen["at some time part remote, part local"] = any(0 < s[1] < s[3] for s in samples)
        # local retention deletes only what is already remote
        seen["earliest local never passed latest tiered + 1"] = all(
            s[1] <= s[2] + 1 for s in samples)
        seen["idle: earliest, earliest local, latest tiered, latest"] = final
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
        consumer.assign([tp])
        consumer.seek(tp, 0)
        replayed = []
        deadline = time.monotonic() + 30
        while len(replayed) < REPORTS and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=1000).values():
                replayed += [(r.offset, r.value) for r in records]
        consumer.close()
        seen["replayed from offset 0"] = replayed
        admin.close()
    return seen


def test_tiered_nodes_get_kafkas_remote_storage_settings(tmp_path):
    """The keys are Kafka 4.4.0's (its ConfigDefs), the store is the cluster's own folder,
    shared by the three nodes, and the launcher remembers the choice for `start N`."""
    from minikafka.core.kafka_configs import BROKER

    cluster = NativeKafka(tmp_path, port=REAL_PORT, tiered_storage=True)
    props = [cluster.properties(n) for n in (1, 2, 3)]
    for key in tiered_storage_settings(tmp_path):
        if not key.startswith(("rsm.config.", "rlmm.config.")):  # the plugins' own
            assert key in BROKER, key
    assert {p["rsm.config.dir"] for p in props} == {str(tmp_path / "remote-storage")}
    assert cluster.remote_storage_dir == tmp_path / "remote-storage" / "kafka-tiered-storage"
    assert props[0]["remote.log.metadata.manager.listener.name"] == "INTERNAL"
    cluster._write_configs()
    assert NativeKafka(tmp_path).tiered_storage is True
    assert "remote.log.storage.system.enable" not in NativeKafka(
        tmp_path / "plain", port=REAL_PORT).properties(1)


def test_the_test_jar_pom_relocates_what_kafka_4_4_moved():
    pom = jars._shaded_test_jar_pom("4.3.1")
    assert "<classifier>test</classifier>" in pom and "<version>4.3.1</version>" in pom
    assert ("<pattern>org.apache.kafka.common.utils.LogContext</pattern><shadedPattern>"
            "org.apache.kafka.common.utils.internals.LogContext</shadedPattern>") in pom


@pytest.mark.real_kafka
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_lesson_20_tiered_storage_on_minikafka_and_kafka(tmp_path):
    kafka = NativeKafka(tmp_path / "kafka", port=REAL_PORT, overrides={**INTERVALS, **KAFKA_ONLY},
                        tiered_storage=True)
    with started_meanwhile(kafka) as kafka_ready:
        # minikafka served over the wire, its clock following the wall clock's, as `minikafka serve`
        cluster = Cluster(brokers=3, broker_config={"remote.log.storage.system.enable": "true",
                                                    **INTERVALS})
        with cluster.serve(port=0) as server:
            mini = observe(server.bootstrap_servers)
        kafka_ready()
        real = observe(kafka.bootstrap_servers)
        # LocalTieredStorage's files: one .log per remote segment, named by base offset.
        remote = sorted(int(f.name.split("-")[0])
                        for f in kafka.remote_storage_dir.glob(f"{TOPIC}-0-*/*.log"))

    expected = [(offset, f"report {offset}".encode()) for offset in range(REPORTS)]
    assert mini["replayed from offset 0"] == expected
    assert mini["earliest, over the run"] == [0]
    assert mini["copied while producing"] and mini["at some time part remote, part local"]
    assert mini["idle: earliest, earliest local, latest tiered, latest"] == (
        0, REPORTS, REPORTS - 1, REPORTS)
    assert remote[0] == 0 and len(remote) >= 2, remote
    differences = {k: (mini[k], real.get(k)) for k in mini if mini[k] != real.get(k)}
    assert not differences
