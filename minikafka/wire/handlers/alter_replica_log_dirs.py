"""AlterReplicaLogDirs (key 34), v1-v2 (kafka-reassign-partitions.sh with log_dirs,
kafka-python's alter_replica_log_dirs): move replicas between a broker's log directories.
A minikafka broker has one (core.api.log_dir_path), so the one answer that moves
nothing is the only success: its own directory is NONE, any other LOG_DIR_NOT_FOUND, as
Kafka answers for a directory not in log.dirs."""
from __future__ import annotations

from kafka.protocol.admin import AlterReplicaLogDirsRequest, AlterReplicaLogDirsResponse

from ...core import api, errors
from ...core.acl import AclOperation, ResourceType
from ..registry import RequestContext
from ._common import authorize, serving_broker

API_KEY = 34
MIN_VERSION = 1
MAX_VERSION = 2

LOG_DIR_NOT_FOUND = 57

_Topic = AlterReplicaLogDirsResponse.AlterReplicaLogDirTopicResult
_Partition = _Topic.AlterReplicaLogDirPartitionResult


def handle(ctx: RequestContext, request: AlterReplicaLogDirsRequest) -> AlterReplicaLogDirsResponse:
    broker = serving_broker(ctx)
    here = api.log_dir_path(ctx.cluster, broker.id)
    allowed = authorize(ctx, AclOperation.ALTER, ResourceType.CLUSTER)
    results = []
    for directory in request.dirs:
        code = errors.CLUSTER_AUTHORIZATION_FAILED if not allowed else \
            errors.NONE if directory.path == here else LOG_DIR_NOT_FOUND
        for topic in directory.topics:
            results.append(_Topic(topic_name=topic.name, partitions=[
                _Partition(partition_index=p, error_code=code) for p in topic.partitions]))
    return AlterReplicaLogDirsResponse(version=ctx.api_version, throttle_time_ms=0,
                                       results=results)
