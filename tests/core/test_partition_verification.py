"""KIP-890 partition verification through the in-process door (core.api.produce): a
transactional batch for a partition outside the producer's ongoing transaction is refused
before the append, with the error each Produce version gets; the broker setting
transaction.partition.verification.enable turns it off, as on brokers before Kafka 3.6.
The wire door runs the same function (tests/realkafka/test_transactions_tool.py compares
both with Kafka 4.4.0)."""
from __future__ import annotations

import pytest
from kafka.structs import TopicPartition

from minikafka import Cluster
from minikafka.core import errors
from minikafka.core.api import produce as api_produce
from minikafka.core.records import RecordBatch
from minikafka.core.transactions import TransactionCoordinator, TxnState

VERIFICATION = "transaction.partition.verification.enable"


def aborted_producer(cluster: Cluster):
    """refunds-1 wrote to payments-0 in a transaction it then aborted."""
    cluster.create_topic("payments", partitions=2, replication_factor=3)
    producer = cluster.producer(transactional_id="refunds-1")
    producer.init_transactions()
    producer.begin_transaction()
    producer.send("payments", value=b"refund-9", partition=0)
    producer.flush()
    producer.abort_transaction()
    return producer


def late_batch(producer, epoch: int | None = None, pid: int | None = None) -> RecordBatch:
    now = producer.cluster.now_ms
    return RecordBatch([(0, now, None, b"late", ())], first_timestamp=now, max_timestamp=now,
                       producer_id=producer.producer_id if pid is None else pid,
                       producer_epoch=producer.producer_epoch if epoch is None else epoch,
                       base_sequence=0, is_transactional=True)


def send(cluster: Cluster, producer, batches: dict) -> dict:
    """The in-process door's Produce, as the producer sends it, answered at once."""
    tp = next(iter(batches))
    leader = cluster.describe_topic(tp[0]).partitions[tp[1]].leader
    answer: dict = {}
    api_produce.produce(cluster, cluster.brokers[leader], producer.caller,
                        producer.transactional_id, 1, 30_000, batches, answer.update)
    cluster.advance(100)
    return answer


def partition(cluster: Cluster, p: int):
    return cluster.describe_topic("payments").partitions[p]


def test_a_late_write_outside_the_transaction_is_refused():
    cluster = Cluster(brokers=3, seed=23)
    producer = aborted_producer(cluster)
    answer = send(cluster, producer, {("payments", 1): late_batch(producer)})
    assert answer == {("payments", 1): (errors.INVALID_TXN_STATE, -1)}
    p1 = partition(cluster, 1)
    assert (p1.high_watermark, p1.last_stable_offset) == (0, 0)
    tp = TopicPartition("payments", 1)
    assert cluster.admin().describe_producers([tp])[tp].active_producers == []


@pytest.mark.parametrize("switch", ["static", "dynamic"])
def test_without_verification_the_late_write_hangs(switch):
    cluster = Cluster(brokers=3, seed=23,
                      broker_config={VERIFICATION: False} if switch == "static" else None)
    if switch == "dynamic":  # kafka-configs.sh --entity-default, cluster-wide
        cluster.alter_broker_config({VERIFICATION: "false"})
    producer = aborted_producer(cluster)
    answer = send(cluster, producer, {("payments", 1): late_batch(producer)})
    assert answer == {("payments", 1): (errors.NONE, 0)}
    cluster.advance(20 * 60_000)
    p1 = partition(cluster, 1)
    assert (p1.high_watermark, p1.last_stable_offset) == (1, 0)  # stuck: nothing ends it


def test_a_write_inside_the_transaction_passes_and_one_outside_does_not():
    cluster = Cluster(brokers=1, seed=23)  # one leader for both partitions: one request
    cluster.create_topic("payments", partitions=2, replication_factor=1)
    producer = cluster.producer(transactional_id="checkout-1")
    producer.init_transactions()
    producer.begin_transaction()
    producer.send("payments", value=b"pay-1", partition=0).get(timeout=5)
    # payments-1 never joined the transaction (no AddPartitionsToTxn for it).
    batch = late_batch(producer)
    batch.base_sequence = 1
    answer = send(cluster, producer, {("payments", 0): batch,
                                      ("payments", 1): late_batch(producer)})
    assert answer == {("payments", 0): (errors.NONE, 1),
                      ("payments", 1): (errors.INVALID_TXN_STATE, -1)}


def test_each_produce_version_gets_its_error():
    cluster = Cluster(brokers=3, seed=23)
    producer = aborted_producer(cluster)
    tp = ("payments", 1)
    broker = cluster.brokers[partition(cluster, 1).leader]

    def unverified(version: int, **batch) -> dict:
        return api_produce.unverified(cluster, broker, "refunds-1", {tp: late_batch(producer, **batch)},
                                      version)

    assert unverified(9) == unverified(10) == {tp: errors.INVALID_TXN_STATE}
    assert unverified(11) == {tp: errors.TRANSACTION_ABORTABLE}
    # An older epoch than the coordinator's is fenced; an unknown producer id is not the
    # transactional id's.
    assert unverified(9, epoch=producer.producer_epoch - 1) == {tp: errors.INVALID_PRODUCER_EPOCH}
    assert unverified(9, pid=producer.producer_id + 7) == {tp: errors.INVALID_PRODUCER_ID_MAPPING}
    # A transaction still ending: retriable NOT_ENOUGH_REPLICAS below v12 (older clients
    # would not retry CONCURRENT_TRANSACTIONS), CONCURRENT_TRANSACTIONS from v12.
    meta = cluster.transaction_coordinator.transactions["refunds-1"]
    meta.state, meta.partitions = TxnState.PREPARE_ABORT, {("payments", 0)}
    assert unverified(9) == {tp: errors.NOT_ENOUGH_REPLICAS}
    assert unverified(12) == {tp: errors.CONCURRENT_TRANSACTIONS}
    meta.state, meta.partitions = TxnState.COMPLETE_ABORT, set()
    # From v12 (transaction version 2) the leader adds the partition to the transaction.
    assert unverified(12) == {}
    assert meta.state == TxnState.ONGOING and meta.partitions == {tp}


def test_one_request_carries_one_producer():
    cluster = Cluster(brokers=3, seed=23)
    producer = aborted_producer(cluster)
    other = late_batch(producer, pid=producer.producer_id + 1)
    broker = cluster.brokers[partition(cluster, 0).leader]
    batches = {("payments", 0): late_batch(producer), ("payments", 1): other}
    assert api_produce.unverified(cluster, broker, "refunds-1", batches) == dict.fromkeys(
        batches, errors.INVALID_PRODUCER_ID_MAPPING)


def test_the_coordinator_answers_per_partition():
    coordinator = TransactionCoordinator(lambda: 5, lambda *a: None)
    pid, epoch = coordinator.init_producer_id("t", 60_000, 0)
    coordinator.add_partitions("t", pid, epoch, {("a", 0)}, 0)
    assert coordinator.verify_partitions("t", pid, epoch, {("a", 0), ("a", 1)}) == {
        ("a", 0): errors.NONE, ("a", 1): errors.TRANSACTION_ABORTABLE}
    # Any other epoch, even a newer one, is not this transaction's producer.
    assert coordinator.verify_partitions("t", pid, epoch + 1, {("a", 0)}) == {
        ("a", 0): errors.PRODUCER_FENCED}
    assert coordinator.verify_partitions("u", pid, epoch, {("a", 0)}) == {
        ("a", 0): errors.INVALID_PRODUCER_ID_MAPPING}
