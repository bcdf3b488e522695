"""Topics: Kafka's name rules, configs, placement, partitions, and the errors for bad input."""

import pytest
from kafka.errors import (
    InvalidConfigurationError,
    InvalidPartitionsError,
    InvalidReplicationFactorError,
    InvalidTopicError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)

from minikafka import Cluster, partition_for_key


@pytest.mark.parametrize("name", ["", ".", "..", "a" * 250, "has space", "slash/name", "ünï"])
def test_illegal_topic_names_raise_invalid_topic(name):
    cluster = Cluster(brokers=1)
    with pytest.raises(InvalidTopicError):
        cluster.create_topic(name)
    assert cluster.list_topics() == []


@pytest.mark.parametrize("name", ["a" * 249, "trucks_gps", "orders.v2", "A-b_c.9"])
def test_legal_topic_names(name):
    cluster = Cluster(brokers=1)
    cluster.create_topic(name)
    assert name in cluster.list_topics()


def test_duplicate_topic_raises_and_keeps_the_first():
    cluster = Cluster(brokers=3)
    cluster.create_topic("t", partitions=3, replication_factor=2)
    with pytest.raises(TopicAlreadyExistsError):
        cluster.create_topic("t", partitions=1)
    assert len(cluster.describe_topic("t").partitions) == 3


def test_replication_factor_above_registered_brokers():
    cluster = Cluster(brokers=3)
    with pytest.raises(InvalidReplicationFactorError):
        cluster.create_topic("t", partitions=1, replication_factor=4)
    with pytest.raises(InvalidReplicationFactorError):
        cluster.create_topic("t", partitions=1, replication_factor=0)


def test_invalid_partitions_and_configs():
    cluster = Cluster(brokers=3)
    with pytest.raises(InvalidPartitionsError):
        cluster.create_topic("t", partitions=0)
    with pytest.raises(InvalidConfigurationError):
        cluster.create_topic("t", config={"no.such.config": "1"})
    with pytest.raises(InvalidConfigurationError):
        cluster.create_topic("t", config={"min.insync.replicas": "zero"})
    with pytest.raises(InvalidConfigurationError):
        cluster.create_topic("t", config={"cleanup.policy": "shred"})
    assert cluster.list_topics() == []


def test_unknown_topic():
    cluster = Cluster(brokers=1)
    with pytest.raises(UnknownTopicOrPartitionError):
        cluster.describe_topic("nope")
    with pytest.raises(UnknownTopicOrPartitionError):
        cluster.delete_topic("nope")


def test_topic_configs_default_and_override():
    cluster = Cluster(brokers=3)
    desc = cluster.create_topic("t", replication_factor=3, config={
        "min.insync.replicas": "2", "retention.ms": 3600000, "cleanup.policy": "compact",
        "message.timestamp.type": "LogAppendTime", "unclean.leader.election.enable": "true"})
    assert desc.config["min.insync.replicas"] == 2
    assert desc.config["retention.ms"] == 3_600_000
    assert desc.config["cleanup.policy"] == "compact"
    assert desc.config["unclean.leader.election.enable"] is True
    assert desc.config["segment.bytes"] == 1 << 30  # Kafka's default, 1 GiB
    cluster.alter_topic_config("t", {"retention.ms": None})
    assert cluster.describe_topic("t").config["retention.ms"] == 7 * 24 * 3600 * 1000


def test_delete_topic_removes_replicas_everywhere():
    cluster = Cluster(brokers=3)
    cluster.create_topic("t", partitions=2, replication_factor=3)
    cluster.delete_topic("t")
    assert cluster.list_topics() == []
    assert all(not b.replicas for b in cluster.brokers.values())
    assert cluster.metadata_log[-1].type == "RemoveTopicRecord"


def test_broker_ids_and_racks_placement_spans_racks():
    racks = {101: "a", 102: "a", 103: "b", 104: "b", 105: "c", 106: "c"}
    cluster = Cluster(brokers=list(racks), racks=racks, seed=3)
    desc = cluster.create_topic("t", partitions=10, replication_factor=3)
    for p in desc.partitions:
        assert len({racks[b] for b in p.replicas}) == 3, p.replicas
        assert p.leader == p.replicas[0]
    leaders = [p.leader for p in desc.partitions]
    # leaders spread across all six brokers
    assert len(set(leaders)) == 6


def test_placement_is_deterministic_per_seed():
    def placement(seed):
        c = Cluster(brokers=[101, 102, 103], seed=seed)
        return [p.replicas for p in c.create_topic("t", partitions=6,
                                                   replication_factor=3).partitions]
    assert placement(7) == placement(7)
    assert any(placement(s) != placement(7) for s in range(8))


def test_striped_placement_rotates_rack_start():
    racks = {1: "a", 2: "b", 3: "c"}
    cluster = Cluster(brokers=[1, 2, 3], racks=racks, seed=0)
    desc = cluster.create_topic("t", partitions=3, replication_factor=3)
    firsts = [racks[p.replicas[0]] for p in desc.partitions]
    assert sorted(firsts) == ["a", "b", "c"]  # each rack leads one partition


def test_adding_partitions_moves_keyed_records():
    cluster = Cluster(brokers=3, seed=1)
    cluster.create_topic("t", partitions=3, replication_factor=1)
    producer = cluster.producer()
    keys = [b"truck-%d" % i for i in range(50)]
    before = {k: producer.send("t", key=k, value=b"x").get().partition for k in keys}
    assert before == {k: partition_for_key(k, 3) for k in keys}
    cluster.create_partitions("t", 5)
    producer2 = cluster.producer()
    after = {k: producer2.send("t", key=k, value=b"x").get().partition for k in keys}
    assert after == {k: partition_for_key(k, 5) for k in keys}
    assert sum(before[k] != after[k] for k in keys) > 10
    with pytest.raises(InvalidPartitionsError):
        cluster.create_partitions("t", 4)
