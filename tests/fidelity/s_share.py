"""Share groups (KIP-932) with confluent-kafka's ShareConsumer: records of one partition
shared by two consumers, release and reject, and an acquisition lock running out."""
from __future__ import annotations

import time

from .registry import CONFLUENT, ck_flush, scenario


def _share_group(door, records: int, **group_configs: str) -> tuple[str, str]:
    """A one-partition topic with `records` records j0, j1, ... (one batch each) and a share
    group reading it from the earliest offset."""
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType
    topic, group = door.topic("sh"), door.topic("sg")
    door.create_topic(topic, partitions=1)
    configs = {"share.auto.offset.reset": "earliest", **group_configs}
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[
        ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in configs.items()])
    admin = door.ck_admin()  # kept until the answer is in: a dropped client drops its futures
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(15)
    producer = door.ck_producer()
    for i in range(records):
        producer.produce(topic, value=b"j%d" % i)
        ck_flush(producer)
    return topic, group


def _consumer(door, group: str, topic: str):
    consumer = door.ck_share_consumer(**{"group.id": group,
                                         "share.acknowledgement.mode": "explicit"})
    consumer.subscribe([topic])
    return consumer


@scenario("share", lesson="09", client=CONFLUENT)
def share_consumers_split_a_partition_release_and_reject(door):
    """Two share consumers of one group poll one partition in turn; j3 is released on its
    first delivery (it comes again, delivery count 2), j5 rejected (it never comes again),
    every other record accepted. Together they accept every record once."""
    from confluent_kafka import AcknowledgeType
    topic, group = _share_group(door, 12)
    consumers = [_consumer(door, group, topic), _consumer(door, group, topic)]
    deliveries: dict[str, list[int]] = {}
    accepted: list[str] = []
    deadline = time.monotonic() + 45
    while len(accepted) < 11 and time.monotonic() < deadline:
        for consumer in consumers:
            messages = [m for m in consumer.poll(0.3) if m.error() is None]
            for m in messages:
                value, count = m.value().decode(), m.delivery_count()
                deliveries.setdefault(value, []).append(count)
                if value == "j3" and count == 1:
                    consumer.acknowledge(m, AcknowledgeType.RELEASE)
                elif value == "j5":
                    consumer.acknowledge(m, AcknowledgeType.REJECT)
                else:
                    consumer.acknowledge(m, AcknowledgeType.ACCEPT)
                    accepted.append(value)
            if messages:
                consumer.commit_sync()
    for consumer in consumers:
        consumer.close()
    return {"accepted": sorted(accepted, key=lambda v: int(v[1:])),
            "j3": deliveries.get("j3"), "j5": deliveries.get("j5")}


@scenario("share", lesson="09", client=CONFLUENT)
def share_lock_times_out_and_the_record_comes_again(door):
    """A share consumer takes j0 and never acknowledges it; once its acquisition lock
    (share.record.lock.duration.ms, 4 s here; the brokers' lower bound,
    group.share.min.record.lock.duration.ms, is 1 s) runs out, a second consumer of the
    group gets j0 with delivery count 2."""
    topic, group = _share_group(door, 1, **{"share.record.lock.duration.ms": "4000"})
    first = _consumer(door, group, topic)
    taken: list = []
    deadline = time.monotonic() + 20
    while not taken and time.monotonic() < deadline:
        taken = [[m.value().decode(), m.delivery_count()] for m in first.poll(0.3)
                 if m.error() is None]
    second = _consumer(door, group, topic)
    again: list = []
    started = time.monotonic()
    while not again and time.monotonic() - started < 30:
        again = [[m.value().decode(), m.delivery_count()] for m in second.poll(0.5)
                 if m.error() is None]
    waited = time.monotonic() - started
    return {"first": taken, "second": again, "after_the_lock": waited >= 2}


@scenario("share", lesson="09", client=CONFLUENT)
def share_poison_record_is_archived_at_the_delivery_limit(door):
    """share.delivery.count.limit=2: a consumer releases j0 every time it comes and accepts
    the rest. j0 comes twice, then is archived and never comes again; the others once."""
    from confluent_kafka import AcknowledgeType
    topic, group = _share_group(door, 3, **{"share.delivery.count.limit": "2"})
    consumer = _consumer(door, group, topic)
    deliveries: dict[str, list[int]] = {}
    quiet_since = None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        messages = [m for m in consumer.poll(0.3) if m.error() is None]
        for m in messages:
            value = m.value().decode()
            deliveries.setdefault(value, []).append(m.delivery_count())
            consumer.acknowledge(m, AcknowledgeType.RELEASE if value == "j0"
                                 else AcknowledgeType.ACCEPT)
        if messages:
            consumer.commit_sync()
            quiet_since = None
        elif len(deliveries) == 3:
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since > 3:
                break
    return {"deliveries": deliveries}
