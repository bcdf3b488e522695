"""minikafka console-consumer: kafka-console-consumer.sh over kafka-python.

Prints each record's value on a line (UTF-8), and what ``--property print.X=true``
adds, in Kafka's DefaultMessageFormatter order: timestamp, partition, offset,
headers, key, value, joined by key.separator (a tab by default).

Like Kafka's tool: without --group it joins a throwaway group
"console-consumer-NNNNN" and commits nothing; with --group it commits what it
printed when it stops (auto-commit), so the group's lag shows in
``minikafka consumer-groups --describe``. --from-beginning applies only where the
group has no committed offset. It stops after --max-messages, after --timeout-ms
without a record (counted from when it has partitions: joining a new group waits
group.initial.rebalance.delay.ms first), or on Ctrl-C, and reports "Processed a
total of N messages".

    minikafka console-consumer --bootstrap-server localhost:9092 --topic orders \\
        --from-beginning --property print.key=true --property key.separator=:
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from typing import Any, TextIO

from ._common import (
    ToolError,
    add_bootstrap,
    check_reachable,
    client_config,
    one_line_errors,
    properties,
    read_config_file,
    run_tool,
)

POLL_MS = 200
COMMIT_TIMEOUT_S = 30  # for the final commit, through any rebalance (default.api.timeout.ms is 60 s)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "console-consumer", help="print records of a topic (kafka-console-consumer.sh)",
        description="Read records from a topic and print them, like "
                    "kafka-console-consumer.sh. Stop with Ctrl-C.")
    one_line_errors(p)
    add_bootstrap(p)
    p.add_argument("--topic", required=True, help="the topic to read")
    p.add_argument("--group", help="the consumer group to join (commits what it printed)")
    p.add_argument("--from-beginning", action="store_true",
                   help="start at the earliest record when the group has no committed offset")
    p.add_argument("--partition", type=int,
                   help="read only this partition (no group management)")
    p.add_argument("--offset", default="latest",
                   help="with --partition: earliest, latest or an offset (default latest)")
    p.add_argument("--max-messages", type=int,
                   help="stop after printing this many records")
    p.add_argument("--timeout-ms", type=int,
                   help="stop when no record arrives for this long")
    # Kafka 4.2's names (KIP-1147) beside the older ones, as in console-producer.
    p.add_argument("--property", "--formatter-property", dest="property", action="append",
                   default=[], metavar="KEY=VALUE",
                   help="formatting: print.key, print.value, print.timestamp, print.partition, "
                        "print.offset, print.headers (true/false), key.separator, "
                        "line.separator, null.literal (repeatable; --formatter-property since "
                        "Kafka 4.2)")
    p.add_argument("--consumer-property", "--command-property", dest="consumer_property",
                   action="append", default=[], metavar="KEY=VALUE",
                   help="a consumer config, e.g. isolation.level=read_committed (repeatable; "
                        "--command-property since Kafka 4.2)")
    p.add_argument("--consumer.config", "--command-config", dest="consumer_config",
                   metavar="FILE", help="a properties file of consumer configs "
                                        "(--command-config since Kafka 4.2)")
    p.add_argument("--isolation-level", choices=("read_uncommitted", "read_committed"),
                   help="read_committed skips aborted transactions and stops at an open one")
    p.set_defaults(run=run, parser=p)


def run(args: argparse.Namespace) -> int:
    if args.partition is None and args.offset != "latest":
        args.parser.error("The partition is required when offset is specified.")
    if args.max_messages is not None and args.max_messages < 1:
        args.parser.error("--max-messages must be at least 1")
    return run_tool(lambda: consume(args, sys.stdout))


class Formatter:
    """Kafka's DefaultMessageFormatter."""

    def __init__(self, props: dict[str, str]) -> None:
        def flag(name: str, default: bool = False) -> bool:
            return props.get(name, str(default)).lower() == "true"
        self.timestamp = flag("print.timestamp")
        self.partition = flag("print.partition")
        self.offset = flag("print.offset")
        self.headers = flag("print.headers")
        self.key = flag("print.key")
        self.value = flag("print.value", True)
        self.separator = _unescape(props.get("key.separator", "\t"))
        self.line_end = _unescape(props.get("line.separator", "\n"))
        self.header_separator = _unescape(props.get("headers.separator", ","))
        self.header_key_separator = _unescape(props.get("headers.key.separator", ":"))
        self.null = props.get("null.literal", "null")

    def _text(self, data: bytes | None) -> str:
        return self.null if data is None else data.decode("utf-8", errors="replace")

    def format(self, record: Any) -> str:
        columns = []
        if self.timestamp:
            kind = "LogAppendTime" if record.timestamp_type == 1 else "CreateTime"
            columns.append(f"{kind}:{record.timestamp}" if record.timestamp >= 0
                           else "NO_TIMESTAMP")
        if self.partition:
            columns.append(f"Partition:{record.partition}")
        if self.offset:
            columns.append(f"Offset:{record.offset}")
        if self.headers:
            headers = record.headers or []
            columns.append(self.header_separator.join(
                f"{k}{self.header_key_separator}{self._text(v)}" for k, v in headers)
                if headers else "NO_HEADERS")
        if self.key:
            columns.append(self._text(record.key))
        if self.value:
            columns.append(self._text(record.value))
        return self.separator.join(columns) + self.line_end


