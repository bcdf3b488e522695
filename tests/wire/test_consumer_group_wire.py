"""KIP-848 over the wire: confluent-kafka with group.protocol=consumer forms a group against
`minikafka serve` (ConsumerGroupHeartbeat), every partition is consumed exactly once, the
group rebalances when a member leaves, and ListGroups / ConsumerGroupDescribe show it."""
from __future__ import annotations

import time

from confluent_kafka import Consumer, ConsumerGroupType, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from minikafka.cluster import Cluster

PARTITIONS = 6


def owned(consumer: Consumer) -> set[int]:
    return {tp.partition for tp in consumer.assignment()}


def poll_until(consumers: list[Consumer], done, seen: dict, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, [sorted(owned(c)) for c in consumers]
        for i, c in enumerate(consumers):
            msg = c.poll(0.05)
            if msg is not None and not msg.error():
                seen.setdefault((msg.partition(), msg.offset()), []).append(i)


def test_confluent_consumers_form_a_kip848_group_and_rebalance():
    # A short heartbeat interval keeps the test quick (Kafka's default is 5 s).
    cluster = Cluster(brokers=3, seed=11, broker_config={
        "group.consumer.heartbeat.interval.ms": 500,
        "group.consumer.min.heartbeat.interval.ms": 500})
    with cluster.serve(port=0) as server:
        bootstrap = server.bootstrap_servers
        admin = AdminClient({"bootstrap.servers": bootstrap})
        for future in admin.create_topics([NewTopic("orders", PARTITIONS, 3)]).values():
            future.result()
        producer = Producer({"bootstrap.servers": bootstrap})
        for i in range(60):
            producer.produce("orders", b"%d" % i, partition=i % PARTITIONS)
        assert producer.flush(30) == 0
        consumers = [Consumer({"bootstrap.servers": bootstrap, "group.id": "kip848",
                               "group.protocol": "consumer", "auto.offset.reset": "earliest"})
                     for _ in range(3)]
        for c in consumers:
            c.subscribe(["orders"])
        seen: dict = {}
        poll_until(consumers, lambda: len(seen) == 60 and all(len(owned(c)) == 2
                                                              for c in consumers), seen)
        # every record once, every partition owned by exactly one member
        assert all(len(v) == 1 for v in seen.values())
        assert sorted(p for c in consumers for p in owned(c)) == list(range(PARTITIONS))

        listed = admin.list_consumer_groups(types={ConsumerGroupType.CONSUMER}).result()
        assert [(g.group_id, g.type) for g in listed.valid] == [
            ("kip848", ConsumerGroupType.CONSUMER)]
        described = admin.describe_consumer_groups(["kip848"])["kip848"].result()
        assert described.type == ConsumerGroupType.CONSUMER
        assert str(described.state).endswith("STABLE") and len(described.members) == 3
        epoch = cluster.groups.groups["kip848"].group_epoch
        assert epoch == 3

        consumers[0].close()
        rest = consumers[1:]
        poll_until(rest, lambda: sorted(p for c in rest for p in owned(c))
                   == list(range(PARTITIONS)), seen)
        assert cluster.groups.groups["kip848"].group_epoch == epoch + 1
        for c in rest:
            c.close()
        assert cluster.groups.groups["kip848"].state == "Empty"
