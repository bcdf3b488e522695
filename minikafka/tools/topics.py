"""minikafka topics: kafka-topics.sh over kafka-python.

    minikafka topics --bootstrap-server localhost:9092 --create --topic orders \\
        --partitions 3 --replication-factor 3 --config min.insync.replicas=2
    minikafka topics --bootstrap-server localhost:9092 --list
    minikafka topics --bootstrap-server localhost:9092 --describe --topic orders
    minikafka topics --bootstrap-server localhost:9092 --alter --topic orders --partitions 6
    minikafka topics --bootstrap-server localhost:9092 --delete --topic orders

Output and error messages follow Kafka 4.x's TopicCommand. --describe asks
DescribeTopicPartitions for the eligible leader replicas (KIP-966); a broker older than
3.7 does not have it, and then Elr and LastKnownElr read N/A, as the Kafka tool prints.
"""
from __future__ import annotations

import argparse
import base64
import re
import uuid
from collections.abc import Iterable
from typing import Any

from ._common import (
    ToolError,
    add_bootstrap,
    admin_client,
    kafka_message,
    one_line_errors,
    properties,
    run_tool,
)

ACTIONS = ("create", "list", "describe", "alter", "delete")
ERROR_PREFIX = "Error while executing topic command : "
TOPIC_EXISTS, UNKNOWN_TOPIC = 36, 3


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "topics", help="create, list, describe, alter and delete topics (kafka-topics.sh)",
        description="Create, delete, describe, or change a topic, like kafka-topics.sh.")
    one_line_errors(p)
    add_bootstrap(p)
    for action in ACTIONS:
        p.add_argument(f"--{action}", action="store_true", help=f"{action} topics")
    p.add_argument("--topic", help="the topic (for --list and --describe: a regular "
                                   "expression over topic names)")
    p.add_argument("--partitions", type=int,
                   help="number of partitions (--create: default the broker's num.partitions; "
                        "--alter: the new, larger count)")
    p.add_argument("--replication-factor", type=int,
                   help="replicas of each partition (default the broker's "
                        "default.replication.factor)")
    p.add_argument("--config", action="append", default=[], metavar="KEY=VALUE",
                   help="a topic config for --create, e.g. retention.ms=86400000 (repeatable)")
    p.add_argument("--if-not-exists", action="store_true",
                   help="with --create: do nothing if the topic exists")
    p.add_argument("--if-exists", action="store_true",
                   help="with --alter, --describe or --delete: do nothing if it does not exist")
    p.add_argument("--exclude-internal", action="store_true",
                   help="leave out internal topics (__consumer_offsets) with --list and --describe")
    p.set_defaults(run=run, parser=p)


def run(args: argparse.Namespace) -> int:
    chosen = [a for a in ACTIONS if getattr(args, a)]
    if len(chosen) != 1:
        args.parser.error("Command must include exactly one action: --list, --describe, "
                          "--create, --alter or --delete")
    action = chosen[0]
    if action in ("create", "alter", "delete") and not args.topic:
        args.parser.error(f'Missing required argument "[topic]" for --{action}')
    if action == "alter" and args.partitions is None:
        args.parser.error("--alter needs --partitions (the new partition count)")
    return run_tool(lambda: _run(action, args), prefix=ERROR_PREFIX)


def _run(action: str, args: argparse.Namespace) -> int:
    admin = admin_client(args.bootstrap_server)
    try:
        return ACTION_FUNCTIONS[action](admin, args)
    finally:
        admin.close()


def _create(admin: Any, args: argparse.Namespace) -> int:
    spec = {"num_partitions": -1 if args.partitions is None else args.partitions,
            "replication_factor": -1 if args.replication_factor is None
            else args.replication_factor,
            "configs": properties(args.config, "--config")}
    result = admin.create_topics({args.topic: spec}, raise_errors=False)
    [topic] = result["topics"]
    code = topic["error_code"]
    if code == TOPIC_EXISTS and args.if_not_exists:
        return 0
    if code:
        raise ToolError(_message(topic))
    if "." in args.topic or "_" in args.topic:
        print("WARNING: Due to limitations in metric names, topics with a period ('.') or "
              "underscore ('_') could collide. To avoid issues it is best to use either, "
              "but not both.")
    print(f"Created topic {args.topic}.")
    return 0


def _message(result: dict) -> str:
    from kafka.errors import for_code

    text = result.get("error_message")
    return kafka_message(Exception(text)) if text else for_code(result["error_code"]).__name__


def _matching(admin: Any, args: argparse.Namespace) -> list[dict]:
    """Topics (metadata dicts, sorted by name) the --topic pattern names; Kafka takes
    --topic as a regular expression for --list and --describe."""
    topics = [t for t in admin.describe_topics() if t["error_code"] == 0]
    if args.exclude_internal:
        topics = [t for t in topics if not t["is_internal"]]
    if args.topic:
        try:
            pattern = re.compile(args.topic)
        except re.error as exc:
            raise ToolError(f"invalid --topic pattern: {exc}") from exc
        topics = [t for t in topics if pattern.fullmatch(t["name"])]
    return sorted(topics, key=lambda t: t["name"])


def _list(admin: Any, args: argparse.Namespace) -> int:
    for topic in _matching(admin, args):
        print(topic["name"])
    return 0


