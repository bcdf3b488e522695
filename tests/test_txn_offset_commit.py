"""Transactions in process: send_offsets_to_transaction and Kafka's TxnOffsetCommit check of
the consumer (KIP-447; an empty group takes generation -1, a member must be at the group's
generation), and the admin's list_transactions / describe_transactions."""

from __future__ import annotations

import pytest
from kafka.errors import IllegalGenerationError, TransactionalIdNotFoundError
from kafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition

from minikafka.cluster import Cluster, settle_group
from minikafka.core import api

TP = TopicPartition("in", 0)


def committed(cluster: Cluster, group: str) -> int | None:
    offsets = cluster.admin().list_consumer_group_offsets(group)
    return offsets[TP].offset if TP in offsets else None


def test_an_empty_group_and_a_live_member_commit_a_stale_generation_is_refused():
    cluster = Cluster(brokers=3, seed=2)
    cluster.create_topic("in", partitions=1, replication_factor=3)
    producer = cluster.producer(transactional_id="eos")
    producer.init_transactions()

    producer.begin_transaction()
    producer.send_offsets_to_transaction({TP: OffsetAndMetadata(4, "", -1)},
                                         ConsumerGroupMetadata("nobody"))
    producer.commit_transaction()
    assert committed(cluster, "nobody") == 4

    consumer = cluster.consumer("in", group_id="live")
    settle_group([consumer])
    current = consumer.group_metadata()
    producer.begin_transaction()
    producer.send_offsets_to_transaction({TP: OffsetAndMetadata(1, "", -1)}, current)
    producer.commit_transaction()
    assert committed(cluster, "live") == 1

    producer.begin_transaction()
    with pytest.raises(IllegalGenerationError):
        producer.send_offsets_to_transaction(
            {TP: OffsetAndMetadata(2, "", -1)},
            current._replace(generation_id=current.generation_id + 1))
    producer.abort_transaction()
    consumer.close()  # the group is empty now: generation -1 commits again
    producer.begin_transaction()
    producer.send_offsets_to_transaction({TP: OffsetAndMetadata(5, "", -1)}, "live")
    producer.commit_transaction()
    assert committed(cluster, "live") == 5


def test_list_and_describe_transactions():
    cluster = Cluster(brokers=3, seed=2)
    cluster.create_topic("in", partitions=2, replication_factor=3)
    open_txn = cluster.producer(transactional_id="open")
    open_txn.init_transactions()
    open_txn.begin_transaction()
    before = cluster.now_ms
    open_txn.send("in", b"x", partition=1).get()
    after = cluster.now_ms
    done = cluster.producer(transactional_id="done")
    done.init_transactions()
    done.begin_transaction()
    done.send("in", b"y", partition=0).get()
    done.commit_transaction()
    cluster.advance(5_000)
    admin = cluster.admin()

    listed = admin.list_transactions()
    assert sorted(listed) == [1, 2, 3]
    rows = sorted((t.transactional_id, t.state.value, b) for b, ts in listed.items() for t in ts)
    assert [r[:2] for r in rows] == [("done", "CompleteCommit"), ("open", "Ongoing")]
    assert all(b == api.transaction_coordinator_id(cluster, t) for t, _, b in rows)
    assert [t.transactional_id for ts in admin.list_transactions(
        state_filters=["Ongoing"]).values() for t in ts] == ["open"]
    assert [t.transactional_id for ts in admin.list_transactions(
        transactional_id_pattern="do.*").values() for t in ts] == ["done"]
    assert [t.transactional_id for ts in admin.list_transactions(
        duration_filter_ms=60_000).values() for t in ts] == []

    described = admin.describe_transactions(["open"])["open"]
    assert (described.state.value, described.producer_epoch, described.transaction_timeout_ms,
            described.topic_partitions) == ("Ongoing", 0, 60_000, {TopicPartition("in", 1)})
    assert before <= described.transaction_start_time_ms <= after
    with pytest.raises(TransactionalIdNotFoundError):
        admin.describe_transactions(["nobody"])
    open_txn.abort_transaction()
