"""DescribeLogDirs (key 35), v1-v5 (kafka-log-dirs.sh): this broker's one log
directory, and the size and lag of each replica in it. In memory the directory is
a name only (/minikafka/broker-<id>); with Cluster(log_dir=...) it is the real one."""
from __future__ import annotations

import shutil

from kafka.protocol.admin import DescribeLogDirsRequest, DescribeLogDirsResponse

from ...core import errors
from ..registry import RequestContext
from ._common import serving_broker

API_KEY = 35
MIN_VERSION = 1
MAX_VERSION = 5

_Result = DescribeLogDirsResponse.DescribeLogDirsResult
_Topic = _Result.DescribeLogDirsTopic
_Partition = _Topic.DescribeLogDirsPartition


def log_dir_path(cluster, broker_id: int) -> str:
    """The broker's one log directory: the real one on disk, else a name."""
    log_dir = getattr(cluster, "log_dirs", {}).get(broker_id)
    return str(log_dir.path) if log_dir is not None else f"/minikafka/broker-{broker_id}"


def _lag(cluster, replica) -> int:
    """How far this replica's log end is behind its partition's high watermark."""
    if replica.is_leader:
        return 0
    leader = cluster.leader_replica(replica.topic, replica.partition)
    hw = leader.high_watermark if leader is not None else replica.high_watermark
    return max(0, hw - replica.log_end_offset)


def handle(ctx: RequestContext, request: DescribeLogDirsRequest) -> DescribeLogDirsResponse:
    cluster = ctx.cluster
    broker = serving_broker(ctx)
    wanted = None
    if request.topics is not None:
        wanted = {(t.topic, p) for t in request.topics for p in t.partitions}
    by_topic: dict[str, list] = {}
    for (topic, p), replica in sorted(broker.replicas.items()):
        if wanted is not None and (topic, p) not in wanted:
            continue
        by_topic.setdefault(topic, []).append(_Partition(
            partition_index=p, partition_size=replica.log.size_bytes,
            offset_lag=_lag(cluster, replica), is_future_key=False))
    path = log_dir_path(cluster, broker.id)
    total = usable = -1
    if getattr(cluster, "log_dirs", {}).get(broker.id) is not None:
        usage = shutil.disk_usage(path)
        total, usable = usage.total, usage.free
    result = _Result(error_code=errors.NONE, log_dir=path,
                     topics=[_Topic(name=t, partitions=ps) for t, ps in by_topic.items()],
                     total_bytes=total, usable_bytes=usable, is_cordoned=False)
    return DescribeLogDirsResponse(version=ctx.api_version, throttle_time_ms=0,
                                   error_code=errors.NONE, results=[result])
