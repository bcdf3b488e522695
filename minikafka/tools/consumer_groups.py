"""minikafka consumer-groups: kafka-consumer-groups.sh over kafka-python.

    minikafka consumer-groups --bootstrap-server localhost:9092 --list
    minikafka consumer-groups --bootstrap-server localhost:9092 --describe --group billing
    minikafka consumer-groups --bootstrap-server localhost:9092 --describe --group billing --members
    minikafka consumer-groups --bootstrap-server localhost:9092 --describe --group billing --state
    minikafka consumer-groups --bootstrap-server localhost:9092 --reset-offsets \\
        --group billing --topic orders --shift-by -2 --execute
    minikafka consumer-groups --bootstrap-server localhost:9092 --delete --group billing

--describe prints Kafka's columns (GROUP TOPIC PARTITION CURRENT-OFFSET
LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID) in Kafka's layout; LOG-END-OFFSET is
the high watermark, LAG the distance from the committed offset to it. A reset is
refused, with Kafka's message, while the group has members; without --execute it is
a dry run that prints the plan. --to-datetime without a zone is taken as UTC, as
Kafka takes it (Utils.getDateTime appends the Z).

--list and --all-groups take consumer groups only, as Kafka 4.x's tool does
(ListGroupsOptions.forConsumerGroups()): groups of type classic or consumer whose
protocol type is "consumer" or empty, so share groups (kafka-share-groups), streams
groups and Kafka Connect's worker groups are left out.

A consumer group of type consumer (KIP-848, ``group.protocol=consumer``) is described
with ConsumerGroupDescribe, as Kafka's tool does; ``--members --verbose`` adds each
member's epoch and current and target assignment.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ..core import errors, group_command
from ..core.group_command import MISSING, GroupView, Member, table
from ..core.offset_reset import format_reset_plan
from ._common import (
    ToolError,
    add_bootstrap,
    admin_client,
    kafka_message,
    one_line_errors,
    run_tool,
)

SCENARIOS = ("to_earliest", "to_latest", "to_current", "to_offset", "shift_by",
             "to_datetime", "by_duration")
NO_EXECUTE_WARNING = (
    "WARN: No action will be performed as the --execute option is missing. In a future "
    "major release, the default behavior of this command will be to prompt the user before "
    "executing the reset rather than doing a dry run. You should add the --dry-run option "
    "explicitly if you are scripting this command and want to keep the current default "
    "behavior without prompting.")


# ListGroupsOptions.forConsumerGroups(): the group types asked for (ListGroups v5's
# TypesFilter) and the protocol types kept of the answer.
CONSUMER_GROUP_TYPES = ("classic", "consumer")
CONSUMER_PROTOCOL_TYPES = ("", "consumer")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "consumer-groups", help="list and describe consumer groups, their lag, reset their "
                                "offsets (kafka-consumer-groups.sh)",
        description="List, describe, delete consumer groups and reset their offsets, like "
                    "kafka-consumer-groups.sh.")
    one_line_errors(p)
    add_bootstrap(p)
    actions = p.add_argument_group("actions (exactly one)")
    actions.add_argument("--list", action="store_true", help="list the groups")
    actions.add_argument("--describe", action="store_true",
                         help="committed offsets and lag per partition (or --members, --state)")
    actions.add_argument("--reset-offsets", action="store_true",
                         help="change where an inactive group will start reading")
    actions.add_argument("--delete", action="store_true", help="delete inactive groups")
    p.add_argument("--group", action="append", default=[],
                   help="the group (repeatable for --describe and --delete)")
    p.add_argument("--all-groups", action="store_true", help="every group")
    p.add_argument("--members", action="store_true", help="with --describe: the members")
    p.add_argument("--verbose", action="store_true",
                   help="with --describe --members: epochs and target assignments "
                        "(consumer groups)")
    p.add_argument("--state", nargs="?", const="", default=None, metavar="STATE",
                   help="with --describe: the group's state and coordinator; with --list: "
                        "show states, or only groups in STATE")
    p.add_argument("--topic", action="append", default=[],
                   help="with --reset-offsets: a topic, or topic:0,1 for some partitions "
                        "(repeatable)")
    p.add_argument("--all-topics", action="store_true",
                   help="with --reset-offsets: every partition the group has committed")
    scenario = p.add_argument_group("reset scenarios (exactly one, with --reset-offsets)")
    scenario.add_argument("--to-earliest", action="store_true", help="the earliest offset")
    scenario.add_argument("--to-latest", action="store_true", help="the log end offset")
    scenario.add_argument("--to-current", action="store_true", help="the committed offset")
    scenario.add_argument("--to-offset", type=int, help="this offset")
    scenario.add_argument("--shift-by", type=int, metavar="N",
                          help="the committed offset plus N (negative: replay)")
    scenario.add_argument("--to-datetime", metavar="YYYY-MM-DDTHH:mm:SS.sss",
                          help="the first offset at or after this time (UTC unless a zone "
                               "is given)")
    scenario.add_argument("--by-duration", metavar="PnDTnHnMnS",
                          help="the first offset at or after now minus this duration")
    p.add_argument("--dry-run", action="store_true", help="only print the plan (the default)")
    p.add_argument("--execute", action="store_true", help="commit the new offsets")
    p.set_defaults(run=run, parser=p)


def run(args: argparse.Namespace) -> int:
    actions = [a for a in ("list", "describe", "reset_offsets", "delete") if getattr(args, a)]
    if len(actions) != 1:
        args.parser.error("Command must include exactly one action: --list, --describe, "
                          "--delete, --reset-offsets")
    action = actions[0]
    if action != "list" and not args.group and not args.all_groups:
        args.parser.error(f"Option [{action.replace('_', '-')}] takes one of these options: "
                          "[all-groups], [group]")
    if action == "reset_offsets":
        chosen = [s for s in SCENARIOS if getattr(args, s) is not None and
                  getattr(args, s) is not False]
        if len(chosen) != 1:
            args.parser.error("Option [reset-offsets] takes exactly one of these options: "
                              "--to-earliest, --to-latest, --to-current, --to-offset, "
                              "--shift-by, --to-datetime, --by-duration")
        if not args.topic and not args.all_topics:
            args.parser.error("One of the reset scopes should be defined: --all-topics, --topic.")
        if args.dry_run and args.execute:
            args.parser.error("Option [reset-offsets] takes at most one of these options: "
                              "--dry-run, --execute")
    return run_tool(lambda: _run(action, args))


def _run(action: str, args: argparse.Namespace) -> int:
    admin = admin_client(args.bootstrap_server)
    try:
        groups = args.group
        if action != "list" and args.all_groups:
            groups = [g["group_id"] for g in consumer_groups(admin)]
        if action == "list":
            return _list(admin, args)
        if action == "describe":
            return _describe(admin, args, groups)
        if action == "delete":
            return _delete(admin, groups)
        return _reset(admin, args, groups)
    finally:
        admin.close()


# -- --list ----------------------------------------------------------------------------

def consumer_groups(admin: Any) -> list[dict]:
    """The consumer groups, by id, as kafka-consumer-groups --list finds them."""
    listed = admin.list_groups(types_filter=list(CONSUMER_GROUP_TYPES))
    return sorted((g for g in listed if (g.get("protocol_type") or "") in CONSUMER_PROTOCOL_TYPES),
                  key=lambda g: g["group_id"])


def _list(admin: Any, args: argparse.Namespace) -> int:
    groups = consumer_groups(admin)
    if args.state is None:
        for g in groups:
            print(g["group_id"])
        return 0
    wanted = {s.strip().lower() for s in args.state.split(",") if s.strip()}
    rows = [[g["group_id"], g.get("group_state") or "Unknown"] for g in groups
            if not wanted or (g.get("group_state") or "").lower() in wanted]
    print(table(["GROUP", "STATE"], rows, [15, None]).lstrip("\n"))
    return 0


# -- --describe ------------------------------------------------------------------------

def _assignment_text(partitions: Sequence[Any]) -> str:
    """Kafka's CURRENT-ASSIGNMENT cell: topic:0,1 per topic, or -."""
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return ";".join(f"{t}:{','.join(map(str, sorted(ps)))}" for t, ps in by_topic.items()) \
        or MISSING


