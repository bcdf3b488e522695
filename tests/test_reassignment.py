"""Partition reassignment (KIP-455) and CreatePartitions with an assignment, in process: the controller adds the target replicas,
they catch up through replication on the simulated clock, join the ISR, leadership moves
off a leaving leader, then the leaving replicas go. Cancelling reverts the move."""

from __future__ import annotations

import pytest
from kafka.errors import (
    InvalidReplicationAssignmentError,
    InvalidReplicationFactorError,
    NoReassignmentInProgressError,
    UnknownTopicOrPartitionError,
)
from kafka.structs import TopicPartition

from minikafka.cluster import Cluster

TP = TopicPartition("orders", 0)


@pytest.fixture
def cluster() -> Cluster:
    cluster = Cluster(brokers=4, seed=5)
    cluster.create_topic("orders", partitions=1, replication_factor=3,
                         replica_assignment=[[1, 2, 3]])
    producer = cluster.producer(acks="all")
    for i in range(40):
        producer.send("orders", value=b"order %d" % i)
    producer.flush()
    return cluster


def partition(cluster: Cluster):
    return cluster.controller.topics["orders"].partitions[0]


def test_a_move_adds_replicas_catches_up_then_removes_and_moves_leadership(cluster):
    admin = cluster.admin()
    cluster.pause_follower(4)  # the new replica cannot catch up yet: the move stays open
    assert admin.alter_partition_reassignments({TP: [4, 2, 3]}) == {TP: None}
    cluster.advance(5_000)
    assert admin.list_partition_reassignments() == {
        TP: {"replicas": [4, 2, 3, 1], "adding_replicas": [4], "removing_replicas": [1]}}
    part = partition(cluster)
    assert (part.leader, sorted(part.isr)) == (1, [1, 2, 3])  # the leaving leader still leads
    assert ("orders", 0) in cluster.brokers[4].replicas  # broker 4 hosts a replica already

    cluster.resume_follower(4)
    cluster.settle()
    assert admin.list_partition_reassignments() == {}
    part = partition(cluster)
    assert part.replicas == (4, 2, 3)
    assert sorted(part.isr) == [2, 3, 4]
    assert part.leader == 4  # the first target replica in sync leads now
    assert ("orders", 0) not in cluster.brokers[1].replicas
    assert cluster.brokers[4].replicas[("orders", 0)].log_end_offset == 40
    kinds = [e.kind for e in cluster.journal.events]
    assert kinds.index("reassignment.started") < kinds.index("reassignment.completed")

    consumer = cluster.consumer("orders", auto_offset_reset="earliest")
    assert len([r for batch in consumer.poll(timeout_ms=1_000).values() for r in batch]) == 40


def test_shrinking_the_replica_set_completes_at_once(cluster):
    cluster.reassign_partition("orders", 0, [2])
    assert cluster.list_partition_reassignments() == {}
    part = partition(cluster)
    assert (part.replicas, part.isr, part.leader) == ((2,), (2,), 2)


def test_cancel_reverts_what_was_being_added(cluster):
    admin = cluster.admin()
    cluster.pause_follower(4)
    admin.alter_partition_reassignments({TP: [4, 2, 3]})
    cluster.advance(1_000)
    assert admin.alter_partition_reassignments({TP: None}) == {TP: None}
    cluster.settle()
    part = partition(cluster)
    assert sorted(part.replicas) == [1, 2, 3] and part.leader == 1
    assert admin.list_partition_reassignments() == {}
    assert ("orders", 0) not in cluster.brokers[4].replicas
    assert admin.alter_partition_reassignments({TP: None}) == {TP: NoReassignmentInProgressError}


def test_errors_are_kafkas(cluster):
    admin = cluster.admin()
    results = admin.alter_partition_reassignments({
        TP: [1, 9], TopicPartition("orders", 5): [1], TopicPartition("nope", 0): [1]})
    assert results == {TP: InvalidReplicationAssignmentError,
                       TopicPartition("orders", 5): UnknownTopicOrPartitionError,
                       TopicPartition("nope", 0): UnknownTopicOrPartitionError}
    with pytest.raises(InvalidReplicationAssignmentError, match="includes the broker 2 more than once"):
        cluster.reassign_partition("orders", 0, [2, 2])
    with pytest.raises(InvalidReplicationFactorError):
        cluster.reassign_partition("orders", 0, [1, 2], allow_replication_factor_change=False)


