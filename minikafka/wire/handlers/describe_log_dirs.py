"""DescribeLogDirs (key 35), v1-v5 (kafka-log-dirs.sh): a thin codec over
core.api.describe_log_dirs for the broker the request came to."""
from __future__ import annotations

from kafka.protocol.admin import DescribeLogDirsRequest, DescribeLogDirsResponse

from ...core import api, errors
from ...core.acl import AclOperation, ResourceType
from ..registry import RequestContext
from ._common import authorize, serving_broker

API_KEY = 35
MIN_VERSION = 1
MAX_VERSION = 5

_Result = DescribeLogDirsResponse.DescribeLogDirsResult
_Topic = _Result.DescribeLogDirsTopic
_Partition = _Topic.DescribeLogDirsPartition


def handle(ctx: RequestContext, request: DescribeLogDirsRequest) -> DescribeLogDirsResponse:
    broker = serving_broker(ctx)
    if not authorize(ctx, AclOperation.DESCRIBE, ResourceType.CLUSTER):
        return DescribeLogDirsResponse(version=ctx.api_version, throttle_time_ms=0,
                                       error_code=errors.CLUSTER_AUTHORIZATION_FAILED,
                                       results=[])
    wanted = None if request.topics is None else \
        {t.topic: list(t.partitions) for t in request.topics}
    found = api.describe_log_dirs(ctx.cluster, broker.id, wanted)
    by_topic: dict[str, list] = {}
    for r in found.replicas:
        by_topic.setdefault(r.topic, []).append(_Partition(
            partition_index=r.partition, partition_size=r.size_bytes, offset_lag=r.offset_lag,
            is_future_key=False))
    result = _Result(error_code=found.error_code, log_dir=found.path,
                     topics=[_Topic(name=t, partitions=ps) for t, ps in by_topic.items()],
                     total_bytes=found.total_bytes, usable_bytes=found.usable_bytes,
                     is_cordoned=False)
    return DescribeLogDirsResponse(version=ctx.api_version, throttle_time_ms=0,
                                   error_code=errors.NONE, results=[result])
