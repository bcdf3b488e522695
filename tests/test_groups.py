"""Consumer groups: the coordinator's state machine and the members' side of it.

Every scenario runs on the simulated clock, so "45 seconds later" costs nothing and
the same seed gives the same member ids, generations and assignments.
"""

from __future__ import annotations

import pytest
from kafka.consumer.subscription_state import ConsumerRebalanceListener
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from kafka.errors import (
    CommitFailedError,
    FencedInstanceIdError,
    GroupMaxSizeReachedError,
    IllegalStateError,
    InconsistentGroupProtocolError,
    InvalidSessionTimeoutError,
    KafkaConfigurationError,
)
from kafka.structs import MemberState

from minikafka.client.group import parse_assignors, rebalance_protocol
from minikafka.cluster import Cluster, settle_group
from minikafka.core.assignors import RebalanceProtocol
from minikafka.core.groups import classic as g

TOPIC = "orders"


def cluster_with(partitions: int = 3, records_per_partition: int = 0, brokers: int = 3,
                 seed: int = 7, **broker_config) -> Cluster:
    cluster = Cluster(brokers=brokers, seed=seed, broker_config=broker_config or None)
    cluster.create_topic(TOPIC, partitions=partitions,
                         replication_factor=min(3, brokers))
    if records_per_partition:
        producer = cluster.producer()
        for p in range(partitions):
            for i in range(records_per_partition):
                producer.send(TOPIC, value=f"{p}:{i}".encode(), partition=p)
        producer.flush()
    return cluster


def consumer(cluster: Cluster, name: str, group_id: str = "billing", **config):
    config.setdefault("auto_offset_reset", "earliest")
    return cluster.consumer(TOPIC, group_id=group_id, client_id=name, **config)


def assignment(c) -> list[int]:
    return sorted(tp.partition for tp in c.assignment())


class Recorder(ConsumerRebalanceListener):
    def __init__(self) -> None:
        self.events: list[tuple[str, list[int]]] = []

    def on_partitions_revoked(self, revoked):
        self.events.append(("revoked", sorted(tp.partition for tp in revoked)))

    def on_partitions_assigned(self, assigned):
        self.events.append(("assigned", sorted(tp.partition for tp in assigned)))

    def on_partitions_lost(self, lost):
        self.events.append(("lost", sorted(tp.partition for tp in lost)))


def group_state(cluster: Cluster, group_id: str = "billing") -> str:
    return cluster.groups.groups[group_id].state


def poll_for(consumers, ms: int, step: int = 200) -> None:
    """Poll every consumer round-robin for `ms` of simulated time."""
    cluster = consumers[0].cluster
    end = cluster.now_ms + ms
    while cluster.now_ms < end:
        for c in consumers:
            c.poll(timeout_ms=step)


# -- the state machine as data ------------------------------------------------------------------

def test_transition_table_gives_kafkas_valid_previous_states():
    # ClassicGroupState's static block in Kafka's group coordinator.
    assert g.valid_previous_states() == {
        g.EMPTY: {g.PREPARING_REBALANCE},
        g.PREPARING_REBALANCE: {g.STABLE, g.COMPLETING_REBALANCE, g.EMPTY},
        g.COMPLETING_REBALANCE: {g.PREPARING_REBALANCE},
        g.STABLE: {g.COMPLETING_REBALANCE},
        g.DEAD: {g.STABLE, g.PREPARING_REBALANCE, g.COMPLETING_REBALANCE, g.EMPTY},
    }
    assert {t for _, t in g.TRANSITIONS} == set(g.TRIGGERS)


def test_the_table_is_enforced():
    group = g.Group("x", 0)
    assert group.fire(g.JOIN, 5) == (g.EMPTY, g.PREPARING_REBALANCE)
    assert (group.previous_state, group.state_since_ms) == (g.EMPTY, 5)
    with pytest.raises(RuntimeError, match="no transition from PreparingRebalance"):
        group.fire(g.LEADER_SYNC, 6)
    assert group.fire(g.JOIN, 7) == (g.PREPARING_REBALANCE, g.PREPARING_REBALANCE)
    assert group.previous_state == g.EMPTY  # a self-loop is not a new state


def test_every_state_change_in_a_run_follows_the_table():
    cluster = cluster_with()
    members = [consumer(cluster, f"c{i}") for i in range(3)]
    settle_group(members)
    members[0].close()
    members[1].crash()
    poll_for(members[2:], 60_000)
    changes = [(e.previous, e.trigger, e.state) for e in cluster.journal.of_kind("group.state")]
    assert changes and all(g.TRANSITIONS[(a, t)] == b for a, t, b in changes)
    assert (g.STABLE, g.LEAVE, g.PREPARING_REBALANCE) in changes


