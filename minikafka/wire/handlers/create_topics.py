"""CreateTopics (key 19), v2-v7, through the controller as Cluster.create_topic does.

-1 partitions or replication factor take num.partitions / default.replication.factor;
explicit assignments (partition index -> broker ids) replace both. validate_only runs
the checks and creates nothing. From v5 the answer carries the topic's partitions,
replication factor and effective configs; from v7 its topic id.
"""
from __future__ import annotations

from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse

from ...core import errors
from ...core.config import validate_topic_config, validate_topic_name
from ...core.controller import check_partitions_per_batch
from ...core.errors import KafkaCoreError
from ..registry import RequestContext
from ._common import (
    INVALID_REQUEST,
    KAFKA_ERRORS,
    error_code,
    error_message,
    serving_broker,
    topic_uuid,
)
from ._configs import topic_entries

API_KEY = 19
MIN_VERSION = 2
MAX_VERSION = 7

_Result = CreateTopicsResponse.CreatableTopicResult
_Config = _Result.CreatableTopicConfigs


def _assignment(topic) -> list[list[int]] | None:
    if not topic.assignments:
        return None
    if topic.num_partitions != -1 or topic.replication_factor != -1:
        raise KafkaCoreError(INVALID_REQUEST, "Both numPartitions or replicationFactor and "
                                              "replicasAssignments were set.")
    by_index = {a.partition_index: list(a.broker_ids) for a in topic.assignments}
    if sorted(by_index) != list(range(len(by_index))):
        raise KafkaCoreError(errors.INVALID_REPLICA_ASSIGNMENT,
                             "Partitions should be a consecutive 0-based integer sequence")
    lists = [by_index[i] for i in range(len(by_index))]
    if len({len(r) for r in lists}) != 1:
        raise KafkaCoreError(errors.INVALID_REPLICA_ASSIGNMENT,
                             "All partitions should have the same number of replicas")
    return lists


def _validate(cluster, name: str, partitions: int, rf: int, assignment, config: dict) -> None:
    """What the controller checks, without creating anything (validate_only)."""
    validate_topic_name(name)
    if name in cluster.controller.topics:
        raise KafkaCoreError(errors.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
    validate_topic_config(config)
    if assignment is not None:
        for replicas in assignment:
            if not replicas or len(set(replicas)) != len(replicas) or any(
                    b not in cluster.brokers for b in replicas):
                raise KafkaCoreError(errors.INVALID_REPLICA_ASSIGNMENT,
                                     f"Invalid replica assignment {replicas}")
        return
    if partitions <= 0:
        raise KafkaCoreError(errors.INVALID_PARTITIONS,
                             "Number of partitions must be larger than 0.")
    if rf <= 0 or rf > len(cluster.controller.brokers):
        raise KafkaCoreError(errors.INVALID_REPLICATION_FACTOR,
                             f"Replication factor: {rf} larger than available brokers: "
                             f"{len(cluster.controller.brokers)}.")


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


def handle(ctx: RequestContext, request: CreateTopicsRequest) -> CreateTopicsResponse:
    cluster = ctx.cluster
    serving_broker(ctx)
    version = ctx.api_version
    defaults = cluster.broker_config
    try:
        check_partitions_per_batch(_requested_partitions(request, int(defaults["num.partitions"])))
    except KafkaCoreError as exc:  # the whole request is refused, before any work
        return CreateTopicsResponse(version=version, throttle_time_ms=0, topics=[
            _Result(name=t.name, error_code=error_code(exc), error_message=error_message(exc), num_partitions=-1,
                    replication_factor=-1, configs=[]) for t in request.topics])
    names = [t.name for t in request.topics]
    results = []
    for topic in request.topics:
        name = topic.name
        result = _Result(name=name, error_code=errors.NONE, error_message=None,
                         num_partitions=-1, replication_factor=-1, configs=[])
        results.append(result)
        try:
            if names.count(name) > 1:
                raise KafkaCoreError(INVALID_REQUEST,
                                     f"Create topics request from client contains {name} more "
                                     "than once.")
            assignment = _assignment(topic)
            partitions = topic.num_partitions if topic.num_partitions != -1 \
                else int(defaults["num.partitions"])
            rf = topic.replication_factor if topic.replication_factor != -1 \
                else int(defaults["default.replication.factor"])
            config = {}
            for c in topic.configs:
                if c.value is None:
                    raise KafkaCoreError(errors.INVALID_CONFIG,
                                         f"Null value not supported for topic configs: {c.name}")
                config[c.name] = c.value
            if request.validate_only:
                _validate(cluster, name, partitions, rf, assignment, config)
                result.num_partitions = len(assignment) if assignment else partitions
                result.replication_factor = len(assignment[0]) if assignment else rf
                continue
            cluster.create_topic(name, partitions, rf, config=config,
                                 replica_assignment=assignment)
        except KAFKA_ERRORS as exc:
            result.error_code = error_code(exc)
            result.error_message = error_message(exc)
            continue
        meta = cluster.controller.topics[name]
        result.topic_id = topic_uuid(meta)
        result.num_partitions = len(meta.partitions)
        result.replication_factor = len(meta.partitions[0].replicas) if meta.partitions else -1
        result.configs = [_Config(name=e.name, value=e.value, read_only=e.read_only,
                                  config_source=e.source, is_sensitive=False)
                          for e in topic_entries(meta)]
    return CreateTopicsResponse(version=version, throttle_time_ms=0, topics=results)
