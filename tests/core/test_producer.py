"""The producer: defaults, partitioning, batching, idempotence, compression, transactions."""

import json
import random

import pytest
from kafka.errors import (
    IllegalStateError,
    InvalidTxnStateError,
    KafkaConfigurationError,
    KafkaTimeoutError,
    ProducerFencedError,
    kafka_errors,
)
from kafka.partitioner.default import murmur2 as kp_murmur2

from minikafka import Cluster, murmur2, partition_for_key
from minikafka.client.producer import DEFAULTS
from minikafka.core import errors


def cluster_with(partitions=3, rf=3, **config):
    cluster = Cluster(brokers=3, seed=11)
    cluster.create_topic("t", partitions=partitions, replication_factor=rf, config=config)
    return cluster


def test_kafka_4_defaults():
    assert DEFAULTS["acks"] == "all"
    assert DEFAULTS["linger_ms"] == 5
    assert DEFAULTS["batch_size"] == 16_384
    assert DEFAULTS["delivery_timeout_ms"] == 120_000
    assert DEFAULTS["max_in_flight_requests_per_connection"] == 5
    assert DEFAULTS["retry_backoff_ms"] == 100 and DEFAULTS["retry_backoff_max_ms"] == 1_000
    assert DEFAULTS["buffer_memory"] == 33_554_432 and DEFAULTS["max_block_ms"] == 60_000
    producer = cluster_with().producer()
    assert producer.idempotent and producer.acks == -1