# -- configuration -----------------------------------------------------------------------------

def test_consumer_defaults_are_kafka_4():
    cluster = cluster_with()
    c = consumer(cluster, "c")
    cfg = c.config
    assert (cfg["session_timeout_ms"], cfg["heartbeat_interval_ms"], cfg["max_poll_interval_ms"],
            cfg["auto_commit_interval_ms"], cfg["auto_offset_reset"]) == \
        (45_000, 3_000, 300_000, 5_000, "earliest")  # earliest is set by this test's helper
    assert cluster.consumer(TOPIC, group_id="x").config["auto_offset_reset"] == "latest"
    member = c._group
    # Java's default [RangeAssignor, CooperativeStickyAssignor]: range keeps it eager.
    assert member.assignors == ["range", "cooperative-sticky"]
    assert member.protocol == RebalanceProtocol.EAGER
    assert member.rebalance_timeout_ms == 300_000  # the rebalance timeout is max.poll.interval


def test_assignor_names_and_protocols():
    assert parse_assignors([RangePartitionAssignor, RoundRobinPartitionAssignor]) == \
        ["range", "roundrobin"]
    assert parse_assignors("org.apache.kafka.clients.consumer.CooperativeStickyAssignor") == \
        ["cooperative-sticky"]
    assert rebalance_protocol(["cooperative-sticky"]) == RebalanceProtocol.COOPERATIVE
    assert rebalance_protocol(["sticky", "cooperative-sticky"]) == RebalanceProtocol.EAGER
    cluster = cluster_with()
    with pytest.raises(KafkaConfigurationError, match="unknown assignor"):
        consumer(cluster, "c", partition_assignment_strategy=["fair-share"])
    with pytest.raises(KafkaConfigurationError, match="heartbeat_interval_ms"):
        consumer(cluster, "c", heartbeat_interval_ms=50_000)


def test_session_timeout_outside_broker_bounds_is_refused():
    cluster = cluster_with()
    c = consumer(cluster, "c", session_timeout_ms=3_000, heartbeat_interval_ms=1_000)
    with pytest.raises(InvalidSessionTimeoutError):
        c.poll(timeout_ms=1_000)


def test_poll_without_subscription_raises():
    cluster = cluster_with()
    c = cluster.consumer(group_id="billing")
    with pytest.raises(IllegalStateError):
        c.poll(timeout_ms=100)


# -- joining -----------------------------------------------------------------------------------

def test_first_join_waits_for_the_initial_rebalance_delay_and_hands_out_ids():
    cluster = cluster_with()
    start = cluster.now_ms
    c = consumer(cluster, "alpha")
    settle_group([c])
    member = c._group
    assert member.member_id.startswith("alpha-") and len(member.member_id) == len("alpha-") + 36
    assert member.generation == 1 and member.leader_id == member.member_id
    assert assignment(c) == [0, 1, 2]
    stable = cluster.journal.of_kind("group.state")[-1]
    assert stable.state == g.STABLE
    # group.initial.rebalance.delay.ms (3 s) before generation 1 could start.
    first_join = cluster.journal.of_kind("group.state")[0]
    assert first_join.previous == g.EMPTY and first_join.time_ms - start < 100
    assert stable.time_ms - first_join.time_ms >= 3_000
    # KIP-394: the first JoinGroup gets MEMBER_ID_REQUIRED and the member comes back.
    joins = [e for e in cluster.journal.of_kind("consumer.join") if e.client == "alpha"]
    assert [e.member for e in joins] == ["", member.member_id]
    assert c.group_metadata().state == MemberState.STABLE


def test_the_same_seed_gives_the_same_member_ids():
    def run():
        cluster = cluster_with(seed=11)
        cs = [consumer(cluster, f"c{i}") for i in range(2)]
        settle_group(cs)
        return [c._group.member_id for c in cs], [assignment(c) for c in cs]

    assert run() == run()


def test_three_partitions_five_consumers_leaves_two_idle():
    cluster = cluster_with(partitions=3, records_per_partition=4)
    cs = [consumer(cluster, f"c{i}") for i in range(5)]
    got = settle_group(cs)
    assignments = [assignment(c) for c in cs]
    assert sorted(len(a) for a in assignments) == [0, 0, 1, 1, 1]
    assert sorted(p for a in assignments for p in a) == [0, 1, 2]
    idle = [c for c in cs if not c.assignment()]
    assert len(idle) == 2
    for c in cs:
        for records in c.poll(timeout_ms=1_000).values():
            got[cs.index(c)].extend(records)
    assert [len(r) for i, r in enumerate(got) if cs[i] in idle] == [0, 0]
    assert sorted(r.value for rs in got for r in rs) == sorted(
        f"{p}:{i}".encode() for p in range(3) for i in range(4))


