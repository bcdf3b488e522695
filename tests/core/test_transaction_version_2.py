"""Transactions V2 (KIP-890 part 2) at the coordinator and the partition leader: the epoch
bumped at every EndTxn and returned, a retried EndTxn answered again, aborts with nothing
added, a new producer id once the epoch is exhausted, and markers of version 2 refused
unless newer than the producer's epoch. tests/realkafka/test_transaction_versions.py shows
the same epochs from the Java client on Apache Kafka 4.4.0."""
from __future__ import annotations

import pytest

from minikafka import Cluster
from minikafka.core import api, errors
from minikafka.core.errors import KafkaCoreError
from minikafka.core.transactions import MAX_EPOCH, TV_1, TV_2, TransactionCoordinator


def coordinator() -> TransactionCoordinator:
    ids = iter(range(100, 200))
    written: list = []
    coord = TransactionCoordinator(lambda: next(ids),
                                   lambda *marker: written.append(marker))
    coord.written = written  # type: ignore[attr-defined]
    return coord


def test_a_new_cluster_finalizes_version_2_and_version_1_stays_available():
    assert Cluster(brokers=1).features["transaction.version"] == 2
    cluster = Cluster(brokers=1, features={"transaction.version": 1})
    described = cluster.admin().describe_features()["transaction.version"]
    assert described["finalized"] == (1, 1) and described["supported"] == (0, 2)


def test_every_end_bumps_the_epoch_and_returns_it():
    coord = coordinator()
    pid, epoch = coord.init_producer_id("tx", 60_000, 0)
    coord.add_partitions("tx", pid, epoch, {("t", 0)}, 1, TV_2)
    assert coord.end_txn("tx", pid, epoch, True, TV_2) == (pid, epoch + 1)
    # The markers carry the new epoch and the version.
    assert coord.written[-1] == ({("t", 0)}, pid, epoch + 1, True, TV_2)
    # A retry of that EndTxn (the old epoch) gets the same answer, and nothing is written.
    assert coord.end_txn("tx", pid, epoch, True, TV_2) == (pid, epoch + 1)
    assert len(coord.written) == 1
    # An abort with nothing added still bumps; a commit of nothing is refused.
    assert coord.end_txn("tx", pid, epoch + 1, False, TV_2) == (pid, epoch + 2)
    with pytest.raises(KafkaCoreError) as refused:
        coord.end_txn("tx", pid, epoch + 2, True, TV_2)
    assert refused.value.code == errors.INVALID_TXN_STATE
    # An epoch two behind is fenced.
    with pytest.raises(KafkaCoreError) as fenced:
        coord.end_txn("tx", pid, epoch, False, TV_2)
    assert fenced.value.code == errors.PRODUCER_FENCED


def test_version_1_keeps_the_epoch():
    coord = coordinator()
    pid, epoch = coord.init_producer_id("tx", 60_000, 0)
    coord.add_partitions("tx", pid, epoch, {("t", 0)}, 1)
    assert coord.end_txn("tx", pid, epoch, True, TV_1) == (pid, epoch)
    assert coord.written[-1] == ({("t", 0)}, pid, epoch, True, TV_1)


def test_an_exhausted_epoch_moves_to_a_new_producer_id():
    coord = coordinator()
    pid, _ = coord.init_producer_id("tx", 60_000, 0)
    meta = coord.transactions["tx"]
    meta.producer_epoch = MAX_EPOCH - 1  # 32766: the last epoch a client may hold
    coord.add_partitions("tx", pid, MAX_EPOCH - 1, {("t", 0)}, 1, TV_2)
    new_pid, new_epoch = coord.end_txn("tx", pid, MAX_EPOCH - 1, True, TV_2)
    assert new_pid != pid and new_epoch == 0
    # The markers end the old producer's transaction at 32767, kept for fencing.
    assert coord.written[-1] == ({("t", 0)}, pid, MAX_EPOCH, True, TV_2)
    # A retry with the old id and epoch is recognised.
    assert coord.end_txn("tx", pid, MAX_EPOCH - 1, True, TV_2) == (new_pid, 0)


def test_a_version_2_marker_must_be_newer_than_the_producers_epoch():
    cluster = Cluster(brokers=3, seed=5)
    cluster.create_topic("t", 1, 3)
    producer = cluster.producer(transactional_id="tx")
    producer.init_transactions()
    producer.begin_transaction()
    producer.send("t", value=b"open")
    producer.flush()
    pid, epoch = producer.producer_id, producer.producer_epoch
    leader = cluster.describe_topic("t").partitions[0].leader

    def marker(at: int, version: int) -> int:
        [result] = api.write_txn_markers(cluster, leader, [api.TxnMarker(
            pid, at, False, (("t", 0),), 0, version)])
        return result[("t", 0)]

    assert marker(epoch, TV_2) == errors.INVALID_PRODUCER_EPOCH  # same epoch, still open
    assert marker(epoch, TV_1) == errors.NONE  # version 1 takes the same epoch
    assert marker(epoch, TV_2) == errors.NONE  # a duplicate once the transaction is closed
    assert marker(epoch + 1, TV_2) == errors.NONE


def test_a_late_write_of_an_ended_version_2_transaction_is_refused():
    """The delayed request carries the old epoch; every partition the marker reached
    now knows the new one (INVALID_PRODUCER_EPOCH), verification or not."""
    cluster = Cluster(brokers=3, seed=7,
                      broker_config={"transaction.partition.verification.enable": False})
    cluster.create_topic("t", 1, 3)
    producer = cluster.producer(transactional_id="tx")
    producer.init_transactions()
    producer.begin_transaction()
    producer.send("t", value=b"kept").get()
    old_epoch = producer.producer_epoch
    producer.abort_transaction()
    assert producer.producer_epoch == old_epoch + 1
    from minikafka.course.hanging import late_produce
    assert late_produce(cluster, producer, "t", 0, b"late", epoch=old_epoch) == \
        errors.INVALID_PRODUCER_EPOCH
    assert cluster.describe_topic("t").partitions[0].last_stable_offset == 2
