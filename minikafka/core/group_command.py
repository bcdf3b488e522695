"""kafka-consumer-groups' logic (Kafka's ConsumerGroupCommand): --describe with lag and
--reset-offsets with its scenarios, range check and refusals, over a GroupCommandPort.

The in-process admin (``cluster.admin().describe_consumer_group()``, ``reset_offsets()``)
and the ``consumer-groups`` tool (kafka-python over the wire) each adapt their admin
client to the port, so both doors describe, refuse and reset the same way: a group is
described with ConsumerGroupDescribe, or DescribeGroups for a classic one
(describe_group), and each request gets the broker's authorization checks. Partitions
are whatever the port makes with ``topic_partition()`` (kafka-python's TopicPartition
in both doors): anything hashable and sortable with ``.topic`` and ``.partition``.

    >>> plan_offset(Scenario(shift_by=-2), earliest=2, latest=9, committed=5)
    3
    >>> plan_offset(Scenario(to_offset=99), earliest=2, latest=9, committed=5)
    9
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Protocol

from . import errors
from .offset_reset import NoCommittedOffset, parse_datetime, parse_duration, target_offset

# ListOffsets' special timestamps (OffsetSpec.EARLIEST / LATEST).
EARLIEST = -2
LATEST = -1
INACTIVE_STATES = ("Empty", "Dead")
MISSING = "-"


class GroupCommandError(errors.KafkaCoreError):
    """A refusal of the tool's, with Kafka's error code and the tool's message."""


@dataclass(frozen=True)
class Member:
    """A member as --describe shows it: who it is and the partitions it owns."""

    member_id: str
    client_host: str
    client_id: str
    partitions: tuple[Any, ...] = ()
    member_epoch: int = -1  # a consumer group's (KIP-848); -1 in a classic group
    target: tuple[Any, ...] = ()  # a consumer group's target assignment


@dataclass(frozen=True)
class GroupView:
    """A group as Kafka's Admin.describeConsumerGroups answers: its type ("consumer" for a
    KIP-848 group, "classic"), state, assignor (a classic group's protocol) and members."""

    group_id: str
    state: str
    members: tuple[Member, ...] = ()
    group_type: str = "classic"
    assignor: str = ""
    assignment_epoch: int = -1


@dataclass(frozen=True)
class PartitionLag:
    """One row of ``kafka-consumer-groups --describe``."""

    group: str
    topic: str
    partition: int
    current_offset: int | None  # the committed offset; None if the group never committed
    log_end_offset: int | None  # the high watermark: what a read_uncommitted consumer reaches
    lag: int | None
    consumer_id: str | None
    host: str | None
    client_id: str | None


@dataclass(frozen=True)
class Description:
    """--describe's rows: one per partition committed or assigned, and the members that
    own no partition (Kafka prints them last, with "-" for the partition columns)."""

    rows: list[PartitionLag]
    idle_members: list[Member] = field(default_factory=list)


class GroupCommandPort(Protocol):
    """What the tool needs of an admin client."""

    def topic_partition(self, topic: str, partition: int) -> Any:
        """The door's partition key."""

    def consumer_group_describe(self, group_id: str) -> GroupView | None:
        """ConsumerGroupDescribe: None where the coordinator answers GROUP_ID_NOT_FOUND
        (no such group, or a classic one); any other error raised as kafka-python's."""

    def classic_group_describe(self, group_id: str) -> GroupView | None:
        """DescribeGroups: None for a group that does not exist (GROUP_ID_NOT_FOUND, or
        state Dead from a broker before 4.0); any other error raised as kafka-python's."""

    def committed_offsets(self, group_id: str) -> Mapping[Any, int]:
        """The group's committed offset per partition (only those it committed)."""

    def list_offsets(self, partitions: Sequence[Any], spec: int) -> dict[Any, int]:
        """ListOffsets: EARLIEST, LATEST or a timestamp (ms) for each partition."""

    def partitions_of(self, topic: str) -> list[int] | None:
        """The topic's partition numbers, None if it does not exist."""

    def alter_offsets(self, group_id: str, offsets: Mapping[Any, int]) -> Mapping[Any, Any]:
        """Commit as the admin (OffsetCommit, generation -1): {tp: kafka-python error
        class}, NoError (errno 0) where it was taken."""


def not_found(group_id: str) -> GroupCommandError:
    return GroupCommandError(errors.GROUP_ID_NOT_FOUND,
                             f"Consumer group '{group_id}' does not exist.")


