"""CreatePartitions (key 37): grow topics, through the controller.

The controller places the new replicas, or puts them on the brokers the request names for
each new partition (checked as Kafka's controller checks a manual assignment).
validate_only runs the same checks and changes nothing. A request that adds more than
10,000 partitions in all is refused whole, before any work.

    >>> from minikafka.cluster import Cluster
    >>> cluster = Cluster(brokers=3)
    >>> _ = cluster.create_topic("t", 2, 3)
    >>> for count in (5, 5, 4):
    ...     r, = create_partitions(cluster, [NewPartitions("t", count)])
    ...     print(r.error_code, r.error_message)
    0 None
    37 Topic currently has 5 partitions, 5 would not be an increase.
    37 Topic currently has 5 partitions, 4 would not be an increase.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import errors
from ..controller import check_partitions_per_batch
from ..errors import KafkaCoreError

if TYPE_CHECKING:
    from .port import ClusterPort


@dataclass(frozen=True)
class NewPartitions:
    name: str
    count: int  # the total the topic grows to
    assignments: Sequence[Sequence[int]] | None = None  # brokers of each new partition


@dataclass(frozen=True)
class CreatePartitionsResult:
    name: str
    error_code: int = errors.NONE
    error_message: str | None = None


def _grow(cluster: ClusterPort, topic: NewPartitions, validate_only: bool) -> None:
    meta = cluster.controller.topics.get(topic.name)
    if meta is None:
        raise KafkaCoreError(errors.UNKNOWN_TOPIC_OR_PARTITION,
                             f"This server does not host this topic-partition: {topic.name}")
    if topic.count <= len(meta.partitions):
        raise KafkaCoreError(errors.INVALID_PARTITIONS,
                             f"Topic currently has {len(meta.partitions)} partitions, "
                             f"{topic.count} would not be an increase.")
    assignments = None if topic.assignments is None else [list(r) for r in topic.assignments]
    cluster.controller.create_partitions(topic.name, topic.count, assignments, validate_only)
    if validate_only:
        return
    cluster.journal.record(cluster.now_ms, "partitions.created", topic=topic.name,
                           total=topic.count)


def create_partitions(cluster: ClusterPort, topics: Sequence[NewPartitions],
                      validate_only: bool = False) -> list[CreatePartitionsResult]:
    """One result per requested topic, in order; a topic named twice fails both times."""
    known = cluster.controller.topics
    added = sum(max(0, t.count - len(known[t.name].partitions))
                for t in topics if t.name in known)
    try:
        check_partitions_per_batch(added)
    except KafkaCoreError as exc:
        return [CreatePartitionsResult(t.name, exc.code, exc.message or None) for t in topics]
    names = [t.name for t in topics]
    out = []
    for topic in topics:
        try:
            if names.count(topic.name) > 1:
                raise KafkaCoreError(errors.INVALID_REQUEST, f"Duplicate topic {topic.name}")
            _grow(cluster, topic, validate_only)
            out.append(CreatePartitionsResult(topic.name))
        except KafkaCoreError as exc:
            out.append(CreatePartitionsResult(topic.name, exc.code, exc.message or None))
    if not validate_only and any(not r.error_code for r in out):
        cluster.publish_metadata()
    return out
