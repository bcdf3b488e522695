"""KIP-890 partition verification of TxnOffsetCommit (core.api.txn_offset_commit): the group
coordinator asks the transaction coordinator whether AddOffsetsToTxn put the group's
__consumer_offsets partition in the transaction, by request version, with
transaction.partition.verification.enable on and off. tests/realkafka/test_transactions_tool.py
compares the same with Kafka 4.4.0."""
from __future__ import annotations

import pytest
from kafka.protocol.consumer import OffsetFetchRequest
from kafka.protocol.producer import (
    AddOffsetsToTxnRequest,
    AddPartitionsToTxnRequest,
    EndTxnRequest,
    InitProducerIdRequest,
    TxnOffsetCommitRequest,
)
from kafka.structs import OffsetAndMetadata, TopicPartition

from minikafka.cluster import Cluster
from minikafka.core import errors
from minikafka.core.api import txn_offset_commit

from .test_handlers import Client, build, leader_of, produce

VERIFICATION = "transaction.partition.verification.enable"
_Topic = TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic


class Txn:
    """One transactional producer driven by hand: Produce to t-0, then TxnOffsetCommit."""

    def __init__(self, cluster: Cluster, txn_id: str = "etl", group: str = "readers") -> None:
        self.cluster, self.txn_id, self.group = cluster, txn_id, group
        self.client = Client(cluster, 1)
        self.coordinator = Client(cluster, cluster.groups.find_coordinator(group))
        init = self.client.call(InitProducerIdRequest(transactional_id=txn_id,
                                                      transaction_timeout_ms=60_000), 4)
        self.pid, self.epoch = init.producer_id, init.producer_epoch

    def begin(self) -> None:
        add = self.client.call(AddPartitionsToTxnRequest(
            v3_and_below_transactional_id=self.txn_id, v3_and_below_producer_id=self.pid,
            v3_and_below_producer_epoch=self.epoch, v3_and_below_topics=[
                AddPartitionsToTxnRequest.AddPartitionsToTxnTopic(name="t", partitions=[0])]),
            3)
        assert add.results_by_topic_v3_and_below[0].results_by_partition[0] \
            .partition_error_code == 0
        records = build([b"out"], producer_id=self.pid, epoch=self.epoch, sequence=0, txn=True)
        assert leader_of(self.cluster).call(produce("t", 0, records, txn_id=self.txn_id), 9) \
            .responses[0].partition_responses[0].error_code == 0

    def add_offsets(self) -> int:
        return self.client.call(AddOffsetsToTxnRequest(
            transactional_id=self.txn_id, producer_id=self.pid, producer_epoch=self.epoch,
            group_id=self.group), 3).error_code

    def commit_offsets(self, version: int, offset: int, epoch: int | None = None) -> list[int]:
        answer = self.coordinator.call(TxnOffsetCommitRequest(
            transactional_id=self.txn_id, group_id=self.group, producer_id=self.pid,
            producer_epoch=self.epoch if epoch is None else epoch, generation_id=-1,
            member_id="", group_instance_id=None, topics=[_Topic(name="t", partitions=[
                _Topic.TxnOffsetCommitRequestPartition(
                    partition_index=p, committed_offset=offset, committed_leader_epoch=-1,
                    committed_metadata="") for p in (0, 1)])]), version)
        return [p.error_code for t in answer.topics for p in t.partitions]

    def end(self, commit: bool = True) -> int:
        return self.client.call(EndTxnRequest(transactional_id=self.txn_id, producer_id=self.pid,
                                              producer_epoch=self.epoch, committed=commit),
                                3).error_code

    def committed(self, require_stable: bool) -> tuple[int, int]:
        """OffsetFetch v7 for t-0: (committed offset, error code)."""
        answer = self.coordinator.call(OffsetFetchRequest(
            group_id=self.group, require_stable=require_stable, topics=[
                OffsetFetchRequest.OffsetFetchRequestTopic(name="t", partition_indexes=[0])]),
            7)
        [partition] = answer.topics[0].partitions
        return partition.committed_offset, partition.error_code


def make_cluster(verify: bool | None = None) -> Cluster:
    config = {} if verify is None else {VERIFICATION: verify}
    cluster = Cluster(brokers=3, seed=33, broker_config=config)
    cluster.create_topic("t", partitions=2, replication_factor=3)
    return cluster


@pytest.mark.parametrize(("version", "code"), [
    (0, errors.INVALID_TXN_STATE), (3, errors.INVALID_TXN_STATE),
    (4, errors.TRANSACTION_ABORTABLE)])
