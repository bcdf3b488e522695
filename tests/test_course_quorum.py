"""minikafka.course.quorum prints kafka-metadata-quorum's two layouts from a Cluster."""

from __future__ import annotations

from minikafka import Cluster
from minikafka.course.quorum import describe_replication, describe_status, quorum_replicas


def _status(cluster: Cluster) -> dict[str, str]:
    return {k: v.strip() for k, v in (line.split(":", 1)
                                      for line in describe_status(cluster).splitlines())}


def test_voters_observers_and_a_dead_voter() -> None:
    cluster = Cluster(brokers=4, seed=3)
    end = len(cluster.metadata_log)
    status = _status(cluster)
    assert status["LeaderId"] == str(cluster.active_controller) and status["LeaderEpoch"] == "1"
    assert status["HighWatermark"] == str(end)
    assert status["CurrentVoters"] == '[{"id": 1}, {"id": 2}, {"id": 3}]'
    assert status["CurrentObservers"] == '[{"id": 4}]'
    assert [r.status for r in quorum_replicas(cluster)] == ["Leader", "Follower", "Follower",
                                                            "Observer"]
    follower = next(r.node_id for r in quorum_replicas(cluster) if r.status == "Follower")
    assert all(r.fetching for r in quorum_replicas(cluster))
    before = len(cluster.metadata_log)
    cluster.crash_broker(follower)
    cluster.create_topic("t", partitions=1, replication_factor=1)
    cluster.advance(1_000)
    dead = next(r for r in quorum_replicas(cluster) if r.node_id == follower)
    end = len(cluster.metadata_log)
    # The leader keeps the offset a replica last fetched to: it stops fetching, falls behind.
    assert end > before
    assert (dead.log_end_offset, dead.lag, dead.fetching) == (before, end - before, False)
    assert _status(cluster)["MaxFollowerLag"] == str(end - before)
    rows = describe_replication(cluster).splitlines()
    assert rows[0].split() == ["NodeId", "LogEndOffset", "Lag", "Status"] and len(rows) == 5


def test_no_majority_no_status() -> None:
    cluster = Cluster(brokers=3, seed=3)
    for b in (1, 2):
        cluster.crash_broker(b)
    cluster.advance(15_000)
    assert describe_status(cluster).startswith("Error: no active controller")
    assert describe_replication(cluster) == describe_status(cluster)


def test_a_replica_that_has_not_fetched_from_the_new_leader_is_unknown_to_it() -> None:
    cluster = Cluster(brokers=3, seed=3)
    first = cluster.active_controller
    cluster.crash_broker(first)
    cluster.advance(15_000)  # another voter is elected; the crashed one never fetched from it
    [old] = [r for r in quorum_replicas(cluster) if r.node_id == first]
    end = len(cluster.metadata_log)
    # Kafka's view of a replica the new leader has not heard from: offset -1, lag the whole
    # log plus one.
    assert (old.log_end_offset, old.lag, old.status, old.fetching) == (-1, end + 1, "Follower",
                                                                       False)


def test_the_quorum_picture_draws_every_replica_and_its_fetches() -> None:
    from minikafka.viz.quorum import quorum_state, quorum_view

    cluster = Cluster(brokers=5, seed=1)
    cluster.crash_broker(cluster.active_controller)
    cluster.advance(15_000)
    state = quorum_state(cluster)
    leader = state["leader"]
    statuses = {r["node"]: r["status"] for r in state["replicas"]}
    assert statuses[leader] == "Leader" and statuses[1] == "Unreachable"
    assert statuses[4] == statuses[5] == "Observer"
    source = quorum_view(state, cluster.controller.quorum.voters).source
    # Four fetch arrows into the leader, the dead voter's dotted.
    assert source.count(f"-> n{leader}") == 4 and source.count("style=dotted") == 1
    assert f"epoch {state['epoch']}" in source
    for voter in (2, 3):  # with broker 1, every voter is down
        cluster.crash_broker(voter)
    cluster.advance(15_000)
    dark = quorum_state(cluster)
    assert dark["leader"] is None and "no active controller" in quorum_view(dark, (1, 2, 3)).source
