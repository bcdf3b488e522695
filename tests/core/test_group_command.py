"""kafka-consumer-groups' logic (minikafka.core.group_command) over a port made of plain
dicts: what both the in-process admin and the CLI tool do, checked once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import pytest

from minikafka.core import errors
from minikafka.core.group_command import (
    EARLIEST,
    LATEST,
    GroupCommandError,
    GroupView,
    Member,
    Scenario,
    describe,
    describe_group,
    format_describe,
    reset_offsets,
)
from minikafka.core.offset_reset import NoCommittedOffset


class TP(NamedTuple):
    topic: str
    partition: int


class UnknownMemberIdError:  # a kafka-python error class, as alter_offsets answers
    errno = errors.UNKNOWN_MEMBER_ID


class NoError:
    errno = 0


class FakePort:
    """A topic "t" of three partitions holding offsets 2..10 (log start 2, end 10)."""

    def __init__(self, state: str = "Empty", committed: Mapping[TP, int] | None = None,
                 members: tuple[Member, ...] = (), refuse: bool = False,
                 group_type: str = "classic", describe_refused: Exception | None = None
                 ) -> None:
        self.state, self.members, self.refuse = state, members, refuse
        self.group_type, self.describe_refused = group_type, describe_refused
        self.committed = dict(committed or {})
        self.altered: dict[TP, int] = {}
        self.asked: list[str] = []  # the describe requests sent, in order

    def topic_partition(self, topic: str, partition: int) -> TP:
        return TP(topic, partition)

    def _describe(self, api: str, group_id: str) -> GroupView | None:
        self.asked.append(api)
        if self.describe_refused is not None:
            raise self.describe_refused
        if self.state == "Dead" or self.group_type != api:
            return None  # GROUP_ID_NOT_FOUND
        return GroupView(group_id, self.state, self.members, self.group_type)

    def consumer_group_describe(self, group_id: str) -> GroupView | None:
        return self._describe("consumer", group_id)

    def classic_group_describe(self, group_id: str) -> GroupView | None:
        return self._describe("classic", group_id)

    def committed_offsets(self, group_id: str) -> dict[TP, int]:
        return dict(self.committed)

    def list_offsets(self, partitions: Sequence[TP], spec: int) -> dict[TP, int]:
        by_time = 7 if spec == 1_000 else -1  # one record at 1000 ms, at offset 7
        return {tp: {EARLIEST: 2, LATEST: 10}.get(spec, by_time) for tp in partitions}

    def partitions_of(self, topic: str) -> list[int] | None:
        return [0, 1, 2] if topic == "t" else None

    def alter_offsets(self, group_id: str, offsets: Mapping[TP, int]) -> dict[TP, Any]:
        if self.refuse:
            return dict.fromkeys(offsets, UnknownMemberIdError)
        self.altered.update(offsets)
        return dict.fromkeys(offsets, NoError)


def test_describe_has_lag_per_partition_and_idle_members_last():
    owner = Member("m-1", "/127.0.0.1", "app", (TP("t", 0),))
    idle = Member("m-2", "/127.0.0.1", "spare")
    found = describe(FakePort("Stable", {TP("t", 0): 4, TP("t", 1): 12}, (owner, idle)), "g")
    assert [(r.partition, r.current_offset, r.log_end_offset, r.lag, r.consumer_id)
            for r in found.rows] == [(0, 4, 10, 6, "m-1"), (1, 12, 10, 0, None)]
    assert found.idle_members == [idle]
    lines = format_describe(found.rows, found.idle_members, "g").splitlines()
    # Kafka's printf layout: %-15s for GROUP, %-10s for PARTITION, the last column as is.
    assert lines[0] == ("GROUP           TOPIC           PARTITION  CURRENT-OFFSET  "
                        "LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            "
                        "CLIENT-ID")
    assert lines[2].split() == ["g", "t", "1", "12", "10", "0", "-", "-", "-"]
    assert lines[3].split() == ["g", "-", "-", "-", "-", "-", "m-2", "/127.0.0.1", "spare"]


def test_describe_of_an_unknown_group_says_it_does_not_exist():
    with pytest.raises(GroupCommandError, match="Consumer group 'g' does not exist.") as info:
        describe(FakePort("Dead"), "g")
    assert info.value.code == errors.GROUP_ID_NOT_FOUND


@pytest.mark.parametrize(("scenario", "expected", "said"), [
    (Scenario(to_earliest=True), [2, 2, 2], []),
    (Scenario(to_latest=True), [10, 10, 10], []),
    (Scenario(to_current=True), [5, 9, 10], []),  # none committed: the log end
    (Scenario(to_datetime=1_000), [7, 7, 7], []),
    (Scenario(to_datetime=2_000), [10, 10, 10], []),  # nothing that late: the log end
    (Scenario(by_duration="PT1S"), [7, 7, 7], []),  # now_ms 2000 minus one second
    (Scenario(to_offset=99), [10, 10, 10],
     ["New offset (99) is higher than latest offset for topic partition t-0. "
      "Value will be set to 10"]),
    (Scenario(to_offset=0), [2, 2, 2],
     ["New offset (0) is lower than earliest offset for topic partition t-0. "
      "Value will be set to 2"]),
])
def test_reset_scenarios_and_the_range_check(scenario, expected, said):
    port = FakePort(committed={TP("t", 0): 5, TP("t", 1): 9})
    warnings: list[str] = []
    plan = reset_offsets(port, "g", ["t"], scenario, now_ms=2_000, warn=warnings.append)
    assert list(plan.values()) == expected and port.altered == {}  # a dry run
    assert warnings[:1] == said


def test_shift_by_clamps_and_needs_a_committed_offset():
    port = FakePort(committed={TP("t", 0): 5, TP("t", 1): 9})
    plan = reset_offsets(port, "g", ["t:0,1"], Scenario(shift_by=3), now_ms=0, execute=True)
    assert plan == port.altered == {TP("t", 0): 8, TP("t", 1): 10}
    with pytest.raises(NoCommittedOffset, match="Cannot shift offset for partition t-2 since "
                                                "there is no current committed offset"):
        reset_offsets(port, "g", ["t"], Scenario(shift_by=-1), now_ms=0)


def test_reset_refusals():
    with pytest.raises(GroupCommandError, match=(
            "Assignments can only be reset if the group 'g' is inactive, but the current "
            "state is Stable.")) as info:
        reset_offsets(FakePort("Stable"), "g", None, Scenario(to_earliest=True), now_ms=0)
    assert info.value.code == errors.NON_EMPTY_GROUP
    with pytest.raises(GroupCommandError, match="Topic 'nope' does not exist."):
        reset_offsets(FakePort(), "g", ["nope"], Scenario(to_earliest=True), now_ms=0)
    with pytest.raises(ValueError, match="exactly one"):
        reset_offsets(FakePort(), "g", None, Scenario(to_earliest=True, shift_by=1), now_ms=0)
    with pytest.raises(ValueError, match="Error parsing timestamp"):
        reset_offsets(FakePort(), "g", ["t"], Scenario(to_datetime="yesterday"), now_ms=0)
    refused = FakePort(committed={TP("t", 0): 5}, refuse=True)
    with pytest.raises(GroupCommandError, match="Resetting offsets of group 'g' failed for "
                                                "t-0: UnknownMemberIdError"):
        reset_offsets(refused, "g", None, Scenario(to_earliest=True), now_ms=0, execute=True)
    # A dead group (never seen) may be reset: --all-topics then covers nothing.
    assert reset_offsets(FakePort("Dead"), "g", None, Scenario(to_latest=True), now_ms=0) == {}


class GroupAuthorizationFailedError(Exception):
    """What a port raises for a describe the broker refused (kafka-python's class)."""


def test_a_group_is_asked_with_consumer_group_describe_first_then_describe_groups():
    """Kafka's DescribeConsumerGroupsHandler: ConsumerGroupDescribe, and DescribeGroups
    only for a group it answers GROUP_ID_NOT_FOUND for."""
    consumer = FakePort("Stable", group_type="consumer")
    assert describe_group(consumer, "g").group_type == "consumer"
    assert consumer.asked == ["consumer"]
    classic = FakePort("Stable")
    assert describe_group(classic, "g").group_type == "classic"
    assert classic.asked == ["consumer", "classic"]
    unknown = FakePort("Dead")
    with pytest.raises(GroupCommandError, match="Consumer group 'g' does not exist."):
        describe_group(unknown, "g")
    assert unknown.asked == ["consumer", "classic"]


@pytest.mark.parametrize("group_type", ["consumer", "classic"])
def test_an_active_group_of_either_protocol_is_not_reset(group_type):
    """A KIP-848 group's state comes from ConsumerGroupDescribe (DescribeGroups would call
    it Dead), so an active one is refused before anything is committed."""
    port = FakePort("Stable", committed={TP("t", 0): 5}, group_type=group_type)
    with pytest.raises(GroupCommandError, match="the current state is Stable.") as info:
        reset_offsets(port, "g", None, Scenario(to_earliest=True), now_ms=0, execute=True)
    assert info.value.code == errors.NON_EMPTY_GROUP and port.altered == {}
    port.state = "Empty"
    assert reset_offsets(port, "g", None, Scenario(to_earliest=True), now_ms=0,
                         execute=True) == port.altered == {TP("t", 0): 2}


def test_a_refused_describe_stops_describe_and_reset():
    """An authorization error is the answer, not a missing group: nothing is read or
    committed after it."""
    for call in (lambda p: describe(p, "g"),
                 lambda p: reset_offsets(p, "g", None, Scenario(to_earliest=True), now_ms=0,
                                         execute=True)):
        port = FakePort(committed={TP("t", 0): 5},
                        describe_refused=GroupAuthorizationFailedError("g"))
        with pytest.raises(GroupAuthorizationFailedError):
            call(port)
        assert port.asked == ["consumer"] and port.altered == {}
