"""OffsetForLeaderEpoch (key 23), v2-v4: where a leader epoch ends in the leader's
log (KIP-320). A consumer asks after a leadership change to check that its position
was not truncated away; kafka-python 3 will not resume fetching without it.

The answer is the largest epoch <= the one asked and its end offset (the start of
the next epoch, or the log end offset for the latest), or -1/-1 if the log has no
such epoch.
"""
from __future__ import annotations

from kafka.protocol.consumer import OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse

from ...core import errors
from ..registry import RequestContext
from ._common import serving_broker

API_KEY = 23
MIN_VERSION = 2
MAX_VERSION = 4

_Topic = OffsetForLeaderEpochResponse.OffsetForLeaderTopicResult
_Partition = _Topic.EpochEndOffset


def handle(ctx: RequestContext,
           request: OffsetForLeaderEpochRequest) -> OffsetForLeaderEpochResponse:
    cluster = ctx.cluster
    broker = serving_broker(ctx)
    topics = cluster.controller.topics
    out = []
    for topic in request.topics:
        meta = topics.get(topic.topic)
        answers = []
        for wanted in topic.partitions:
            index = wanted.partition
            answer = _Partition(error_code=errors.NONE, partition=index, leader_epoch=-1,
                                end_offset=-1)
            answers.append(answer)
            replica = broker.replicas.get((topic.topic, index))
            if meta is None or not 0 <= index < len(meta.partitions):
                answer.error_code = errors.UNKNOWN_TOPIC_OR_PARTITION
            elif replica is None or not replica.is_leader:
                answer.error_code = errors.NOT_LEADER_OR_FOLLOWER
            elif 0 <= wanted.current_leader_epoch != replica.leader_epoch:
                answer.error_code = errors.FENCED_LEADER_EPOCH \
                    if wanted.current_leader_epoch < replica.leader_epoch \
                    else errors.UNKNOWN_LEADER_EPOCH
            else:
                answer.leader_epoch, answer.end_offset = \
                    replica.log.end_offset_for_epoch(wanted.leader_epoch)
        out.append(_Topic(topic=topic.topic, partitions=answers))
    return OffsetForLeaderEpochResponse(version=ctx.api_version, throttle_time_ms=0, topics=out)
