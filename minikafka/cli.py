"""The `minikafka` command: one subcommand per function, each registered in COMMANDS.

    minikafka serve --brokers 3 --port 9092      # a cluster real clients can use
    minikafka topics --bootstrap-server localhost:9092 --list   # Kafka's tools (docs/cli.md)
    minikafka demo leader-failover               # the instructor's presenter page
    minikafka doctor                             # what the labs need, and what to fix
    minikafka kafka up                           # real Apache Kafka, three native nodes
    minikafka lite build --output site           # the lessons in the browser (JupyterLite)

Each subcommand has an `add_<name>(subparsers)` that declares its flags and a
`<name>(args) -> int` that runs it; heavy imports happen inside the function so
`minikafka --help` stays quick.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
from collections.abc import Callable, Sequence

from .lite import cli as lite_cli
from .realkafka import cli as realkafka_cli
from .tools import PARSERS as TOOL_PARSERS


def add_serve(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "serve", help="run a minikafka cluster that real Kafka clients can connect to",
        description="Serve a minikafka cluster over the Kafka protocol: broker N listens on "
                    "port+N-1 (9092, 9093, 9094 for --brokers 3). Stop with Ctrl-C. Like "
                    "kafka.Kafka, it takes a server.properties file and --override "
                    "key=value; the flags below win over both.")
    p.add_argument("config", nargs="?", metavar="server.properties",
                   help="a Kafka broker properties file (Kafka's keys and defaults; keys "
                        "minikafka does not model are accepted and ignored)")
    p.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                   help="a broker config over the file's, e.g. --override num.partitions=3 "
                        "(repeatable)")
    p.add_argument("--brokers", type=int, default=3, help="number of brokers (default 3)")
    p.add_argument("--port", type=int, default=None,
                   help="port of the first broker; the others follow (default: the port of "
                        "listeners, else 9092)")
    p.add_argument("--host", default=None,
                   help="address to listen on (default: the host of listeners, else "
                        "127.0.0.1: this machine only)")
    p.add_argument("--seed", type=int, default=0, help="seed of the simulation (default 0)")
    p.add_argument("--rack", action="append", default=[], metavar="BROKER=RACK",
                   help="put a broker in a rack, e.g. --rack 1=eu-west-1a (repeatable)")
    p.add_argument("--log-dir", metavar="DIR[,DIR...]",
                   help="keep the cluster on disk in Kafka's layout (DIR/broker-N/TOPIC-P/*.log, "
                        "__cluster_metadata-0, meta.properties; readable with minikafka "
                        "dump-log): a restart on DIR recovers topics, records, group offsets "
                        "and producer state; several comma-separated DIRs give each broker "
                        "several log dirs (JBOD); default: log.dirs (or log.dir), else in memory")
    p.add_argument("--metrics-port", type=int, default=None, metavar="PORT",
                   help="also serve the brokers' and controllers' metrics, named with "
                        "Kafka's MBean names, on http://127.0.0.1:PORT/metrics (Prometheus "
                        "text) and /metrics.json; loopback only (default: off)")
    p.add_argument("--feature", action="append", default=[], metavar="NAME=LEVEL",
                   help="a feature level of the new cluster, as kafka-storage.sh format "
                        "--feature takes it, e.g. eligible.leader.replicas.version=0 for the "
                        "rules before Kafka 4.1 (repeatable)")
    p.add_argument("--add-scram", action="append", default=[], metavar="CREDENTIAL",
                   help="a SCRAM user, as kafka-storage.sh format --add-scram takes it, e.g. "
                        "'SCRAM-SHA-256=[name=alice,password=alice-secret]' (repeatable); "
                        "kafka-configs.sh --alter --add-config adds more while serving")
    p.add_argument("--journal-events", type=int, default=DEFAULT_JOURNAL_EVENTS, metavar="N",
                   help="bound the window of the cluster's journal, the history the checkers "
                        "read, to N (an event counts once plus once per record it carries; "
                        f"default {DEFAULT_JOURNAL_EVENTS}; 0: keep all, which grows without "
                        "bound)")
    p.set_defaults(run=serve)


# A served cluster's journal is a ring of this many events (about 50 MB): memory
# follows the retained window, not the server's whole history.
DEFAULT_JOURNAL_EVENTS = 100_000


def _listener(value: str | None, controller: set[str],
              inter_broker: str | None) -> tuple[str, int] | None:
    """(host, port) of the listener clients use in a Kafka listeners value: not a
    controller listener, and not the inter-broker one when there is another.
    "INTERNAL://:19092,EXTERNAL://:9092,CONTROLLER://:29093" gives ("", 9092)."""
    found = []
    for item in (value or "").split(","):
        name, sep, address = item.strip().partition("://")
        if not sep or name.upper() in controller:
            continue
        host, _, port = address.rpartition(":")
        if not port.isdigit():
            raise ValueError(value)
        found.append((name.upper(), host.strip("[]"), int(port)))
    found.sort(key=lambda f: f[0] == inter_broker)  # stable: the inter-broker one last
    return (found[0][1], found[0][2]) if found else None


def serve(args: argparse.Namespace) -> int:
    from pathlib import Path

    from kafka.errors import InvalidConfigurationError

    from .cluster import Cluster
    from .core.acl import STANDARD_AUTHORIZER, Authorizer
    from .core.recovery import LogDirError
    from .core.security_config import client_listeners, parse_scram_argument
    from .core.server_config import (
        ServerConfigError,
        parse_overrides,
        parse_server_config,
        read_properties,
    )
    from .core.ssl_principal import SslPrincipalMapper
    from .tools._common import kafka_message
    from .wire.tls import TlsConfigError

    def fail(message: str) -> int:
        print(f"minikafka serve: {message}", file=sys.stderr)
        return 2

    if args.brokers < 1:
        return fail("--brokers must be at least 1")
    if args.journal_events < 0:
        return fail("--journal-events must be 0 or more")
    raw: dict[str, str] = {}
    try:
        if args.config:
            raw.update(read_properties(Path(args.config).read_text(encoding="utf-8")))
        raw.update(parse_overrides(args.override))
        config = parse_server_config(raw)
        controller = {n.strip().upper() for n in
                      raw.get("controller.listener.names", "CONTROLLER").split(",")}
        inter_broker = raw.get("inter.broker.listener.name", "").strip().upper() or None
        listener = _listener(config.server.get("listeners"), controller, inter_broker)
        advertised = _listener(config.server.get("advertised.listeners"), controller,
                               inter_broker)
    except OSError as exc:
        return fail(f"cannot read {args.config}: {exc.strerror or exc}")
    except ServerConfigError as exc:
        return fail(str(exc))
    except ValueError as exc:
        return fail(f"Invalid value {exc} for configuration listeners")
    try:
        listeners = client_listeners({**raw, **config.server})
        scram = [parse_scram_argument(item) for item in args.add_scram]
    except ValueError as exc:
        return fail(str(exc))
    # Brokers in one process have no inter-broker traffic: its listener is left out when
    # there is another. --port and --host apply to the first.
    listeners = [item for item in listeners if item.name != inter_broker] or listeners
    listeners.sort(key=lambda item: (item.host, item.port) != listener)
    authorizer = config.security.get("authorizer.class.name", "").strip()
    if authorizer and authorizer != STANDARD_AUTHORIZER:
        return fail(f"authorizer.class.name={authorizer}: minikafka has Kafka's KRaft "
                    f"authorizer only, {STANDARD_AUTHORIZER}")
    try:  # Kafka refuses bad ssl.principal.mapping.rules at start-up
        for item in listeners:
            SslPrincipalMapper(item.ssl.get("ssl.principal.mapping.rules"))
    except ValueError as exc:
        return fail(str(exc))
    for key in config.unknown:
        print(f"minikafka serve: warning: unknown config {key!r} (not a Kafka broker key "
              "minikafka knows), ignored", file=sys.stderr)
    if config.ignored:
        print("minikafka serve: Kafka settings minikafka does not model, ignored: "
              + ", ".join(sorted(config.ignored)), file=sys.stderr)
    # Flags win over the file and the overrides.
    host = args.host if args.host is not None else (listener[0] if listener else "") or "127.0.0.1"
    port = args.port if args.port is not None else listener[1] if listener else 9092
    first = int(config.server.get("node.id", "1"))
    dirs = args.log_dir or config.server.get("log.dirs") or config.server.get("log.dir") or ""
    log_dir = [d.strip() for d in dirs.split(",") if d.strip()] or None  # JBOD: several
    racks = {}
    for item in args.rack:
        broker, sep, rack = item.partition("=")
        if not sep or not broker.isdigit() or not rack:
            return fail(f"bad --rack {item!r}, expected BROKER=RACK")
        racks[int(broker)] = rack
    features = {}
    for item in args.feature:
        name, sep, level = item.partition("=")
        if not sep or not level.isdigit():
            return fail(f"bad --feature {item!r}, expected NAME=LEVEL")
        features[name] = int(level)
    try:
        cluster = Cluster(brokers=list(range(first, first + args.brokers)), seed=args.seed,
                          racks=racks, log_dir=log_dir, features=features,
                          broker_config=config.values,
                          journal_max_events=args.journal_events or None)
    except InvalidConfigurationError as exc:
        return fail(kafka_message(exc))
    except LogDirError as exc:
        return fail(str(exc))
    if log_dir is not None:
        print("log dirs: " + ", ".join(f"{d}/broker-N" for d in log_dir)
              + f" (cluster.id {cluster.cluster_id})", flush=True)
        for line in cluster.recovery_messages:
            print(f"recovery: {line}", flush=True)
    if authorizer:
        cluster.authorizer = Authorizer.from_config(cluster.controller.acls, config.security)
    for user, mechanism, password, iterations in scram:
        known = cluster.controller.scram_credentials.get((user, mechanism))
        if known is None or not known.check_password(password):
            cluster.set_scram_credential(user, password, mechanism, iterations,
                                         salt=os.urandom(32))
    try:
        server = cluster.serve(port=port, host=host,
                               advertised_host=advertised[0] if advertised else None,
                               listeners=listeners)
    except TlsConfigError as exc:
        return fail(str(exc))
    except OSError as exc:
        print(f"minikafka serve: cannot listen on {host}:{port}: {exc}", file=sys.stderr)
        return 1
    with contextlib.ExitStack() as stack:
        stack.enter_context(server)
        for wire in server.wires.values():
            label = "" if wire.listener is None or wire.listener.protocol == "PLAINTEXT" \
                else f" ({wire.listener.protocol})"
            for broker_id, bound in wire.bound_ports.items():
                print(f"broker {broker_id} listening on {wire.host}:{bound}{label}")
        if args.metrics_port is not None:
            from .monitoring import MetricsServer

            try:
                exporter = stack.enter_context(MetricsServer(cluster, args.metrics_port))
            except OSError as exc:
                print(f"minikafka serve: cannot serve metrics on 127.0.0.1:"
                      f"{args.metrics_port}: {exc}", file=sys.stderr)
                return 1
            print(f"metrics: {exporter.url}/metrics (Prometheus text), "
                  f"{exporter.url}/metrics.json")
        print(f"bootstrap servers: {server.bootstrap_servers}  (Ctrl-C to stop)", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            print("stopping")
    if log_dir is not None:
        with cluster.lock:  # a clean stop leaves current checkpoints
            cluster.write_checkpoints()
    return 0


def add_demo(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "demo", help="presenter page for the projector: scripted scenarios or a live cluster",
        description="Serve the presenter page on http://HOST:PORT/ and open it: a scripted "
                    "scenario stepped with →/Space, ←, R (reset) and P (play/pause), or, with "
                    "--live, a read-only view of a running cluster refreshed every second.")
    p.add_argument("scenario", nargs="?", default="leader-failover",
                   help="scenario to present (default leader-failover; see --list)")
    p.add_argument("--list", action="store_true", help="list the scenarios and exit")
    p.add_argument("--port", type=int, default=8050, help="port of the page (default 8050)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--no-browser", action="store_true", help="do not open a browser")
    p.add_argument("--interval", type=float, default=6.0,
                   help="seconds between steps while playing (default 6)")
    p.add_argument("--live", action="store_true",
                   help="watch a running cluster instead of playing a scenario")
    p.add_argument("--bootstrap-server", default="127.0.0.1:9092",
                   help="the cluster to watch with --live (default 127.0.0.1:9092)")
    p.add_argument("--topic", action="append", default=[],
                   help="with --live, show only this topic (repeatable; default all)")
    p.set_defaults(run=demo)


def demo(args: argparse.Namespace) -> int:
    from .demo.app import run

    return run(args)


def add_doctor(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "doctor", help="check what the labs need (broker, listeners, versions, Java, Spark)",
        description="Check that a broker answers, that its advertised listeners are reachable "
                    "from here, that it and kafka-python agree on API versions, and that Java, "
                    "PySpark and a Spark Kafka source are there; print what to fix.")
    p.add_argument("--bootstrap-server", default=None,
                   help="broker(s) to check (default: $KAFKA_BOOTSTRAP_SERVERS, else "
                        "localhost:9092-9094)")
    p.add_argument("--timeout", type=float, default=5.0, help="seconds per network check")
    p.set_defaults(run=doctor)


def doctor(args: argparse.Namespace) -> int:
    from .doctor import check_all, render

    checks = check_all(args.bootstrap_server, args.timeout)
    print("minikafka doctor: what the labs need\n")
    print(render(checks))
    return 1 if any(c.status == "fail" for c in checks) else 0


# Kafka's command-line tools (minikafka.tools): topics, console-producer,
# console-consumer, consumer-groups, dump-log.
COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    add_serve, *TOOL_PARSERS, add_demo, add_doctor, realkafka_cli.add_parser,
    lite_cli.add_parser]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="minikafka",
                                     description="minikafka: a Kafka cluster in one process")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in COMMANDS:
        add(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # reported by the subcommand's parser when it has one (one line, exit 2)
        getattr(args, "parser", parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if getattr(args, "run", None) is None:
        parser.print_help()
        return 2
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
