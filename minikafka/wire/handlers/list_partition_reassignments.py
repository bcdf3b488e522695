"""ListPartitionReassignments (key 46), v0 (kafka-reassign-partitions.sh --verify and
--list): the partitions with a move under way, their replica sets and the replicas being
added and removed. Named topics that do not exist are left out, as Kafka's controller does."""
from __future__ import annotations

from kafka.protocol.admin import (
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
)

from ...core import errors
from ..registry import RequestContext
from ._common import may_call, serving_broker

API_KEY = 46
MIN_VERSION = 0
MAX_VERSION = 0

_Topic = ListPartitionReassignmentsResponse.OngoingTopicReassignment
_Partition = _Topic.OngoingPartitionReassignment


def handle(ctx: RequestContext,
           request: ListPartitionReassignmentsRequest) -> ListPartitionReassignmentsResponse:
    serving_broker(ctx)
    if not may_call(ctx, "ListPartitionReassignments"):
        return ListPartitionReassignmentsResponse(
            version=ctx.api_version, throttle_time_ms=0,
            error_code=errors.CLUSTER_AUTHORIZATION_FAILED, error_message=None, topics=[])
    ongoing = ctx.cluster.list_partition_reassignments()
    if request.topics is not None:
        wanted = {(t.name, p) for t in request.topics for p in t.partition_indexes}
        ongoing = {tp: v for tp, v in ongoing.items() if tp in wanted}
    by_topic: dict[str, list] = {}
    for (topic, p), (replicas, adding, removing) in ongoing.items():
        by_topic.setdefault(topic, []).append(_Partition(
            partition_index=p, replicas=replicas, adding_replicas=adding,
            removing_replicas=removing))
    return ListPartitionReassignmentsResponse(
        version=ctx.api_version, throttle_time_ms=0, error_code=errors.NONE, error_message=None,
        topics=[_Topic(name=t, partitions=ps) for t, ps in by_topic.items()])
