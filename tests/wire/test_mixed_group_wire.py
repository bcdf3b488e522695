"""A mixed group over the wire (Kafka 4.x): a kafka-python consumer (the classic protocol)
and a confluent-kafka consumer with group.protocol=consumer share one group against
`minikafka serve`. The classic group is upgraded online when the confluent consumer joins,
the two consume every partition exactly once, and when the confluent consumer leaves the
group is downgraded to a classic group and the kafka-python consumer takes everything."""
from __future__ import annotations

import time

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaConsumer

from minikafka.cluster import Cluster

PARTITIONS = 6
GROUP = "mixed"


def test_classic_and_consumer_protocol_members_share_a_group_then_downgrade():
    cluster = Cluster(brokers=3, seed=11, broker_config={
        "group.consumer.heartbeat.interval.ms": 500,
        "group.consumer.min.heartbeat.interval.ms": 500})
    with cluster.serve(port=0) as server:
        bootstrap = server.bootstrap_servers
        admin = AdminClient({"bootstrap.servers": bootstrap})
        for future in admin.create_topics([NewTopic("orders", PARTITIONS, 3)]).values():
            future.result()
        producer = Producer({"bootstrap.servers": bootstrap})
        classic = KafkaConsumer(
            bootstrap_servers=bootstrap, group_id=GROUP, auto_offset_reset="earliest",
            session_timeout_ms=6000, heartbeat_interval_ms=500, fetch_max_wait_ms=100,
            retry_backoff_ms=50, reconnect_backoff_ms=50, reconnect_backoff_max_ms=300)
        classic.partitions_for_topic("orders")  # see kafka_python_member_race (groups wire)
        classic.subscribe(["orders"])
        seen: dict[tuple[int, int], list[str]] = {}

        def poll(consumers) -> None:
            for c in consumers:
                if c is classic:
                    for records in classic.poll(timeout_ms=50).values():
                        for r in records:
                            seen.setdefault((r.partition, r.offset), []).append("classic")
                else:
                    msg = c.poll(0.05)
                    if msg is not None and not msg.error():
                        seen.setdefault((msg.partition(), msg.offset()), []).append("consumer")

        def until(consumers, done, timeout: float = 60.0) -> None:
            deadline = time.monotonic() + timeout
            while not done():
                assert time.monotonic() < deadline, cluster.groups.snapshot().get(GROUP)
                poll(consumers)

        def owned_by_classic() -> set[int]:
            return {tp.partition for tp in classic.assignment()}

        until([classic], lambda: len(owned_by_classic()) == PARTITIONS)
        assert cluster.groups.snapshot()[GROUP]["type"] == "classic"

        modern = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP,
                           "group.protocol": "consumer", "auto.offset.reset": "earliest"})
        modern.subscribe(["orders"])
        both = [classic, modern]

        def shared() -> bool:
            snap = cluster.groups.snapshot()[GROUP]
            mine = owned_by_classic()
            theirs = {tp.partition for tp in modern.assignment()}
            return (snap["state"] == "Stable" and len(snap["members"]) == 2
                    and not mine & theirs and len(mine | theirs) == PARTITIONS
                    and mine and theirs)

        until(both, shared)
        snap = cluster.groups.snapshot()[GROUP]
        assert snap["type"] == "consumer"  # upgraded online
        assert sorted(m["protocol"] for m in snap["members"].values()) == [
            "classic", "consumer"]
        assert sorted(len(m["assignment"]) for m in snap["members"].values()) == [3, 3]

        for i in range(60):
            producer.produce("orders", b"%d" % i, partition=i % PARTITIONS)
        assert producer.flush(30) == 0
        until(both, lambda: len(seen) == 60)
        for _ in range(20):  # a little longer: nothing may come twice
            poll(both)
        assert all(len(v) == 1 for v in seen.values())
        assert {who for v in seen.values() for who in v} == {"classic", "consumer"}
        by_partition = {p: who for (p, _), (who,) in seen.items()}
        assert {p for p, who in by_partition.items() if who == "classic"} == owned_by_classic()

        modern.close()  # the last consumer-protocol member leaves: a classic group again
        assert cluster.groups.snapshot()[GROUP]["type"] == "classic"
        until([classic], lambda: len(owned_by_classic()) == PARTITIONS
              and cluster.groups.snapshot()[GROUP]["state"] == "Stable")
        before = len(seen)
        for i in range(60, 72):
            producer.produce("orders", b"%d" % i, partition=i % PARTITIONS)
        assert producer.flush(30) == 0
        until([classic], lambda: len(seen) >= before + 12)
        fresh = [v for (p, o), v in seen.items() if o >= 10]
        assert len(fresh) == 12 and all(v == ["classic"] for v in fresh)
        classic.close()
        assert cluster.groups.snapshot()[GROUP]["state"] == "Empty"
