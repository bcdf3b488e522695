"""Lesson 14's operator views (minikafka.operations): kafka-metadata-quorum,
kafka-features, a reassignment watched on the clock, and what steady traffic suffered."""

from __future__ import annotations

import json

from kafka.structs import TopicPartition

from minikafka import Cluster
from minikafka.operations import (
    availability,
    features_describe,
    metadata_quorum_replication,
    metadata_quorum_status,
    reassignment_plan,
    reassignment_states,
    start_controller,
    steady_traffic,
    stop_controller,
)


def test_metadata_quorum_views_follow_a_controller_failover() -> None:
    c = Cluster(brokers=3, seed=14, controllers=[1001, 1002, 1003])
    status = dict(line.split(":", 1) for line in metadata_quorum_status(c).splitlines())
    leader = int(status["LeaderId"])
    assert leader in (1001, 1002, 1003) and int(status["LeaderEpoch"]) == 1
    assert json.loads(status["CurrentObservers"]) == [{"id": 1}, {"id": 2}, {"id": 3}]
    rows = {r["NodeId"]: r for r in metadata_quorum_replication(c)}
    assert rows[leader]["Status"] == "Leader" and rows[1]["Status"] == "Observer"
    assert all(r["Lag"] == 0 for r in rows.values())
    stop_controller(c, leader)
    c.advance(5_000)
    rows = {r["NodeId"]: r for r in metadata_quorum_replication(c)}
    assert rows[leader]["LogEndOffset"] is None and rows[leader]["Status"] == "Follower"
    assert c.controller.quorum.leader not in (None, leader) and c.controller.quorum.term == 2
    c.stop_broker(2)
    had = len(c.metadata_log)  # what broker 2 replayed before it stopped
    c.advance(1_000)
    rows = {r["NodeId"]: r for r in metadata_quorum_replication(c)}
    # the leader keeps the offset broker 2 last fetched to; it no longer fetches
    assert rows[2]["LogEndOffset"] == had and rows[2]["LastFetchTimestamp"] < c.now_ms
    assert rows[3]["LastFetchTimestamp"] == c.now_ms
    start_controller(c, leader)


def test_features_describe_reads_the_finalized_levels() -> None:
    line = features_describe(Cluster(brokers=1, features={"eligible.leader.replicas.version": 0}))
    assert line.startswith("Feature: eligible.leader.replicas.version          SupportedMinVersion: 0 ")
    assert "FinalizedVersionLevel: 0 " in line


def test_a_recorded_reassignment_adds_before_it_removes() -> None:
    c = Cluster(brokers=4, seed=14)
    c.create_topic("t", partitions=1, replication_factor=3, replica_assignment=[[1, 2, 3]])
    producer = c.producer(acks="all")
    for _ in range(50):
        producer.send("t", value=bytes(1_000))
    producer.flush()
    c.pause_follower(4)  # broker 4 cannot catch up yet: the move stays open a while
    c.admin().alter_partition_reassignments({TopicPartition("t", 0): [2, 3, 4]})
    c.clock.call_later(2_000, c.resume_follower, 4)
    states = reassignment_states(c, "t", 0, every_ms=500)
    first, last = states[0], states[-1]
    assert (first["ms"], first["replicas"], first["adding"], first["removing"]) == (
        0, [2, 3, 4, 1], [4], [1])
    assert first["isr"] == [1, 2, 3] and first["leader"] == 1
    assert 2_000 <= last["ms"] <= 3_000 and len(states) >= 5
    assert (last["replicas"], last["adding"], last["removing"]) == ([2, 3, 4], [], [])
    assert last["isr"] == [2, 3, 4] and last["leader"] == 2
    assert last["log end offsets"] == {2: 50, 3: 50, 4: 50}
    assert c.list_partition_reassignments() == {}
    # Nothing moving: one row.
    assert [s["replicas"] for s in reassignment_states(c, "t", 0)] == [[2, 3, 4]]
    plan = json.loads(reassignment_plan({("t", 0): [2, 3, 4]}))
    assert plan == {"version": 1, "partitions": [
        {"topic": "t", "partition": 0, "replicas": [2, 3, 4], "log_dirs": ["any"] * 3}]}


def test_availability_sees_refusals_but_no_loss() -> None:
    c = Cluster(brokers=3, seed=14, controllers=[1001, 1002, 1003])
    c.create_topic("payments", partitions=3, replication_factor=3,
                   config={"min.insync.replicas": "2"})
    traffic = steady_traffic(c, "payments", count=300)
    c.advance(2_000)
    c.stop_broker(1)
    c.stop_broker(2)  # two down: acks=all refused until one is back
    c.advance(3_000)
    c.start_broker(1)
    c.start_broker(2)
    c.advance(60_000)
    report = availability(c, traffic)
    assert report["refused"] > 0 and report["lost"] == 0 and report["failed"] == 0
    assert report["acknowledged"] == report["sent"] == 300
