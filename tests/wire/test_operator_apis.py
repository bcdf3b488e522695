"""The operator's APIs through kafka-python's KafkaAdminClient against `minikafka serve`:
partition reassignment, the metadata quorum, feature levels, TxnOffsetCommit's group check,
create_partitions with an assignment, broker loggers."""
from __future__ import annotations

import logging

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource
from kafka.errors import (
    CommitFailedError,
    IllegalGenerationError,
    InvalidReplicationAssignmentError,
    InvalidUpdateVersionError,
    LogDirNotFoundError,
    NoError,
    NoReassignmentInProgressError,
    TransactionalIdNotFoundError,
)
from kafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartitionReplica

from .conftest import wait_for


def test_reassignment_moves_a_partition_and_lists_moves_under_way(served):
    cluster, server = served
    with cluster.lock:
        cluster.create_topic("moving", 2, 2, replica_assignment=[[1, 2], [2, 3]])
        cluster.pause_follower(1)  # partition 1's move to broker 1 cannot finish yet
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap_servers)
    try:
        tp0, tp1 = TopicPartition("moving", 0), TopicPartition("moving", 1)
        assert admin.alter_partition_reassignments({tp0: [3, 2], tp1: [1, 3]}) == {
            tp0: None, tp1: None}
        wait_for(lambda: tp0 not in admin.list_partition_reassignments(), what="move of p0")
        assert admin.list_partition_reassignments() == {
            tp1: {"replicas": [1, 3, 2], "adding_replicas": [1], "removing_replicas": [2]}}
        assert admin.list_partition_reassignments({"moving": [0]}) == {}
        with cluster.lock:
            assert cluster.controller.topics["moving"].partitions[0].replicas == (3, 2)
        assert admin.alter_partition_reassignments({tp1: None}) == {tp1: None}
        assert admin.alter_partition_reassignments({tp1: None, tp0: [7]}) == {
            tp1: NoReassignmentInProgressError, tp0: InvalidReplicationAssignmentError}
        with cluster.lock:
            assert sorted(cluster.controller.topics["moving"].partitions[1].replicas) == [2, 3]
    finally:
        admin.close()


def test_describe_metadata_quorum(served):
    cluster, server = served
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap_servers)
    try:
        quorum = admin.describe_metadata_quorum()
        with cluster.lock:
            end, leader = len(cluster.controller.log), cluster.active_controller
        [part] = quorum["topics"][0]["partitions"]
        assert (part["error"], part["leader_id"], part["high_watermark"]) == (None, leader, end)
        assert sorted(v["replica_id"] for v in part["current_voters"]) == [1, 2, 3]
        assert part["observers"] == []  # every broker of three votes (combined mode)
        assert {v["log_end_offset"] for v in part["current_voters"]} == {end}
        ports = {n["node_id"]: n["listeners"][0]["port"] for n in quorum["nodes"]}
        assert ports == server.ports
    finally:
        admin.close()


def test_update_and_describe_features(served):
    cluster, server = served
    elr = "eligible.leader.replicas.version"
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap_servers)
    try:
        assert admin.describe_features()[elr]["finalized"] == (1, 1)
        try:
            admin.update_features({elr: 0})
            raise AssertionError("a downgrade passed as an upgrade")
        except InvalidUpdateVersionError as exc:
            assert "Can't downgrade the version of this feature" in str(exc)
        assert admin.update_features({elr: ("SAFE_DOWNGRADE", 0)}) == {elr: "OK"}
        with cluster.lock:
            assert cluster.features[elr] == 0
        assert "finalized" not in admin.describe_features()[elr]
    finally:
        admin.close()


def test_txn_offset_commit_for_an_empty_group_and_a_stale_generation(served):
    cluster, server = served
    with cluster.lock:
        cluster.create_topic("txn-in", 1, 3)
    tp = TopicPartition("txn-in", 0)
    live = KafkaConsumer("txn-in", bootstrap_servers=server.bootstrap_servers, group_id="live")
    producer = KafkaProducer(bootstrap_servers=server.bootstrap_servers, transactional_id="eos")
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap_servers)
    try:
        producer.init_transactions()
        # A group nobody is in: generation -1 and no member id, as Kafka accepts.
        producer.begin_transaction()
        producer.send_offsets_to_transaction({tp: OffsetAndMetadata(3, "", -1)},
                                             ConsumerGroupMetadata("empty"))
        producer.commit_transaction()
        assert admin.list_group_offsets("empty")["empty"][tp].offset == 3

        wait_for(lambda: live.poll(timeout_ms=100) is not None and live.assignment() == {tp},
                 what="the member's assignment")
        current = live.group_metadata()
        producer.begin_transaction()
        producer.send_offsets_to_transaction({tp: OffsetAndMetadata(1, "", -1)}, current)
        producer.commit_transaction()
        stale = current._replace(generation_id=current.generation_id - 1)
        producer.begin_transaction()
        try:
            producer.send_offsets_to_transaction({tp: OffsetAndMetadata(2, "", -1)}, stale)
            raise AssertionError("a stale generation committed offsets")
        except (CommitFailedError, IllegalGenerationError):
            pass
        assert admin.list_group_offsets("live")["live"][tp].offset == 1
    finally:
        for client in (producer, live, admin):
            client.close()


