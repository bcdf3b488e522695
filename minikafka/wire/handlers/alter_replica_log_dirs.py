"""AlterReplicaLogDirs (key 34), v1-v2 (kafka-reassign-partitions.sh with log_dirs,
kafka-python's alter_replica_log_dirs): move replicas between this broker's log
directories (minikafka.core.api.log_dirs.alter_replica_log_dirs). Needs ALTER on the
cluster, else CLUSTER_AUTHORIZATION_FAILED for every replica."""
from __future__ import annotations

from kafka.protocol.admin import AlterReplicaLogDirsRequest, AlterReplicaLogDirsResponse

from ...core import errors
from ...core.api.log_dirs import alter_replica_log_dirs
from ..registry import RequestContext
from ._common import may_call, serving_broker

API_KEY = 34
MIN_VERSION = 1
MAX_VERSION = 2

_Topic = AlterReplicaLogDirsResponse.AlterReplicaLogDirTopicResult
_Partition = _Topic.AlterReplicaLogDirPartitionResult


def handle(ctx: RequestContext, request: AlterReplicaLogDirsRequest) -> AlterReplicaLogDirsResponse:
    broker = serving_broker(ctx)
    moves = {(topic.name, p): directory.path
             for directory in request.dirs for topic in directory.topics
             for p in topic.partitions}
    if may_call(ctx, "AlterReplicaLogDirs"):
        codes = alter_replica_log_dirs(ctx.cluster, broker.id, moves)
    else:
        codes = dict.fromkeys(moves, errors.CLUSTER_AUTHORIZATION_FAILED)
    by_topic: dict[str, list] = {}
    for (topic, p), code in codes.items():
        by_topic.setdefault(topic, []).append(_Partition(partition_index=p, error_code=code))
    return AlterReplicaLogDirsResponse(
        version=ctx.api_version, throttle_time_ms=0,
        results=[_Topic(topic_name=t, partitions=ps) for t, ps in by_topic.items()])
