"""DescribeProducers (kafka-transactions.sh describe-producers) through kafka-python."""
from __future__ import annotations

from kafka import KafkaAdminClient, KafkaProducer, TopicPartition
from kafka.errors import UnknownTopicOrPartitionError


def test_describe_producers_shows_epoch_sequence_and_open_transaction(served):
    cluster, server = served
    with cluster.lock:
        cluster.create_topic("t", 1, 3)
    idempotent = KafkaProducer(bootstrap_servers=server.bootstrap_servers,
                               enable_idempotence=True)
    for i in range(4):
        idempotent.send("t", value=b"%d" % i).get(timeout=10)
    txn = KafkaProducer(bootstrap_servers=server.bootstrap_servers, transactional_id="tx")
    txn.init_transactions()
    txn.begin_transaction()
    txn.send("t", value=b"open").get(timeout=10)
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap_servers)
    try:
        tp = TopicPartition("t", 0)
        states = admin.describe_producers([tp])[tp].active_producers
        rows = sorted((s.producer_epoch, s.last_sequence, s.current_transaction_start_offset)
                      for s in states)
        assert rows == [(0, 0, 4), (0, 3, -1)]
        try:
            admin.describe_producers([TopicPartition("t", 7)])
            raise AssertionError("an unknown partition was described")
        except UnknownTopicOrPartitionError:
            pass
    finally:
        txn.abort_transaction()
        for client in (idempotent, txn, admin):
            client.close()
