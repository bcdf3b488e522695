"""OffsetDelete (key 47), v0: delete a group's committed offsets for some partitions
(kafka-consumer-groups --delete-offsets). Refused per partition with
GROUP_SUBSCRIBED_TO_TOPIC while the group's members consume that topic
(core.api.offset_delete, as the in-process admin's delete_group_offsets)."""
from __future__ import annotations

from kafka.protocol.consumer.group import OffsetDeleteRequest, OffsetDeleteResponse

from ...core import api, errors
from ..registry import RequestContext
from ._common import caller, serving_broker

API_KEY = 47
MIN_VERSION = 0
MAX_VERSION = 0

_Topic = OffsetDeleteResponse.OffsetDeleteResponseTopic
_Partition = _Topic.OffsetDeleteResponsePartition


def handle(ctx: RequestContext, request: OffsetDeleteRequest) -> OffsetDeleteResponse:
    serving_broker(ctx)
    asked = [(t.name, [p.partition_index for p in t.partitions]) for t in request.topics]
    code, codes = api.offset_delete(ctx.cluster, caller(ctx), ctx.broker_id, request.group_id,
                                    [(name, p) for name, parts in asked for p in parts])
    if code:
        return OffsetDeleteResponse(version=0, error_code=code, throttle_time_ms=0, topics=[])
    return OffsetDeleteResponse(version=0, error_code=errors.NONE, throttle_time_ms=0, topics=[
        _Topic(name=name, partitions=[_Partition(partition_index=p, error_code=codes[(name, p)])
                                      for p in parts])
        for name, parts in asked])
