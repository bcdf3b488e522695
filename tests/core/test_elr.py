"""Strict min ISR (Kafka 3.7+) and Eligible Leader Replicas (KIP-966, on for new 4.1 clusters)."""

import pytest
from kafka.errors import InvalidConfigurationError

from minikafka import Cluster

ELR_OFF = {"eligible.leader.replicas.version": 0}


def make(features=None, **config):
    # Dedicated controllers, so losing every broker keeps a controller quorum.
    cluster = Cluster(brokers=3, seed=7, controllers=[1001, 1002, 1003], features=features)
    cluster.create_topic("t", partitions=1, replication_factor=3,
                         config={"min.insync.replicas": "2", **config})
    return cluster


def partition(cluster):
    return cluster.describe_topic("t").partitions[0]


def values(replica):
    return [r.value for b in replica.log.batches() for r in b.iter_records()]


def committed(cluster, count):
    producer = cluster.producer(acks="all")
    for i in range(count):
        producer.send("t", value=b"c%d" % i)
    producer.flush()
    cluster.advance(1_000)  # the followers learn the new HW on their next fetch


def test_hw_does_not_move_under_min_isr_so_acks_1_records_wait_unseen():
    cluster = make()
    committed(cluster, 2)
    p = partition(cluster)
    followers = [b for b in p.replicas if b != p.leader]
    for b in followers:
        cluster.stop_broker(b)
    assert partition(cluster).isr == (p.leader,)
    assert cluster.producer(acks=1).send("t", value=b"x").get().offset == 2  # acknowledged
    replica = cluster.leader_replica("t", 0)
    assert (replica.log_end_offset, replica.high_watermark) == (3, 2)  # but not committed
    consumer = cluster.consumer(auto_offset_reset="earliest")
    consumer.assign([("t", 0)])
    assert sum(len(rs) for rs in consumer.poll(timeout_ms=500).values()) == 2
    cluster.start_broker(followers[0])
    cluster.advance(5_000)
    assert len(partition(cluster).isr) == 2 and replica.high_watermark == 3
    assert [r.value for rs in consumer.poll(timeout_ms=500).values() for r in rs] == [b"x"]


def test_min_isr_above_the_replica_count_is_capped():
    cluster = Cluster(brokers=3, seed=7)
    cluster.create_topic("one", partitions=1, replication_factor=1,
                         config={"min.insync.replicas": "2"})
    md = cluster.producer(acks="all").send("one", value=b"v").get()
    assert md.offset == 0
    assert cluster.describe_topic("one").partitions[0].high_watermark == 1


def test_replicas_leaving_an_isr_below_min_isr_become_eligible_leaders():
    cluster = make()
    a, b, c = partition(cluster).replicas
    cluster.stop_broker(b)
    assert (partition(cluster).isr, partition(cluster).elr) == ((a, c), ())
    cluster.stop_broker(c)  # the ISR drops below min ISR: c keeps every committed record
    assert (partition(cluster).isr, partition(cluster).elr) == ((a,), (c,))
    cluster.stop_broker(a)
    p = partition(cluster)
    assert (p.leader, p.isr, p.elr, p.last_known_elr) == (None, (), tuple(sorted((a, c))), (a,))


def test_an_eligible_leader_replica_is_elected_cleanly_and_loses_no_committed_record():
    cluster = make()
    committed(cluster, 5)
    a, b, c = partition(cluster).replicas
    cluster.stop_broker(b)
    cluster.stop_broker(c)
    cluster.producer(acks=1).send("t", value=b"uncommitted").get()
    cluster.stop_broker(a)
    cluster.start_broker(c)
    cluster.advance(5_000)
    p = partition(cluster)
    assert (p.leader, p.isr, p.elr) == (c, (c,), (a,))
    assert not any(r.fields.get("unclean") for r in cluster.metadata_log)
    leader = cluster.leader_replica("t", 0)
    assert values(leader) == [b"c%d" % i for i in range(5)] and leader.high_watermark == 5
    cluster.start_broker(a)
    cluster.start_broker(b)
    cluster.advance(30_000)
    assert set(partition(cluster).isr) == {a, b, c}
    for broker in (a, b, c):  # a drops the record it alone had acknowledged
        assert values(cluster.brokers[broker].replicas[("t", 0)]) == values(leader)


def test_without_elr_the_partition_waits_for_its_last_leader():
    cluster = make(ELR_OFF)
    a, b, c = partition(cluster).replicas
    for broker in (b, c, a):
        cluster.stop_broker(broker)
    p = partition(cluster)
    assert (p.leader, p.isr, p.elr) == (None, (a,), ())
    cluster.start_broker(c)
    cluster.advance(5_000)
    assert partition(cluster).leader is None  # c is not in the ISR
    cluster.start_broker(a)
    cluster.advance(5_000)
    assert partition(cluster).leader == a


def test_a_crashed_replica_loses_its_place_in_the_elr():
    cluster = make()
    a, b, c = partition(cluster).replicas
    cluster.stop_broker(b)
    cluster.crash_broker(c)  # no clean shutdown file: its page cache may be gone
    cluster.advance(20_000)
    assert partition(cluster).elr == (c,)  # the controller cannot tell yet
    cluster.stop_broker(a)
    cluster.start_broker(c)
    cluster.advance(5_000)
    p = partition(cluster)
    assert (p.leader, p.elr) == (None, (a,))  # c registered after a crash: not eligible
    cluster.start_broker(a)
    cluster.advance(5_000)
    assert partition(cluster).leader == a


def test_the_last_known_leader_returns_as_leader_even_after_a_crash():
    cluster = make(**{"min.insync.replicas": "1"})
    committed(cluster, 3)
    a, b, c = partition(cluster).replicas
    cluster.stop_broker(b)
    cluster.stop_broker(c)
    cluster.crash_broker(a)
    cluster.advance(20_000)
    assert (partition(cluster).elr, partition(cluster).last_known_elr) == ((a,), (a,))
    cluster.start_broker(a)
    cluster.advance(5_000)
    p = partition(cluster)
    assert (p.leader, p.isr, p.elr, p.last_known_elr) == (a, (a,), (), ())
    assert len(values(cluster.leader_replica("t", 0))) == 3


def test_unclean_election_when_no_eligible_replica_is_alive_clears_the_elr():
    cluster = make(**{"unclean.leader.election.enable": "true"})
    a, b, c = partition(cluster).replicas
    cluster.pause_follower(b)
    cluster.producer(acks=1).send("t", value=b"x").get()
    cluster.advance(50_000)  # b falls behind and out of the ISR
    assert partition(cluster).isr == (a, c)
    cluster.stop_broker(c)
    assert partition(cluster).elr == (c,)
    cluster.stop_broker(a)
    p = partition(cluster)
    assert (p.leader, p.isr, p.elr) == (b, (b,), ())
    assert any(r.fields.get("unclean") for r in cluster.metadata_log)


def test_changing_min_isr_clears_the_elr():
    cluster = make()
    a, b, c = partition(cluster).replicas
    cluster.stop_broker(b)
    cluster.stop_broker(c)
    assert partition(cluster).elr == (c,)
    cluster.alter_topic_config("t", {"min.insync.replicas": "3"})
    assert partition(cluster).elr == ()
    assert any(r.type == "ClearElrRecord" for r in cluster.metadata_log)


def test_unknown_feature_or_level_is_refused():
    with pytest.raises(InvalidConfigurationError):
        Cluster(brokers=1, features={"transaction.version": 3})
    with pytest.raises(InvalidConfigurationError):
        Cluster(brokers=1, features={"eligible.leader.replicas.version": 2})
