"""Admin operations on data: delete-records, create-partitions; and what storage keeps:
retention and compaction outcomes."""
from __future__ import annotations

import time

from kafka import TopicPartition
from kafka.admin import OffsetSpec

from .doors import wait_until
from .registry import CONFLUENT, attempt, drain, rows, scenario


def _earliest_latest(door, tp: TopicPartition) -> list[int]:
    admin = door.admin()
    return [admin.list_partition_offsets({tp: OffsetSpec.EARLIEST})[tp].offset,
            admin.list_partition_offsets({tp: OffsetSpec.LATEST})[tp].offset]


@scenario("delete-records", lesson="11")
def delete_records_moves_the_log_start(door):
    """DeleteRecords before offset 4: the low watermark, EARLIEST and a consumer from the
    beginning all move to 4; an offset past the high watermark is refused."""
    topic = door.topic("dr")
    door.create_topic(topic, partitions=1)
    producer = door.producer()
    for i in range(10):
        producer.send(topic, value=f"v{i}".encode())
    producer.flush(15)
    tp = TopicPartition(topic, 0)
    admin = door.admin()
    result = admin.delete_records({tp: 4})
    consumer = door.consumer(topic, auto_offset_reset="earliest", enable_auto_commit=False)
    return {
        "low_watermark": {str(k.partition): v for k, v in result.items()},
        "earliest_latest": _earliest_latest(door, tp),
        "first_read": rows(drain(consumer, 6))[:1],
        "past_hw": attempt(lambda: admin.delete_records({tp: 50}) and "deleted"),
        "again_same": attempt(lambda: {str(k.partition): v for k, v in
                                       admin.delete_records({tp: 2}).items()}),
    }


@scenario("create-partitions", lesson="03")
def create_partitions_then_keys_move(door):
    """CreatePartitions 2 -> 5: the count, and keys now hash over 5 partitions; shrinking
    or keeping the count is refused."""
    topic = door.topic("cp")
    door.create_topic(topic, partitions=2)
    admin = door.admin()
    producer = door.producer()
    keys = [f"user-{i}" for i in range(12)]
    before = {k: producer.send(topic, key=k.encode(), value=b"x").get(timeout=15).partition
              for k in keys}
    grown = attempt(lambda: admin.create_partitions({topic: 5}) and "grown")
    wait_until(lambda: len(admin.describe_topics([topic])[0]["partitions"]) == 5, 15, 0.2)
    fresh = door.producer()  # new metadata: a running producer learns of them on refresh
    after = {k: fresh.send(topic, key=k.encode(), value=b"x").get(timeout=15).partition
             for k in keys}
    return {
        "grow": grown,
        "partitions": len(admin.describe_topics([topic])[0]["partitions"]),
        "before": before, "after": after,
        "shrink": attempt(lambda: admin.create_partitions({topic: 3}) and "done"),
        "same": attempt(lambda: admin.create_partitions({topic: 5}) and "done"),
    }


@scenario("create-partitions", lesson="03", client=CONFLUENT)
def confluent_create_partitions(door):
    """confluent-kafka: NewPartitions up, and down (refused)."""
    from confluent_kafka.admin import NewPartitions
    topic = door.topic("cp-ck")
    door.create_topic(topic, partitions=1)
    admin = door.ck_admin()
    out = {}
    for label, total in [("up", 3), ("down", 2)]:
        f = admin.create_partitions([NewPartitions(topic, total)], operation_timeout=10)[topic]
        out[label] = attempt(lambda f=f: f.result(15) or "done")
    return out


@scenario("retention", lesson="11")
def retention_ms_deletes_old_segments(door):
    """retention.ms: records stamped an hour ago go at the next retention check; the log
    start moves to the end, and later records are kept."""
    topic = door.topic("ret")
    door.create_topic(topic, partitions=1, configs={"retention.ms": "60000"})
    tp = TopicPartition(topic, 0)
    producer = door.producer()
    old = door.now_ms() - 3_600_000
    for i in range(3):
        producer.send(topic, value=f"old{i}".encode(), timestamp_ms=old + i).get(timeout=15)
    deleted = wait_until(lambda: _earliest_latest(door, tp)[0] == 3, 45, 0.25)
    producer.send(topic, value=b"new").get(timeout=15)
    consumer = door.consumer(topic, auto_offset_reset="earliest", enable_auto_commit=False)
    return {"deleted_within_45s": bool(deleted), "earliest_latest": _earliest_latest(door, tp),
            "read": rows(drain(consumer, 1))}


@scenario("retention", lesson="11")
def retention_bytes_keeps_the_newest_segments(door):
    """retention.bytes with 1 MiB segments: whole old segments go, the active one stays."""
    topic = door.topic("retb")
    door.create_topic(topic, partitions=1, configs={"segment.bytes": "1048576",
                                                     "retention.bytes": "1048576"})
    tp = TopicPartition(topic, 0)
    producer = door.producer(linger_ms=0, max_request_size=2_000_000)
    for i in range(30):
        producer.send(topic, value=bytes([65 + i % 26]) * 100_000).get(timeout=15)
    reached = wait_until(lambda: _earliest_latest(door, tp)[0] > 0, 20, 0.25)
    wait_until(lambda: False, 2.5, 0.25)  # two more checks: nothing else goes
    return {"deleted_within_20s": bool(reached), "earliest_latest": _earliest_latest(door, tp)}


@scenario("compaction", lesson="11")
def compaction_keeps_the_last_value_per_key(door):
    """cleanup.policy=compact, min.cleanable.dirty.ratio=0.01, segment.ms=100: once the
    segment rolls, the cleaner keeps each key's last value; offsets keep their gaps."""
    topic = door.topic("cmp")
    door.create_topic(topic, partitions=1, configs={
        "cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.01",
        "segment.ms": "100", "min.compaction.lag.ms": "0", "delete.retention.ms": "100"})
    producer = door.producer()
    for i in range(12):
        producer.send(topic, key=f"k{i % 3}".encode(), value=f"v{i}".encode()).get(timeout=15)
    door.sleep_ms(300)
    producer.send(topic, key=b"roll", value=b"r").get(timeout=15)  # rolls the segment

    tp = TopicPartition(topic, 0)
    end = _earliest_latest(door, tp)[1]

    def compacted():
        consumer = door.consumer(auto_offset_reset="earliest", enable_auto_commit=False)
        consumer.assign([tp])
        got = []
        deadline = time.monotonic() + 5
        while (not got or got[-1][1] < end - 1) and time.monotonic() < deadline:
            got = sorted(got + rows(drain(consumer, 1, timeout_s=1)), key=lambda r: r[1])
        consumer.close()
        keys = [r[2] for r in got]
        return got if len(keys) == len(set(keys)) else None

    result = wait_until(compacted, 30, 0.5)
    return {"compacted_within_30s": result is not None, "records": result}