def _describe(admin: Any, args: argparse.Namespace) -> int:
    topics = _matching(admin, args)
    if args.topic and not topics:
        if args.if_exists:
            return 0
        raise ToolError(f"Topic '{args.topic}' does not exist as expected")
    configs = _non_default_configs(admin, [t["name"] for t in topics])
    _add_elr(admin, topics)
    for topic in topics:
        print("\n".join(describe_lines(topic, configs.get(topic["name"], {}))))
    return 0


def _add_elr(admin: Any, topics: list[dict]) -> None:
    """Each partition's eligible leader replicas and last known leader, page by page
    from DescribeTopicPartitions; left out when the broker does not have that API."""
    from kafka.errors import IncompatibleBrokerVersion, UnsupportedVersionError

    if not topics:
        return
    found: dict[tuple[str, int], dict] = {}
    cursor = None
    try:
        while True:
            page = admin.describe_topic_partitions([t["name"] for t in topics], cursor=cursor)
            for topic in page["topics"]:
                for p in topic["partitions"]:
                    found[(topic["name"], p["partition_index"])] = p
            cursor = page["next_cursor"]
            if cursor is None:
                break
    except (IncompatibleBrokerVersion, UnsupportedVersionError):
        return
    for topic in topics:
        for p in topic["partitions"]:
            described = found.get((topic["name"], p["partition_index"]))
            if described is not None:  # kafka-python reads an empty list as None
                p["elr"] = described["eligible_leader_replicas"] or []
                p["last_known_elr"] = described["last_known_elr"] or []


def _ids(brokers: Iterable[int] | None) -> str:
    return "N/A" if brokers is None else ",".join(map(str, brokers))


def _non_default_configs(admin: Any, names: list[str]) -> dict[str, dict[str, str]]:
    """Each topic's configs not at their default, as kafka-topics --describe shows them."""
    if not names:
        return {}
    from kafka.admin import ConfigResource, ConfigResourceType

    described = admin.describe_configs(
        [ConfigResource(ConfigResourceType.TOPIC, n) for n in names], config_filter="all")
    out = {}
    for name, entries in described.get("topic", {}).items():
        out[name] = {k: e["value"] for k, e in entries.items()
                     if e.get("config_source") != "DEFAULT_CONFIG" and e["value"] is not None}
    return out


def kafka_uuid(text: str | None) -> str | None:
    """A topic id as Kafka prints it: 22 characters of URL-safe base64."""
    if not text:
        return None
    raw = uuid.UUID(str(text)).bytes
    if raw == bytes(16):
        return None
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def describe_lines(topic: dict, configs: dict[str, str]) -> list[str]:
    """kafka-topics --describe: a topic line, then a line per partition."""
    partitions = sorted(topic["partitions"], key=lambda p: p["partition_index"])
    rf = len(partitions[0]["replica_nodes"]) if partitions else 0
    head = f"Topic: {topic['name']}"
    topic_id = kafka_uuid(topic.get("topic_id"))
    if topic_id:
        head += f"\tTopicId: {topic_id}"
    head += (f"\tPartitionCount: {len(partitions)}\tReplicationFactor: {rf}"
             f"\tConfigs: {','.join(f'{k}={v}' for k, v in configs.items())}")
    return [head] + [
        partition_line(topic["name"], p["partition_index"], p["leader_id"], p["replica_nodes"],
                       p["isr_nodes"], p.get("elr"), p.get("last_known_elr"))
        for p in partitions]


def partition_line(topic: str, partition: int, leader: int | None, replicas: Iterable[int],
                   isr: Iterable[int], elr: Iterable[int] | None = None,
                   last_known_elr: Iterable[int] | None = None) -> str:
    """One partition as kafka-topics --describe prints it; ELR lists of None read N/A
    (what the tool prints when it had to describe from Metadata)."""
    shown = leader if leader is not None and leader >= 0 else "none"
    return (f"\tTopic: {topic}\tPartition: {partition}\tLeader: {shown}"
            f"\tReplicas: {_ids(replicas)}\tIsr: {_ids(isr)}\tElr: {_ids(elr)}"
            f"\tLastKnownElr: {_ids(last_known_elr)}")


def _exists(admin: Any, name: str) -> bool:
    return name in admin.list_topics()


def _alter(admin: Any, args: argparse.Namespace) -> int:
    if not _exists(admin, args.topic):
        if args.if_exists:
            return 0
        raise ToolError(f"Topic '{args.topic}' does not exist as expected")
    response = admin.create_partitions({args.topic: args.partitions}, raise_errors=False)
    for result in response.results:
        if result.error_code:
            raise ToolError(result.error_message or _message(
                {"error_code": result.error_code}))
    return 0


def _delete(admin: Any, args: argparse.Namespace) -> int:
    if not _exists(admin, args.topic):
        if args.if_exists:
            return 0
        raise ToolError(f"Topic '{args.topic}' does not exist as expected")
    result = admin.delete_topics([args.topic], raise_errors=False)
    for topic in result["topics"]:
        if topic["error_code"]:
            raise ToolError(_message(topic))
    return 0


ACTION_FUNCTIONS = {"create": _create, "list": _list, "describe": _describe,
                    "alter": _alter, "delete": _delete}
