"""The admin client's group methods and the course's kafka-consumer-groups.sh view."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from group_helpers import TOPIC, consumer, drain
from kafka.admin import MemberToRemove, OffsetSpec, OffsetTimestamp
from kafka.errors import (
    GroupIdNotFoundError,
    GroupSubscribedToTopicError,
    KafkaConfigurationError,
    NoError,
    NonEmptyGroupError,
    UnknownMemberIdError,
    UnknownTopicOrPartitionError,
)
from kafka.structs import OffsetAndMetadata, TopicPartition

from minikafka.client.admin import GroupInformation, format_describe
from minikafka.cluster import Cluster, settle_group
from minikafka.core.offset_reset import format_reset_plan

TPS = [TopicPartition(TOPIC, p) for p in range(3)]


@pytest.fixture
def cluster() -> Cluster:
    cluster = Cluster(brokers=3, seed=9)
    cluster.create_topic(TOPIC, partitions=3, replication_factor=3)
    produce(cluster, 10)
    return cluster


def produce(cluster: Cluster, per_partition: int) -> None:
    producer = cluster.producer()
    for p in range(3):
        for i in range(per_partition):
            producer.send(TOPIC, value=f"{p}:{i}".encode(), partition=p)
            cluster.advance(1_000)  # one record a second: timestamps to reset by
    producer.flush()


def commit_then_close(cluster: Cluster, offsets: dict[int, int], group_id: str = "billing"):
    c = consumer(cluster, group_id=group_id)
    settle_group([c])
    c.commit({TopicPartition(TOPIC, p): OffsetAndMetadata(o, "", -1)
              for p, o in offsets.items()})
    c.close()


def committed(admin, group_id: str = "billing") -> dict[int, int]:
    return {tp.partition: o.offset
            for tp, o in admin.list_consumer_group_offsets(group_id).items()}


# -- listing and describing ---------------------------------------------------------------------

def test_list_and_describe_groups_in_kafka_python_3_and_2_shapes(cluster):
    a, b = consumer(cluster, "a"), consumer(cluster, "b")
    settle_group([a, b])
    commit_then_close(cluster, {0: 1}, group_id="reports")
    admin = cluster.admin()
    assert admin.list_groups() == [
        {"group_id": "billing", "protocol_type": "consumer", "group_state": "Stable",
         "group_type": "classic"},
        {"group_id": "reports", "protocol_type": "consumer", "group_state": "Empty",
         "group_type": "classic"}]
    assert admin.list_groups(states_filter=["Empty"])[0]["group_id"] == "reports"
    assert admin.list_consumer_groups() == [("billing", "consumer"), ("reports", "consumer")]
    coordinator = cluster.groups.find_coordinator("billing")
    assert [gid for gid, _ in admin.list_consumer_groups(broker_ids=[coordinator])] == \
        [gid for gid in ("billing", "reports")
         if cluster.groups.find_coordinator(gid) == coordinator]

    described = admin.describe_groups(["billing"])["billing"]
    assert (described["group_state"], described["protocol_type"], described["protocol_data"],
            described["error"]) == ("Stable", "consumer", "range", None)
    members = {m["client_id"]: m for m in described["members"]}
    assert set(members) == {"a", "b"}
    assert members["a"]["member_id"] == a._group.member_id
    assert members["a"]["member_metadata"].topics == [TOPIC]
    assert set(members["a"]["member_assignment"].partitions()) == a.assignment()

    (info,) = admin.describe_consumer_groups(["billing"])
    assert isinstance(info, GroupInformation)
    assert (info.group, info.state, info.protocol) == ("billing", "Stable", "range")
    assert sorted(m.client_id for m in info.members) == ["a", "b"]
    assert admin.describe_groups(["nobody"])["nobody"]["group_state"] == "Dead"


def test_unknown_admin_config_is_refused(cluster):
    with pytest.raises(KafkaConfigurationError):
        cluster.admin(not_a_setting=1)


def test_lag_per_partition_and_per_group(cluster):
    c = consumer(cluster)
    settle_group([c])
    c.commit({TPS[0]: OffsetAndMetadata(10, "", -1), TPS[1]: OffsetAndMetadata(4, "", -1)})
    admin = cluster.admin()
    assert admin.lag("billing") == {TPS[0]: 0, TPS[1]: 6, TPS[2]: None}
    assert admin.total_lag("billing") == 6
    produce(cluster, 2)  # the log grows: lag grows with it
    assert admin.lag("billing") == {TPS[0]: 2, TPS[1]: 8, TPS[2]: None}
    rows = admin.describe_consumer_group("billing")
    assert [(r.partition, r.current_offset, r.log_end_offset, r.lag) for r in rows] == \
        [(0, 10, 12, 2), (1, 4, 12, 8), (2, None, 12, None)]
    assert {r.consumer_id for r in rows} == {c._group.member_id}
    table = format_describe(rows).splitlines()
    assert table[0].split() == ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET",
                                "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"]
    assert table[3].split()[3:6] == ["-", "12", "-"]


def test_list_partition_offsets(cluster):
    admin = cluster.admin()
    earliest = admin.list_partition_offsets({TPS[0]: OffsetSpec.EARLIEST})[TPS[0]]
    latest = admin.list_partition_offsets({TPS[0]: OffsetSpec.LATEST})[TPS[0]]
    assert (earliest.offset, latest.offset) == (0, 10)
    ts = drain(consumer(cluster, group_id="peek"))[3].timestamp
    found = admin.list_partition_offsets({TPS[0]: ts})[TPS[0]]
    assert found.offset == 3 and found.timestamp == ts


# -- resetting offsets --------------------------------------------------------------------------

def test_reset_is_refused_while_the_group_has_members(cluster):
    c = consumer(cluster)
    settle_group([c])
    c.commit()
    admin = cluster.admin()
    with pytest.raises(NonEmptyGroupError, match=(
            "Assignments can only be reset if the group 'billing' is inactive, "
            "but the current state is Stable.")):
        admin.reset_offsets("billing", to_earliest=True, execute=True)
    # The admin API underneath: the coordinator refuses commits from outside the group.
    result = admin.alter_group_offsets("billing", {TPS[0]: OffsetAndMetadata(0, "", -1)})
    assert result == {TPS[0]: UnknownMemberIdError}


def test_dry_run_shows_the_plan_and_changes_nothing(cluster):
    commit_then_close(cluster, {0: 5, 1: 5, 2: 5})
    admin = cluster.admin()
    plan = admin.reset_offsets("billing", to_earliest=True)
    assert plan == dict.fromkeys(TPS, 0)
    assert committed(admin) == {0: 5, 1: 5, 2: 5}
    assert format_reset_plan("billing", plan).splitlines()[1].split() == \
        ["billing", TOPIC, "0", "0"]


def test_shift_by_minus_two_replays_two_records_per_partition(cluster):
    commit_then_close(cluster, {0: 10, 1: 7, 2: 4})
    admin = cluster.admin()
    assert admin.reset_offsets("billing", shift_by=-2, execute=True) == \
        {TPS[0]: 8, TPS[1]: 5, TPS[2]: 2}
    replayed = drain(consumer(cluster, "again"))
    by_partition = {p: [r.offset for r in replayed if r.partition == p] for p in range(3)}
    assert by_partition == {0: [8, 9], 1: list(range(5, 10)), 2: list(range(2, 10))}
    assert [r.value for r in replayed if r.partition == 0] == [b"0:8", b"0:9"]


@pytest.mark.parametrize(("scenario", "expected"), [
    ({"to_earliest": True}, {0: 0, 1: 0, 2: 0}),
    ({"to_latest": True}, {0: 10, 1: 10, 2: 10}),
    ({"to_offset": 3}, {0: 3, 1: 3, 2: 3}),
    ({"to_offset": 99}, {0: 10, 1: 10, 2: 10}),  # clamped to the log end offset
    ({"shift_by": 3}, {0: 8, 1: 9, 2: 10}),
    ({"shift_by": -9}, {0: 0, 1: 0, 2: 0}),  # clamped to the log start offset
    ({"to_current": True}, {0: 5, 1: 6, 2: 7}),
])
def test_reset_scenarios(cluster, scenario, expected):
    commit_then_close(cluster, {0: 5, 1: 6, 2: 7})
    admin = cluster.admin()
    plan = admin.reset_offsets("billing", **scenario, execute=True)
    assert {tp.partition: o for tp, o in plan.items()} == expected
    assert committed(admin) == expected


def test_reset_by_time(cluster):
    commit_then_close(cluster, {0: 10, 1: 10, 2: 10})
    admin = cluster.admin()
    records = drain(consumer(cluster, group_id="peek"))
    ts = {(r.partition, r.offset): r.timestamp for r in records}
    when = datetime.fromtimestamp(ts[(1, 4)] / 1000, tz=UTC)
    plan = admin.reset_offsets("billing", [f"{TOPIC}:1"], to_datetime=when.isoformat())
    assert plan == {TPS[1]: 4}
    # by_duration counts back from the cluster's (simulated) now.
    ago = cluster.now_ms - ts[(2, 7)]
    assert admin.reset_offsets("billing", [TOPIC], by_duration=timedelta(milliseconds=ago)) \
        [TPS[2]] == 7
    seconds = ago // 1000 + 1
    plan = admin.reset_offsets("billing", [TPS[2]], by_duration=f"PT{seconds}S")
    assert plan[TPS[2]] in (6, 7)  # whole seconds: up to a second earlier
    future = admin.reset_offsets("billing", to_datetime=cluster.now_ms + 60_000)
    assert set(future.values()) == {10}  # nothing that late: the log end


def test_reset_needs_exactly_one_scenario_and_a_commit_to_shift(cluster):
    commit_then_close(cluster, {0: 5})
    admin = cluster.admin()
    with pytest.raises(ValueError, match="exactly one"):
        admin.reset_offsets("billing", to_earliest=True, to_latest=True)
    with pytest.raises(ValueError, match="no current committed offset"):
        admin.reset_offsets("billing", [TOPIC], shift_by=-1)


def test_the_admin_refuses_as_the_tool_does(cluster):
    """minikafka.core.group_command's refusals, with the tool's messages, as kafka-python's
    errors (the same logic serves the consumer-groups CLI)."""
    commit_then_close(cluster, {0: 5})
    admin = cluster.admin()
    with pytest.raises(ValueError, match=f"Cannot shift offset for partition {TOPIC}-1 since "
                                         "there is no current committed offset"):
        admin.reset_offsets("billing", [TOPIC], shift_by=-1)
    with pytest.raises(UnknownTopicOrPartitionError, match="Topic 'missing' does not exist."):
        admin.reset_offsets("billing", ["missing"], to_earliest=True)
    with pytest.raises(GroupIdNotFoundError, match="Consumer group 'nobody' does not exist."):
        admin.describe_consumer_group("nobody")
    assert admin.reset_offsets("billing", [TPS[0]], to_offset=0) == {TPS[0]: 0}


def test_kafka_python_reset_group_offsets(cluster):
    commit_then_close(cluster, {0: 5, 1: 5, 2: 5})
    admin = cluster.admin()
    result = admin.reset_group_offsets("billing", {TPS[0]: OffsetSpec.EARLIEST, TPS[1]: 42,
                                                   TPS[2]: OffsetTimestamp(0)})
    assert result == {TPS[0]: {"error": NoError, "offset": 0},
                      TPS[1]: {"error": NoError, "offset": 10},
                      TPS[2]: {"error": NoError, "offset": 0}}


# -- deleting ------------------------------------------------------------------------------------

def test_delete_groups(cluster):
    c = consumer(cluster)
    settle_group([c])
    commit_then_close(cluster, {0: 3}, group_id="old-job")
    admin = cluster.admin()
    assert admin.delete_groups(["billing", "old-job", "never-was"]) == {
        "billing": "NonEmptyGroupError", "old-job": "OK", "never-was": "GroupIdNotFoundError"}
    assert admin.list_consumer_group_offsets("old-job") == {}
    assert [gid for gid, _ in admin.list_consumer_groups()] == ["billing"]


def test_delete_group_offsets_refuses_a_subscribed_topic(cluster):
    cluster.create_topic("refunds", partitions=1, replication_factor=3)
    c = consumer(cluster)
    settle_group([c])
    refunds = TopicPartition("refunds", 0)
    c.commit({TPS[0]: OffsetAndMetadata(2, "", -1), refunds: OffsetAndMetadata(1, "", -1)})
    admin = cluster.admin()
    assert admin.delete_group_offsets("billing", [TPS[0], refunds]) == {
        TPS[0]: GroupSubscribedToTopicError, refunds: NoError}
    assert committed(admin) == {0: 2}


def test_remove_a_static_member_without_waiting_for_its_session(cluster):
    a = consumer(cluster, "a", group_instance_id="host-a")
    b = consumer(cluster, "b", group_instance_id="host-b")
    settle_group([a, b])
    b.close()  # static: no LeaveGroup, the group still counts it
    admin = cluster.admin()
    assert len(admin.describe_groups(["billing"])["billing"]["members"]) == 2
    assert admin.remove_group_members(
        "billing", [MemberToRemove(group_instance_id="host-b")]) == {"host-b": NoError}
    settle_group([a])
    assert len(a.assignment()) == 3
