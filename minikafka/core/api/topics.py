"""CreateTopics (key 19) and DeleteTopics (key 20), through the controller.

-1 partitions or replication factor take num.partitions / default.replication.factor;
explicit assignments (partition index -> broker ids) replace both. validate_only runs
exactly the checks of a real create, so it answers the same error and message, and
creates nothing (Kafka's controller does the same with its validateOnly flag).

    >>> from minikafka.cluster import Cluster
    >>> cluster = Cluster(brokers=3)
    >>> too_many = CreatableTopic("t", 1, 4)
    >>> for only in (True, False):
    ...     r, = create_topics(cluster, CreateTopicsRequest([too_many], validate_only=only))
    ...     print(r.error_code, r.error_message)
    38 The target replication factor of 4 cannot be reached because only 3 broker(s) are registered.
    38 The target replication factor of 4 cannot be reached because only 3 broker(s) are registered.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .. import errors
from ..controller import check_partitions_per_batch
from ..errors import KafkaCoreError
from ..offsets import OFFSETS_TOPIC

if TYPE_CHECKING:
    from .port import ClusterPort


@dataclass(frozen=True)
class CreatableTopic:
    name: str
    num_partitions: int = -1
    replication_factor: int = -1
    assignments: Mapping[int, Sequence[int]] | None = None  # partition -> broker ids
    configs: Mapping[str, str | None] = field(default_factory=dict)


@dataclass(frozen=True)
class CreateTopicsRequest:
    topics: Sequence[CreatableTopic]
    validate_only: bool = False


@dataclass(frozen=True)
class CreateTopicsResult:
    name: str
    error_code: int = errors.NONE
    error_message: str | None = None
    num_partitions: int = -1
    replication_factor: int = -1
    topic_id: str | None = None  # None for validate_only and errors


def _assignment(topic: CreatableTopic) -> list[list[int]] | None:
    if not topic.assignments:
        return None
    if topic.num_partitions != -1 or topic.replication_factor != -1:
        raise KafkaCoreError(errors.INVALID_REQUEST, "Both numPartitions or replicationFactor "
                                                     "and replicasAssignments were set.")
    by_index = {int(p): [int(b) for b in brokers] for p, brokers in topic.assignments.items()}
    if sorted(by_index) != list(range(len(by_index))):
        raise KafkaCoreError(errors.INVALID_REPLICA_ASSIGNMENT,
                             "Partitions should be a consecutive 0-based integer sequence")
    lists = [by_index[i] for i in range(len(by_index))]
    if len({len(r) for r in lists}) != 1:
        raise KafkaCoreError(errors.INVALID_REPLICA_ASSIGNMENT,
                             "All partitions should have the same number of replicas")
    return lists


def _create(cluster: ClusterPort, topic: CreatableTopic, validate_only: bool
            ) -> CreateTopicsResult:
    defaults = cluster.broker_config
    assignment = _assignment(topic)
    partitions = topic.num_partitions if topic.num_partitions != -1 \
        else int(defaults["num.partitions"])
    rf = topic.replication_factor if topic.replication_factor != -1 \
        else int(defaults["default.replication.factor"])
    config = {}
    for name, value in topic.configs.items():
        if value is None:
            raise KafkaCoreError(errors.INVALID_CONFIG,
                                 f"Null value not supported for topic configs: {name}")
        config[name] = value if isinstance(value, str) else str(value)
    meta = cluster.controller.create_topic(topic.name, partitions, rf, config, assignment,
                                           validate_only=validate_only)
    replicas = len(meta.partitions[0].replicas) if meta.partitions else -1
    if validate_only:
        return CreateTopicsResult(topic.name, num_partitions=len(meta.partitions),
                                  replication_factor=replicas)
    cluster.journal.record(cluster.now_ms, "topic.created", topic=topic.name,
                           partitions=len(meta.partitions),
                           replicas=[list(p.replicas) for p in meta.partitions])
    cluster.publish_metadata()
    return CreateTopicsResult(topic.name, num_partitions=len(meta.partitions),
                              replication_factor=replicas, topic_id=meta.topic_id)


def _requested_partitions(request: CreateTopicsRequest, default: int) -> int:
    """Kafka's validateTotalNumberOfPartitions: what the whole request asks for."""
    total = 0
    for topic in request.topics:
        if topic.assignments:
            total += len(topic.assignments)
        elif topic.num_partitions == -1:
            total += default
        elif topic.num_partitions > 0:
            total += topic.num_partitions
    return total


def create_topics(cluster: ClusterPort, request: CreateTopicsRequest) -> list[CreateTopicsResult]:
    """One result per requested topic, in order; a name asked twice fails both times.
    A request for more than 10,000 partitions in all is refused whole, before any work."""
    try:
        check_partitions_per_batch(
            _requested_partitions(request, int(cluster.broker_config["num.partitions"])))
    except KafkaCoreError as exc:
        return [CreateTopicsResult(t.name, exc.code, exc.message or None) for t in request.topics]
    names = [t.name for t in request.topics]
    out = []
    for topic in request.topics:
        try:
            if names.count(topic.name) > 1:
                raise KafkaCoreError(errors.INVALID_REQUEST,
                                     f"Create topics request from client contains "
                                     f"{topic.name} more than once.")
            out.append(_create(cluster, topic, request.validate_only))
        except KafkaCoreError as exc:
            out.append(CreateTopicsResult(topic.name, exc.code, exc.message or None))
    return out


@dataclass(frozen=True)
class DeleteTopicsResult:
    name: str
    error_code: int = errors.NONE
    error_message: str | None = None
    topic_id: str | None = None  # the deleted topic's id; None when it did not exist


def delete_topics(cluster: ClusterPort, names: Sequence[str]) -> list[DeleteTopicsResult]:
    """DeleteTopics by name: one result per name, in order (an unknown topic answers
    UNKNOWN_TOPIC_OR_PARTITION). The brokers learn of the deletions in one metadata
    update, and each deletion is journaled as ``topic.deleted``."""
    out = []
    for name in names:
        meta = cluster.controller.topics.get(name)
        try:
            cluster.controller.delete_topic(name)
        except KafkaCoreError as exc:
            out.append(DeleteTopicsResult(name, exc.code, exc.message or None))
            continue
        cluster.drop_topic_logs(meta.topic_id)
        if OFFSETS_TOPIC in cluster.controller.topics:  # else no group has offsets yet
            cluster.groups.on_topic_deleted(name)
        cluster.journal.record(cluster.now_ms, "topic.deleted", topic=name)
        out.append(DeleteTopicsResult(name, topic_id=meta.topic_id))
    if any(not r.error_code for r in out):
        cluster.publish_metadata()
    return out
