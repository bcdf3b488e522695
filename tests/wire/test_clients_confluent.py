"""confluent-kafka 2.x (librdkafka) against a served cluster: admin, an idempotent
producer, transactions, and read_committed / read_uncommitted consumers using
assign() (no group coordination: the group id is never used to join)."""
from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

from .conftest import wait_for

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60)]

PARTITION_EOF = -191  # KafkaError._PARTITION_EOF


def read_to_end(server, topic: str, partitions: int, **config) -> list:
    """Every message from offset 0 until each partition reports its end."""
    consumer = Consumer({"bootstrap.servers": server.bootstrap_servers, "group.id": "unused",
                         "enable.auto.commit": False, "enable.partition.eof": True,
                         "fetch.wait.max.ms": 100, **config})
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        messages, ended = [], set()
        deadline = time.monotonic() + 20
        while len(ended) < partitions and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is None:
                continue
            if message.error():
                assert message.error().code() == PARTITION_EOF, message.error()
                ended.add(message.partition())
                continue
            messages.append(message)
        assert len(ended) == partitions, "every partition reached its end"
        return messages
    finally:
        consumer.close()


def test_admin_idempotent_producer_and_assigned_consumer(served):
    cluster, server = served
    admin = AdminClient({"bootstrap.servers": server.bootstrap_servers})
    futures = admin.create_topics([NewTopic("clicks", 3, 3, config={"retention.ms": "86400000"})])
    futures["clicks"].result(10)
    [config] = admin.describe_configs([ConfigResource("topic", "clicks")]).values()
    assert config.result(10)["retention.ms"].value == "86400000"

    producer = Producer({"bootstrap.servers": server.bootstrap_servers,
                         "enable.idempotence": True, "linger.ms": 5,
                         "compression.codec": "lz4"})
    delivered, failed = [], []

    def on_delivery(err, message):
        (failed if err else delivered).append(err or (message.partition(), message.offset()))

    sent = [b"click-%05d" % i for i in range(5000)]
    for i, value in enumerate(sent):
        producer.produce("clicks", key=b"user-%d" % (i % 17), value=value, on_delivery=on_delivery)
        if i % 1000 == 0:
            producer.poll(0)
    assert producer.flush(20) == 0
    assert not failed and len(set(delivered)) == len(sent)
    received = read_to_end(server, "clicks", 3)
    assert sorted(m.value() for m in received) == sent
    with cluster.lock:
        stored = [b for p in range(3) for b in cluster.leader_replica("clicks", p).log.batches()]
    assert all(b.producer_id >= 0 and b.compression == 3 for b in stored)


def test_transactions_and_read_committed_consumer(served):
    cluster, server = served
    with cluster.lock:
        cluster.create_topic("ledger", partitions=2, replication_factor=3)
    producer = Producer({"bootstrap.servers": server.bootstrap_servers,
                         "transactional.id": "ledger-writer", "linger.ms": 5})
    producer.init_transactions(10)
    producer.begin_transaction()
    for i in range(30):
        producer.produce("ledger", key=b"%d" % i, value=b"commit-%d" % i)
    producer.commit_transaction(10)
    producer.begin_transaction()
    for i in range(12):
        producer.produce("ledger", key=b"%d" % i, value=b"abort-%d" % i)
    producer.flush(10)
    producer.abort_transaction(10)
    producer.begin_transaction()
    producer.produce("ledger", key=b"z", value=b"commit-last")
    producer.commit_transaction(10)

    committed = read_to_end(server, "ledger", 2, **{"isolation.level": "read_committed"})
    assert sorted(m.value() for m in committed) == sorted(
        [b"commit-%d" % i for i in range(30)] + [b"commit-last"])
    everything = read_to_end(server, "ledger", 2, **{"isolation.level": "read_uncommitted"})
    assert sum(m.value().startswith(b"abort") for m in everything) == 12
    with cluster.lock:
        parts = cluster.describe_topic("ledger").partitions
    assert all(p.last_stable_offset == p.high_watermark for p in parts)


def test_idempotent_producer_and_consumer_follow_leadership_moving_back(served):
    # librdkafka fetches at v16 and produces at v10: once leadership moves back to the
    # preferred replica, the interim leader (still up) answers NOT_LEADER_OR_FOLLOWER
    # and names the new leader (KIP-951).
    cluster, server = served
    with cluster.lock:
        cluster.create_topic("moves", partitions=1, replication_factor=3)
        preferred = cluster.describe_topic("moves").partitions[0].leader
    producer = Producer({"bootstrap.servers": server.bootstrap_servers,
                         "enable.idempotence": True, "linger.ms": 5})
    consumer = Consumer({"bootstrap.servers": server.bootstrap_servers, "group.id": "unused",
                         "enable.auto.commit": False, "fetch.wait.max.ms": 100})
    consumer.assign([TopicPartition("moves", 0, 0)])
    failed, received = [], []

    def send(values: list[bytes]) -> None:
        for value in values:
            producer.produce("moves", value=value,
                             on_delivery=lambda err, _: err and failed.append(err))
        assert producer.flush(20) == 0 and not failed, failed[:3]

    def receive_until(count: int) -> None:
        deadline = time.monotonic() + 20
        while len(received) < count and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is not None and not message.error():
                received.append(message.value())

    try:
        sent = [b"move-%04d" % i for i in range(600)]
        send(sent[:200])
        receive_until(200)
        with cluster.lock:
            cluster.stop_broker(preferred)  # controlled shutdown: leadership moves away
            interim = cluster.describe_topic("moves").partitions[0].leader
        assert interim != preferred
        send(sent[200:400])
        receive_until(400)
        with cluster.lock:
            cluster.start_broker(preferred)

        def back_in_sync() -> bool:
            with cluster.lock:
                return preferred in cluster.describe_topic("moves").partitions[0].isr

        wait_for(back_in_sync, 20, "the preferred replica back in the ISR")
        with cluster.lock:
            cluster.elect_leaders("moves")
            assert cluster.describe_topic("moves").partitions[0].leader == preferred
        send(sent[400:])
        receive_until(600)
    finally:
        consumer.close()
    assert received == sent  # every record once, in order, through both moves
    used = server.wire.stats.by_api
    assert used.get((1, 16)) and used.get((0, 10)), sorted(used)
