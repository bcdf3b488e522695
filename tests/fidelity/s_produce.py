"""Producing and reading: key placement, offsets, ListOffsets specs, compression."""
from __future__ import annotations

from kafka import TopicPartition
from kafka.admin import OffsetSpec

from .registry import CONFLUENT, ck_drain, ck_flush, ck_rows, drain, rows, scenario

KEYS = [f"key-{i}" for i in range(40)] + ["", "orders", "é", "user:42"]


@scenario("placement", lesson="03", in_process=True)
def keyed_partitions_kafka_python(door):
    """kafka-python's default partitioner puts each key on murmur2(key) % 6."""
    topic = door.topic("keys")
    door.create_topic(topic, partitions=6)
    producer = door.producer()
    placed = {k: producer.send(topic, key=k.encode(), value=b"v").get(timeout=15).partition
              for k in KEYS}
    return {"placement": placed}


@scenario("placement", lesson="03", client=CONFLUENT)
def keyed_partitions_confluent_murmur2(door):
    """librdkafka with partitioner=murmur2_random places keys as the Java client does."""
    topic = door.topic("keys-ck")
    door.create_topic(topic, partitions=6)
    producer = door.ck_producer(partitioner="murmur2_random")
    placed = {}
    for k in KEYS:
        producer.produce(topic, key=k.encode(), value=b"v",
                         on_delivery=lambda e, m, k=k: placed.__setitem__(k, m.partition()))
    ck_flush(producer)
    return {"placement": placed}


@scenario("offsets", lesson="01", in_process=True)
def offsets_count_from_zero_per_partition(door):
    """Offsets are per partition, from 0, one per record."""
    topic = door.topic("offsets")
    door.create_topic(topic, partitions=2)
    producer = door.producer()
    got = [[md.partition, md.offset] for md in
           (producer.send(topic, value=b"x", partition=i % 2).get(timeout=15) for i in range(7))]
    return {"acks": got}


@scenario("offsets", lesson="01", client=CONFLUENT)
def offsets_confluent_delivery_reports(door):
    """confluent-kafka's delivery reports carry the same offsets."""
    topic = door.topic("offsets-ck")
    door.create_topic(topic, partitions=2)
    producer = door.ck_producer(**{"linger.ms": 0})
    got = []
    for i in range(7):
        producer.produce(topic, value=b"x", partition=i % 2,
                         on_delivery=lambda e, m: got.append([m.partition(), m.offset()]))
        producer.flush(10)
    return {"acks": got}


@scenario("offsets", lesson="08", in_process=True)
def round_trip_keys_values_headers(door):
    """What a consumer reads back: partition, offset, key, value and headers, from earliest."""
    topic = door.topic("rt")
    door.create_topic(topic, partitions=3)
    producer = door.producer()
    for i in range(9):
        producer.send(topic, key=f"k{i % 4}".encode(), value=f"v{i}".encode(),
                      headers=[("h", str(i).encode())])
    producer.flush(15)
    consumer = door.consumer(topic, auto_offset_reset="earliest", enable_auto_commit=False)
    records = drain(consumer, 9)
    return {"records": rows(records),
            "headers": [[(h, v.decode()) for h, v in r.headers] for r in records]}


@scenario("offsets", lesson="08", client=CONFLUENT)
def round_trip_confluent(door):
    """The same with confluent-kafka on both ends."""
    topic = door.topic("rt-ck")
    door.create_topic(topic, partitions=3)
    producer = door.ck_producer(partitioner="murmur2_random")
    for i in range(9):
        producer.produce(topic, key=f"k{i % 4}".encode(), value=f"v{i}".encode(),
                         headers=[("h", str(i).encode())])
    ck_flush(producer)
    consumer = door.ck_consumer(**{"group.id": door.topic("g"), "auto.offset.reset": "earliest",
                                   "enable.auto.commit": False})
    consumer.subscribe([topic])
    messages = ck_drain(consumer, 9)
    return {"records": ck_rows(messages),
            "headers": [[(h, v.decode()) for h, v in m.headers()] for m in messages]}


@scenario("list-offsets", lesson="10", in_process=True)
def list_offsets_earliest_latest(door):
    """ListOffsets EARLIEST and LATEST on an empty and on a written partition."""
    topic = door.topic("lo")
    door.create_topic(topic, partitions=1)
    tp = TopicPartition(topic, 0)
    admin = door.admin()

    def specs():
        got = admin.list_partition_offsets({tp: OffsetSpec.EARLIEST})[tp].offset, \
            admin.list_partition_offsets({tp: OffsetSpec.LATEST})[tp].offset
        return list(got)

    empty = specs()
    producer = door.producer()
    for _ in range(5):
        producer.send(topic, value=b"x")
    producer.flush(15)
    return {"empty": empty, "written": specs()}


