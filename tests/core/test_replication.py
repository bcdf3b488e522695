"""Replication: leaders, followers, ISR, high watermark, elections and the controller."""

import pytest
from kafka.errors import NotEnoughReplicasError

from minikafka import Cluster
from minikafka.core.config import TopicConfig
from minikafka.core.records import ABORT_MARKER, RecordBatch, control_batch
from minikafka.core.replica import Replica


def make(seed=7, **config):
    # Dedicated controllers, so losing two brokers keeps a controller quorum.
    cluster = Cluster(brokers=3, seed=seed, controllers=[1001, 1002, 1003])
    cfg = {"min.insync.replicas": "2", **config}
    cluster.create_topic("t", partitions=1, replication_factor=3, config=cfg)
    return cluster


def partition(cluster):
    return cluster.describe_topic("t").partitions[0]


def test_readme_example_runs():
    cluster = Cluster(brokers=3, seed=7)
    cluster.create_topic("trucks", partitions=3, replication_factor=3,
                         config={"min.insync.replicas": "2"})
    producer = cluster.producer(acks="all")
    md = producer.send("trucks", key=b"truck-7", value=b'{"lat": 52.1}').get()
    assert (md.topic, md.offset) == ("trucks", 0)
    producer.flush()
    cluster.stop_broker(2)
    cluster.start_broker(2)
    cluster.advance(30_000)
    p = cluster.describe_topic("trucks").partitions[md.partition]
    assert p.high_watermark == p.log_end_offset == 1
    assert set(p.isr) == {1, 2, 3}


def test_followers_replicate_and_hw_follows_isr():
    cluster = make()
    producer = cluster.producer(acks="all")
    for i in range(10):
        producer.send("t", value=b"%d" % i)
    producer.flush()
    cluster.advance(1000)
    p = partition(cluster)
    assert p.high_watermark == 10
    assert all(leo == 10 for leo, _ in p.replica_offsets.values())
    assert all(hw == 10 for _, hw in p.replica_offsets.values())


def test_paused_follower_leaves_isr_after_lag_time_and_rejoins():
    cluster = make()
    producer = cluster.producer(acks=1)
    follower = next(b for b in partition(cluster).replicas if b != partition(cluster).leader)
    cluster.pause_follower(follower)
    producer.send("t", value=b"x").get()
    cluster.advance(29_000)
    assert follower in partition(cluster).isr  # not yet: replica.lag.time.max.ms is 30 s
    cluster.advance(20_000)
    assert follower not in partition(cluster).isr
    kinds = [e.kind for e in cluster.journal]
    assert "isr.shrink" in kinds
    cluster.resume_follower(follower)
    cluster.advance(1000)
    assert follower in partition(cluster).isr
    assert "isr.expand" in [e.kind for e in cluster.journal]


def test_slow_follower_that_keeps_up_stays_but_one_falling_behind_drops_out():
    cluster = make()
    producer = cluster.producer(acks=1, linger_ms=0, max_request_size=2_000_000)
    leader = partition(cluster).leader
    slow = next(b for b in partition(cluster).replicas if b != leader)
    cluster.slow_follower(slow, 3_000)
    for i in range(20):  # a trickle: each slow fetch still reaches the previous LEO
        producer.send("t", value=b"%d" % i)
        cluster.advance(1_000)
    assert slow in partition(cluster).isr
    big = b"x" * 400_000
    for _ in range(40):  # 2 MB/s against 1 MB (replica.fetch.max.bytes) per 3 s fetch
        for _ in range(5):
            producer.send("t", value=big)
        cluster.advance(1_000)
    assert slow not in partition(cluster).isr
    assert len(partition(cluster).isr) == 2


def test_combined_mode_without_quorum_cannot_shrink_isr():
    cluster = Cluster(brokers=3, seed=7)  # every broker is also a controller voter
    cluster.create_topic("t", partitions=1, replication_factor=3,
                         config={"min.insync.replicas": "2"})
    p = partition(cluster)
    for b in p.replicas:
        if b != p.leader:
            cluster.crash_broker(b)
    cluster.advance(60_000)
    assert cluster.active_controller is None
    assert partition(cluster).isr == p.isr  # nobody can fence the dead brokers


