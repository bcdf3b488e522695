"""AlterShareGroupOffsets (key 91), v0: set an empty share group's start offsets
(`kafka-share-groups.sh --reset-offsets --execute`); each share-partition starts again
there with nothing in flight. A group with members answers NON_EMPTY_GROUP
(core.api.share_groups.alter_share_group_offsets, with its authorization)."""
from __future__ import annotations

from ...core.api import share_groups as api
from ...wire.messages import AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse
from ..registry import RequestContext
from ._common import caller, serving_broker
from ._share import topic_id

API_KEY = 91
MIN_VERSION = 0
MAX_VERSION = 0

_Topic = AlterShareGroupOffsetsResponse.AlterShareGroupOffsetsResponseTopic
_Partition = _Topic.AlterShareGroupOffsetsResponsePartition


def handle(ctx: RequestContext, request: AlterShareGroupOffsetsRequest
           ) -> AlterShareGroupOffsetsResponse:
    serving_broker(ctx)
    cluster = ctx.cluster
    code, message, results = api.alter_share_group_offsets(
        cluster, caller(ctx), ctx.broker_id, request.group_id,
        {(t.topic_name, p.partition_index): p.start_offset
         for t in request.topics for p in t.partitions})
    topics: dict[str, list] = {}
    for (topic, partition), partition_code in results.items():
        topics.setdefault(topic, []).append(_Partition(
            partition_index=partition, error_code=partition_code, error_message=None))
    return AlterShareGroupOffsetsResponse(
        version=ctx.api_version, throttle_time_ms=0, error_code=code, error_message=message,
        responses=[_Topic(topic_name=t, topic_id=topic_id(cluster, t), partitions=ps)
                   for t, ps in topics.items()])
