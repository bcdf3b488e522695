"""AlterPartitionReassignments (key 45), v0-v1 (kafka-reassign-partitions.sh --execute and
--cancel): move partitions to new replica sets, or with null replicas cancel a move.

v1 adds AllowReplicationFactorChange: when false, a target of another size is refused with
INVALID_REPLICATION_FACTOR.
"""
from __future__ import annotations

from kafka.protocol.admin import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
)

from ...core import errors
from ..registry import RequestContext
from ._common import KAFKA_ERRORS, error_code, error_message, may_call, serving_broker

API_KEY = 45
MIN_VERSION = 0
MAX_VERSION = 1

_Topic = AlterPartitionReassignmentsResponse.ReassignableTopicResponse
_Partition = _Topic.ReassignablePartitionResponse


def handle(ctx: RequestContext,
           request: AlterPartitionReassignmentsRequest) -> AlterPartitionReassignmentsResponse:
    cluster = ctx.cluster
    serving_broker(ctx)
    allow_rf_change = ctx.api_version < 1 or request.allow_replication_factor_change
    # ALTER on the cluster, else every partition (and the whole answer) is refused.
    refused = not may_call(ctx, "AlterPartitionReassignments")
    responses = []
    for topic in request.topics:
        partitions = []
        for partition in topic.partitions:
            result = _Partition(partition_index=partition.partition_index,
                                error_code=errors.NONE, error_message=None)
            replicas = None if partition.replicas is None else list(partition.replicas)
            if refused:
                result.error_code = errors.CLUSTER_AUTHORIZATION_FAILED
                partitions.append(result)
                continue
            try:
                cluster.reassign_partition(topic.name, partition.partition_index, replicas,
                                           allow_rf_change)
            except KAFKA_ERRORS as exc:
                result.error_code = error_code(exc)
                result.error_message = error_message(exc)
            partitions.append(result)
        responses.append(_Topic(name=topic.name, partitions=partitions))
    return AlterPartitionReassignmentsResponse(
        version=ctx.api_version, throttle_time_ms=0, allow_replication_factor_change=allow_rf_change,
        error_code=errors.CLUSTER_AUTHORIZATION_FAILED if refused else errors.NONE,
        error_message=None, responses=responses)