def test_list_and_describe_transactions(served):
    cluster, server = served
    with cluster.lock:
        cluster.create_topic("txn-out", 2, 3)
    producer = KafkaProducer(bootstrap_servers=server.bootstrap_servers, transactional_id="open")
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap_servers)
    try:
        producer.init_transactions()
        producer.begin_transaction()
        producer.send("txn-out", b"x", partition=1).get(timeout=10)
        listed = admin.list_transactions()
        [(broker, listing)] = [(b, t) for b, ts in listed.items() for t in ts]
        assert (listing.transactional_id, listing.state.value) == ("open", "Ongoing")
        described = admin.describe_transactions(["open"])["open"]
        assert (described.coordinator_id, described.state.value, described.producer_id,
                described.topic_partitions) == (broker, "Ongoing", listing.producer_id,
                                                {TopicPartition("txn-out", 1)})
        assert admin.list_transactions(state_filters=["CompleteAbort"]) == {1: [], 2: [], 3: []}
        try:
            admin.describe_transactions(["nobody"])
            raise AssertionError("an unknown transactional id was described")
        except TransactionalIdNotFoundError:
            pass
        producer.abort_transaction()
        assert [t.state.value for ts in admin.list_transactions().values() for t in ts] == [
            "CompleteAbort"]
    finally:
        producer.close()
        admin.close()


def test_create_partitions_with_an_assignment(served):
    cluster, server = served
    with cluster.lock:
        cluster.create_topic("grow", 1, 2)
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap_servers)
    try:
        admin.create_partitions({"grow": {"count": 3, "assignments": [[3, 1], [2, 3]]}})
        with cluster.lock:
            assert [p.replicas for p in cluster.controller.topics["grow"].partitions[1:]] == [
                (3, 1), (2, 3)]
        try:
            admin.create_partitions({"grow": {"count": 4, "assignments": [[3]]}})
            raise AssertionError("an assignment of the wrong size was accepted")
        except InvalidReplicationAssignmentError as exc:
            assert "which have 2 replica(s)" in str(exc)
    finally:
        admin.close()


def test_broker_loggers_are_described_and_changed(served):
    cluster, server = served
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap_servers)
    logger = logging.getLogger("minikafka.wire")
    before = logger.level
    try:
        logger.setLevel(logging.ERROR)
        described = admin.describe_configs([ConfigResource("BROKER_LOGGER", "1")],
                                           config_filter="all")["broker_logger"]["1"]
        assert list(described)[0] == "root"
        assert (described["minikafka.wire"]["value"],
                described["minikafka.wire"]["config_source"]) == (
            "ERROR", "DYNAMIC_BROKER_LOGGER_CONFIG")

        def alter(level: str):
            return admin.alter_configs(
                [ConfigResource("BROKER_LOGGER", "1", configs={"minikafka.wire": level})],
                incremental=True, raise_on_unknown=False)["broker_logger"]["1"]

        assert alter("DEBUG") == "OK" and logger.level == logging.DEBUG
        assert "is not a supported log level" in alter("LOUD")
        assert logger.level == logging.DEBUG
    finally:
        logger.setLevel(before)
        admin.close()


def test_list_config_resources(served):
    cluster, server = served
    with cluster.lock:
        cluster.create_topic("configured", 1, 1)
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap_servers)
    try:
        every = admin.list_config_resources()
        assert "configured" in every["topic"]
        assert every["broker"] == every["broker_logger"] == ["1", "2", "3"]
        assert admin.list_config_resources(["BROKER"]) == {"broker": ["1", "2", "3"]}
    finally:
        admin.close()


def test_alter_replica_log_dirs_and_the_listeners_a_broker_describes(served):
    cluster, server = served
    with cluster.lock:
        cluster.create_topic("dirs", 1, 3)
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap_servers)
    try:
        [described] = [d for d in admin.describe_log_dirs() if d["broker"] == 2]
        here = described["log_dirs"][0]["log_dir"]
        replica = TopicPartitionReplica("dirs", 0, 2)
        assert admin.alter_replica_log_dirs({replica: here}) == {replica: NoError}
        assert admin.alter_replica_log_dirs({replica: "/elsewhere"}) == {
            replica: LogDirNotFoundError}
        broker = admin.describe_configs([ConfigResource("BROKER", "2")],
                                        config_filter="all")["broker"]["2"]
        assert (broker["advertised.listeners"]["value"],
                broker["advertised.listeners"]["config_source"],
                broker["advertised.listeners"]["read_only"]) == (
            f"PLAINTEXT://127.0.0.1:{server.ports[2]}", "STATIC_BROKER_CONFIG", True)
    finally:
        admin.close()
