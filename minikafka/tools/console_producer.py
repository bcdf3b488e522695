"""minikafka console-producer: kafka-console-producer.sh over kafka-python.

Each line of standard input becomes one record (UTF-8). With
``--property parse.key=true`` a line is KEY<key.separator>VALUE (separator a tab
unless ``--property key.separator=:``); a line without the separator is an error,
as in Kafka, unless ``--property ignore.error=true`` (then the whole line is the
value). ``--producer-property acks=all`` and friends are Kafka client properties,
translated to kafka-python's arguments (acks=all is already the default, as in
Kafka's console producer).

    minikafka console-producer --bootstrap-server localhost:9092 --topic orders \\
        --property parse.key=true --property key.separator=:
    >alice:2 lattes
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from ._common import (
    ToolError,
    add_bootstrap,
    check_reachable,
    client_config,
    kafka_message,
    one_line_errors,
    properties,
    read_config_file,
    run_tool,
)

# Kafka's console producer waits for all in-sync replicas unless told otherwise.
DEFAULTS = {"acks": "all"}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "console-producer", help="send lines of standard input as records "
                                 "(kafka-console-producer.sh)",
        description="Read lines from standard input and send each as a record, like "
                    "kafka-console-producer.sh. Type Ctrl-D to finish.")
    one_line_errors(p)
    add_bootstrap(p)
    p.add_argument("--topic", required=True, help="the topic to send to")
    # Kafka 4.2 renamed three flags (KIP-1147); the old names still work there, and
    # they are the only ones Kafka 4.1 and older know, so both are accepted.
    p.add_argument("--property", "--reader-property", dest="property", action="append",
                   default=[], metavar="KEY=VALUE",
                   help="how lines are read: parse.key=true, key.separator=:, "
                        "ignore.error=true (repeatable; --reader-property since Kafka 4.2)")
    p.add_argument("--producer-property", "--command-property", dest="producer_property",
                   action="append", default=[], metavar="KEY=VALUE",
                   help="a producer config, e.g. acks=1, linger.ms=5, compression.type=lz4, "
                        "enable.idempotence=true (repeatable; --command-property since "
                        "Kafka 4.2)")
    p.add_argument("--producer.config", "--command-config", dest="producer_config",
                   metavar="FILE", help="a properties file of producer configs "
                                        "(--command-config since Kafka 4.2)")
    p.add_argument("--sync", action="store_true",
                   help="wait for each record to be acknowledged before reading the next line")
    p.set_defaults(run=run, parser=p)


def run(args: argparse.Namespace) -> int:
    return run_tool(lambda: produce(args, sys.stdin))


class LineReader:
    """Kafka's LineMessageReader: a line -> (key, value) bytes."""

    def __init__(self, props: dict[str, str]) -> None:
        self.parse_key = props.get("parse.key", "false").lower() == "true"
        self.separator = props.get("key.separator", "\t")
        self.ignore_error = props.get("ignore.error", "false").lower() == "true"

    def read(self, line: str, number: int) -> tuple[bytes | None, bytes]:
        if not self.parse_key:
            return None, line.encode()
        key, sep, value = line.partition(self.separator)
        if not sep:
            if self.ignore_error:
                return None, line.encode()
            raise ToolError(f"No key separator found on line number {number}: '{line}'")
        return key.encode(), value.encode()


def produce(args: argparse.Namespace, lines: Any) -> int:
    from kafka import KafkaProducer

    reader = LineReader(properties(args.property, "--property"))
    kafka_props = {**DEFAULTS}
    if args.producer_config:
        kafka_props.update(read_config_file(args.producer_config))
    kafka_props.update(properties(args.producer_property, "--producer-property"))
    config = client_config(kafka_props, KafkaProducer.DEFAULT_CONFIG)
    config.setdefault("client_id", "console-producer")
    check_reachable(args.bootstrap_server)
    producer = KafkaProducer(bootstrap_servers=args.bootstrap_server, **config)
    failures: list[str] = []
    interactive = lines.isatty() if hasattr(lines, "isatty") else False
    try:
        number = 0
        while True:
            if interactive:
                print(">", end="", flush=True)
            line = lines.readline()
            if not line:
                break
            number += 1
            key, value = reader.read(line.rstrip("\r\n"), number)
            future = producer.send(args.topic, key=key, value=value)
            future.add_errback(lambda exc, k=key, v=value: failures.append(_failure(
                args.topic, k, v, exc)))
            if args.sync:
                future.get(timeout=60)
        producer.flush()
    finally:
        producer.close()
    for message in failures[:5]:
        print(message, file=sys.stderr)
    if failures:
        raise ToolError(f"{len(failures)} record(s) were not sent")
    return 0


def _failure(topic: str, key: bytes | None, value: bytes, exc: BaseException) -> str:
    """Kafka's ErrorLoggingCallback line."""
    shown = "null" if key is None else key.decode(errors="replace")
    return (f"Error when sending message to topic {topic} with key: {shown}, value: "
            f"{len(value)} bytes with error: {type(exc).__name__}: {kafka_message(exc)}")
