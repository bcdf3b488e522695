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
from ...core.api import authz, led_replica
from ..registry import RequestContext
from ._common import (
    caller,
    serving_broker,
)

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
    refused = authz.describe_topics(cluster, caller(ctx), {t.topic for t in request.topics})
    out = []
    for topic in request.topics:
        answers = []
        for wanted in topic.partitions:
            index = wanted.partition
            answer = _Partition(error_code=errors.NONE, partition=index, leader_epoch=-1,
                                end_offset=-1)
            answers.append(answer)
            if topic.topic in refused:
                answer.error_code = refused[topic.topic]
                continue
            answer.error_code, replica = led_replica(broker, topics, topic.topic, index,
                                                     wanted.current_leader_epoch)
            if replica is not None:
                answer.leader_epoch, answer.end_offset = \
                    replica.log.end_offset_for_epoch(wanted.leader_epoch)
        out.append(_Topic(topic=topic.topic, partitions=answers))
    return OffsetForLeaderEpochResponse(version=ctx.api_version, throttle_time_ms=0, topics=out)
