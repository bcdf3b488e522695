"""`minikafka kafka ...`: real Apache Kafka's three nodes, natively (see minikafka.realkafka)."""
from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING

from . import KAFKA_VERSION

if TYPE_CHECKING:  # imported when a command runs: `minikafka --help` stays light
    from .nodes import NativeKafka

__all__ = ["add_parser"]

ACTIONS = {
    "fetch": "fetch Kafka's jars, LocalTieredStorage and Spark's Kafka connector from Maven "
             "Central (once)",
    "up": "start the three nodes; returns when all answer Metadata",
    "down": "stop every node (the data stays in --data-dir)",
    "status": "nodes, pids, ports, the active controller and the version",
    "stop": "stop node N cleanly (leadership moves away first)",
    "kill": "kill node N with SIGKILL (a crash)",
    "start": "start node N again",
    "logs": "print the end of node N's log",
    "configdefs": "rewrite minikafka/core/kafka_configdefs.json from Kafka's jars "
                  "(--check: only compare)",
}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "kafka", help=f"run real Apache Kafka {KAFKA_VERSION} (three KRaft nodes) from its jars",
        description=f"Real Apache Kafka {KAFKA_VERSION} as three native KRaft nodes (broker and "
                    "controller each) on 127.0.0.1:9092-9094, set up like "
                    "docker/compose.yaml, without Docker. Needs Java 17+ and, the first time, "
                    "Maven (./setup.sh --real-kafka installs both where it can).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(f"  {name:<7} {text}" for name, text in ACTIONS.items()))
    p.add_argument("action", choices=list(ACTIONS), metavar="ACTION",
                   help=", ".join(ACTIONS))
    p.add_argument("node", nargs="?", type=int, metavar="N",
                   help="node id (1-3) for stop, kill, start and logs")
    p.add_argument("--data-dir", metavar="DIR",
                   help="where the nodes keep their data, configs and logs "
                        "(default: .cache/kafka-cluster in the repository)")
    p.add_argument("--port", type=int, default=None,
                   help="client port of node 1 for `up`; nodes 2 and 3 follow (default 9092)")
    p.add_argument("--config", metavar="server.properties",
                   help="for `up`: broker settings from a Kafka properties file, the one "
                        "`minikafka serve` takes too (node ids, listeners and log dirs in it "
                        "are left to the launcher)")
    p.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                   help="for `up`: a broker setting over the file's (repeatable)")
    p.add_argument("--tiered-storage", action="store_true", default=None,
                   help="for `up`: tiered storage (KIP-405) with Kafka's file-system remote "
                        "store, LocalTieredStorage, in DATA_DIR/remote-storage; topics opt in "
                        "with remote.storage.enable=true")
    p.add_argument("--check", action="store_true",
                   help="for `configdefs`: exit 1 if the committed JSON differs from the jars")
    p.add_argument("--lines", "-n", type=int, default=40, help="lines of log to print (logs)")
    p.set_defaults(run=run, parser=p)


def run(args: argparse.Namespace) -> int:
    from .jars import FetchError, fetch_kafka, fetch_spark, fetch_tiered_storage, pyspark_jars
    from .nodes import KafkaNodeError, NativeKafka

    if args.action in ("stop", "kill", "start", "logs") and args.node is None:
        args.parser.error(f"`minikafka kafka {args.action}` needs a node id, e.g. "
                          f"`minikafka kafka {args.action} 2`")
    overrides = None
    if args.config or args.override:
        if args.action != "up":
            args.parser.error("--config and --override are for `minikafka kafka up`")
        overrides, left_out = _settings(args)
        if left_out:
            print(f"minikafka kafka up: the launcher sets {', '.join(left_out)} per node; "
                  "the file's values are not used", file=sys.stderr)
    if args.action == "configdefs":
        from .configdefs import DATA, write

        try:
            same = write(check=args.check)
        except (OSError, RuntimeError) as exc:
            print(f"minikafka kafka configdefs: {exc}", file=sys.stderr)
            return 2
        print(f"{DATA}: {'matches' if same else 'differs from' if args.check else 'written from'}"
              f" Kafka {KAFKA_VERSION}'s jars")
        return 1 if args.check and not same else 0
    if args.tiered_storage and args.action != "up":
        args.parser.error("--tiered-storage is for `minikafka kafka up`")
    cluster = NativeKafka(args.data_dir, port=args.port, overrides=overrides,
                          tiered_storage=args.tiered_storage)
    try:
        if args.action == "fetch":
            started = time.monotonic()
            libs = fetch_kafka()
            print(f"Kafka {KAFKA_VERSION}: {len(list(libs.glob('*.jar')))} jars in {libs} "
                  f"({time.monotonic() - started:.1f} s)")
            started = time.monotonic()
            libs = fetch_tiered_storage()  # LocalTieredStorage, for `up --tiered-storage`
            print(f"LocalTieredStorage: {', '.join(p.name for p in libs.glob('*.jar'))} in "
                  f"{libs} ({time.monotonic() - started:.1f} s)")
            if pyspark_jars() is not None:  # the connector must match the installed pyspark
                started = time.monotonic()
                libs = fetch_spark()
                print(f"Spark's Kafka connector: {len(list(libs.glob('*.jar')))} jars in {libs} "
                      f"({time.monotonic() - started:.1f} s)")
        elif args.action == "up":
            took = cluster.up()
            print(f"Kafka {KAFKA_VERSION} is up in {took:.1f} s: "
                  f"bootstrap servers {cluster.bootstrap_servers}")
            _print_status(cluster)
        elif args.action == "down":
            cluster.down()
            print(f"stopped; the data stays in {cluster.data_dir}")
        elif args.action == "status":
            _print_status(cluster)
        elif args.action == "stop":
            cluster.stop(args.node)
            print(f"node {args.node} stopped")
        elif args.action == "kill":
            cluster.kill(args.node)
            print(f"node {args.node} killed (SIGKILL)")
        elif args.action == "start":
            cluster.start(args.node)
            print(f"node {args.node} is up")
        elif args.action == "logs":
            lines = cluster.log_path(args.node).read_text(errors="replace").splitlines()
            print("\n".join(lines[-args.lines:]))
    except (FetchError, KafkaNodeError, OSError) as exc:
        print(f"minikafka kafka {args.action}: {exc}", file=sys.stderr)
        return 1
    return 0


def _print_status(cluster: NativeKafka) -> None:
    nodes = cluster.status()
    controller = cluster.controller() if any(n.running for n in nodes) else None
    print(f"Apache Kafka {KAFKA_VERSION}, data in {cluster.data_dir}")
    print(f"{'NODE':<6}{'STATE':<10}{'PID':<9}{'CLIENT':<17}{'INTERNAL':<18}{'CONTROLLER':<18}")
    for n in nodes:
        role = " (active controller)" if n.node_id == controller else ""
        print(f"{n.node_id:<6}{'running' if n.running else 'stopped':<10}{n.pid or '-':<9}"
              f"{'localhost:' + str(n.port):<17}{'127.0.0.1:' + str(n.internal_port):<18}"
              f"{'127.0.0.1:' + str(n.controller_port):<18}{role}")


def _settings(args: argparse.Namespace) -> tuple[dict[str, str], list[str]]:
    from ..core.server_config import parse_overrides, read_properties
    from .nodes import broker_overrides

    settings: dict[str, str] = {}
    if args.config:
        with open(args.config, encoding="utf-8") as f:
            settings.update(read_properties(f.read()))
    try:
        settings.update(parse_overrides(args.override))
    except ValueError as exc:
        args.parser.error(str(exc))
    return broker_overrides(settings)