def test_retries_back_off_exponentially_up_to_retry_backoff_max_ms():
    """KIP-580 (Kafka 3.7): 100 ms doubling to 1 s, each within 20% jitter."""
    cluster = cluster_with(partitions=1, **{"min.insync.replicas": "3"})
    follower = next(b for b in cluster.describe_topic("t").partitions[0].replicas
                    if b != cluster.leader_replica("t", 0).broker_id)
    cluster.stop_broker(follower)  # ISR of 2 < min.insync.replicas: NOT_ENOUGH_REPLICAS
    cluster.advance(60_000)
    producer = cluster.producer(linger_ms=0)
    producer.send("t", value=b"v")
    cluster.advance(10_000)
    failed_at = [e.time_ms for e in cluster.journal.of_kind("produce.error")]
    waits = [b - a for a, b in zip(failed_at, failed_at[1:])]
    assert len(waits) >= 10
    for attempt, wait in enumerate(waits[:8], start=1):
        ideal = min(100 * 2 ** (attempt - 1), 1_000)
        # the wait also holds the request's round trip, a few ms on the simulated network
        assert ideal * 0.8 <= wait <= min(ideal * 1.2, 1_000) + 10, (attempt, waits)
    assert max(waits) <= 1_010 and len({w // 10 for w in waits[4:]}) > 1  # capped, jittered
    # Same seed, same waits.
    again = cluster_with(partitions=1, **{"min.insync.replicas": "3"})
    again.stop_broker(follower)
    again.advance(60_000)
    again.producer(linger_ms=0).send("t", value=b"v")
    again.advance(10_000)
    assert [e.time_ms for e in again.journal.of_kind("produce.error")] == failed_at


def test_a_retry_to_a_new_leader_does_not_back_off():
    cluster = cluster_with(partitions=1)
    preferred = cluster.leader_replica("t", 0).broker_id
    cluster.stop_broker(preferred)  # leadership moves to a follower
    producer = cluster.producer(linger_ms=0)
    producer.send("t", value=b"a").get()  # caches the follower as leader
    cluster.start_broker(preferred)
    cluster.advance(10_000)
    cluster.elect_leaders("t")  # back to the preferred replica; the producer does not know
    producer.send("t", value=b"b")
    cluster.advance(1_000)
    [error] = cluster.journal.of_kind("produce.error")
    assert error.error == "NotLeaderForPartitionError"
    acked = cluster.journal.of_kind("produce.acked")[-1]
    assert acked.broker == preferred and acked.time_ms - error.time_ms < 80  # no 100 ms wait


def test_idempotence_silently_off_on_conflict_but_explicit_conflict_is_an_error():
    cluster = cluster_with()
    assert not cluster.producer(acks=1).idempotent
    assert not cluster.producer(retries=0).idempotent
    with pytest.raises(KafkaConfigurationError):
        cluster.producer(acks=1, enable_idempotence=True)
    with pytest.raises(KafkaConfigurationError):
        cluster.producer(max_in_flight_requests_per_connection=6, enable_idempotence=True)
    # Kafka 4.0: more than 5 in flight is an error while idempotence is on by default,
    # even with acks=1 (ProducerConfig checks it before turning idempotence off).
    for extra in ({}, {"acks": 1}):
        with pytest.raises(KafkaConfigurationError, match="must be set to at most 5. "
                                                          "Current value is 6."):
            cluster.producer(max_in_flight_requests_per_connection=6, **extra)
    assert not cluster.producer(max_in_flight_requests_per_connection=6,
                                enable_idempotence=False).idempotent
    with pytest.raises(KafkaConfigurationError):
        cluster.producer(acks="some")
    with pytest.raises(KafkaConfigurationError):
        cluster.producer(compression_type="brotli")
    with pytest.raises(KafkaConfigurationError):
        cluster.producer(no_such_setting=1)


def test_murmur2_matches_kafka_python_for_random_keys():
    rng = random.Random(5)
    for _ in range(5000):
        key = rng.randbytes(rng.randint(0, 40))
        assert murmur2(key) == kp_murmur2(key)
        for n in (1, 3, 10, 50):
            assert partition_for_key(key, n) == (kp_murmur2(key) & 0x7FFFFFFF) % n


def test_keyed_records_land_where_the_java_client_puts_them():
    cluster = cluster_with(partitions=10, rf=1)
    producer = cluster.producer()
    for i in range(200):
        key = b"truck-%d" % i
        assert producer.send("t", key=key, value=b"gps").get().partition == \
            partition_for_key(key, 10)


def test_null_keys_are_sticky_for_at_least_batch_size_bytes():
    cluster = cluster_with(partitions=3, rf=1)
    producer = cluster.producer(batch_size=1_000, linger_ms=1000)
    futures = [producer.send("t", value=b"x" * 90) for _ in range(60)]
    producer.flush()
    parts = [f.get().partition for f in futures]
    # A batch holds 9 of these records (943 bytes, short of batch.size), so a partition
    # is left when its second batch is full: a new draw every 18 records (KIP-794; more
    # in tests/core/test_partitioner.py).
    assert all(len(set(parts[i:i + 18])) == 1 for i in range(0, 60, 18))
    assert len(set(parts)) > 1


def test_order_within_a_partition_and_offsets_are_dense():
    cluster = cluster_with(partitions=1)
    producer = cluster.producer()
    offsets = [producer.send("t", value=b"%d" % i) for i in range(1000)]
    producer.flush()
    assert [f.get().offset for f in offsets] == list(range(1000))


def test_linger_batches_records_together():
    cluster = cluster_with(partitions=1)
    producer = cluster.producer(linger_ms=50)
    for i in range(30):
        producer.send("t", value=b"%d" % i)
    producer.flush()
    batches = list(cluster.leader_replica("t", 0).log.batches())
    assert len(batches) == 1 and len(batches[0].records) == 30
    producer0 = cluster.producer(linger_ms=0)
    for i in range(3):
        producer0.send("t", value=b"%d" % i).get()
    assert len(list(cluster.leader_replica("t", 0).log.batches())) == 4


def test_compression_ratios_are_real():
    cluster = cluster_with(partitions=1)
    doc = json.dumps({"truck_id": 7, "lat": 52.1, "lon": 4.3, "speed": 81, "status": "ok"})
    sizes = {}
    for codec in (None, "gzip", "snappy", "lz4", "zstd"):
        producer = cluster.producer(compression_type=codec, linger_ms=100)
        for _i in range(200):
            producer.send("t", value=doc.encode())
        producer.flush()
        sizes[codec] = list(cluster.leader_replica("t", 0).log.batches())[-1].size_bytes
    for codec in ("gzip", "snappy", "lz4", "zstd"):
        assert sizes[codec] < sizes[None] / 3, sizes


def test_buffer_memory_blocks_then_times_out_when_nothing_drains():
    cluster = cluster_with(partitions=1, rf=1)
    leader = cluster.describe_topic("t").partitions[0].leader
    cluster.isolate(leader)  # clients still reach it: sends drain
    producer = cluster.producer(buffer_memory=64_000, batch_size=16_000, max_block_ms=1000,
                                acks=1)
    cluster.crash_broker(leader)  # now nothing drains
    with pytest.raises(KafkaTimeoutError):
        for _ in range(100):
            producer.send("t", value=b"x" * 1000)


def test_lost_response_duplicates_without_idempotence_not_with_it():
    for idempotent, expected in ((False, 2), (True, 1)):
        cluster = cluster_with(partitions=1)
        producer = cluster.producer(enable_idempotence=idempotent, request_timeout_ms=2000)
        leader = cluster.describe_topic("t").partitions[0].leader
        cluster.lose_produce_responses(leader, producer.client_id)
        md = producer.send("t", value=b"pay-42").get()
        cluster.advance(1000)
        values = [r.value for b in cluster.leader_replica("t", 0).log.batches()
                  for r in b.iter_records()]
        assert values.count(b"pay-42") == expected
        assert md.offset == expected - 1  # the retry's own copy, or the original's offset


def test_transactions_commit_abort_and_read_committed():
    cluster = cluster_with(partitions=1)
    producer = cluster.producer(transactional_id="tx-1")
    producer.init_transactions()
    producer.begin_transaction()
    producer.send("t", value=b"committed")
    producer.commit_transaction()
    producer.begin_transaction()
    producer.send("t", value=b"aborted")
    producer.flush()
    replica = cluster.leader_replica("t", 0)
    assert replica.last_stable_offset < replica.high_watermark  # an open transaction pins it
    producer.abort_transaction()
    producer.begin_transaction()
    producer.send("t", value=b"open")
    producer.flush()
    cluster.advance(100)
    committed = cluster.consumer(auto_offset_reset="earliest", isolation_level="read_committed")
    committed.assign([("t", 0)])
    uncommitted = cluster.consumer(auto_offset_reset="earliest")
    uncommitted.assign([("t", 0)])
    rc = [r.value for rs in committed.poll(timeout_ms=1000).values() for r in rs]
    ru = [r.value for rs in uncommitted.poll(timeout_ms=1000).values() for r in rs]
    assert rc == [b"committed"]
    assert ru == [b"committed", b"aborted", b"open"]


@pytest.mark.parametrize("tv, refusal", [(1, ProducerFencedError), (2, InvalidTxnStateError)])
def test_an_open_transaction_is_aborted_after_its_timeout(tv, refusal):
    cluster = Cluster(brokers=3, seed=11, features={"transaction.version": tv})
    cluster.create_topic("t", partitions=1, replication_factor=3)
    producer = cluster.producer(transactional_id="slow", transaction_timeout_ms=20_000)
    producer.init_transactions()
    producer.begin_transaction()
    producer.send("t", value=b"forgotten")
    producer.flush()
    replica = cluster.leader_replica("t", 0)
    cluster.advance(15_000)
    assert replica.last_stable_offset == 0  # still open
    cluster.advance(15_000)  # past 20 s, at the coordinator's next 10 s check
    [expired] = cluster.journal.of_kind("txn.timed_out")
    started = cluster.journal.of_kind("append")[0].time_ms
    # Aborted at the first check (every 10 s) after transaction.timeout.ms ran out.
    assert expired.transactional_id == "slow" and 20_000 < expired.time_ms - started <= 30_000
    assert replica.last_stable_offset == replica.high_watermark == 2  # record + abort marker
    reader = cluster.consumer(auto_offset_reset="earliest", isolation_level="read_committed")
    reader.assign([("t", 0)])
    assert not reader.poll(timeout_ms=1_000)
    # Its epoch was bumped by the abort. Version 1 calls it fenced; version 2 takes the
    # older epoch for a retry of an EndTxn that bumped it, and a commit of an aborted
    # transaction is INVALID_TXN_STATE (TransactionCoordinator.endTransaction's table).
    with pytest.raises(refusal):
        producer.commit_transaction()


def test_a_marker_for_a_partition_without_leader_is_written_once_it_has_one():
    cluster = cluster_with(partitions=1)
    cluster.create_topic("solo", partitions=1, replication_factor=1)
    lonely = cluster.leader_replica("solo", 0).broker_id
    producer = cluster.producer(transactional_id="tx")
    producer.init_transactions()
    producer.begin_transaction()
    producer.send("solo", value=b"v")
    producer.flush()
    cluster.stop_broker(lonely)  # its only replica: no leader at commit time
    producer.commit_transaction()
    cluster.advance(5_000)
    cluster.start_broker(lonely)
    cluster.advance(5_000)
    [late] = cluster.journal.of_kind("txn.marker.late")
    assert late.partition == "solo-0" and late.commit
    replica = cluster.leader_replica("solo", 0)
    assert replica.last_stable_offset == replica.high_watermark == 2  # record + marker
    reader = cluster.consumer(auto_offset_reset="earliest", isolation_level="read_committed")
    reader.assign([("solo", 0)])
    assert [r.value for rs in reader.poll(timeout_ms=1_000).values() for r in rs] == [b"v"]


@pytest.mark.parametrize("tv", [2, 1])
def test_transactional_fencing(tv):
    cluster = Cluster(brokers=3, seed=11, features={"transaction.version": tv})
    cluster.create_topic("t", partitions=1, replication_factor=3)
    old = cluster.producer(transactional_id="tx")
    old.init_transactions()
    old.begin_transaction()
    old.send("t", value=b"zombie")
    old.flush()
    new = cluster.producer(transactional_id="tx")
    new.init_transactions()  # bumps the epoch and aborts the old transaction
    # Fencing an open transaction bumps twice (fence and abort, then the client's retry),
    # under either transaction version (tests/realkafka/test_transaction_versions.py).
    assert (old.producer_epoch, new.producer_epoch) == (0, 2)
    idle = cluster.producer(transactional_id="tx")
    idle.init_transactions()
    assert idle.producer_epoch == 3  # nothing open: one bump
    with pytest.raises(ProducerFencedError):
        old.commit_transaction()
    with pytest.raises(IllegalStateError):
        new.send("t", value=b"outside a transaction")


def test_auto_create_topic_on_first_send():
    cluster = Cluster(brokers=1)
    md = cluster.producer().send("fresh", value=b"x").get()
    assert md.topic == "fresh" and cluster.partitions_for("fresh") == 1


def test_custom_partitioners_in_both_kafka_python_shapes():
    cluster = cluster_with(partitions=4, rf=1)

    def last_partition(key_bytes, all_partitions, available):
        return all_partitions[-1]

    class ByFirstByte:
        def partition(self, topic, key, serialized_key, value, serialized_value, cluster):
            return serialized_key[0] % len(cluster.partitions_for_topic(topic))

    assert cluster.producer(partitioner=last_partition).send(
        "t", key=b"a", value=b"x").get().partition == 3
    producer = cluster.producer(partitioner=ByFirstByte())
    assert producer.send("t", key=b"\x06", value=b"x").get().partition == 2

    def bad(key_bytes, all_partitions, available):
        return 99

    with pytest.raises(AssertionError):
        cluster.producer(partitioner=bad).send("t", key=b"a", value=b"x")


def test_read_committed_position_moves_past_markers_and_poll_zero_progresses():
    cluster = cluster_with(partitions=1)
    producer = cluster.producer(transactional_id="tx-m")
    producer.init_transactions()
    for value in (b"a", b"b"):
        producer.begin_transaction()
        producer.send("t", value=value)
        producer.commit_transaction()
    consumer = cluster.consumer(auto_offset_reset="earliest", isolation_level="read_committed")
    consumer.assign([("t", 0)])
    seen = []
    for _ in range(200):  # a bare poll(0) loop still gets there
        for records in consumer.poll(timeout_ms=0).values():
            seen.extend(r.value for r in records)
    assert seen == [b"a", b"b"]
    end = consumer.end_offsets([("t", 0)])
    assert consumer.position(("t", 0)) == list(end.values())[0] == 4  # 2 records, 2 markers


def test_running_producer_sees_new_partitions_after_metadata_max_age():
    cluster = cluster_with(partitions=2, rf=1)
    producer = cluster.producer(metadata_max_age_ms=60_000, linger_ms=0)
    key = next(b"k%d" % i for i in range(100)
               if partition_for_key(b"k%d" % i, 2) != partition_for_key(b"k%d" % i, 4))
    assert producer.send("t", key=key, value=b"x").get().partition == partition_for_key(key, 2)
    cluster.create_partitions("t", 4)
    assert producer.send("t", key=key, value=b"x").get().partition == partition_for_key(key, 2)
    cluster.advance(61_000)
    assert producer.send("t", key=key, value=b"x").get().partition == partition_for_key(key, 4)



def test_retriable_errors_are_the_ones_kafka_marks_retriable():
    """Every error code minikafka knows is retriable exactly when kafka-python's class (which
    follows Java's RetriableException) says so; CORRUPT_MESSAGE is retriable in Java only."""
    codes = {name: code for name, code in vars(errors).items()
             if name.isupper() and isinstance(code, int) and code != errors.NONE}
    java_only = {errors.CORRUPT_MESSAGE}
    # Newer than kafka-python 3.0.12's table; neither is retriable in Kafka (the client must
    # bootstrap again; a bad SubscribedTopicRegex stays bad).
    unknown_to_kafka_python = {errors.REBOOTSTRAP_REQUIRED, errors.INVALID_REGULAR_EXPRESSION}
    assert {c for c in codes.values() if c not in kafka_errors} == unknown_to_kafka_python
    assert not unknown_to_kafka_python & errors.RETRIABLE
    differ = {name for name, code in codes.items() if code not in unknown_to_kafka_python
              and (code in errors.RETRIABLE) != (kafka_errors[code].retriable
                                                 or code in java_only)}
    assert not differ
    assert errors.REBALANCE_IN_PROGRESS not in errors.RETRIABLE


def test_a_fenced_producers_records_get_invalid_producer_epoch():
    """Kafka 2.7+ (KIP-588): Produce with a stale epoch answers INVALID_PRODUCER_EPOCH, for
    transactional batches too; PRODUCER_FENCED comes only from the transaction coordinator."""
    from kafka.errors import InvalidProducerEpochError

    cluster = Cluster(brokers=3, seed=1)
    cluster.create_topic("t", 1, 3)
    old = cluster.producer(transactional_id="tx")
    old.init_transactions()
    old.begin_transaction()
    old.send("t", value=b"a").get()
    cluster.producer(transactional_id="tx").init_transactions()
    with pytest.raises(InvalidProducerEpochError):
        old.send("t", value=b"zombie").get()


def test_a_fenced_producer_cannot_bump_its_own_epoch_back():
    """KIP-360: InitProducerId with the sender's current id and epoch bumps that epoch,
    unless a newer instance took the transactional id: then PRODUCER_FENCED."""
    from minikafka.core.transactions import TransactionCoordinator

    ids = iter(range(100, 200))
    coordinator = TransactionCoordinator(lambda: next(ids), lambda *args: None)
    old = coordinator.init_producer_id("tx", 60_000, 0)
    new = coordinator.init_producer_id("tx", 60_000, 0)
    assert new == (old[0], old[1] + 1)
    with pytest.raises(errors.KafkaCoreError) as fenced:
        coordinator.init_producer_id("tx", 60_000, 0, current=old)
    assert fenced.value.code == errors.PRODUCER_FENCED
    assert coordinator.init_producer_id("tx", 60_000, 0, current=new) == (new[0], new[1] + 1)


def test_a_batch_counts_its_exact_bytes_as_its_records_are_appended():
    """send() counts each record's 2-byte varints as it appends; the closed batch's size
    must be what records_size counts record by record, around every varint boundary
    (key and value lengths of 64, bodies of 54-58 bytes, offset and timestamp deltas of
    64, 3-byte lengths) and for records it leaves to records_size (headers, str values,
    explicit timestamps)."""
    from minikafka.core.records import BATCH_OVERHEAD, records_size

    rng = random.Random(7)
    cluster = Cluster(brokers=1, seed=3)
    cluster.create_topic("sizes", partitions=1, replication_factor=1)
    producer = cluster.producer(batch_size=1 << 20, linger_ms=10_000)
    counted = 0
    for trial in range(80):
        plain = trial % 2 == 0  # only records send() counts itself
        for _ in range(rng.choice([1, 5, 63, 64, 65, 130])):
            while True:
                n_key = rng.choice([0, 1, 20, 53, 54, 57, 58, 63, 64, 65, 200, 7990, 8200])
                n_value = rng.choice([0, 1, 3, 4, 30, 63, 64, 65, 100, 8200])
                if not plain or n_key + n_value < 54 or 58 <= n_key + n_value < 8000:
                    break
            kwargs = {}
            roll = 1.0 if plain else rng.random()
            if roll < 0.1:
                kwargs["headers"] = [("h", b"1")]
            elif roll < 0.2:
                kwargs["timestamp_ms"] = cluster.now_ms - 5
            value = "é" * n_value if roll < 0.3 else b"v" * n_value
            producer.send("sizes", key=b"k" * n_key, value=value, **kwargs)
            if rng.random() < 0.03:
                cluster.advance(rng.choice([1, 63, 64, 70]))
        [batch] = producer._open.values()
        records = list(batch.records)
        producer.flush()
        assert batch.size_bytes == BATCH_OVERHEAD + records_size(records, records[0][1]), trial
        counted += plain and batch.wide >= 0
    assert counted >= 35
    # Bodies of 54-57 bytes: one or two length bytes, by the deltas.
    for total in range(52, 60):
        for _ in range(70):
            producer.send("sizes", key=b"k" * 20, value=b"v" * (total - 20))
        cluster.advance(64)
        producer.send("sizes", key=b"k" * 20, value=b"v" * (total - 20))
        [batch] = producer._open.values()
        records = list(batch.records)
        producer.flush()
        assert batch.size_bytes == BATCH_OVERHEAD + records_size(records, records[0][1]), total


def test_what_the_garbage_collector_tracks_per_batch():
    """Every object a batch keeps alive is one more for each collection to traverse and
    brings the next full collection nearer. An open batch keeps three (itself, its record
    list, its future: the records are tuples of bytes and ints, which the collector
    untracks); once acknowledged with acks=all, about the stored batch alone: answered
    requests, their callbacks and their timeouts are not kept."""
    import gc

    def tracked() -> int:
        gc.collect()
        return len(gc.get_objects())

    cluster = cluster_with(**{"min.insync.replicas": "2"})
    producer = cluster.producer(batch_size=1_000)
    producer.send("t", key=b"k0", value=b"v").get()
    keys = [b"key-%03d" % i for i in range(100)]
    before = tracked()
    for i in range(3_000):
        producer.send("t", key=keys[i % 100], value=b"v" * 90)
    batches = producer.pending
    assert batches > 300
    assert tracked() - before <= 3 * batches + 20
    producer.flush()
    assert tracked() - before < 2.5 * batches
