"""Lesson 20's claims against Apache Kafka 4.4.0's own tiered storage (KIP-405).

Three native nodes with remote.log.storage.system.enable and Kafka's file-system remote
storage manager for tests, LocalTieredStorage (from the kafka-storage test jar: Kafka 4.4.0
publishes none, so 4.3.1's, see minikafka.realkafka.jars.fetch_local_tiered_storage). A
topic with remote.storage.enable=true rolls a segment a second and keeps one second
locally; then, as in minikafka: the local log start offset moves, the log start offset
stays at 0, the highest remote offset grows, and a consumer from the earliest offset reads
every record, the old ones from the remote store. Kafka's config refusals are compared with
minikafka's word for word.
"""
from __future__ import annotations

import os
import subprocess
import time

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import InvalidConfigurationError

from minikafka import Cluster
from minikafka.realkafka import jars
from minikafka.realkafka.nodes import NativeKafka

pytestmark = [pytest.mark.real_kafka, pytest.mark.xdist_group("native_kafka")]

# Beside the session's cluster (MINIKAFKA_TEST_KAFKA_PORT), not on it.
PORT = int(os.environ.get("MINIKAFKA_TEST_KAFKA_PORT", "9192")) + 40
TOPIC = "trucks-tiered"
RECORDS = 40


@pytest.fixture(scope="module")
def tiered_kafka(tmp_path_factory):
    storage_libs = jars.fetch_local_tiered_storage()
    remote_dir = tmp_path_factory.mktemp("remote-store")
    overrides = {
        "remote.log.storage.system.enable": "true",
        "remote.log.storage.manager.class.name": jars.LOCAL_TIERED_STORAGE,
        "remote.log.storage.manager.class.path": f"{storage_libs}/*",
        "rsm.config.dir": str(remote_dir),
        "remote.log.metadata.manager.listener.name": "INTERNAL",
        "rlmm.config.remote.log.metadata.topic.num.partitions": "3",
        "remote.log.manager.task.interval.ms": "500",
        "log.retention.check.interval.ms": "500",
    }
    kafka = NativeKafka(tmp_path_factory.mktemp("tiered-kafka"), port=PORT, overrides=overrides)
    try:
        kafka.up()
        yield kafka
    finally:
        kafka.down()


def offsets(kafka: NativeKafka, spec: str) -> int:
    """GetOffsetShell's answer for partition 0 (-2 earliest, -4 earliest-local, -5
    latest-tiered, -1 latest)."""
    libs = jars.kafka_libs()
    done = subprocess.run(
        ["java", "-cp", f"{libs}/*", "org.apache.kafka.tools.GetOffsetShell",
         "--bootstrap-server", kafka.bootstrap_servers, "--topic", TOPIC, "--time", spec],
        capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith(f"{TOPIC}:0:"))
    return int(line.rsplit(":", 1)[1])


def test_old_segments_move_to_the_remote_tier_and_stay_readable(tiered_kafka):
    admin = KafkaAdminClient(bootstrap_servers=tiered_kafka.bootstrap_servers)
    try:
        admin.create_topics([NewTopic(TOPIC, 1, 3, topic_configs={
            "remote.storage.enable": "true", "segment.ms": "1000",
            "local.retention.ms": "1000", "retention.ms": "3600000"})])
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=tiered_kafka.bootstrap_servers, acks="all")
    for i in range(RECORDS):  # a record every 0.25 s: a segment rolls about every 4 records
        producer.send(TOPIC, key=b"truck-01", value=b"report-%d" % i).get(timeout=30)
        time.sleep(0.25)
    producer.close()
    deadline = time.monotonic() + 90
    while True:  # the remote log manager copies, then local retention deletes
        local_start, tiered = offsets(tiered_kafka, "-4"), offsets(tiered_kafka, "-5")
        if local_start >= RECORDS // 2 or time.monotonic() > deadline:
            break
        time.sleep(2)
    assert local_start >= RECORDS // 2, (local_start, tiered)
    assert tiered >= local_start - 1  # only what is remote is deleted locally
    assert offsets(tiered_kafka, "-2") == 0  # the whole log still starts at 0
    assert offsets(tiered_kafka, "-1") == RECORDS
    consumer = KafkaConsumer(bootstrap_servers=tiered_kafka.bootstrap_servers,
                             auto_offset_reset="earliest", enable_auto_commit=False,
                             consumer_timeout_ms=20_000)
    tp = TopicPartition(TOPIC, 0)
    consumer.assign([tp])
    seen = []
    for record in consumer:
        seen.append(record.offset)
        if len(seen) == RECORDS:
            break
    consumer.close()
    assert seen == list(range(RECORDS))


@pytest.mark.parametrize("config", [
    {"remote.storage.enable": "true", "cleanup.policy": "compact"},
    {"remote.storage.enable": "true", "retention.ms": "600000", "local.retention.ms": "900000"},
    {"remote.storage.enable": "true", "retention.bytes": "1000", "local.retention.bytes": "-1"},
])
def test_kafka_and_minikafka_refuse_the_same_tiered_configs(tiered_kafka, config):
    admin = KafkaAdminClient(bootstrap_servers=tiered_kafka.bootstrap_servers)
    try:
        with pytest.raises(InvalidConfigurationError) as real:
            admin.create_topics([NewTopic("refused", 1, 3, topic_configs=config)])
    finally:
        admin.close()
    mini = Cluster(brokers=3, seed=20, broker_config={"remote.log.storage.system.enable": True})
    with pytest.raises(InvalidConfigurationError) as ours:
        mini.create_topic("refused", partitions=1, replication_factor=3, config=config)
    message = str(ours.value).split(": ", 1)[1]
    assert message in str(real.value), (str(real.value), message)
