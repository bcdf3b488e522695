"""The Java client (kafka-clients 4.4.0: Admin, KafkaProducer, KafkaConsumer) round-trips
against `minikafka serve`, and sees there what it sees on Apache Kafka.

tests/java/RoundTrip.java is compiled with javac at test time (cached by source hash under
.cache/java-classes) and run once per cluster; it prints one JSON object of observations
(no topic ids or timestamps), which the tests compare.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from minikafka.cluster import Cluster

from .jvm import compile_java, observe

pytestmark = [pytest.mark.real_kafka, pytest.mark.slow, pytest.mark.timeout(900)]

SOURCE = Path(__file__).resolve().parents[1] / "java" / "RoundTrip.java"


@pytest.fixture(scope="module")
def classes():
    return compile_java([SOURCE])


def round_trip(classes, bootstrap: str) -> dict:
    return observe("RoundTrip", classes, bootstrap, "rt")


@pytest.fixture(scope="module")
def on_minikafka(classes):
    cluster = Cluster(brokers=3)
    with cluster.serve(port=0) as server:
        return round_trip(classes, server.bootstrap_servers)


def test_admin(on_minikafka):
    admin = dict(on_minikafka["admin"])
    assert re.fullmatch(r"TopicExistsException: Topic 'rt-[0-9a-f]{8}-orders' already exists\.",
                        admin.pop("create_again"))
    assert admin == {
        "nodes": 3, "listed": True, "replicas_per_partition": [3, 3, 3],
        "min.insync.replicas": "2 DYNAMIC_TOPIC_CONFIG",
        "cleanup.policy": "delete DEFAULT_CONFIG"}


def test_idempotent_producer(on_minikafka):
    placed = [tuple(map(int, p.split(":"))) for p in on_minikafka["idempotent"]["partition_offset"]]
    assert len(placed) == 30
    # Ten keys, three records each: a key always lands on the same partition, and every
    # partition's offsets run 0, 1, 2, ... with no gap or duplicate.
    for key in range(10):
        assert len({placed[i][0] for i in range(key, 30, 10)}) == 1
    for partition in {p for p, _ in placed}:
        offsets = [o for p, o in placed if p == partition]
        assert offsets == list(range(len(offsets)))


def test_transactions(on_minikafka):
    assert on_minikafka["transactions"] == {
        "read_committed": ["t0", "t1", "t2", "t3", "t4", "t8", "t9"],
        "read_uncommitted": [f"t{i}" for i in range(10)],
        "end_offset": 13,  # ten records and three transaction markers
    }


def test_classic_consumer_group(on_minikafka):
    group = on_minikafka["classic_group"]
    assert group["records"] == 30 and group["assigned"] == 3
    assert group["live"] == "Stable Classic 1 member(s)"
    assert group["after_close"] == "Empty 0 member(s)"
    assert sum(group["committed"].values()) == 30
    assert group["fetched"] == group["committed"]


def test_consumer_protocol_group(on_minikafka):
    """KIP-848's group.protocol=consumer: ConsumerGroupHeartbeat forms the group, the Admin
    describes it with ConsumerGroupDescribe (type Consumer), commits carry the member epoch."""
    group = on_minikafka["consumer_group"]
    assert group["records"] == 30 and group["assigned"] == 3
    assert group["live"] == "Stable Consumer 1 member(s)"
    assert group["after_close"] == "Empty 0 member(s)"
    assert sum(group["committed"].values()) == 30
    assert group["fetched"] == group["committed"]


def test_the_java_client_sees_the_same_on_apache_kafka(on_minikafka, classes, real_kafka):
    on_kafka = round_trip(classes, real_kafka.bootstrap_servers)
    for scenario in ("admin", "idempotent", "transactions", "classic_group", "consumer_group"):
        expected = dict(on_minikafka[scenario])
        seen = dict(on_kafka[scenario])
        if scenario == "admin":  # the topic names differ (one prefix per run)
            expected["create_again"] = expected["create_again"].split("'")[0]
            seen["create_again"] = seen["create_again"].split("'")[0]
        assert seen == expected, scenario
