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
    format_describe,
    not_found,
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
                 members: tuple[Member, ...] = (), refuse: bool = False) -> None:
        self.state, self.members, self.refuse = state, members, refuse
        self.committed = dict(committed or {})
        self.altered: dict[TP, int] = {}

    def topic_partition(self, topic: str, partition: int) -> TP:
        return TP(topic, partition)

    def describe_group(self, group_id: str) -> GroupView:
        if self.state == "Dead":
            raise not_found(group_id)
        return GroupView(group_id, self.state, self.members)

    def group_state(self, group_id: str) -> str:
        return self.state

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
