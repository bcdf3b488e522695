"""DescribeShareGroupOffsets (key 90), v0-v1: each share-partition's start offset (and,
v1, its lag), what `kafka-share-groups.sh --describe` prints. A partition the group has no
state for has start offset -1; all of the group's share-partitions when Topics is null
(core.api.share_groups.describe_share_group_offsets, with its authorization)."""
from __future__ import annotations

from ...core.api import share_groups as api
from ...wire.messages import DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse
from ..registry import RequestContext
from ._common import caller, serving_broker
from ._share import topic_id

API_KEY = 90
MIN_VERSION = 0
MAX_VERSION = 1

_Group = DescribeShareGroupOffsetsResponse.DescribeShareGroupOffsetsResponseGroup
_Topic = _Group.DescribeShareGroupOffsetsResponseTopic
_Partition = _Topic.DescribeShareGroupOffsetsResponsePartition


def handle(ctx: RequestContext, request: DescribeShareGroupOffsetsRequest
           ) -> DescribeShareGroupOffsetsResponse:
    serving_broker(ctx)
    cluster = ctx.cluster
    who = caller(ctx)
    groups = []
    for group in request.groups:
        code, message, found = api.describe_share_group_offsets(
            cluster, who, ctx.broker_id, group.group_id,
            None if group.topics is None else {t.topic_name: t.partitions for t in group.topics})
        topics: dict[str, list] = {}
        for d in found:
            topics.setdefault(d.topic, []).append(_Partition(
                partition_index=d.partition, start_offset=d.start_offset,
                leader_epoch=d.leader_epoch, lag=d.lag, error_code=d.error_code,
                error_message=None))
        groups.append(_Group(
            group_id=group.group_id, error_code=code, error_message=message,
            topics=[_Topic(topic_name=t, topic_id=topic_id(cluster, t), partitions=ps)
                    for t, ps in topics.items()]))
    return DescribeShareGroupOffsetsResponse(version=ctx.api_version, throttle_time_ms=0,
                                             groups=groups)
