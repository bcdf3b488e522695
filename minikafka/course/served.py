"""A served cluster for a lesson's "on a real cluster" cells: kafka-python's own clients
connect to it as to any Kafka cluster."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def real_cluster(topics: Mapping[str, int] | None = None, *,
                 configs: Mapping[str, Mapping[str, str]] | None = None, seed: int = 0,
                 broker_config: Mapping[str, int | str] | None = None):
    """A fresh 3-broker minikafka cluster served over the Kafka protocol on free loopback
    ports, for a lesson's "on a real cluster" cell: kafka-python's own KafkaProducer and
    KafkaConsumer connect to ``server.bootstrap_servers`` exactly as to any Kafka cluster.
    ``topics`` maps names to partition counts (replication factor 3), ``configs`` gives
    a topic its settings, ``broker_config`` the brokers' (as ``--override`` does for
    ``minikafka serve`` and a Kafka broker). Unlike the lessons' simulated clusters a
    server runs on the wall clock, as any server does. Use it in a ``with`` block, which
    stops it."""
    from minikafka.cluster import Cluster

    cluster = Cluster(brokers=3, seed=seed, broker_config=dict(broker_config or {}))
    for name, partitions in (topics or {}).items():
        cluster.create_topic(name, partitions=partitions, replication_factor=3,
                             config=dict((configs or {}).get(name, {})))
    return cluster.serve(port=0, host="127.0.0.1")


def poll_side_by_side(consumers: Sequence[Any], until: Callable[[], bool], *,
                      timeout_s: float = 30, poll_ms: int = 500) -> bool:
    """Each consumer polls in a thread of its own, as application instances do, until
    ``until()`` holds or ``timeout_s`` passes; whether it held. (Taking turns in one loop
    is no substitute: kafka-python 3.0.12 can leave a member's JoinGroup/SyncGroup
    unfinished when a short poll() ends while it is in flight and the next poll comes
    late.)"""
    deadline = time.monotonic() + timeout_s

    def application(consumer: Any) -> None:
        while not until() and time.monotonic() < deadline:
            consumer.poll(timeout_ms=poll_ms)

    threads = [threading.Thread(target=application, args=(c,), daemon=True) for c in consumers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return until()


# librdkafka's own words for its preview share consumer (confluent-kafka 2.16).
PREVIEW_WARNING = 'is in "Preview"'


class _NotPreviewWarning:
    """Drops librdkafka's "Preview" warning; lets every other log line through."""

    def filter(self, record: logging.LogRecord) -> bool:
        return PREVIEW_WARNING not in record.getMessage()


def librdkafka_logger() -> logging.Logger:
    """A logger for a confluent-kafka client's ``"logger"`` setting: librdkafka's log
    lines go to stderr as usual, except the warning every ShareConsumer prints on start
    that share consumers are a preview (the lesson says so in words instead)."""
    logger = logging.getLogger("minikafka.course.librdkafka")
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.addFilter(_NotPreviewWarning())
        logger.addHandler(handler)
        logger.propagate = False
    return logger
