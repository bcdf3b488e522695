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
import sys
import time
from datetime import timedelta
from typing import Any

from ._common import ToolError, add_bootstrap, admin_client, one_line_errors, run_tool

MISSING = "-"
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
        chosen = [s for s in SCENARIOS if getattr(args, s) not in (None, False)]
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


# -- tables as Kafka prints them (printf with minimum column widths) -------------------

def _row(cells: list[str], widths: list[int | None]) -> str:
    return " ".join(cell if w is None else cell.ljust(w) for cell, w in zip(cells, widths))


def _table(head: list[str], rows: list[list[str]], minimum: list[int | None]) -> str:
    """Columns with a minimum width stretch to their longest cell; None: as is. Every
    line starts with a newline, as Kafka's "\\n%-15s ..." format makes it."""
    widths: list[int | None] = [
        None if m is None else max([m, *(len(r[i]) for r in rows)])
        for i, m in enumerate(minimum)]
    return "".join("\n" + _row(r, widths) for r in [head, *rows])


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
    print(_table(["GROUP", "STATE"], rows, [15, None]).lstrip("\n"))
    return 0


# -- --describe ------------------------------------------------------------------------

def _describe_group(admin: Any, group: str) -> dict:
    described = admin.describe_groups([group])[group]
    if described.get("group_state") == "Dead" or (
            described.get("error") and "GroupIdNotFound" in described["error"]):
        # DescribeGroups describes classic groups only: try it as a KIP-848 group.
        found = _describe_consumer_group(admin, group)
        if found is None:
            raise ToolError(f"Consumer group '{group}' does not exist.")
        return found
    if described.get("error"):
        raise ToolError(described["error"])
    return described


def _describe_consumer_group(admin: Any, group: str) -> dict | None:
    """ConsumerGroupDescribe (API 69, which kafka-python lacks: minikafka's message class)
    in describe_groups()'s shape, plus epochs and target assignments; None if the group
    is not a consumer group."""
    from kafka.errors import for_code

    from ..wire.messages import ConsumerGroupDescribeRequest

    async def ask() -> Any:
        coordinator = await admin._find_coordinator_id(group)
        request = ConsumerGroupDescribeRequest(group_ids=[group],
                                               include_authorized_operations=False)
        return await admin._manager.send(request, node_id=coordinator)

    [found] = admin._manager.run(ask).groups
    if found.error_code == 69:  # GROUP_ID_NOT_FOUND: unknown, or a classic group
        return None
    if found.error_code:
        raise ToolError(str(for_code(found.error_code)(found.error_message or "")))

    def partitions(assignment: Any) -> dict:
        return {"assigned_partitions": [{"topic": t.topic_name, "partitions": list(t.partitions)}
                                        for t in assignment.topic_partitions]}

    members = [{"member_id": m.member_id, "client_host": m.client_host,
                "client_id": m.client_id, "member_epoch": m.member_epoch,
                "member_assignment": partitions(m.assignment),
                "target_assignment": partitions(m.target_assignment)}
               for m in found.members]
    return {"group_id": group, "group_state": found.group_state, "group_type": "consumer",
            "protocol_data": found.assignor_name, "assignment_epoch": found.assignment_epoch,
            "members": members, "error": None}


def _assignment_text(assignment: dict) -> str:
    """Kafka's CURRENT-ASSIGNMENT cell: topic:0,1 per topic, or -."""
    parts = [f"{t['topic']}:{','.join(map(str, sorted(t['partitions'])))}"
             for t in assignment.get("assigned_partitions", []) if t["partitions"]]
    return ";".join(parts) or MISSING


def _assigned(member: dict) -> list[Any]:
    from kafka import TopicPartition

    assignment = member.get("member_assignment") or {}
    if not isinstance(assignment, dict):
        return []
    return sorted(TopicPartition(t["topic"], p)
                  for t in assignment.get("assigned_partitions", []) for p in t["partitions"])