def _unescape(text: str) -> str:
    """Shells pass "\\t" literally; Kafka's tool reads it as a tab."""
    return text.encode().decode("unicode_escape") if "\\" in text else text


def _consumer(args: argparse.Namespace) -> Any:
    from kafka import KafkaConsumer, TopicPartition

    kafka_props: dict[str, str] = {}
    if args.consumer_config:
        kafka_props.update(read_config_file(args.consumer_config))
    kafka_props.update(properties(args.consumer_property, "--consumer-property"))
    if args.isolation_level:
        kafka_props["isolation.level"] = args.isolation_level
    config = client_config(kafka_props, KafkaConsumer.DEFAULT_CONFIG)
    config.setdefault("client_id", "console-consumer")
    config.setdefault("auto_offset_reset", "earliest" if args.from_beginning else "latest")
    if args.partition is not None:
        config["group_id"] = args.group
        config.setdefault("enable_auto_commit", args.group is not None)
    elif args.group:
        config["group_id"] = args.group
    else:
        # A throwaway group whose offsets are never used again: commit nothing.
        config["group_id"] = f"console-consumer-{random.randrange(100000)}"
        config.setdefault("enable_auto_commit", False)
    check_reachable(args.bootstrap_server)
    consumer = KafkaConsumer(bootstrap_servers=args.bootstrap_server, **config)
    # Metadata first: a member that joins before it knows the topic's partitions is
    # assigned nothing and must rejoin at once, and kafka-python 3.0.12 can lose that
    # second assignment when poll()'s timeout ends during the rejoin (the member then
    # sits with no partitions and no heartbeats).
    partitions = consumer.partitions_for_topic(args.topic)
    if args.partition is None:
        consumer.subscribe([args.topic])
        return consumer
    if not partitions or args.partition not in partitions:
        consumer.close()
        raise ToolError(f"partition {args.partition} of topic '{args.topic}' does not exist")
    tp = TopicPartition(args.topic, args.partition)
    consumer.assign([tp])
    if args.offset == "earliest":
        consumer.seek_to_beginning(tp)
    elif args.offset == "latest":
        consumer.seek_to_end(tp)
    elif args.offset.isdigit():
        consumer.seek(tp, int(args.offset))
    else:
        consumer.close()
        raise ToolError(f"--offset must be earliest, latest or a non-negative offset, "
                        f"got {args.offset!r}")
    return consumer


def consume(args: argparse.Namespace, out: TextIO) -> int:
    formatter = Formatter(properties(args.property, "--property"))
    consumer = _consumer(args)
    count = 0
    printed: dict[Any, int] = {}  # partition -> the offset after the last record printed
    idle_since = time.monotonic()
    try:
        while args.max_messages is None or count < args.max_messages:
            limit = 500 if args.max_messages is None else args.max_messages - count
            batch = consumer.poll(timeout_ms=POLL_MS, max_records=limit)
            if batch:
                for tp, records in batch.items():
                    for record in records:
                        out.write(formatter.format(record))
                        count += 1
                    printed[tp] = records[-1].offset + 1
                out.flush()
                idle_since = time.monotonic()
            elif not consumer.assignment():
                # Joining the group (group.initial.rebalance.delay.ms is 3 s) is not idling.
                idle_since = time.monotonic()
            elif args.timeout_ms is not None and \
                    (time.monotonic() - idle_since) * 1000 >= args.timeout_ms:
                break
    except KeyboardInterrupt:
        pass
    finally:
        print(f"Processed a total of {count} messages", file=sys.stderr)
        if consumer.config["enable_auto_commit"]:
            _commit(consumer, printed)
        consumer.close(autocommit=False)
    return 0


def _commit(consumer: Any, printed: dict[Any, int]) -> None:
    """With --group: commit what was printed, as Kafka's tool does when it stops. Said
    explicitly rather than left to close(): the offsets are the records printed, whatever
    the client's own positions say, and a commit that fails is reported, not logged away."""
    from kafka import OffsetAndMetadata
    from kafka.errors import KafkaError, RebalanceInProgressError

    if not printed:
        return
    offsets = {tp: OffsetAndMetadata(offset, "", -1) for tp, offset in printed.items()}
    deadline = time.monotonic() + COMMIT_TIMEOUT_S
    while True:
        try:
            consumer.commit(offsets)
            return
        except KafkaError as exc:
            # A rebalance (a member came or went, or this one was late to a heartbeat):
            # rejoin with a poll, then commit what was printed again, as the Java
            # consumer's close() does. The records that poll returns are not printed.
            if not isinstance(exc, RebalanceInProgressError) or time.monotonic() >= deadline:
                failed = exc
                break
        try:
            consumer.poll(timeout_ms=POLL_MS, max_records=1)
        except KafkaError as exc:
            failed = exc
            break
    print(f"[WARN] could not commit the offsets printed ({type(failed).__name__}); "
          "the group will read those records again", file=sys.stderr)