class WireGroupPort:
    """kafka-consumer-groups' port (minikafka.core.group_command) over kafka-python's
    KafkaAdminClient, so the tool describes and resets as the in-process admin does."""

    def __init__(self, admin: Any) -> None:
        self.admin = admin

    def topic_partition(self, topic: str, partition: int) -> Any:
        from kafka import TopicPartition

        return TopicPartition(topic, partition)

    def consumer_group_describe(self, group_id: str) -> GroupView | None:
        """ConsumerGroupDescribe (API 69, which kafka-python's admin lacks: minikafka's
        message class) to the group's coordinator."""
        from kafka import TopicPartition
        from kafka.errors import for_code

        from ..wire.messages import ConsumerGroupDescribeRequest

        admin = self.admin

        async def ask() -> Any:
            coordinator = await admin._find_coordinator_id(group_id)
            request = ConsumerGroupDescribeRequest(group_ids=[group_id],
                                                   include_authorized_operations=False)
            return await admin._manager.send(request, node_id=coordinator)

        [found] = admin._manager.run(ask).groups
        if found.error_code == errors.GROUP_ID_NOT_FOUND:
            return None
        if found.error_code:
            raise for_code(found.error_code)(found.error_message or group_id)

        def partitions(assignment: Any) -> tuple[Any, ...]:
            return tuple(sorted(TopicPartition(t.topic_name, p)
                                for t in assignment.topic_partitions for p in t.partitions))

        return GroupView(group_id, found.group_state, tuple(
            Member(m.member_id, m.client_host, m.client_id, partitions(m.assignment),
                   m.member_epoch, partitions(m.target_assignment)) for m in found.members),
            "consumer", found.assignor_name, found.assignment_epoch)

    def classic_group_describe(self, group_id: str) -> GroupView | None:
        from kafka import TopicPartition
        from kafka.errors import for_code

        d = self.admin.describe_groups([group_id])[group_id]
        code = _error_code(d.get("error"))
        if code == errors.GROUP_ID_NOT_FOUND or (not code and d["group_state"] == "Dead"):
            return None
        if code:
            raise for_code(code)(group_id)

        def assigned(member: dict) -> tuple[Any, ...]:
            assignment = member.get("member_assignment")
            if not isinstance(assignment, dict):  # not the consumer protocol's
                return ()
            return tuple(sorted(TopicPartition(t["topic"], p)
                                for t in assignment.get("assigned_partitions", [])
                                for p in t["partitions"]))

        return GroupView(group_id, d["group_state"], tuple(
            Member(m["member_id"], m["client_host"], m["client_id"], assigned(m))
            for m in d["members"]), "classic", d.get("protocol_data") or "")

    def committed_offsets(self, group_id: str) -> dict[Any, int]:
        return {tp: o.offset for tp, o in self.admin.list_group_offsets(group_id)[group_id].items()}

    def list_offsets(self, partitions: Sequence[Any], spec: int) -> dict[Any, int]:
        """Metadata, then ListOffsets, as Kafka's Admin.listOffsets: a topic's refusal
        (TOPIC_AUTHORIZATION_FAILED) fails the call, where kafka-python's own would
        report the topic it could not see as unknown."""
        from kafka.admin import OffsetSpec, OffsetTimestamp

        for topic in sorted({tp.topic for tp in partitions}):
            self.partitions_of(topic)
        kind = {group_command.EARLIEST: OffsetSpec.EARLIEST,
                group_command.LATEST: OffsetSpec.LATEST}.get(spec) or OffsetTimestamp(spec)
        found = self.admin.list_partition_offsets(dict.fromkeys(partitions, kind))
        return {tp: o.offset for tp, o in found.items()}

    def partitions_of(self, topic: str) -> list[int] | None:
        from kafka.errors import for_code

        described = self.admin.describe_topics([topic])[0]
        code = described["error_code"]
        if code == errors.UNKNOWN_TOPIC_OR_PARTITION:
            return None
        if code:
            raise for_code(code)(f"Topic '{topic}'")
        return [p["partition_index"] for p in described["partitions"]]

    def alter_offsets(self, group_id: str, offsets: Mapping[Any, int]) -> Mapping[Any, Any]:
        from kafka.structs import OffsetAndMetadata

        return self.admin.alter_group_offsets(
            group_id, {tp: OffsetAndMetadata(o, "", -1) for tp, o in offsets.items()})


