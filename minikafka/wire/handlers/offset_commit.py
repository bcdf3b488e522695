"""OffsetCommit (key 8), v2-v10: a consumer's (or the admin client's) committed offsets.

The coordinator checks the member and generation (the admin client sends -1 and
may only commit for an empty group), then writes the offsets to
__consumer_offsets; the answer waits (a Deferred) until that write is replicated,
as Kafka's acks=all append does. The checks (authorization, UNKNOWN_TOPIC_OR_PARTITION
for a partition of an unknown topic, the member's) are core.api.offset_commit's, which
the in-process clients call too. v10 names topics by id (UNKNOWN_TOPIC_ID for an id the
cluster does not have).
"""
from __future__ import annotations

from typing import Any

from kafka.protocol.consumer.group import OffsetCommitRequest, OffsetCommitResponse

from ...core import api, errors
from ..registry import RequestContext
from ._common import caller, serving_broker, topic_uuid
from ._groups import answer_later

API_KEY = 8
MIN_VERSION = 2
MAX_VERSION = 10

_Topic = OffsetCommitResponse.OffsetCommitResponseTopic
_Partition = _Topic.OffsetCommitResponsePartition

TP = tuple[str, int]


# (topic name, None if the id is unknown; topic id, v10+; partitions) in request order.
Order = list[tuple[str | None, Any, list[int]]]


def _response(version: int, order: Order, codes: dict[TP, int]) -> OffsetCommitResponse:
    topics = []
    for name, topic_id, partitions in order:
        results = [_Partition(partition_index=p, error_code=errors.UNKNOWN_TOPIC_ID if name is None
                              else codes.get((name, p), errors.NONE)) for p in partitions]
        topics.append(_Topic(topic_id=topic_id, partitions=results) if version >= 10
                      else _Topic(name=name, partitions=results))
    return OffsetCommitResponse(version=version, throttle_time_ms=0, topics=topics)


def handle(ctx: RequestContext, request: OffsetCommitRequest):
    cluster = ctx.cluster
    serving_broker(ctx)
    version = ctx.api_version
    known = cluster.controller.topics
    by_id = {topic_uuid(t): t.name for t in known.values()} if version >= 10 else {}
    order: Order = []
    offsets: dict[TP, tuple[int, int, str]] = {}
    for topic in request.topics:
        name = by_id.get(topic.topic_id) if version >= 10 else topic.name
        order.append((name, topic.topic_id if version >= 10 else None,
                      [p.partition_index for p in topic.partitions]))
        if name is None:
            continue
        for p in topic.partitions:
            epoch = p.committed_leader_epoch if version >= 6 else -1
            offsets[(name, p.partition_index)] = (
                p.committed_offset, -1 if epoch is None else epoch, p.committed_metadata or "")
    if not offsets:
        return _response(version, order, {})
    instance_id = request.group_instance_id if version >= 7 else None

    def start(respond) -> None:
        api.offset_commit(cluster, caller(ctx), ctx.broker_id, request.group_id,
                          request.generation_id_or_member_epoch, request.member_id,
                          instance_id, offsets, respond, version)

    def answer(result: dict[TP, int]) -> OffsetCommitResponse:
        return _response(version, order, result)

    wait_ms = cluster.groups.config["offsets.commit.timeout.ms"]
    return answer_later(ctx, start, answer, wait_ms,
                        lambda: answer(api.commit_timed_out(offsets)))
