"""minikafka configs: kafka-configs.sh over kafka-python (topics and brokers).

    minikafka configs --bootstrap-server localhost:9092 --entity-type topics \\
        --entity-name orders --describe [--all]
    minikafka configs --bootstrap-server localhost:9092 --entity-type topics \\
        --entity-name orders --alter --add-config retention.ms=86400000,cleanup.policy=[delete,compact]
    minikafka configs --bootstrap-server localhost:9092 --entity-type brokers \\
        --entity-default --alter --add-config log.retention.ms=3600000
    minikafka configs --bootstrap-server localhost:9092 --entity-type brokers \\
        --entity-name 1 --alter --delete-config log.retention.ms

Describe prints what Kafka 4.x's ConfigCommand prints: "Dynamic configs for topic orders
are:" (only the values set on that resource; --all: every value, "All configs ..."),
one line per config with its synonyms, the sources in the order they apply
(DYNAMIC_TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG,
STATIC_BROKER_CONFIG, DEFAULT_CONFIG). Alter sends IncrementalAlterConfigs.
"""
from __future__ import annotations

import argparse
import re
from typing import Any

from ._common import ToolError, add_bootstrap, admin_client, one_line_errors, run_tool

ENTITY_TYPES = ("topics", "brokers")
DYNAMIC_SOURCE = {"topics": "DYNAMIC_TOPIC_CONFIG", "brokers": "DYNAMIC_BROKER_CONFIG",
                  "": "DYNAMIC_DEFAULT_BROKER_CONFIG"}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "configs", help="describe and change topic and broker configs (kafka-configs.sh)",
        description="Describe or change the configs of a topic or a broker, or the "
                    "cluster-wide broker defaults, like kafka-configs.sh.")
    one_line_errors(p)
    add_bootstrap(p)
    p.add_argument("--entity-type", choices=ENTITY_TYPES, required=True)
    p.add_argument("--entity-name", help="the topic's name or the broker's id")
    p.add_argument("--entity-default", action="store_true",
                   help="with --entity-type brokers: the cluster-wide default of every broker")
    p.add_argument("--describe", action="store_true", help="list the configs")
    p.add_argument("--all", action="store_true",
                   help="with --describe: every config, not only those set on the entity")
    p.add_argument("--alter", action="store_true", help="change configs")
    p.add_argument("--add-config", metavar="K=V,K2=V2",
                   help="configs to set; a list value goes in brackets: k=[a,b]")
    p.add_argument("--delete-config", metavar="K,K2", help="configs to remove")
    p.set_defaults(run=run, parser=p)


def parse_add_config(text: str) -> dict[str, str]:
    """Kafka's --add-config syntax: k=v pairs split at commas outside brackets."""
    out = {}
    for item in re.findall(r"(?:[^,\[]|\[[^\]]*\])+", text):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ToolError(f"Invalid entity config: all configs to be added must be in "
                            f"the format \"key=val\", got {item!r}")
        value = value.strip()
        out[key.strip()] = value[1:-1] if value.startswith("[") and value.endswith("]") else value
    return out


def run(args: argparse.Namespace) -> int:
    if args.describe == args.alter:
        args.parser.error("Command must include exactly one action: --describe, --alter")
    if args.entity_default and args.entity_type != "brokers":
        args.parser.error("--entity-default is only for --entity-type brokers here")
    if args.entity_default == bool(args.entity_name):
        args.parser.error("give one of --entity-name and --entity-default")
    if args.alter and not (args.add_config or args.delete_config):
        args.parser.error("--alter needs --add-config or --delete-config")
    return run_tool(lambda: _run(args))


def _resource(entity_type: str, name: str) -> Any:
    from kafka.admin import ConfigResource, ConfigResourceType

    kind = ConfigResourceType.TOPIC if entity_type == "topics" else ConfigResourceType.BROKER
    return ConfigResource(kind, name)


def _send(admin: Any, request: Any) -> Any:
    # kafka-python 3.0.12's public describe/alter refuse the default broker resource ""
    # that Kafka's protocol allows; this sends its own request through its connection.
    return admin._manager.run(admin._manager.send, request)


def describe(admin: Any, entity_type: str, name: str) -> dict[str, dict]:
    """Every config of one resource, with its source and synonyms (kafka-python's form)."""
    resource = _resource(entity_type, name)
    request = admin._describe_configs_request([resource], include_synonyms=True)
    response = _send(admin, request)
    found = admin._describe_configs_process_responses([response], "all")
    return next(iter(found.values()))[name]


def alter(admin: Any, entity_type: str, name: str, add: dict[str, str],
          delete: list[str]) -> None:
    resource = _resource(entity_type, name)
    resource.configs = {**dict.fromkeys(delete, ("DELETE", None)), **add}
    request = admin._alter_configs_request([resource], validate_only=False, incremental=True)
    result = admin._alter_configs_process_responses(_send(admin, request).responses)
    outcome = next(iter(result.values()))[name]
    if outcome != "OK":
        raise ToolError(re.sub(r"^\[Error -?\d+\] \w+: ", "", outcome))


def describe_lines(configs: dict[str, dict], entity_type: str, name: str,
                   all_configs: bool) -> list[str]:
    if name == "":
        head = f"Default configs for {entity_type} in the cluster are:"
    else:
        head = f"{'All' if all_configs else 'Dynamic'} configs for {entity_type[:-1]} {name} are:"
    wanted = DYNAMIC_SOURCE["" if name == "" else entity_type]
    lines = [head]
    for key in sorted(configs):
        entry = configs[key]
        if not all_configs and entry["config_source"] != wanted:
            continue
        synonyms = ", ".join(f"{s['source']}:{s['name']}={s['value']}"
                             for s in entry.get("synonyms", []))
        sensitive = str(bool(entry.get("is_sensitive"))).lower()
        lines.append(f"  {key}={entry['value']} sensitive={sensitive} synonyms={{{synonyms}}}")
    return lines


def _run(args: argparse.Namespace) -> int:
    name = "" if args.entity_default else args.entity_name
    if args.entity_type == "brokers" and name and not name.isdigit():
        raise ToolError(f"The entity name for brokers must be a valid integer broker id, "
                        f"found: {name}")
    admin = admin_client(args.bootstrap_server)
    try:
        if args.describe:
            print("\n".join(describe_lines(describe(admin, args.entity_type, name),
                                           args.entity_type, name, args.all)))
            return 0
        add = parse_add_config(args.add_config or "")
        delete = [k.strip() for k in (args.delete_config or "").split(",") if k.strip()]
        alter(admin, args.entity_type, name, add, delete)
        if name:
            print(f"Completed updating config for {args.entity_type[:-1]} {name}.")
        else:
            print(f"Completed updating default config for {args.entity_type} in the cluster.")
        return 0
    finally:
        admin.close()