def describe_group(port: GroupCommandPort, group_id: str) -> GroupView:
    """Kafka's Admin.describeConsumerGroups (DescribeConsumerGroupsHandler): every group is
    asked with ConsumerGroupDescribe first, and one it answers GROUP_ID_NOT_FOUND for (a
    classic group, or none) again with DescribeGroups; GROUP_ID_NOT_FOUND (not_found) for
    a group neither knows."""
    group = port.consumer_group_describe(group_id)
    if group is None:
        group = port.classic_group_describe(group_id)
    if group is None:
        raise not_found(group_id)
    return group


def group_state(port: GroupCommandPort, group_id: str) -> str:
    """The state --reset-offsets checks: describe_group's, "Dead" for an unknown group
    (Kafka's tool resets a group it gets GroupIdNotFoundException for)."""
    try:
        return describe_group(port, group_id).state
    except GroupCommandError as exc:
        if exc.code == errors.GROUP_ID_NOT_FOUND:
            return "Dead"
        raise


def describe(port: GroupCommandPort, group_id: str, group: GroupView | None = None
             ) -> Description:
    """--describe --group: committed offset, log end offset (high watermark) and lag of
    each partition the group committed or is assigned; lag is never negative. `group`:
    describe_group's answer, if the caller has it already."""
    group = group if group is not None else describe_group(port, group_id)
    owners = {tp: m for m in group.members for tp in m.partitions}
    committed = port.committed_offsets(group_id)
    partitions = sorted(set(committed) | set(owners))
    ends = port.list_offsets(partitions, LATEST) if partitions else {}
    rows = []
    for tp in partitions:
        current, end, owner = committed.get(tp), ends.get(tp), owners.get(tp)
        lag = None if current is None or end is None else max(end - current, 0)
        rows.append(PartitionLag(group_id, tp.topic, tp.partition, current, end, lag,
                                 owner.member_id if owner else None,
                                 owner.client_host if owner else None,
                                 owner.client_id if owner else None))
    return Description(rows, [m for m in group.members if not m.partitions])


