"""DescribeTopicPartitions (key 75), v0: what `kafka-topics.sh --describe` asks a Kafka
3.7+ broker. Metadata's partition fields (minikafka.core.api.partition_metadata) plus the eligible leader replicas and the last
known leader (KIP-966), a page at a time: topics in name order, at most
response_partition_limit partitions (and never more than 2000), and a cursor where the
next page starts.
"""
from __future__ import annotations

from kafka.protocol.admin import DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse

from ...core import errors
from ...core.api import authz
from ...core.api.metadata import partition_metadata
from ...core.config import validate_topic_name
from ..registry import RequestContext
from ._common import (
    caller,
    registered_brokers,
    serving_broker,
    topic_uuid,
)

API_KEY = 75
MIN_VERSION = 0
MAX_VERSION = 0

# max.request.partition.size.limit, Kafka's cap on a page whatever the client asks
MAX_PARTITIONS = 2000

_Topic = DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponseTopic
_Partition = _Topic.DescribeTopicPartitionsResponsePartition
_Cursor = DescribeTopicPartitionsResponse.Cursor


def _missing(name: str) -> _Topic:
    try:
        validate_topic_name(name)
        code = errors.UNKNOWN_TOPIC_OR_PARTITION
    except errors.KafkaCoreError as exc:
        code = exc.code
    return _Topic(error_code=code, name=name, is_internal=name.startswith("__"), partitions=[])


def _invalid(request: DescribeTopicPartitionsRequest) -> DescribeTopicPartitionsResponse:
    # Kafka's getErrorResponse: the error on every topic asked for
    return DescribeTopicPartitionsResponse(
        version=0, throttle_time_ms=0, next_cursor=None,
        topics=[_Topic(error_code=errors.INVALID_REQUEST, name=t.name, partitions=[])
                for t in request.topics])


def handle(ctx: RequestContext,
           request: DescribeTopicPartitionsRequest) -> DescribeTopicPartitionsResponse:
    cluster = ctx.cluster
    serving_broker(ctx)
    controller = cluster.controller
    who = caller(ctx)
    asked = [t.name for t in request.topics]
    cursor = request.cursor
    start_topic = cursor.topic_name if cursor is not None else ""
    if cursor is not None and (cursor.partition_index < 0 or asked and start_topic not in asked):
        return _invalid(request)
    names = sorted({n for n in (asked or controller.topics) if n >= start_topic})
    remaining = min(request.response_partition_limit, MAX_PARTITIONS)
    live = set(registered_brokers(cluster))
    topics, next_cursor = [], None
    for name in names:
        if remaining <= 0:
            next_cursor = _Cursor(topic_name=name, partition_index=0)
            break
        meta = controller.topics.get(name)
        if authz.describe_topics(ctx.cluster, who, [name]):
            if asked:  # a listing leaves it out; a name asked for is refused
                topics.append(_Topic(error_code=errors.TOPIC_AUTHORIZATION_FAILED, name=name,
                                     is_internal=False, partitions=[]))
            continue
        if meta is None:
            if asked:  # a listing of every topic skips what it cannot describe
                topics.append(_missing(name))
            continue
        first = cursor.partition_index if cursor is not None and name == start_topic else 0
        last = min(len(meta.partitions), first + remaining)
        partitions = [_Partition(
            error_code=errors.NONE, partition_index=p.partition, leader_id=p.leader,
            leader_epoch=p.leader_epoch, replica_nodes=p.replicas, isr_nodes=p.isr,
            eligible_leader_replicas=p.elr, last_known_elr=p.last_known_elr,
            offline_replicas=p.offline_replicas)
            for p in partition_metadata(cluster, name, live)[first:last]]
        topics.append(_Topic(error_code=errors.NONE, name=name, topic_id=topic_uuid(meta),
                             is_internal=meta.internal, partitions=partitions))
        if last < len(meta.partitions):
            next_cursor = _Cursor(topic_name=name, partition_index=last)
            break
        remaining -= len(partitions)
    return DescribeTopicPartitionsResponse(version=0, throttle_time_ms=0, topics=topics,
                                           next_cursor=next_cursor)
