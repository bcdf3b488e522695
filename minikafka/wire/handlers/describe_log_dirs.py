"""DescribeLogDirs (key 35), v1-v5 (kafka-log-dirs.sh, kafka-reassign-partitions.sh
--verify): each of this broker's log directories with the size and lag of each replica in
it (minikafka.core.api.log_dirs.describe_log_dirs). Needs DESCRIBE on the cluster."""
from __future__ import annotations

from kafka.protocol.admin import DescribeLogDirsRequest, DescribeLogDirsResponse

from ...core import errors
from ...core.api.log_dirs import describe_log_dirs
from ..registry import RequestContext
from ._common import may_call, serving_broker

API_KEY = 35
MIN_VERSION = 1
MAX_VERSION = 5

_Result = DescribeLogDirsResponse.DescribeLogDirsResult
_Topic = _Result.DescribeLogDirsTopic
_Partition = _Topic.DescribeLogDirsPartition


def handle(ctx: RequestContext, request: DescribeLogDirsRequest) -> DescribeLogDirsResponse:
    broker = serving_broker(ctx)
    if not may_call(ctx, "DescribeLogDirs"):
        return DescribeLogDirsResponse(version=ctx.api_version, throttle_time_ms=0,
                                       error_code=errors.CLUSTER_AUTHORIZATION_FAILED,
                                       results=[])
    wanted = None
    if request.topics is not None:
        wanted = [(t.topic, p) for t in request.topics for p in t.partitions]
    results = []
    for described in describe_log_dirs(ctx.cluster, broker.id, wanted):
        by_topic: dict[str, list] = {}
        for r in described.replicas:
            by_topic.setdefault(r.topic, []).append(_Partition(
                partition_index=r.partition, partition_size=r.size,
                offset_lag=r.offset_lag, is_future_key=r.is_future))
        results.append(_Result(
            error_code=described.error_code, log_dir=described.log_dir,
            topics=[_Topic(name=t, partitions=ps) for t, ps in by_topic.items()],
            total_bytes=described.total_bytes, usable_bytes=described.usable_bytes,
            is_cordoned=False))
    return DescribeLogDirsResponse(version=ctx.api_version, throttle_time_ms=0,
                                   error_code=errors.NONE, results=results)
