"""kafka-python 3.0.x against a served cluster (loopback): admin, idempotent acks=all
producers with every compression codec, transactions with a read_committed
consumer, and a consumer using assign, seek and offset lookups (no groups)."""
from __future__ import annotations

import time

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewPartitions, NewTopic
from kafka.errors import TopicAlreadyExistsError
from kafka.structs import OffsetAndMetadata

from minikafka.core.records import COMPRESSION_IDS

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60)]

CLIENT = {"request_timeout_ms": 10_000, "retry_backoff_ms": 50}


def consume_all(server, topic: str, partitions: int, expected: int, **config) -> list:
    """Every record of the topic via assign() from the beginning, up to `expected`."""
    consumer = KafkaConsumer(bootstrap_servers=server.bootstrap_servers, group_id=None,
                             enable_auto_commit=False, fetch_max_wait_ms=100, **CLIENT, **config)
    try:
        consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
        consumer.seek_to_beginning()
        records: list = []
        deadline = time.monotonic() + 20
        while len(records) < expected and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=200).values():
                records.extend(batch)
        assert not consumer.poll(timeout_ms=300), "no more records than expected"
        return records
    finally:
        consumer.close()


def test_admin_topics_partitions_configs_and_cluster(served):
    cluster, server = served
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap_servers, **CLIENT)
    try:
        admin.create_topics([NewTopic("orders", 2, 3, topic_configs={"retention.ms": "3600000"}),
                             NewTopic("scratch", 1, 1)])
        admin.create_topics([NewTopic("dry-run", 1, 1)], validate_only=True)
        with pytest.raises(TopicAlreadyExistsError):
            admin.create_topics([NewTopic("orders", 1, 1)])
        assert sorted(admin.list_topics()) == ["orders", "scratch"]
        [orders] = admin.describe_topics(["orders"])
        assert len(orders["partitions"]) == 2
        assert all(len(p["replica_nodes"]) == 3 for p in orders["partitions"])

        topic = ConfigResource(ConfigResourceType.TOPIC, "orders")
        described = admin.describe_configs([topic])["topic"]["orders"]
        assert described["retention.ms"]["value"] == "3600000"
        assert described["retention.ms"]["config_source"] == "DYNAMIC_TOPIC_CONFIG"
        admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "orders",
                                            configs={"cleanup.policy": "compact"})])
        with cluster.lock:
            assert cluster.topic_config("orders")["cleanup.policy"] == "compact"

        admin.create_partitions({"orders": NewPartitions(4)})
        with cluster.lock:
            assert cluster.partitions_for("orders") == 4

        producer = KafkaProducer(bootstrap_servers=server.bootstrap_servers, **CLIENT)
        for i in range(10):
            producer.send("scratch", value=b"%d" % i)
        producer.flush()
        producer.close()
        tp = TopicPartition("scratch", 0)
        deleted = admin.delete_records({tp: 6})
        assert deleted[tp]["low_watermark"] == 6
        with cluster.lock:
            assert cluster.describe_topic("scratch").partitions[0].log_start_offset == 6

        info = admin.describe_cluster()
        assert sorted(b["broker_id"] for b in info["brokers"]) == [1, 2, 3]
        assert info["controller_id"] in (1, 2, 3) and len(info["cluster_id"]) == 22
        dirs = admin.describe_log_dirs()
        assert sorted(d["broker"] for d in dirs) == [1, 2, 3]
        election = admin.elect_leaders(0, {"orders": [0, 1]})  # preferred: already leading
        assert [p.error_code for r in election.replica_election_results
                for p in r.partition_result] == [84, 84]  # ELECTION_NOT_NEEDED

        admin.delete_topics(["scratch"])
        assert admin.list_topics() == ["orders"]
    finally:
        admin.close()


@pytest.mark.parametrize("codec", [None, "gzip", "snappy", "lz4", "zstd"])
def test_idempotent_acks_all_producer_with_each_codec(served, codec):
    cluster, server = served
    with cluster.lock:
        cluster.create_topic("events", partitions=2, replication_factor=3,
                             config={"min.insync.replicas": 2})
    producer = KafkaProducer(bootstrap_servers=server.bootstrap_servers, acks="all",
                             enable_idempotence=True, compression_type=codec, linger_ms=5,
                             **CLIENT)
    sent = [b"event-%05d " % i + b"payload " * 8 for i in range(1500)]
    futures = [producer.send("events", key=b"k%d" % (i % 5), value=v) for i, v in enumerate(sent)]
    producer.flush(20)
    offsets = [f.get(timeout=10) for f in futures]
    producer.close()
    assert len({(m.partition, m.offset) for m in offsets}) == len(sent)
    records = consume_all(server, "events", 2, len(sent))
    assert sorted(r.value for r in records) == sorted(sent)
    with cluster.lock:
        stored = [b for p in range(2) for b in cluster.leader_replica("events", p).log.batches()]
    assert {b.compression for b in stored} == {COMPRESSION_IDS[codec]}
    assert all(b.producer_id >= 0 and b.base_sequence >= 0 for b in stored)