def end_offsets(admin: Any, partitions: list[Any]) -> dict[Any, int]:
    """Each partition's log end offset (its high watermark)."""
    from kafka.admin import OffsetSpec

    if not partitions:
        return {}
    found = admin.list_partition_offsets(dict.fromkeys(partitions, OffsetSpec.LATEST))
    return {tp: o.offset for tp, o in found.items()}


def offset_rows(admin: Any, group: str, described: dict) -> list[list[str]]:
    """kafka-consumer-groups --describe: a row per assigned or committed partition, then
    one per member without partitions."""
    committed = admin.list_group_offsets(group)[group]
    owners = {tp: m for m in described["members"] for tp in _assigned(m)}
    partitions = sorted(set(committed) | set(owners))
    ends = end_offsets(admin, partitions)
    rows = []
    for tp in partitions:
        current = committed[tp].offset if tp in committed else None
        end = ends.get(tp)
        lag = None if current is None or end is None else max(end - current, 0)
        owner = owners.get(tp, {})
        rows.append([group, tp.topic, str(tp.partition),
                     MISSING if current is None else str(current),
                     MISSING if end is None else str(end), MISSING if lag is None else str(lag),
                     owner.get("member_id") or MISSING, owner.get("client_host") or MISSING,
                     owner.get("client_id") or MISSING])
    for m in described["members"]:
        if not _assigned(m):
            rows.append([group, MISSING, MISSING, MISSING, MISSING, MISSING, m["member_id"],
                         m["client_host"], m["client_id"]])
    return rows