def test_rebalance_on_join_bumps_the_generation_and_splits_partitions():
    cluster = cluster_with(partitions=4)
    a = consumer(cluster, "a")
    settle_group([a])
    assert (a._group.generation, assignment(a)) == (1, [0, 1, 2, 3])
    b = consumer(cluster, "b")
    settle_group([a, b])
    assert a._group.generation == b._group.generation == 2
    assert sorted(assignment(a) + assignment(b)) == [0, 1, 2, 3]
    assert len(assignment(a)) == len(assignment(b)) == 2


def test_a_rebalance_waits_for_members_that_do_not_poll():
    cluster = cluster_with()
    a, b = consumer(cluster, "a"), consumer(cluster, "b")
    settle_group([a, b])
    c = consumer(cluster, "c")
    poll_for([c], 60_000)  # only the newcomer polls: the others never rejoin
    assert group_state(cluster) == g.PREPARING_REBALANCE
    assert c.assignment() == set()
    # Its JoinGroup is parked at the coordinator (up to the rebalance timeout, 300 s), not
    # timed out and resent after request_timeout_ms (30 s).
    assert len([e for e in cluster.journal.of_kind("consumer.join") if e.client == "c"]) == 2
    settle_group([a, b, c])
    assert sorted(p for x in (a, b, c) for p in assignment(x)) == [0, 1, 2]


def test_leave_on_close_rebalances_at_once():
    cluster = cluster_with()
    a, b = consumer(cluster, "a"), consumer(cluster, "b")
    settle_group([a, b])
    before = cluster.now_ms
    b.close()
    settle_group([a])
    assert assignment(a) == [0, 1, 2]
    removed = cluster.journal.of_kind("group.member.removed")[-1]
    assert removed.reason == "the consumer is being closed"
    assert cluster.now_ms - before < 5_000  # no session timeout involved


def test_crashed_member_is_removed_after_session_timeout():
    cluster = cluster_with()
    a, b = consumer(cluster, "a"), consumer(cluster, "b")
    settle_group([a, b])
    crashed_at = cluster.now_ms
    b.crash()
    poll_for([a], 40_000)
    assert group_state(cluster) == g.STABLE and len(assignment(a)) < 3  # not noticed yet
    poll_for([a], 10_000)
    removed = cluster.journal.of_kind("group.member.removed")[-1]
    assert removed.reason.startswith("session timeout")
    # The last heartbeat came at most heartbeat.interval.ms before the crash.
    assert 45_000 - 3_000 <= removed.time_ms - crashed_at <= 45_000
    settle_group([a])
    assert assignment(a) == [0, 1, 2]


def test_a_consumer_that_stops_polling_is_kicked_out_after_max_poll_interval():
    cluster = cluster_with(records_per_partition=5)
    listener = Recorder()
    a = consumer(cluster, "a", max_poll_interval_ms=20_000)
    b = consumer(cluster, "b", max_poll_interval_ms=20_000)
    b.subscribe([TOPIC], listener=listener)
    settle_group([a, b])
    owned = assignment(b)
    stuck_at = cluster.now_ms
    poll_for([a], 25_000)  # b is alive (heartbeats go on) but busy: no poll()
    timeout = cluster.journal.of_kind("consumer.poll_timeout")[-1]
    assert timeout.client == "b" and 20_000 < timeout.time_ms - stuck_at <= 23_000
    settle_group([a])
    assert assignment(a) == [0, 1, 2]
    with pytest.raises(CommitFailedError):
        b.commit()
    settle_group([a, b])  # b polls again: it lost its partitions and rejoins
    assert owned and ("lost", owned) in listener.events


def test_subscription_change_rebalances():
    cluster = cluster_with()
    cluster.create_topic("refunds", partitions=2, replication_factor=3)
    a, b = consumer(cluster, "a"), consumer(cluster, "b")
    settle_group([a, b])
    generation = a._group.generation
    b.subscribe([TOPIC, "refunds"])
    settle_group([a, b])
    assert a._group.generation > generation
    assert {tp.topic for tp in b.assignment()} == {TOPIC, "refunds"}
    assert [tp for tp in a.assignment() if tp.topic == "refunds"] == []


