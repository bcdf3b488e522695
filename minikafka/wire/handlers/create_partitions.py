"""CreatePartitions (key 37), v0-v3: grow a topic to `count` partitions.

The controller places the new replicas, or puts them on the brokers the request names
for each new partition (checked as Kafka's controller checks a manual assignment).
validate_only checks and changes nothing.
"""
from __future__ import annotations

from kafka.protocol.admin import CreatePartitionsRequest, CreatePartitionsResponse

from ...core import errors
from ...core.controller import check_partitions_per_batch
from ...core.errors import KafkaCoreError
from ..registry import RequestContext
from ._common import INVALID_REQUEST, KAFKA_ERRORS, error_code, error_message, serving_broker

API_KEY = 37
MIN_VERSION = 0
MAX_VERSION = 3

_Result = CreatePartitionsResponse.CreatePartitionsTopicResult


def _validate(cluster, name: str, count: int) -> None:
    meta = cluster.controller.topics.get(name)
    if meta is None:
        raise KafkaCoreError(errors.UNKNOWN_TOPIC_OR_PARTITION,
                             f"This server does not host this topic-partition: {name}")
    if count <= len(meta.partitions):
        raise KafkaCoreError(errors.INVALID_PARTITIONS,
                             f"Topic currently has {len(meta.partitions)} partitions, "
                             f"{count} would not be an increase.")


def handle(ctx: RequestContext, request: CreatePartitionsRequest) -> CreatePartitionsResponse:
    cluster = ctx.cluster
    serving_broker(ctx)
    topics = cluster.controller.topics
    added = sum(max(0, t.count - len(topics[t.name].partitions))
                for t in request.topics if t.name in topics)
    try:
        check_partitions_per_batch(added)
    except KafkaCoreError as exc:  # the whole request is refused, before any work
        return CreatePartitionsResponse(version=ctx.api_version, throttle_time_ms=0, results=[
            _Result(name=t.name, error_code=error_code(exc), error_message=error_message(exc))
            for t in request.topics])
    names = [t.name for t in request.topics]
    results = []
    for topic in request.topics:
        result = _Result(name=topic.name, error_code=errors.NONE, error_message=None)
        results.append(result)
        try:
            if names.count(topic.name) > 1:
                raise KafkaCoreError(INVALID_REQUEST, f"Duplicate topic {topic.name}")
            _validate(cluster, topic.name, topic.count)
            assignments = None if topic.assignments is None else [
                list(a.broker_ids) for a in topic.assignments]
            cluster.create_partitions(topic.name, topic.count, assignments,
                                      bool(request.validate_only))
        except KAFKA_ERRORS as exc:
            result.error_code = error_code(exc)
            result.error_message = error_message(exc)
    return CreatePartitionsResponse(version=ctx.api_version, throttle_time_ms=0,
                                    results=results)