def test_not_enough_replicas_when_isr_below_min():
    cluster = make()
    producer = cluster.producer(acks="all", retries=0, enable_idempotence=False)
    p = partition(cluster)
    for b in p.replicas:
        if b != p.leader:
            cluster.crash_broker(b)
    cluster.advance(60_000)
    assert partition(cluster).isr == (p.leader,)
    with pytest.raises(NotEnoughReplicasError):
        producer.send("t", value=b"x").get()
    # acks=1 still works: durability is traded away
    assert cluster.producer(acks=1).send("t", value=b"y").get().offset == 0


def test_consumers_only_see_below_high_watermark():
    cluster = make()
    p = partition(cluster)
    for b in p.replicas:
        if b != p.leader:
            cluster.pause_follower(b)
    producer = cluster.producer(acks=1)
    producer.send("t", value=b"x").get()
    replica = cluster.leader_replica("t", 0)
    assert replica.log_end_offset == 1 and replica.high_watermark == 0
    consumer = cluster.consumer(auto_offset_reset="earliest")
    consumer.assign([("t", 0)])
    assert consumer.poll(timeout_ms=100) == {}
    for b in p.replicas:
        cluster.resume_follower(b)
    records = consumer.poll(timeout_ms=1000)
    assert [r.value for rs in records.values() for r in rs] == [b"x"]


def test_clean_stop_moves_leadership_at_once_crash_waits_for_session_timeout():
    cluster = make()
    leader = partition(cluster).leader
    cluster.stop_broker(leader)
    assert partition(cluster).leader not in (None, leader)
    cluster2 = make()
    leader2 = partition(cluster2).leader
    cluster2.crash_broker(leader2)
    cluster2.advance(8_000)
    assert partition(cluster2).leader == leader2  # broker.session.timeout.ms = 9 s
    cluster2.advance(2_000)
    assert partition(cluster2).leader not in (None, leader2)
    assert partition(cluster2).leader_epoch == 1


def test_preferred_leader_returns_after_restart():
    cluster = make()
    preferred = partition(cluster).replicas[0]
    cluster.stop_broker(preferred)
    assert partition(cluster).leader != preferred
    cluster.start_broker(preferred)
    cluster.advance(5_000)
    assert preferred in partition(cluster).isr
    cluster.elect_leaders("t")
    assert partition(cluster).leader == preferred


def test_auto_leader_rebalance_after_imbalance_interval():
    cluster = make()
    preferred = partition(cluster).replicas[0]
    cluster.stop_broker(preferred)
    cluster.start_broker(preferred)
    cluster.advance(305_000)  # leader.imbalance.check.interval.seconds = 300
    assert partition(cluster).leader == preferred


def test_acks_1_loses_write_when_leader_dies_before_followers_fetch():
    cluster = make(**{"min.insync.replicas": "1"})
    producer = cluster.producer(acks=1, linger_ms=0)
    producer.send("t", value=b"safe").get()
    cluster.advance(100)
    leader = partition(cluster).leader
    for b in partition(cluster).replicas:
        if b != leader:
            cluster.slow_follower(b, 50)  # followers a few ms behind, as on a busy cluster
    md = producer.send("t", value=b"doomed").get()  # acknowledged by the leader alone
    assert md.offset == 1
    cluster.crash_broker(leader)  # followers have not fetched it yet
    cluster.advance(10_000)
    new = cluster.leader_replica("t", 0)
    assert new.broker_id != leader and new.log_end_offset == 1
    cluster.start_broker(leader)
    cluster.advance(10_000)
    old = cluster.brokers[leader].replicas[("t", 0)]
    assert old.log_end_offset == 1  # the old leader truncated its divergent tail
    assert any(e.kind == "truncated" and e.broker == leader for e in cluster.journal)


def test_unclean_election_picks_out_of_sync_replica_and_loses_data():
    cluster = make(**{"min.insync.replicas": "1", "unclean.leader.election.enable": "true"})
    p = partition(cluster)
    laggard = p.replicas[2] if p.replicas[2] != p.leader else p.replicas[1]
    cluster.pause_follower(laggard)
    producer = cluster.producer(acks="all")
    for i in range(5):
        producer.send("t", value=b"%d" % i)
    producer.flush()
    cluster.advance(50_000)
    assert laggard not in partition(cluster).isr
    for b in p.replicas:
        if b != laggard:
            cluster.crash_broker(b)
    cluster.advance(20_000)
    now = partition(cluster)
    assert now.leader == laggard and now.isr == (laggard,)
    assert cluster.leader_replica("t", 0).log_end_offset == 0
    assert any(r.fields.get("unclean") for r in cluster.metadata_log)


