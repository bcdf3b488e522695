"""ListOffsets (key 2), v1-v11: a codec over minikafka.core.api.list_offsets, which says
what each special timestamp means and what isolation levels change."""
from __future__ import annotations

from kafka.protocol.consumer import ListOffsetsRequest, ListOffsetsResponse

from ...core import api
from ...core.api import authz
from ..registry import RequestContext
from ._common import caller, serving_broker

API_KEY = 2
MIN_VERSION = 1
MAX_VERSION = 11

_Topic = ListOffsetsResponse.ListOffsetsTopicResponse
_Partition = _Topic.ListOffsetsPartitionResponse


def handle(ctx: RequestContext, request: ListOffsetsRequest) -> ListOffsetsResponse:
    broker = serving_broker(ctx)
    version = ctx.api_version
    isolation = api.READ_COMMITTED if version >= 2 and \
        request.isolation_level == api.READ_COMMITTED else api.READ_UNCOMMITTED
    # DESCRIBE on a topic is needed to list its offsets.
    refused = authz.describe_topics(ctx.cluster, caller(ctx), {t.name for t in request.topics})
    asked = api.ListOffsetsRequest(
        [api.ListOffsetsPartition(topic.name, p.partition_index, p.timestamp,
                                  p.current_leader_epoch if version >= 4 else -1)
         for topic in request.topics if topic.name not in refused for p in topic.partitions],
        isolation)
    results = iter(api.list_offsets(broker, ctx.cluster.controller.topics, asked))
    out = []
    for topic in request.topics:
        answers = []
        for p in topic.partitions:
            if topic.name in refused:
                answers.append(_Partition(partition_index=p.partition_index,
                                          error_code=refused[topic.name],
                                          timestamp=-1, offset=-1, leader_epoch=-1))
                continue
            r = next(results)
            answers.append(_Partition(partition_index=r.partition, error_code=r.error_code,
                                      timestamp=r.timestamp, offset=r.offset,
                                      leader_epoch=r.leader_epoch))
        out.append(_Topic(name=topic.name, partitions=answers))
    return ListOffsetsResponse(version=version, throttle_time_ms=0, topics=out)