def format_describe(rows: Iterable[PartitionLag], idle_members: Iterable[Member] = (),
                    group_id: str = "") -> str:
    """The table kafka-consumer-groups prints for --describe, in Kafka's printf layout
    (which the tool prints after an empty line)."""
    def cell(value: Any) -> str:
        return MISSING if value is None or value == "" else str(value)

    body = [[r.group, r.topic, str(r.partition), cell(r.current_offset), cell(r.log_end_offset),
             cell(r.lag), cell(r.consumer_id), cell(r.host), cell(r.client_id)] for r in rows]
    body += [[group_id, MISSING, MISSING, MISSING, MISSING, MISSING, m.member_id,
              m.client_host, m.client_id] for m in idle_members]
    return table(["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                  "CONSUMER-ID", "HOST", "CLIENT-ID"], body,
                 [15, 15, 10, 15, 15, 15, 15, 15, None]).lstrip("\n")


def table(head: list[str], rows: list[list[str]], minimum: list[int | None]) -> str:
    """Kafka's tables ("\\n%-15s %-15s ..."): columns with a minimum width stretch to their
    longest cell; None: as is. Every line starts with a newline, as Kafka's format makes it."""
    widths: list[int | None] = [
        None if m is None else max([m, *(len(r[i]) for r in rows)])
        for i, m in enumerate(minimum)]
    return "".join("\n" + " ".join(c if w is None else c.ljust(w) for c, w in zip(r, widths))
                   for r in [head, *rows])


# -- --reset-offsets -----------------------------------------------------------------------

@dataclass(frozen=True)
class Scenario:
    """The one reset scenario: --to-earliest, --to-latest, --to-current, --to-offset,
    --shift-by, --to-datetime (str, datetime or epoch ms) or --by-duration (ISO-8601
    string or timedelta)."""

    to_earliest: bool = False
    to_latest: bool = False
    to_current: bool = False
    to_offset: int | None = None
    shift_by: int | None = None
    to_datetime: Any = None
    by_duration: Any = None

    def chosen(self) -> list[str]:
        # `is`, not `in (None, False)`: --to-offset 0 and --shift-by 0 are chosen too.
        return [name for name, value in vars(self).items()
                if value is not None and value is not False]

    def timestamp(self, now_ms: int) -> int | None:
        """The time --to-datetime / --by-duration name, in epoch ms; None for the others."""
        if self.to_datetime is not None:
            try:
                return parse_datetime(self.to_datetime)
            except ValueError as exc:
                raise ValueError(f"Error parsing timestamp: {exc}") from exc
        if self.by_duration is not None:
            duration = self.by_duration if isinstance(self.by_duration, timedelta) else \
                parse_duration(str(self.by_duration))
            return now_ms - int(duration.total_seconds() * 1000)
        return None


def plan_offset(scenario: Scenario, *, earliest: int, latest: int, committed: int | None,
                found: int | None = None, tp: Any = None,
                warn: Callable[[str], None] | None = None) -> int:
    """One partition's new offset. --to-offset and --shift-by then get Kafka's
    checkOffsetsRange: clamped into [earliest, latest], saying so through ``warn``."""
    try:
        target = target_offset(
            earliest=earliest, latest=latest, committed=committed,
            to_earliest=scenario.to_earliest, to_latest=scenario.to_latest,
            to_current=scenario.to_current, to_offset=scenario.to_offset,
            shift_by=scenario.shift_by, found=found)
    except NoCommittedOffset:
        raise NoCommittedOffset(f"Cannot shift offset for partition {name(tp)} since there "
                                "is no current committed offset") from None
    if scenario.to_offset is None and scenario.shift_by is None:
        return target
    if target < earliest:
        if warn:
            warn(f"New offset ({target}) is lower than earliest offset for topic partition "
                 f"{name(tp)}. Value will be set to {earliest}")
        return earliest
    if target > latest:
        if warn:
            warn(f"New offset ({target}) is higher than latest offset for topic partition "
                 f"{name(tp)}. Value will be set to {latest}")
        return latest
    return target


def name(tp: Any) -> str:
    """A partition as Java's TopicPartition prints it: orders-0."""
    return f"{tp.topic}-{tp.partition}" if tp is not None else "?"


def partitions_to_reset(port: GroupCommandPort, topics: Iterable[Any] | None,
                        committed: Mapping[Any, int]) -> list[Any]:
    """--all-topics (None: every partition the group committed) or --topic items: names
    (all their partitions), "topic:0,2" strings or partitions."""
    if topics is None:
        return sorted(committed)
    if isinstance(topics, str):
        topics = [topics]
    out = set()
    for item in topics:
        if hasattr(item, "topic") and hasattr(item, "partition"):
            out.add(port.topic_partition(item.topic, item.partition))
            continue
        topic, _, parts = str(item).partition(":")
        if parts:
            out.update(port.topic_partition(topic, int(p)) for p in parts.split(","))
            continue
        numbers = port.partitions_of(topic)
        if numbers is None:
            raise GroupCommandError(errors.UNKNOWN_TOPIC_OR_PARTITION,
                                    f"Topic '{topic}' does not exist.")
        out.update(port.topic_partition(topic, p) for p in numbers)
    return sorted(out)


def reset_offsets(port: GroupCommandPort, group_id: str, topics: Iterable[Any] | None,
                  scenario: Scenario, *, now_ms: int, execute: bool = False,
                  warn: Callable[[str], None] | None = None) -> dict[Any, int]:
    """--reset-offsets for one group: the new offset per partition (the plan the tool
    prints), committed when ``execute``. Refused with NON_EMPTY_GROUP and Kafka's message
    while the group has members."""
    chosen = scenario.chosen()
    if len(chosen) != 1:
        raise ValueError("--reset-offsets needs exactly one of to_earliest, to_latest, "
                         "to_offset, shift_by, to_datetime, by_duration, to_current; "
                         f"got {chosen or 'none'}")
    state = group_state(port, group_id)
    if state not in INACTIVE_STATES:
        raise GroupCommandError(errors.NON_EMPTY_GROUP,
                                f"Assignments can only be reset if the group '{group_id}' is "
                                f"inactive, but the current state is {state}.")
    committed = port.committed_offsets(group_id)
    partitions = partitions_to_reset(port, topics, committed)
    if not partitions:
        return {}
    ts = scenario.timestamp(now_ms)
    earliest = port.list_offsets(partitions, EARLIEST)
    latest = port.list_offsets(partitions, LATEST)
    found = port.list_offsets(partitions, ts) if ts is not None else {}
    plan = {tp: plan_offset(scenario, earliest=earliest[tp], latest=latest[tp],
                            committed=committed.get(tp), found=found.get(tp), tp=tp, warn=warn)
            for tp in partitions}
    if execute:
        result = port.alter_offsets(group_id, plan)
        failed = sorted((tp, e) for tp, e in result.items() if getattr(e, "errno", 0))
        if failed:
            tp, err = failed[0]
            raise GroupCommandError(err.errno, f"Resetting offsets of group '{group_id}' "
                                               f"failed for {name(tp)}: {err.__name__}")
    return plan
