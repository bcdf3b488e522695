"""Kafka's command-line tools, for any bootstrap server (minikafka or a real cluster):

    minikafka topics            kafka-topics.sh
    minikafka console-producer  kafka-console-producer.sh
    minikafka console-consumer  kafka-console-consumer.sh
    minikafka consumer-groups   kafka-consumer-groups.sh
    minikafka dump-log          kafka-dump-log.sh
    minikafka configs           kafka-configs.sh

One module per tool, each with ``add_parser(subparsers)`` (Kafka's flag names) and
``run(args) -> int``; minikafka.cli registers ``PARSERS``. See docs/cli.md.
"""
from __future__ import annotations

import argparse
from collections.abc import Callable

from . import configs, console_consumer, console_producer, consumer_groups, dump_log, topics

PARSERS: list[Callable[[argparse._SubParsersAction], None]] = [
    m.add_parser for m in (topics, console_producer, console_consumer, consumer_groups, dump_log,
                           configs)
]

__all__ = ["PARSERS"]
