"""Every partition request starts with one leader check (core.api.leader.led_replica): the
broker's own Produce and Fetch paths answer as the wire's handlers do, in Kafka's terms."""
from __future__ import annotations

import pytest

from minikafka import Cluster
from minikafka.core import api, errors
from minikafka.core.records import RecordBatch


@pytest.fixture
def cluster() -> Cluster:
    cluster = Cluster(brokers=3, seed=5)
    cluster.create_topic("orders", partitions=2, replication_factor=1)
    return cluster


def produce(cluster: Cluster, broker_id: int, topic: str, partition: int) -> int:
    out: dict = {}
    batch = RecordBatch([(0, cluster.now_ms, None, b"v", ())], first_timestamp=cluster.now_ms)
    cluster.brokers[broker_id].handle_produce({(topic, partition): batch}, 1, 30_000, out.update)
    cluster.settle()
    return out[(topic, partition)][0]


def fetch(cluster: Cluster, broker_id: int, topic: str, partition: int) -> int:
    out = []
    request = api.FetchRequest((api.FetchPartition(topic, partition, 0),), max_wait_ms=0)
    cluster.brokers[broker_id].handle_fetch(request, out.append)
    cluster.settle()
    return out[0].partitions[0].error_code


@pytest.mark.parametrize("request_", [produce, fetch])
def test_the_broker_answers_as_kafka_for_partitions_it_does_not_lead(cluster, request_) -> None:
    leader = cluster.leader_replica("orders", 0).broker_id
    other = next(b for b in cluster.brokers if b != leader)
    assert request_(cluster, leader, "orders", 0) == errors.NONE
    # A partition the cluster has, led elsewhere: the client refreshes metadata and retries.
    assert request_(cluster, other, "orders", 0) == errors.NOT_LEADER_OR_FOLLOWER
    # A partition the topic does not have, or a topic that does not exist.
    assert request_(cluster, leader, "orders", 7) == errors.UNKNOWN_TOPIC_OR_PARTITION
    assert request_(cluster, leader, "missing", 0) == errors.UNKNOWN_TOPIC_OR_PARTITION