def test_a_move_under_way_survives_a_restart_of_the_metadata_log(tmp_path):
    cluster = Cluster(brokers=4, seed=5, log_dir=tmp_path)
    cluster.create_topic("orders", partitions=1, replication_factor=2,
                         replica_assignment=[[1, 2]])
    cluster.pause_follower(3)
    cluster.reassign_partition("orders", 0, [3, 2])
    restarted = Cluster(brokers=4, seed=5, log_dir=tmp_path)
    assert restarted.list_partition_reassignments() == {("orders", 0): ([3, 2, 1], [3], [1])}
    restarted.settle()
    assert restarted.list_partition_reassignments() == {}
    assert partition(restarted).replicas == (3, 2)


def test_create_partitions_on_the_brokers_named(cluster):
    admin = cluster.admin()
    assert admin.create_partitions({"orders": {"count": 3, "assignments": [[4, 1, 2], [3, 4, 1]]}},
                                   validate_only=True) == {"orders": None}
    assert len(cluster.controller.topics["orders"].partitions) == 1
    admin.create_partitions({"orders": {"count": 3, "assignments": [[4, 1, 2], [3, 4, 1]]}})
    assert [p.replicas for p in cluster.controller.topics["orders"].partitions[1:]] == [
        (4, 1, 2), (3, 4, 1)]
    assert [p.leader for p in cluster.controller.topics["orders"].partitions[1:]] == [4, 3]
    with pytest.raises(InvalidReplicationAssignmentError, match="but only 1 assignment"):
        cluster.create_partitions("orders", 5, [[1, 2, 3]])
    with pytest.raises(InvalidReplicationAssignmentError, match="which have 3 replica"):
        cluster.create_partitions("orders", 4, [[1, 2]])
    with pytest.raises(InvalidReplicationAssignmentError, match="no such broker"):
        cluster.create_partitions("orders", 4, [[1, 2, 7]])


def move_of_100_kb(throttle: int | None) -> Cluster:
    """A one-replica partition of about 100 kB on broker 1, moving to broker 2, with the
    throttle kafka-reassign-partitions.sh --throttle sets."""
    cluster = Cluster(brokers=2, seed=5)
    cluster.create_topic("big", partitions=1, replication_factor=1, replica_assignment=[[1]])
    producer = cluster.producer(acks="all")
    for _ in range(100):
        producer.send("big", value=bytes(1_000))
    producer.flush()
    if throttle is not None:
        cluster.alter_broker_config({"leader.replication.throttled.rate": throttle,
                                     "follower.replication.throttled.rate": throttle})
        cluster.alter_topic_config("big", {"leader.replication.throttled.replicas": "0:1",
                                           "follower.replication.throttled.replicas": "0:2"})
    cluster.reassign_partition("big", 0, [2])
    return cluster


def test_a_throttled_move_replicates_at_the_leaders_quota():
    unthrottled = move_of_100_kb(None)
    unthrottled.advance(1_000)
    assert unthrottled.list_partition_reassignments() == {}

    cluster = move_of_100_kb(10_000)  # bytes a second: about ten seconds for 100 kB
    total = cluster.brokers[1].replicas[("big", 0)].log.size_bytes
    copied = []
    for _ in range(5):
        cluster.advance(1_000)
        copied.append(cluster.brokers[2].replicas[("big", 0)].log.size_bytes)
    assert 0 < copied[0] < copied[-1] < total and cluster.list_partition_reassignments()
    # Whole batches (about 16 kB here) go at a time; on average the quota holds.
    assert (copied[-1] - copied[0]) / 4 <= 10_000 * 1.5
    cluster.advance(int(total / 10_000 * 1_000))
    assert cluster.list_partition_reassignments() == {}
    assert cluster.controller.topics["big"].partitions[0].replicas == (2,)
    assert cluster.brokers[2].replicas[("big", 0)].log_end_offset == 100
