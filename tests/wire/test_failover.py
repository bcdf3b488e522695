"""A broker stops and starts under real clients (kafka-python, loopback).

An idempotent acks=all producer keeps sending while the leader of a partition is
stopped (controlled shutdown: leadership moves at once, the listener closes) or
crashes (leadership moves when its session expires), started again
(it rejoins the ISR) and made leader again by a preferred election. Afterwards the
topic must hold every acknowledged record exactly once, in send order per
partition, and a consumer reading all along with assign() (no group) must have
seen every one of them, following leadership to the new broker each time.
"""
from __future__ import annotations

import threading
import time
from collections import Counter

import pytest
from kafka import KafkaConsumer, TopicPartition

from minikafka.cluster import Cluster

from .conftest import BackgroundProducer, stored_values, wait_for

TOPIC = "orders"
PARTITIONS = 2


def in_sync(cluster, broker: int) -> bool:
    with cluster.lock:
        return all(broker in p.isr for p in cluster.describe_topic(TOPIC).partitions)


@pytest.mark.interop
@pytest.mark.timeout(90)
@pytest.mark.parametrize("how", ["stop", "crash"])
def test_producer_and_assigned_consumer_follow_leadership_through_a_restart(how):
    # A crash is noticed when broker.session.timeout.ms expires: 2 s here, not 9.
    cluster = Cluster(brokers=3, seed=11, broker_config={"broker.session.timeout.ms": 2000})
    with cluster.serve(port=0) as server:
        run_failover(cluster, server, how)


def run_failover(cluster, server, how: str) -> None:
    with cluster.lock:
        cluster.create_topic(TOPIC, partitions=PARTITIONS, replication_factor=3,
                             config={"min.insync.replicas": 2})
        victim = cluster.describe_topic(TOPIC).partitions[0].leader
    producer = BackgroundProducer(server.bootstrap_servers, TOPIC, value=b"%07d",
                                  key=b"key-%d", keys=7, pause=0.001)
    acked = producer.acked
    seen: list[bytes] = []

    def consume() -> None:
        consumer = KafkaConsumer(
            bootstrap_servers=server.bootstrap_servers, group_id=None,
            enable_auto_commit=False, fetch_max_wait_ms=100, request_timeout_ms=5000,
            retry_backoff_ms=50, reconnect_backoff_ms=50, reconnect_backoff_max_ms=300)
        try:
            consumer.assign([TopicPartition(TOPIC, p) for p in range(PARTITIONS)])
            consumer.seek_to_beginning()
            deadline = time.monotonic() + 80
            while time.monotonic() < deadline:
                for records in consumer.poll(timeout_ms=200).values():
                    seen.extend(r.value for r in records)
                if producer.produced.is_set() and len(seen) >= len(acked):
                    break
        finally:
            consumer.close()

    threads = [producer, threading.Thread(target=consume)]
    for thread in threads:
        thread.start()
    try:
        wait_for(lambda: len(acked) >= 300, 20, "300 acknowledged records")
        with cluster.lock:
            if how == "crash":
                cluster.crash_broker(victim)
            else:
                cluster.stop_broker(victim)
        wait_for(lambda: not server.listening(victim), 5, "the stopped broker's listener closing")
        producer.wait_for_more(300, 20, "progress without the stopped broker")
        with cluster.lock:
            cluster.start_broker(victim)
        wait_for(lambda: server.listening(victim), 5, "the listener reopening")
        wait_for(lambda: in_sync(cluster, victim), 20, "the restarted broker back in the ISR")
        with cluster.lock:
            results = cluster.elect_leaders(TOPIC)
            assert cluster.describe_topic(TOPIC).partitions[0].leader == victim, results
        producer.wait_for_more(300, 20, "progress after leadership moved back")
    finally:
        producer.stop()
        for thread in threads:
            thread.join(60)
    assert not producer.failed, producer.failed[:3]
    stored = stored_values(cluster, TOPIC, PARTITIONS)
    everything = Counter(v for values in stored.values() for v in values)
    assert set(everything) == set(acked), "the topic holds exactly the acknowledged records"
    assert max(everything.values()) == 1, [v for v, n in everything.items() if n > 1][:5]
    for values in stored.values():
        assert values == sorted(values), "an idempotent producer keeps send order per partition"
    assert Counter(seen) == everything, "the consumer saw every record once"
    assert len(acked) >= 900
