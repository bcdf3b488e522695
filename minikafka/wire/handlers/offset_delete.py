"""OffsetDelete (key 47), v0: delete a group's committed offsets for some partitions
(kafka-consumer-groups --delete-offsets). Refused per partition with
GROUP_SUBSCRIBED_TO_TOPIC while the group's members consume that topic."""
from __future__ import annotations

from kafka.protocol.consumer.group import OffsetDeleteRequest, OffsetDeleteResponse

from ...core import errors
from ...core.api import authz
from ..registry import RequestContext
from ._common import (
    caller,
    serving_broker,
)

API_KEY = 47
MIN_VERSION = 0
MAX_VERSION = 0

_Topic = OffsetDeleteResponse.OffsetDeleteResponseTopic
_Partition = _Topic.OffsetDeleteResponsePartition


def handle(ctx: RequestContext, request: OffsetDeleteRequest) -> OffsetDeleteResponse:
    serving_broker(ctx)
    known = ctx.cluster.controller.topics
    asked = [(t.name, [p.partition_index for p in t.partitions]) for t in request.topics]
    code, refused = authz.offset_delete(ctx.cluster, caller(ctx), request.group_id,
                                        {name for name, _ in asked})
    if code:
        return OffsetDeleteResponse(version=0, error_code=code, throttle_time_ms=0, topics=[])
    unknown = {(name, p) for name, parts in asked for p in parts
               if name not in known or not 0 <= p < len(known[name].partitions)}
    code, result = ctx.cluster.groups.delete_offsets(
        ctx.broker_id, request.group_id,
        [(name, p) for name, parts in asked if name not in refused for p in parts
         if (name, p) not in unknown])
    if code != errors.NONE:
        return OffsetDeleteResponse(version=0, error_code=code, throttle_time_ms=0, topics=[])
    codes = {**result, **dict.fromkeys(unknown, errors.UNKNOWN_TOPIC_OR_PARTITION),
             **{(n, p): refused[n] for n, ps in asked if n in refused
                for p in ps}}
    return OffsetDeleteResponse(version=0, error_code=errors.NONE, throttle_time_ms=0, topics=[
        _Topic(name=name, partitions=[_Partition(partition_index=p, error_code=codes[(name, p)])
                                      for p in parts])
        for name, parts in asked])