def test_transactions_and_a_read_committed_consumer(served):
    cluster, server = served
    with cluster.lock:
        cluster.create_topic("payments", partitions=2, replication_factor=3)
    producer = KafkaProducer(bootstrap_servers=server.bootstrap_servers,
                             transactional_id="payments-tx", **CLIENT)
    producer.init_transactions()
    producer.begin_transaction()
    for i in range(20):
        producer.send("payments", key=b"%d" % i, value=b"committed-%d" % i)
    producer.commit_transaction()
    producer.begin_transaction()
    for i in range(10):
        producer.send("payments", key=b"%d" % i, value=b"aborted-%d" % i)
    producer.flush()
    producer.abort_transaction()
    producer.begin_transaction()
    producer.send("payments", key=b"x", value=b"committed-late")
    producer.commit_transaction()
    producer.close()

    committed = consume_all(server, "payments", 2, 21, isolation_level="read_committed")
    assert sorted(r.value for r in committed) == sorted(
        [b"committed-%d" % i for i in range(20)] + [b"committed-late"])
    everything = consume_all(server, "payments", 2, 31)
    assert sum(r.value.startswith(b"aborted") for r in everything) == 10


def test_assign_seek_offsets_for_times_and_offset_bounds(served):
    cluster, server = served
    with cluster.lock:
        cluster.create_topic("clock", partitions=1, replication_factor=1)
    base = int(time.time() * 1000) - 60_000
    producer = KafkaProducer(bootstrap_servers=server.bootstrap_servers, acks=1, **CLIENT)
    for i in range(10):
        producer.send("clock", value=b"t%d" % i, timestamp_ms=base + 1000 * i, partition=0)
    producer.flush()
    producer.close()
    tp = TopicPartition("clock", 0)
    consumer = KafkaConsumer(bootstrap_servers=server.bootstrap_servers, group_id=None,
                             enable_auto_commit=False, fetch_max_wait_ms=100, **CLIENT)
    try:
        consumer.assign([tp])
        assert consumer.beginning_offsets([tp]) == {tp: 0}
        assert consumer.end_offsets([tp]) == {tp: 10}
        found = consumer.offsets_for_times({tp: base + 4500})[tp]
        assert (found.offset, found.timestamp) == (5, base + 5000)
        assert consumer.offsets_for_times({tp: base + 60_000})[tp] is None
        consumer.seek(tp, found.offset)
        values = []
        deadline = time.monotonic() + 10
        while len(values) < 5 and time.monotonic() < deadline:
            values += [r.value for rs in consumer.poll(timeout_ms=200).values() for r in rs]
        assert values == [b"t5", b"t6", b"t7", b"t8", b"t9"]
        assert consumer.position(tp) == 10
    finally:
        consumer.close()


def test_consume_transform_produce_exactly_once(served):
    """send_offsets_to_transaction: TxnOffsetCommit stages the group's offsets and the
    commit marker makes them visible together with the output records."""
    cluster, server = served
    with cluster.lock:
        cluster.create_topic("raw", partitions=1, replication_factor=3)
        cluster.create_topic("clean", partitions=1, replication_factor=3)
    producer = KafkaProducer(bootstrap_servers=server.bootstrap_servers, **CLIENT)
    for i in range(10):
        producer.send("raw", value=b"m%d" % i)
    producer.close()
    consumer = KafkaConsumer("raw", bootstrap_servers=server.bootstrap_servers,
                             group_id="cleaner", enable_auto_commit=False,
                             auto_offset_reset="earliest", isolation_level="read_committed",
                             **CLIENT)
    transactional = KafkaProducer(bootstrap_servers=server.bootstrap_servers,
                                  transactional_id="cleaner-tx", **CLIENT)
    try:
        transactional.init_transactions()
        records: list = []
        deadline = time.monotonic() + 20
        while len(records) < 10 and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=200).values():
                records.extend(batch)
        tp = TopicPartition("raw", 0)
        for abort in (True, False):
            transactional.begin_transaction()
            for r in records:
                transactional.send("clean", value=r.value.upper())
            transactional.send_offsets_to_transaction(
                {tp: OffsetAndMetadata(records[-1].offset + 1, "", -1)},
                consumer.group_metadata())
            if abort:
                transactional.abort_transaction()
                with cluster.lock:
                    assert cluster.groups.offset_fetch(None, "cleaner")[1].get(("raw", 0)) \
                        is None
            else:
                transactional.commit_transaction()
        assert consumer.committed(tp) == 10
    finally:
        transactional.close()
        consumer.close()
    cleaned = consume_all(server, "clean", 1, 10, isolation_level="read_committed")
    assert [r.value for r in cleaned] == [b"M%d" % i for i in range(10)]
