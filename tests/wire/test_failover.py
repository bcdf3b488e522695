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
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from minikafka.cluster import Cluster

from .conftest import wait_for

TOPIC = "orders"
PARTITIONS = 2


def topic_values(cluster) -> dict[int, list[bytes]]:
    """Every record below the high watermark, per partition, read from the leaders."""
    out = {}
    with cluster.lock:
        for p in range(PARTITIONS):
            replica = cluster.leader_replica(TOPIC, p)
            batches = replica.log.read(replica.log_start_offset, replica.high_watermark, 1 << 30)
            out[p] = [r.value for b in batches if not b.is_control for r in b.iter_records()]
    return out


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
    acked: list[bytes] = []
    failed: list[tuple[bytes, Exception]] = []
    seen: list[bytes] = []
    producing = threading.Event()
    producing.set()
    produced = threading.Event()

    def produce() -> None:
        producer = KafkaProducer(
            bootstrap_servers=server.bootstrap_servers, acks="all", enable_idempotence=True,
            linger_ms=2, request_timeout_ms=5000, retry_backoff_ms=50,
            reconnect_backoff_ms=50, reconnect_backoff_max_ms=300, delivery_timeout_ms=60000)
        i = 0
        try:
            while producing.is_set():
                value = b"%07d" % i
                future = producer.send(TOPIC, key=b"key-%d" % (i % 7), value=value)
                future.add_callback(lambda _md, v=value: acked.append(v))
                future.add_errback(lambda exc, v=value: failed.append((v, exc)))
                i += 1
                time.sleep(0.001)
            producer.flush(60)
        finally:
            producer.close(10)
            produced.set()

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
                if produced.is_set() and len(seen) >= len(acked):
                    break
        finally:
            consumer.close()

    threads = [threading.Thread(target=produce), threading.Thread(target=consume)]
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
        mark = len(acked)
        wait_for(lambda: len(acked) >= mark + 300, 20, "progress without the stopped broker")
        with cluster.lock:
            cluster.start_broker(victim)
        wait_for(lambda: server.listening(victim), 5, "the listener reopening")
        wait_for(lambda: in_sync(cluster, victim), 20, "the restarted broker back in the ISR")
        with cluster.lock:
            results = cluster.elect_leaders(TOPIC)
            assert cluster.describe_topic(TOPIC).partitions[0].leader == victim, results
        mark = len(acked)
        wait_for(lambda: len(acked) >= mark + 300, 20, "progress after leadership moved back")
    finally:
        producing.clear()
        for thread in threads:
            thread.join(60)
    assert not failed, failed[:3]
    stored = topic_values(cluster)
    everything = Counter(v for values in stored.values() for v in values)
    assert set(everything) == set(acked), "the topic holds exactly the acknowledged records"
    assert max(everything.values()) == 1, [v for v, n in everything.items() if n > 1][:5]
    for values in stored.values():
        assert values == sorted(values), "an idempotent producer keeps send order per partition"
    assert Counter(seen) == everything, "the consumer saw every record once"
    assert len(acked) >= 900
