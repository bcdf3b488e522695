"""The versions Kafka 4.4.0 added past kafka-python 3.0.12's specs, served from Kafka's own
specs (minikafka.wire.messages): ApiVersions v5, OffsetCommit/OffsetFetch v10 and
TxnOffsetCommit v6 by topic id, DeleteGroups v3. kafka-python's clients in this process
still decode with their own classes."""
from __future__ import annotations

import uuid

from kafka.protocol.api_header import ResponseClassRegistry
from kafka.protocol.consumer.group import OffsetCommitRequest, OffsetFetchRequest
from kafka.protocol.metadata import ApiVersionsResponse as KafkaPythonApiVersionsResponse

from minikafka.cluster import Cluster
from minikafka.core import errors
from minikafka.wire import default_registry
from minikafka.wire.messages import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    DeleteGroupsRequest,
    DeleteGroupsResponse,
    TxnOffsetCommitRequest,
)

from .test_handlers import Client

REBOOTSTRAP_REQUIRED = 129


def topic_id(cluster: Cluster, name: str) -> uuid.UUID:
    return uuid.UUID(cluster.controller.topics[name].topic_id)


def test_kafka_python_keeps_decoding_with_its_own_classes():
    ApiVersionsResponse[5], DeleteGroupsResponse[3]  # new versioned classes register too
    ApiVersionsResponse(version=5).encode()
    registry = ResponseClassRegistry._response_class_registry
    assert registry[18].valid_versions == KafkaPythonApiVersionsResponse.valid_versions == (0, 4)
    assert registry[42].valid_versions == (0, 2) and registry[28].valid_versions == (0, 5)


def test_api_versions_v5_checks_the_cluster_and_node_the_client_meant():
    cluster = Cluster(brokers=3, seed=4)
    client = Client(cluster, 2)
    ranges = dict(default_registry().version_ranges())

    def ask(**kw):
        return client.call(ApiVersionsRequest(client_software_name="t",
                                              client_software_version="1", **kw), 5)

    answer = ask(cluster_id=cluster.cluster_id, node_id=2)
    assert answer.error_code == errors.NONE
    assert {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys}[18] == (0, 5)
    assert len(answer.api_keys) == len(ranges)
    assert ask().error_code == errors.NONE  # neither given: nothing to check
    assert ask(cluster_id=cluster.cluster_id, node_id=1).error_code == REBOOTSTRAP_REQUIRED
    assert ask(cluster_id="another-cluster", node_id=2).error_code == REBOOTSTRAP_REQUIRED


def test_offset_commit_and_fetch_v10_name_topics_by_id():
    cluster = Cluster(brokers=3, seed=4)
    cluster.create_topic("orders", partitions=2, replication_factor=3)
    coordinator = cluster.groups.find_coordinator("billing")
    client = Client(cluster, coordinator)
    orders, unknown = topic_id(cluster, "orders"), uuid.UUID(int=7)
    _Topic = OffsetCommitRequest.OffsetCommitRequestTopic
    client.send(OffsetCommitRequest(
        group_id="billing", generation_id_or_member_epoch=-1, member_id="",
        group_instance_id=None, topics=[
            _Topic(topic_id=orders, partitions=[_Topic.OffsetCommitRequestPartition(
                partition_index=1, committed_offset=42, committed_leader_epoch=-1,
                committed_metadata="")]),
            _Topic(topic_id=unknown, partitions=[_Topic.OffsetCommitRequestPartition(
                partition_index=0, committed_offset=1, committed_leader_epoch=-1,
                committed_metadata="")])]), 10)
    assert client.responses(cluster.now_ms) == []  # parked until __consumer_offsets has it
    cluster.settle(1_000)
    [committed] = client.responses(cluster.now_ms)
    assert [(t.topic_id, [p.error_code for p in t.partitions]) for t in committed.topics] == [
        (orders, [errors.NONE]), (unknown, [errors.UNKNOWN_TOPIC_ID])]

    _Group = OffsetFetchRequest.OffsetFetchRequestGroup
    fetched = client.call(OffsetFetchRequest(require_stable=False, groups=[_Group(
        group_id="billing", member_id=None, member_epoch=-1, topics=[
            _Group.OffsetFetchRequestTopics(topic_id=orders, partition_indexes=[0, 1]),
            _Group.OffsetFetchRequestTopics(topic_id=unknown, partition_indexes=[0])])]), 10)
    [group] = fetched.groups
    assert [(t.topic_id, [(p.partition_index, p.committed_offset, p.error_code)
                          for p in t.partitions]) for t in group.topics] == [
        (orders, [(0, -1, errors.NONE), (1, 42, errors.NONE)]),
        (unknown, [(0, -1, errors.UNKNOWN_TOPIC_ID)])]


def test_txn_offset_commit_v6_names_topics_by_id_and_delete_groups_v3():
    cluster = Cluster(brokers=3, seed=4)
    cluster.create_topic("orders", partitions=1, replication_factor=3)
    producer = cluster.producer(transactional_id="eos")
    producer.init_transactions()
    producer.begin_transaction()
    producer.send("orders", b"x").get()
    coordinator = cluster.groups.find_coordinator("billing")
    cluster.transaction_coordinator.add_offsets("eos", producer.producer_id,
                                                producer.producer_epoch, "billing",
                                                cluster.now_ms)
    orders = topic_id(cluster, "orders")
    _Topic = TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic
    _Partition = _Topic.TxnOffsetCommitRequestPartition
    answer = Client(cluster, coordinator).call(TxnOffsetCommitRequest(
        transactional_id="eos", group_id="billing", producer_id=producer.producer_id,
        producer_epoch=producer.producer_epoch, generation_id_or_member_epoch=-1, member_id="",
        group_instance_id=None, topics=[
            _Topic(topic_id=orders, partitions=[_Partition(
                partition_index=0, committed_offset=1, committed_leader_epoch=-1,
                committed_metadata="")]),
            _Topic(topic_id=uuid.UUID(int=9), partitions=[_Partition(
                partition_index=0, committed_offset=1, committed_leader_epoch=-1,
                committed_metadata="")])]), 6)
    assert [(t.topic_id, t.partitions[0].error_code) for t in answer.topics] == [
        (orders, errors.NONE), (uuid.UUID(int=9), errors.UNKNOWN_TOPIC_ID)]
    producer.commit_transaction()
    assert cluster.admin().list_consumer_group_offsets("billing")[
        next(iter(cluster.admin().list_consumer_group_offsets("billing")))].offset == 1

    deleted = Client(cluster, coordinator).call(
        DeleteGroupsRequest(groups_names=["billing", "nobody"]), 3)
    assert [(r.group_id, r.error_code, r.error_message) for r in deleted.results] == [
        ("billing", errors.NONE, None), ("nobody", errors.GROUP_ID_NOT_FOUND, None)]