@scenario("list-offsets", lesson="10", in_process=True)
def list_offsets_by_timestamp(door):
    """ListOffsets by timestamp: the first offset whose timestamp is at or after it."""
    topic = door.topic("lots")
    door.create_topic(topic, partitions=1)
    tp = TopicPartition(topic, 0)
    base = door.now_ms() - 60_000
    producer = door.producer()
    for i, dt in enumerate([0, 1000, 2000, 3000]):
        producer.send(topic, value=f"v{i}".encode(), timestamp_ms=base + dt).get(timeout=15)
    admin = door.admin()
    out = {}
    for label, ts in [("before", base - 5), ("exact", base + 1000), ("between", base + 1500),
                      ("last", base + 3000), ("after", base + 9000)]:
        found = admin.list_partition_offsets({tp: ts})[tp]
        out[label] = [found.offset, found.timestamp - base if found.offset >= 0 else None]
    return out


@scenario("list-offsets", lesson="10", in_process=True)
def list_offsets_max_timestamp(door):
    """MAX_TIMESTAMP (KIP-734): the record with the largest timestamp, not the last one."""
    topic = door.topic("lomax")
    door.create_topic(topic, partitions=1)
    tp = TopicPartition(topic, 0)
    base = door.now_ms() - 60_000
    producer = door.producer()
    for dt in [100, 900, 300, 500]:
        producer.send(topic, value=b"x", timestamp_ms=base + dt).get(timeout=15)
    found = door.admin().list_partition_offsets({tp: OffsetSpec.MAX_TIMESTAMP})[tp]
    return {"offset": found.offset, "timestamp": found.timestamp - base}


@scenario("list-offsets", lesson="10", in_process=True)
def consumer_offsets_for_times(door):
    """KafkaConsumer.offsets_for_times, beginning_offsets and end_offsets."""
    topic = door.topic("oft")
    door.create_topic(topic, partitions=2)
    base = door.now_ms() - 60_000
    producer = door.producer()
    for i in range(6):
        producer.send(topic, value=b"x", partition=i % 2, timestamp_ms=base + 100 * i)
    producer.flush(15)
    tps = [TopicPartition(topic, p) for p in (0, 1)]
    consumer = door.consumer(enable_auto_commit=False)
    found = consumer.offsets_for_times(dict.fromkeys(tps, base + 250))
    return {
        "for_times": {tp.partition: None if found[tp] is None else
                      [found[tp].offset, found[tp].timestamp - base] for tp in tps},
        "beginning": {tp.partition: o for tp, o in consumer.beginning_offsets(tps).items()},
        "end": {tp.partition: o for tp, o in consumer.end_offsets(tps).items()},
    }


@scenario("list-offsets", lesson="10", client=CONFLUENT)
def confluent_watermarks_and_times(door):
    """confluent-kafka: get_watermark_offsets and offsets_for_times."""
    from confluent_kafka import TopicPartition as CTP
    topic = door.topic("wm-ck")
    door.create_topic(topic, partitions=1)
    base = door.now_ms() - 60_000
    producer = door.ck_producer()
    for i in range(4):
        producer.produce(topic, value=b"x", partition=0, timestamp=base + 100 * i)
    ck_flush(producer)
    consumer = door.ck_consumer(**{"group.id": door.topic("g")})
    low, high = consumer.get_watermark_offsets(CTP(topic, 0), timeout=10)
    found = consumer.offsets_for_times([CTP(topic, 0, base + 150), CTP(topic, 0, base + 900)],
                                       timeout=10)
    return {"watermarks": [low, high], "for_times": [f.offset for f in found]}


@scenario("offsets", lesson="07", in_process=True)
def compressed_batches_keep_offsets(door):
    """Each codec's batch decompresses to the same records at the same offsets."""
    out = {}
    for codec in ("gzip", "snappy", "lz4", "zstd"):
        topic = door.topic(f"c-{codec}")
        door.create_topic(topic, partitions=1)
        producer = door.producer(compression_type=codec, linger_ms=50)
        for i in range(5):
            producer.send(topic, key=b"k", value=f"{codec}-{i}".encode() * 20)
        producer.flush(15)
        consumer = door.consumer(topic, auto_offset_reset="earliest", enable_auto_commit=False)
        out[codec] = [[r.offset, len(r.value)] for r in drain(consumer, 5)]
    return out