def test_new_partitions_are_picked_up_after_metadata_max_age():
    cluster = cluster_with(partitions=2)
    a, b = consumer(cluster, "a"), consumer(cluster, "b")
    settle_group([a, b])
    generation = a._group.generation
    cluster.create_partitions(TOPIC, 4)
    poll_for([a, b], 60_000)
    assert a._group.generation == generation  # nobody has refreshed metadata yet
    poll_for([a, b], 300_000)  # metadata.max.age.ms: the leader notices and rejoins
    settle_group([a, b])
    assert a._group.generation > generation
    assert sorted(assignment(a) + assignment(b)) == [0, 1, 2, 3]


def test_pattern_subscription_picks_up_a_new_topic():
    cluster = cluster_with()
    a = cluster.consumer(group_id="audit", client_id="a", auto_offset_reset="earliest")
    a.subscribe(pattern="^orders.*")
    settle_group([a])
    cluster.create_topic("orders-eu", partitions=1, replication_factor=3)
    poll_for([a], 310_000, step=5_000)
    settle_group([a])
    assert {tp.topic for tp in a.assignment()} == {TOPIC, "orders-eu"}


def test_inconsistent_protocols_are_refused():
    cluster = cluster_with()
    a = consumer(cluster, "a", partition_assignment_strategy=["range"])
    settle_group([a])
    b = consumer(cluster, "b", partition_assignment_strategy=["roundrobin"])
    with pytest.raises(InconsistentGroupProtocolError):
        for _ in range(10):
            b.poll(timeout_ms=500)


def test_group_max_size():
    cluster = cluster_with(**{"group.max.size": 2})
    cs = [consumer(cluster, f"c{i}") for i in range(2)]
    settle_group(cs)
    third = consumer(cluster, "c2")
    with pytest.raises(GroupMaxSizeReachedError):
        for _ in range(10):
            third.poll(timeout_ms=500)


# -- static membership -------------------------------------------------------------------------

def test_static_member_restart_within_session_timeout_keeps_partitions_without_rebalance():
    cluster = cluster_with(partitions=4)
    a = consumer(cluster, "a", group_instance_id="host-a")
    b = consumer(cluster, "b", group_instance_id="host-b")
    settle_group([a, b])
    before = (a._group.generation, assignment(a), assignment(b))
    changes = len(cluster.journal.of_kind("group.state"))
    b.close()  # a static member does not send LeaveGroup
    poll_for([a], 20_000)
    b2 = consumer(cluster, "b", group_instance_id="host-b")
    settle_group([a, b2])
    assert (a._group.generation, assignment(a), assignment(b2)) == before
    assert len(cluster.journal.of_kind("group.state")) == changes  # no rebalance at all
    replaced = cluster.journal.of_kind("group.member.replaced")[-1]
    assert replaced.instance == "host-b" and replaced.member == b2._group.member_id
    assert b2._group.member_id.startswith("host-b-")


def test_static_member_gone_longer_than_session_timeout_is_replaced_by_a_rebalance():
    cluster = cluster_with(partitions=4)
    a = consumer(cluster, "a", group_instance_id="host-a")
    b = consumer(cluster, "b", group_instance_id="host-b")
    settle_group([a, b])
    generation = a._group.generation
    b.close()
    poll_for([a], 50_000)
    settle_group([a])
    assert a._group.generation > generation and assignment(a) == [0, 1, 2, 3]


def test_a_second_instance_with_the_same_id_fences_the_first():
    cluster = cluster_with()
    a = consumer(cluster, "a", group_instance_id="host-a")
    settle_group([a])
    twin = consumer(cluster, "twin", group_instance_id="host-a")
    settle_group([twin])
    with pytest.raises(FencedInstanceIdError):
        poll_for([a], 10_000)


# -- eager and cooperative ---------------------------------------------------------------------

def test_eager_rebalance_revokes_everything_first():
    cluster = cluster_with(partitions=4)
    listener = Recorder()
    a = cluster.consumer(group_id="billing", client_id="a",
                         partition_assignment_strategy=["range"])
    a.subscribe([TOPIC], listener=listener)
    settle_group([a])
    b = consumer(cluster, "b", partition_assignment_strategy=["range"])
    settle_group([a, b])
    assert listener.events == [("assigned", [0, 1, 2, 3]), ("revoked", [0, 1, 2, 3]),
                               ("assigned", assignment(a))]


