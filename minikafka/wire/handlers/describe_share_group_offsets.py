"""DescribeShareGroupOffsets (key 90), v0-v1: each share-partition's start offset (and,
v1, its lag), what `kafka-share-groups.sh --describe` prints. A partition the group has no
state for has start offset -1; all of the group's share-partitions when Topics is null."""
from __future__ import annotations

from ...core import errors
from ...core.api import authz
from ...core.api import share as api
from ...wire.messages import DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse
from ..registry import RequestContext
from ._common import KAFKA_ERRORS, caller, error_code, error_message, serving_broker
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
    groups = []
    who = caller(ctx)

    def describable(topic: str) -> bool:
        return not authz.describe_topics(cluster, who, [topic])

    for group in request.groups:
        # DESCRIBE on the group, then on each topic: one asked for answers
        # TOPIC_AUTHORIZATION_FAILED, and all-topics leaves it out.
        refused_group = authz.offset_fetch(cluster, who, group.group_id)
        if refused_group:
            groups.append(_Group(group_id=group.group_id, topics=[],
                                 error_code=refused_group,
                                 error_message=None))
            continue
        try:
            cluster.share_groups.check_coordinator(ctx.broker_id, group.group_id)
        except KAFKA_ERRORS as exc:
            groups.append(_Group(group_id=group.group_id, topics=[], error_code=error_code(exc),
                                 error_message=error_message(exc)))
            continue
        refused = {t.topic_name: list(t.partitions) for t in group.topics or ()
                   if not describable(t.topic_name)}
        wanted = None if group.topics is None else {
            t.topic_name: list(t.partitions) for t in group.topics
            if t.topic_name not in refused}
        topics: dict[str, list] = {}
        for d in api.describe_share_group_offsets(cluster, group.group_id, wanted):
            if wanted is None and not describable(d.topic):
                continue
            topics.setdefault(d.topic, []).append(_Partition(
                partition_index=d.partition, start_offset=d.start_offset,
                leader_epoch=d.leader_epoch, lag=d.lag, error_code=d.error_code,
                error_message=None))
        for t, ps in refused.items():
            topics[t] = [_Partition(partition_index=p, start_offset=-1, leader_epoch=-1,
                                    lag=-1, error_code=errors.TOPIC_AUTHORIZATION_FAILED,
                                    error_message=None) for p in ps]
        groups.append(_Group(
            group_id=group.group_id, error_code=errors.NONE, error_message=None,
            topics=[_Topic(topic_name=t, topic_id=topic_id(cluster, t), partitions=ps)
                    for t, ps in topics.items()]))
    return DescribeShareGroupOffsetsResponse(version=ctx.api_version, throttle_time_ms=0,
                                             groups=groups)
