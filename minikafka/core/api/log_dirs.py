"""DescribeLogDirs (key 35, kafka-log-dirs.sh): a broker's one log directory, and the
size and lag of each replica in it. In memory the directory is a name only
(/minikafka/broker-<id>); with Cluster(log_dir=...) it is the real one, with its disk's
total and free bytes."""
from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import errors

if TYPE_CHECKING:
    from .port import ClusterPort


@dataclass(frozen=True)
class ReplicaLog:
    topic: str
    partition: int
    size_bytes: int
    offset_lag: int  # how far its log end is behind the partition's high watermark


@dataclass(frozen=True)
class LogDirDescription:
    broker_id: int
    path: str
    replicas: tuple[ReplicaLog, ...]
    total_bytes: int = -1  # -1: an in-memory directory
    usable_bytes: int = -1
    error_code: int = errors.NONE


def _lag(cluster: ClusterPort, replica: Any) -> int:
    if replica.is_leader:
        return 0
    meta = cluster.controller.topics.get(replica.topic)
    leader_id = meta.partitions[replica.partition].leader if meta is not None else None
    leader = cluster.brokers[leader_id].replicas.get((replica.topic, replica.partition)) \
        if leader_id in cluster.brokers else None
    hw = leader.high_watermark if leader is not None else replica.high_watermark
    return max(0, hw - replica.log_end_offset)


def describe_log_dirs(cluster: ClusterPort, broker_id: int,
                      partitions: Mapping[str, Sequence[int]] | None = None
                      ) -> LogDirDescription:
    """The broker's log directory with each replica it holds (only ``partitions`` when
    given), by topic and partition."""
    broker = cluster.brokers[broker_id]
    wanted = None if partitions is None else \
        {(t, p) for t, ps in partitions.items() for p in ps}
    replicas = tuple(ReplicaLog(topic, p, replica.log.size_bytes, _lag(cluster, replica))
                     for (topic, p), replica in sorted(broker.replicas.items())
                     if wanted is None or (topic, p) in wanted)
    if getattr(cluster, "log_dirs", {}).get(broker_id) is None:
        return LogDirDescription(broker_id, log_dir_path(cluster, broker_id), replicas)
    path = log_dir_path(cluster, broker_id)
    usage = shutil.disk_usage(path)
    return LogDirDescription(broker_id, path, replicas, usage.total, usage.free)


def log_dir_path(cluster: ClusterPort, broker_id: int) -> str:
    """The broker's one log directory: the real one on disk, else a name
    (/minikafka/broker-<id>)."""
    log_dir = getattr(cluster, "log_dirs", {}).get(broker_id)
    return str(log_dir.path) if log_dir is not None else f"/minikafka/broker-{broker_id}"
