"""WriteTxnMarkers (kafka-transactions.sh abort) through kafka-python's abort_transaction:
the ABORT marker ends the partition's open transaction, the LSO moves past it, and a
stale epoch, a partition this cluster lacks and a refused caller get Kafka's errors."""
from __future__ import annotations

import pytest
from kafka import KafkaAdminClient, KafkaProducer, TopicPartition
from kafka.admin import AbortTransactionSpec
from kafka.errors import InvalidProducerEpochError, UnknownTopicOrPartitionError

from minikafka import Cluster
from minikafka.core import api, errors

from .conftest import wait_for


def _open_transaction(cluster: Cluster, topic: str = "t"):
    cluster.create_topic(topic, 1, 3)
    producer = cluster.producer(transactional_id="stuck")
    producer.init_transactions()
    producer.begin_transaction()
    producer.send(topic, value=b"open")
    producer.flush()
    state = cluster.admin().describe_producers([TopicPartition(topic, 0)])
    return producer, state[TopicPartition(topic, 0)].active_producers[0]


def test_abort_marker_moves_the_lso_and_stale_epochs_are_refused():
    cluster = Cluster(brokers=3, seed=5)
    _, state = _open_transaction(cluster)
    assert state.current_transaction_start_offset == 0
    batch = next(iter(cluster.leader_replica("t", 0).log.batches()))
    assert state.last_timestamp == batch.max_timestamp > 0  # the open batch's timestamp
    assert cluster.describe_topic("t").partitions[0].last_stable_offset == 0
    admin, tp = cluster.admin(), TopicPartition("t", 0)
    with pytest.raises(InvalidProducerEpochError):
        admin.abort_transaction(AbortTransactionSpec(tp, state.producer_id,
                                                     state.producer_epoch - 1, 0))
    assert cluster.describe_topic("t").partitions[0].last_stable_offset == 0
    admin.abort_transaction(AbortTransactionSpec(tp, state.producer_id, state.producer_epoch, 0))
    cluster.advance(1_000)  # the followers fetch: the HW, then the LSO, reach the marker
    partition = cluster.describe_topic("t").partitions[0]
    assert partition.last_stable_offset == partition.log_end_offset == 2  # record + marker
    after = admin.describe_producers([tp])[tp].active_producers[0]
    assert after.current_transaction_start_offset == -1


def test_markers_only_on_partitions_the_broker_leads():
    cluster = Cluster(brokers=3, seed=5)
    _open_transaction(cluster)
    leader = cluster.describe_topic("t").partitions[0].leader
    follower = next(b for b in cluster.brokers if b != leader)
    marker = api.TxnMarker(0, 0, False, (("t", 0), ("nope", 0)))
    (codes,) = api.write_txn_markers(cluster, follower, [marker])
    assert codes == {("t", 0): errors.NOT_LEADER_OR_FOLLOWER,
                     ("nope", 0): errors.UNKNOWN_TOPIC_OR_PARTITION}
    assert cluster.describe_topic("t").partitions[0].last_stable_offset == 0


def test_abort_transaction_over_the_wire(served):
    cluster, server = served
    with cluster.lock:
        cluster.create_topic("t", 1, 3)
    producer = KafkaProducer(bootstrap_servers=server.bootstrap_servers, transactional_id="tx")
    producer.init_transactions()
    producer.begin_transaction()
    producer.send("t", value=b"open").get(timeout=10)
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap_servers)
    try:
        tp = TopicPartition("t", 0)
        state = admin.describe_producers([tp])[tp].active_producers[0]
        with cluster.lock:
            assert cluster.describe_topic("t").partitions[0].last_stable_offset == 0
        with pytest.raises(InvalidProducerEpochError):
            admin.abort_transaction(AbortTransactionSpec(tp, state.producer_id,
                                                         state.producer_epoch - 1))
        with pytest.raises(UnknownTopicOrPartitionError):
            admin.abort_transaction(AbortTransactionSpec(TopicPartition("t", 5),
                                                         state.producer_id, 0))
        admin.abort_transaction(AbortTransactionSpec(tp, state.producer_id,
                                                     state.producer_epoch))

        def lso() -> int:
            with cluster.lock:
                return cluster.describe_topic("t").partitions[0].last_stable_offset
        wait_for(lambda: lso() == 2, what="the LSO past the abort marker")
        assert admin.describe_producers([tp])[tp].active_producers[0] \
            .current_transaction_start_offset == -1
    finally:
        for client in (producer, admin):
            client.close()
