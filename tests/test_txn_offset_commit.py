"""send_offsets_to_transaction in process: Kafka's TxnOffsetCommit check of the consumer
(KIP-447). An empty group takes generation -1; a member must be at the group's generation."""

from __future__ import annotations

import pytest
from kafka.errors import IllegalGenerationError
from kafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition

from minikafka.client.group import settle_group
from minikafka.cluster import Cluster

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