def test_clean_election_leaves_partition_offline():
    cluster = make(**{"min.insync.replicas": "1"})
    p = partition(cluster)
    laggard = next(b for b in p.replicas if b != p.leader)
    cluster.pause_follower(laggard)
    cluster.producer(acks=1).send("t", value=b"x").get()
    cluster.advance(50_000)  # checked every 15 s: out after 30-45 s
    for b in p.replicas:
        if b != laggard:
            cluster.crash_broker(b)
    cluster.advance(20_000)
    assert partition(cluster).offline
    assert partition(cluster).leader is None


def test_controller_failover_and_quorum_loss():
    cluster = Cluster(brokers=3, seed=1)
    active = cluster.active_controller
    cluster.crash_broker(active)
    assert cluster.active_controller is None
    cluster.advance(4_000)
    assert cluster.active_controller not in (None, active)
    second = cluster.active_controller
    cluster.crash_broker(second)
    cluster.advance(10_000)
    assert cluster.active_controller is None  # 1 of 3 voters alive: no majority
    assert any(e.kind == "controller.unavailable" for e in cluster.journal)
    cluster.start_broker(active)
    cluster.advance(10_000)
    assert cluster.active_controller is not None


def test_isolated_leader_cannot_commit_acks_all_but_accepts_acks_1():
    cluster = make()
    leader = partition(cluster).leader
    cluster.isolate(leader)
    zombie_all = cluster.producer(acks="all", delivery_timeout_ms=20_000,
                                  request_timeout_ms=15_000)
    f_all = zombie_all.send("t", value=b"all")
    cluster.advance(5_000)
    assert not f_all.is_done  # waits: followers cannot fetch, ISR cannot shrink
    cluster.advance(30_000)
    assert partition(cluster).leader != leader  # fenced after the session timeout
    cluster.heal()
    cluster.advance(60_000)
    replica = cluster.leader_replica("t", 0)
    values = [r.value for b in replica.log.batches() for r in b.iter_records()]
    if f_all.succeeded():  # retried to the new leader: then it is there exactly once
        assert values.count(b"all") == 1


def test_zookeeper_view_is_history():
    cluster = Cluster(brokers=3)
    cluster.create_topic("t", partitions=2, replication_factor=2)
    view = cluster.zookeeper_view()
    assert sorted(view["/brokers/ids"]) == ["1", "2", "3"]
    assert view["/controller"]["brokerid"] == cluster.active_controller
    cluster.crash_broker(3)
    cluster.advance(10_000)
    assert "3" not in cluster.zookeeper_view()["/brokers/ids"]
    assert "ZooKeeper" in Cluster.zookeeper_view.__doc__


def test_metadata_log_records_every_change():
    cluster = Cluster(brokers=3)
    cluster.create_topic("t", partitions=1, replication_factor=3)
    types = [r.type for r in cluster.metadata_log]
    assert types[0] == "LeaderChangeMessage"
    assert types.count("RegisterBrokerRecord") == 3
    assert "TopicRecord" in types and "PartitionRecord" in types
    cluster.stop_broker(partition(cluster).leader if False else 1)
    assert cluster.metadata_log[-1].type in ("PartitionChangeRecord", "FenceBrokerRecord")


def test_truncating_below_an_abort_marker_reopens_the_transaction():
    """Kafka reloads producer state after a truncation: records whose marker was cut off
    belong to an open transaction again, never to a committed one."""
    replica = Replica("t", 0, 1, TopicConfig({}), 0)
    data = RecordBatch([(0, 0, b"k", b"v", ())], producer_id=7, producer_epoch=0,
                       base_sequence=0, is_transactional=True)
    marker = control_batch(ABORT_MARKER, 7, 0, 0)
    data.base_offset, marker.base_offset = 0, 1
    for batch in (data, marker):  # as a follower appends what its leader wrote
        replica.append_as_follower([batch], 0, 0)
    assert replica.producers.first_unstable_offset() is None
    assert [(a.producer_id, a.first_offset) for a in replica.producers.aborted] == [(7, 0)]
    replica.truncate_to(1)  # the marker goes
    assert replica.producers.first_unstable_offset() == 0
    assert replica.producers.aborted == []