def test_cooperative_rebalance_keeps_unmoved_partitions_and_takes_two_rounds():
    cluster = cluster_with(partitions=4)
    listener = Recorder()
    a = cluster.consumer(group_id="billing", client_id="a",
                         partition_assignment_strategy=["cooperative-sticky"])
    a.subscribe([TOPIC], listener=listener)
    settle_group([a])
    generation = a._group.generation
    b = consumer(cluster, "b", partition_assignment_strategy=["cooperative-sticky"])
    settle_group([a, b])
    moved = assignment(b)
    assert len(moved) == 2 and sorted(assignment(a) + moved) == [0, 1, 2, 3]
    # Only what moves is revoked; the new owner gets it in a second generation. Java calls
    # on_partitions_assigned after every rebalance, with nothing new here.
    assert listener.events == [("assigned", [0, 1, 2, 3]), ("revoked", moved),
                               ("assigned", []), ("assigned", [])]
    assert a._group.generation == generation + 2


# -- the group's view --------------------------------------------------------------------------

def test_group_metadata_is_kafka_pythons():
    cluster = cluster_with()
    c = consumer(cluster, "c")
    assert c.group_metadata().state == MemberState.UNJOINED
    settle_group([c])
    meta = c.group_metadata()
    assert (meta.group_id, meta.generation_id, meta.member_id, meta.state) == \
        ("billing", 1, c._group.member_id, MemberState.STABLE)
    plain = cluster.consumer(TOPIC)
    assert plain.group_metadata().group_id is None


def test_snapshot_shows_members_and_assignments():
    cluster = cluster_with()
    cs = [consumer(cluster, f"c{i}") for i in range(2)]
    settle_group(cs)
    snap = cluster.groups.snapshot()["billing"]
    assert snap["state"] == g.STABLE and snap["generation"] == 1 and snap["protocol"] == "range"
    assigned = sorted(p for m in snap["members"].values() for p in m["assignment"])
    assert assigned == ["orders-0", "orders-1", "orders-2"]


def test_a_long_poll_on_an_idle_topic_is_not_a_poll_timeout():
    cluster = cluster_with()
    c = consumer(cluster, "c", enable_auto_commit=False, max_poll_interval_ms=20_000)
    settle_group([c])
    generation = c._group.generation
    assert c.poll(timeout_ms=60_000) == {}  # blocked in poll() three times the interval
    assert cluster.journal.of_kind("consumer.poll_timeout") == []
    assert c._group.generation == generation and assignment(c) == [0, 1, 2]


def test_sticky_keeps_partitions_where_they_were_across_an_eager_rebalance():
    cluster = cluster_with(partitions=6)
    cs = [consumer(cluster, f"c{i}", partition_assignment_strategy=["sticky"]) for i in range(3)]
    settle_group(cs)
    before = {c.config["client_id"]: set(assignment(c)) for c in cs}
    cs[2].close()
    settle_group(cs[:2])
    for c in cs[:2]:
        # Everything revoked first (eager), yet the previous owner gets it back: the
        # leader read each member's previous assignment from its user data.
        assert before[c.config["client_id"]] < set(assignment(c))
    assert sorted(assignment(cs[0]) + assignment(cs[1])) == list(range(6))


def test_the_first_auto_commit_is_due_one_interval_after_the_assignment():
    cluster = cluster_with(records_per_partition=5)
    a = consumer(cluster, "a")  # enable_auto_commit, auto_commit_interval_ms 5000
    settle_group([a])
    assigned = cluster.journal.of_kind("consumer.assigned")[-1].time_ms
    assert assigned - cluster.journal.of_kind("consumer.join")[0].time_ms >= 3_000
    poll_for([a], 10_000)
    first = cluster.journal.of_kind("offsets.committed")[0]
    # ConsumerCoordinator.onJoinComplete reschedules the auto-commit from the assignment.
    assert 5_000 <= first.time_ms - assigned <= 5_300


def test_closing_during_the_first_join_leaves_the_group_at_once():
    cluster = cluster_with()
    a, b = consumer(cluster, "a"), consumer(cluster, "b")
    a.poll(timeout_ms=100)  # a has a member id but no generation yet (the initial delay)
    b.poll(timeout_ms=100)
    assert a._group.member_id and a._group.generation == -1
    closed_at = cluster.now_ms
    a.close()
    removed = cluster.journal.of_kind("group.member.removed")[-1]
    assert removed.reason == "the consumer is being closed" and removed.time_ms - closed_at < 100
    settle_group([b])
    assert assignment(b) == [0, 1, 2] and cluster.now_ms - closed_at < 10_000


def test_closing_after_a_poll_timeout_reports_the_partitions_lost():
    cluster = cluster_with()
    listener = Recorder()
    a = consumer(cluster, "a")
    b = consumer(cluster, "b", max_poll_interval_ms=20_000)
    b.subscribe([TOPIC], listener=listener)
    settle_group([a, b])
    owned = assignment(b)
    poll_for([a], 25_000)  # b stops polling and is kicked out
    b.close()
    assert owned and listener.events[-1] == ("lost", owned)