def _describe(admin: Any, args: argparse.Namespace, groups: list[str]) -> int:
    failed = False
    for group in groups:
        try:
            described = _describe_group(admin, group)
        except ToolError as exc:
            print(f"\nError: {exc}", file=sys.stderr)
            failed = True
            continue
        state = described["group_state"]
        members = described["members"]
        if args.state is not None:
            print(_state_table(admin, group, described))
            continue
        if state == "Empty":
            print(f"\nConsumer group '{group}' has no active members.", file=sys.stderr)
        elif state in ("PreparingRebalance", "CompletingRebalance"):
            print(f"\nWarning: Consumer group '{group}' is rebalancing.", file=sys.stderr)
        if args.members:
            rows = [[group, m["member_id"], m["client_host"], m["client_id"],
                     str(len(_assigned(m)))] for m in members]
            head = ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"]
            widths: list[int | None] = [15, 15, 15, 15, None]
            if args.verbose and described.get("group_type") == "consumer":
                epoch = str(described["assignment_epoch"])
                for row, m in zip(rows, members, strict=True):
                    row += [str(m["member_epoch"]), _assignment_text(m["member_assignment"]),
                            epoch, _assignment_text(m["target_assignment"])]
                head += ["CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH",
                         "TARGET-ASSIGNMENT"]
                widths = [15, 15, 15, 15, 15, 15, 20, 15, None]
            print(_table(head, rows, widths))
            continue
        rows = offset_rows(admin, group, described)
        print(_table(["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                      "CONSUMER-ID", "HOST", "CLIENT-ID"], rows,
                     [15, 15, 10, 15, 15, 15, 15, 15, None]))
    return 1 if failed else 0


def _state_table(admin: Any, group: str, described: dict) -> str:
    coordinator = admin._manager.run(admin._find_coordinator_id, group)
    broker = next((b for b in admin._manager.cluster.brokers() if b.node_id == coordinator),
                  None)
    where = f"{broker.host}:{broker.port}  ({coordinator})" if broker else f"({coordinator})"
    row = [group, where, described.get("protocol_data") or "", described["group_state"],
           str(len(described["members"]))]
    return _table(["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"],
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

def _scope(admin: Any, args: argparse.Namespace, committed: dict) -> list[Any]:
    from kafka import TopicPartition

    if args.all_topics:
        return sorted(committed)
    out = set()
    for item in args.topic:
        name, _, parts = item.partition(":")
        if parts:
            out.update(TopicPartition(name, int(p)) for p in parts.split(","))
            continue
        described = admin.describe_topics([name])[0]
        if described["error_code"]:
            raise ToolError(f"Topic '{name}' does not exist.")
        out.update(TopicPartition(name, p["partition_index"]) for p in described["partitions"])
    return sorted(out)


def _targets(admin: Any, args: argparse.Namespace, partitions: list[Any],
             committed: dict) -> dict[Any, int]:
    from kafka.admin import OffsetSpec, OffsetTimestamp

    from ..core.offset_reset import (
        NoCommittedOffset,
        parse_datetime,
        parse_duration,
        target_offset,
    )

    earliest = {tp: o.offset for tp, o in admin.list_partition_offsets(
        dict.fromkeys(partitions, OffsetSpec.EARLIEST)).items()}
    latest = end_offsets(admin, partitions)
    found: dict = {}
    if args.to_datetime is not None or args.by_duration is not None:
        if args.to_datetime is not None:
            try:
                ts = parse_datetime(args.to_datetime)
            except ValueError as exc:
                raise ToolError(f"Error parsing timestamp: {exc}") from exc
        else:
            try:
                duration: timedelta = parse_duration(args.by_duration)
            except ValueError as exc:
                raise ToolError(str(exc)) from exc
            ts = int(time.time() * 1000) - int(duration.total_seconds() * 1000)
        found = {tp: o.offset for tp, o in admin.list_partition_offsets(
            {tp: OffsetTimestamp(ts) for tp in partitions}).items()}
    plan = {}
    for tp in partitions:
        try:
            target = target_offset(
                earliest=earliest[tp], latest=latest[tp],
                committed=committed[tp].offset if tp in committed else None,
                to_earliest=args.to_earliest, to_latest=args.to_latest,
                to_current=args.to_current, to_offset=args.to_offset,
                shift_by=args.shift_by, found=found.get(tp))
        except NoCommittedOffset:
            raise ToolError(f"Cannot shift offset for partition {tp.topic}-{tp.partition} "
                            "since there is no current committed offset") from None
        if args.to_offset is not None or args.shift_by is not None:
            target = _in_range(tp, target, earliest[tp], latest[tp])
        plan[tp] = target
    return plan


def _in_range(tp: Any, offset: int, earliest: int, latest: int) -> int:
    """Kafka's checkOffsetsRange: clamp, and say so."""
    name = f"{tp.topic}-{tp.partition}"
    if offset < earliest:
        print(f"New offset ({offset}) is lower than earliest offset for topic partition "
              f"{name}. Value will be set to {earliest}")
        return earliest
    if offset > latest:
        print(f"New offset ({offset}) is higher than latest offset for topic partition "
              f"{name}. Value will be set to {latest}")
        return latest
    return offset


def _reset(admin: Any, args: argparse.Namespace, groups: list[str]) -> int:
    from kafka.errors import NoError
    from kafka.structs import OffsetAndMetadata

    from ..core.offset_reset import format_reset_plan

    if not args.dry_run and not args.execute:
        print(NO_EXECUTE_WARNING)
    for group in groups:
        described = admin.describe_groups([group])[group]
        state = described.get("group_state") or "Dead"
        if state not in ("Empty", "Dead"):
            raise ToolError(f"Assignments can only be reset if the group '{group}' is "
                            f"inactive, but the current state is {state}.")
        committed = admin.list_group_offsets(group)[group]
        partitions = _scope(admin, args, committed)
        plan = _targets(admin, args, partitions, committed)
        if args.execute and plan:
            result = admin.alter_group_offsets(
                group, {tp: OffsetAndMetadata(o, "", -1) for tp, o in plan.items()})
            failed = {tp: e for tp, e in result.items() if e is not NoError}
            if failed:
                tp, err = sorted(failed.items())[0]
                raise ToolError(f"Resetting offsets of group '{group}' failed for "
                                f"{tp.topic}-{tp.partition}: {err.__name__}")
        print()
        print(format_reset_plan(group, plan))
    return 0
