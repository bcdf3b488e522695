"""OffsetCommit (key 8), v2-v9: a consumer's (or the admin client's) committed offsets.

The coordinator checks the member and generation (the admin client sends -1 and
may only commit for an empty group), then writes the offsets to
__consumer_offsets; the answer waits (a Deferred) until that write is replicated,
as Kafka's acks=all append does. A partition of an unknown topic gets
UNKNOWN_TOPIC_OR_PARTITION and is not written.

v10 names topics by id only; until the clients in the course use it, serve up to v9.
"""
from __future__ import annotations

from kafka.protocol.consumer.group import OffsetCommitRequest, OffsetCommitResponse

from ...core import errors
from ..registry import RequestContext
from ._common import serving_broker
from ._groups import answer_later

API_KEY = 8
MIN_VERSION = 2
MAX_VERSION = 9

_Topic = OffsetCommitResponse.OffsetCommitResponseTopic
_Partition = _Topic.OffsetCommitResponsePartition

TP = tuple[str, int]


def _response(version: int, order: list[tuple[str, list[int]]],
              codes: dict[TP, int]) -> OffsetCommitResponse:
    return OffsetCommitResponse(version=version, throttle_time_ms=0, topics=[
        _Topic(name=name, partitions=[
            _Partition(partition_index=p, error_code=codes.get((name, p), errors.NONE))
            for p in partitions])
        for name, partitions in order])


def handle(ctx: RequestContext, request: OffsetCommitRequest):
    cluster = ctx.cluster
    serving_broker(ctx)
    version = ctx.api_version
    known = cluster.controller.topics
    order: list[tuple[str, list[int]]] = []
    codes: dict[TP, int] = {}
    offsets: dict[TP, tuple[int, int, str]] = {}
    for topic in request.topics:
        order.append((topic.name, [p.partition_index for p in topic.partitions]))
        meta = known.get(topic.name)
        for p in topic.partitions:
            tp = (topic.name, p.partition_index)
            if meta is None or not 0 <= p.partition_index < len(meta.partitions):
                codes[tp] = errors.UNKNOWN_TOPIC_OR_PARTITION
                continue
            epoch = p.committed_leader_epoch if version >= 6 else -1
            offsets[tp] = (p.committed_offset, -1 if epoch is None else epoch,
                           p.committed_metadata or "")
    if not offsets:
        return _response(version, order, codes)
    instance_id = request.group_instance_id if version >= 7 else None

    def start(respond) -> None:
        cluster.groups.offset_commit(
            ctx.broker_id, request.group_id, request.generation_id_or_member_epoch,
            request.member_id, instance_id, offsets, respond, version)

    def answer(result: dict[TP, int]) -> OffsetCommitResponse:
        return _response(version, order, {**result, **codes})

    def timed_out() -> OffsetCommitResponse:
        return answer(dict.fromkeys(offsets, errors.REQUEST_TIMED_OUT))

    wait_ms = cluster.groups.config["offsets.commit.timeout.ms"]
    return answer_later(ctx, start, answer, wait_ms, timed_out)