def test_verification_refuses_offsets_of_a_group_never_added(version, code):
    """On by default: every partition of the request gets the refusal (below v4 clients do
    not know TRANSACTION_ABORTABLE), nothing is staged, and the commit moves no offset."""
    txn = Txn(make_cluster())
    txn.begin()
    assert txn.commit_offsets(version, 5) == [code, code]
    assert txn.end() == 0
    assert txn.committed(False) == txn.committed(True) == (-1, 0)


def test_v5_adds_the_group_to_the_transaction():
    """Transaction version 2's client sends no AddOffsetsToTxn: from v5 the verification
    adds the group's partition, and the commit makes the offsets visible."""
    txn = Txn(make_cluster())
    txn.begin()
    assert txn.commit_offsets(5, 5) == [0, 0]
    assert txn.end() == 0
    assert txn.committed(True) == (5, 0)


@pytest.mark.parametrize("verify", [None, True, False], ids=["default", "on", "off"])
def test_offsets_after_add_offsets_to_txn_are_committed(verify):
    txn = Txn(make_cluster(verify))
    txn.begin()
    assert txn.add_offsets() == 0
    assert txn.commit_offsets(3, 7) == [0, 0]
    assert txn.committed(True) == (-1, errors.UNSTABLE_OFFSET_COMMIT)  # until the marker
    assert txn.end() == 0
    assert txn.committed(True) == (7, 0)


def test_another_group_on_the_same_offsets_partition_is_verified():
    """Kafka verifies the __consumer_offsets partition, not the group: a group that shares
    the added group's partition passes."""
    cluster = make_cluster()
    partition = cluster.groups.partition_for("readers")
    twin = next(g for g in (f"g{i}" for i in range(1000))
                if cluster.groups.partition_for(g) == partition)
    txn = Txn(cluster)
    txn.begin()
    assert txn.add_offsets() == 0
    txn.group = twin
    assert txn.commit_offsets(3, 4) == [0, 0]
    assert txn.end() == 0
    assert txn.committed(True) == (4, 0)


def test_without_verification_the_offsets_hang_after_the_commit():
    """Off, as on brokers before 3.6: the offsets are written, but the commit marker goes
    only to the partitions the transaction holds. They stay pending: the committed offset
    does not move and require_stable answers UNSTABLE_OFFSET_COMMIT. The producer's next
    transaction that adds the group writes a marker there and settles them with its own."""
    txn = Txn(make_cluster(False))
    txn.begin()
    assert txn.commit_offsets(3, 5) == [0, 0]
    assert txn.end() == 0
    assert txn.committed(False) == (-1, 0)
    assert txn.committed(True) == (-1, errors.UNSTABLE_OFFSET_COMMIT)
    txn.begin()
    assert txn.add_offsets() == 0
    assert txn.end() == 0
    assert txn.committed(True) == (5, 0)


def test_a_fenced_epoch_is_invalid_producer_epoch():
    """The coordinator's PRODUCER_FENCED reaches a TxnOffsetCommit as INVALID_PRODUCER_EPOCH
    (AddPartitionsToTxnManager), at every version."""
    txn = Txn(make_cluster())
    txn.begin()
    assert txn.add_offsets() == 0
    assert txn.commit_offsets(3, 5, epoch=txn.epoch - 1) == [errors.INVALID_PRODUCER_EPOCH] * 2


def test_the_in_process_producer_adds_offsets_first():
    """send_offsets_to_transaction sends AddOffsetsToTxn before the verified commit, so the
    in-process door passes verification and the offsets land with the commit marker."""
    cluster = make_cluster()
    producer = cluster.producer(transactional_id="etl")
    producer.init_transactions()
    producer.begin_transaction()
    producer.send("t", b"out", partition=0)
    producer.send_offsets_to_transaction({TopicPartition("t", 0): OffsetAndMetadata(3, "", -1)},
                                         "readers")
    producer.commit_transaction()
    code, offsets = cluster.groups.offset_fetch(None, "readers")
    assert code == 0 and offsets[("t", 0)].offset == 3


def test_the_in_process_door_shares_the_verification():
    """The check the wire handler runs, called as send_offsets_to_transaction calls it
    (kafka-python's TxnOffsetCommit v3): a group never added is refused."""

    cluster = make_cluster()
    producer = cluster.producer(transactional_id="etl")
    producer.init_transactions()
    producer.begin_transaction()
    producer.send("t", b"out", partition=0).get()
    broker = cluster.brokers[cluster.groups.find_coordinator("readers")]
    assert txn_offset_commit.unverified(cluster, broker, "etl", "readers", producer.producer_id,
                                        producer.producer_epoch) == errors.INVALID_TXN_STATE
    producer.abort_transaction()