def _error_code(error: str | None) -> int:
    """The code of kafka-python's describe_groups error text ("[Error 69] ...")."""
    match = re.match(r"\[Error (-?\d+)\]", error or "")
    return int(match.group(1)) if match else 0


def _describe(admin: Any, args: argparse.Namespace, groups: list[str]) -> int:
    from kafka.errors import KafkaError

    failed = False
    port = WireGroupPort(admin)
    for group in groups:
        try:
            described = group_command.describe_group(port, group)
        except (KafkaError, group_command.GroupCommandError) as exc:
            print(f"\nError: {kafka_message(exc)}", file=sys.stderr)
            failed = True
            continue
        state = described.state
        members = described.members
        if args.state is not None:
            print(_statetable(admin, group, described))
            continue
        if state == "Empty":
            print(f"\nConsumer group '{group}' has no active members.", file=sys.stderr)
        elif state in ("PreparingRebalance", "CompletingRebalance"):
            print(f"\nWarning: Consumer group '{group}' is rebalancing.", file=sys.stderr)
        if args.members:
            rows = [[group, m.member_id, m.client_host, m.client_id, str(len(m.partitions))]
                    for m in members]
            head = ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"]
            widths: list[int | None] = [15, 15, 15, 15, None]
            if args.verbose and described.group_type == "consumer":
                epoch = str(described.assignment_epoch)
                for row, m in zip(rows, members, strict=True):
                    row += [str(m.member_epoch), _assignment_text(m.partitions),
                            epoch, _assignment_text(m.target)]
                head += ["CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH",
                         "TARGET-ASSIGNMENT"]
                widths = [15, 15, 15, 15, 15, 15, 20, 15, None]
            print(table(head, rows, widths))
            continue
        found = group_command.describe(port, group, described)
        print("\n" + group_command.format_describe(found.rows, found.idle_members, group))
    return 1 if failed else 0


