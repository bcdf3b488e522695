"""A lab's view of its cluster and its set-up, through kafka-python's admin client: topics
dropped or created fresh, partitions' leaders and ISR, bytes on disk, live brokers."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

from minikafka.course.lab_cluster import bootstrap_servers


def drop_topics(*names: str, timeout_s: float = 60) -> None:
    """Delete topics left by an earlier run and wait until they are gone (Kafka deletes
    in the background), so a lab can create them again on a cluster that keeps its data."""
    from kafka import KafkaAdminClient
    from kafka.errors import UnknownTopicOrPartitionError

    admin = KafkaAdminClient(bootstrap_servers=bootstrap_servers(), client_id="lab-setup")
    try:
        present = [n for n in names if n in admin.list_topics()]
        if present:
            with contextlib.suppress(UnknownTopicOrPartitionError):  # deleted meanwhile
                admin.delete_topics(present)
        deadline = time.monotonic() + timeout_s
        while set(present) & set(admin.list_topics()):
            if time.monotonic() > deadline:
                raise TimeoutError(f"topics {present} still exist after {timeout_s} s")
            time.sleep(0.3)
    finally:
        admin.close()


def fresh_topic(name: str, partitions: int = 3, replication_factor: int = 3,
                config: dict[str, str] | None = None, *, timeout_s: float = 60) -> None:
    """Create `name` empty (deleting an earlier run's) and wait until every partition
    has a leader."""
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic
    from kafka.errors import TopicAlreadyExistsError

    drop_topics(name, timeout_s=timeout_s)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap_servers(), client_id="lab-setup")
    deadline = time.monotonic() + timeout_s
    try:
        while True:  # "marked for deletion" can outlive the name in the topic list
            try:
                admin.create_topics([NewTopic(name, partitions, replication_factor,
                                              topic_configs=dict(config or {}))])
                break
            except TopicAlreadyExistsError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        while time.monotonic() < deadline:
            parts = admin.describe_topics([name])[0].get("partitions") or []
            if len(parts) == partitions and all(p["leader_id"] >= 0 for p in parts):
                return
            time.sleep(0.2)
        raise TimeoutError(f"topic {name} has no leader for every partition after {timeout_s} s")
    finally:
        admin.close()


def _ask(question: Callable[[Any], Any], *, attempts: int = 20) -> Any:
    """question(admin) with a fresh KafkaAdminClient, again while brokers come and go: a
    crashed broker stays in the metadata until the controller notices (seconds), and a
    request sent to it fails with a connection error."""
    from kafka import KafkaAdminClient
    from kafka.errors import KafkaConnectionError, KafkaTimeoutError, NodeNotReadyError

    for attempt in range(attempts):
        admin = None
        try:
            admin = KafkaAdminClient(bootstrap_servers=bootstrap_servers(),
                                     client_id="lab-view", request_timeout_ms=5000)
            return question(admin)
        except (KafkaConnectionError, KafkaTimeoutError, NodeNotReadyError):
            if attempt == attempts - 1:
                raise
            time.sleep(0.5)
        finally:
            if admin is not None:
                admin.close()
    raise AssertionError("unreachable")


def partitions_table(topic: str) -> list[dict[str, Any]]:
    """Leader, replicas and ISR of each partition, as the admin API reports them."""
    parts = _ask(lambda admin: admin.describe_topics([topic])[0]["partitions"])
    return [{"partition": p["partition_index"],
             "leader": p["leader_id"] if p["leader_id"] >= 0 else None,
             "replicas": list(p["replica_nodes"]), "isr": sorted(p["isr_nodes"])}
            for p in sorted(parts, key=lambda p: p["partition_index"])]


def topic_bytes(topic: str) -> int:
    """Bytes the topic's batches take in the brokers' logs (each partition counted once,
    at its largest replica), from DescribeLogDirs: what compression saves on disk."""
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap_servers(), client_id="lab-view")
    try:
        sizes: dict[int, int] = {}
        for broker in admin.describe_log_dirs():
            for log_dir in broker["log_dirs"]:
                for t in log_dir["topics"]:
                    if t["name"] == topic:
                        for p in t["partitions"]:
                            i = p["partition_index"]
                            sizes[i] = max(sizes.get(i, 0), p["partition_size"])
        return sum(sizes.values())
    finally:
        admin.close()


def live_brokers() -> list[int]:
    """Ids of the brokers the cluster's metadata lists now."""
    brokers = _ask(lambda admin: admin.describe_cluster()["brokers"])
    return sorted(b["broker_id"] for b in brokers if not b.get("is_fenced"))