def _statetable(admin: Any, group: str, described: GroupView) -> str:
    coordinator = admin._manager.run(admin._find_coordinator_id, group)
    broker = next((b for b in admin._manager.cluster.brokers() if b.node_id == coordinator),
                  None)
    where = f"{broker.host}:{broker.port}  ({coordinator})" if broker else f"({coordinator})"
    row = [group, where, described.assignor, described.state, str(len(described.members))]
    return table(["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"],
                  [row], [15, 25, 20, 20, None])


# -- --delete --------------------------------------------------------------------------

def _delete(admin: Any, groups: list[str]) -> int:
    result = admin.delete_groups(groups)
    failed = {g: r for g, r in result.items() if r != "OK"}
    if failed:
        lines = [f"* Group '{g}' could not be deleted due to: {r}" for g, r in failed.items()]
        raise ToolError("Deletion of some consumer groups failed:\n" + "\n".join(lines))
    names = ", ".join(f"'{g}'" for g in groups)
    print(f"Deletion of requested consumer groups ({names}) was successful.")
    return 0


# -- --reset-offsets -------------------------------------------------------------------

def _reset(admin: Any, args: argparse.Namespace, groups: list[str]) -> int:
    if not args.dry_run and not args.execute:
        print(NO_EXECUTE_WARNING)
    scenario = group_command.Scenario(args.to_earliest, args.to_latest, args.to_current,
                                      args.to_offset, args.shift_by, args.to_datetime,
                                      args.by_duration)
    port = WireGroupPort(admin)
    for group in groups:
        try:
            plan = group_command.reset_offsets(
                port, group, None if args.all_topics else args.topic, scenario,
                now_ms=int(time.time() * 1000), execute=args.execute, warn=print)
        except group_command.GroupCommandError as exc:
            if exc.code != errors.NON_EMPTY_GROUP:
                raise ToolError(str(exc)) from None
            # Kafka's tool prints this refusal on stdout, skips the group and exits 0.
            print(f"\nError: {exc}")
            continue
        except ValueError as exc:
            raise ToolError(str(exc)) from None
        print()
        print(format_reset_plan(group, plan))
    return 0
