"""DescribeLogDirs (key 35) and AlterReplicaLogDirs (key 34): a broker's log directories
(log.dirs), the replicas in each with their sizes, and moving a replica between them, as
`kafka-log-dirs.sh --describe` and `kafka-reassign-partitions.sh` (a reassignment JSON
with "log_dirs") use them.

On disk a broker has one directory per entry of log.dirs (minikafka.core.log_dirs); in
memory it has one directory that is a name only, /minikafka/broker-<id>. A move (Kafka's
ReplicaAlterLogDirsThread) shows as a future replica in the destination for
REPLICA_MOVE_MS of the simulated clock, then the copy replaces the current replica.
"""
from __future__ import annotations

import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import errors

if TYPE_CHECKING:
    from ..replica import Replica
    from ..storage import LogDir
    from .port import ClusterPort

REPLICA_MOVE_MS = 1_000  # how long a copy to another directory takes

TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class LogDirReplica:
    """One replica in a directory: DescribeLogDirsPartition."""

    topic: str
    partition: int
    size: int
    offset_lag: int
    is_future: bool


@dataclass(frozen=True)
class LogDirDescription:
    """One log directory of a broker: DescribeLogDirsResult."""

    log_dir: str
    error_code: int
    replicas: list[LogDirReplica]
    total_bytes: int  # -1 in memory: no file system to ask
    usable_bytes: int


def memory_log_dir(broker_id: int) -> str:
    """The name of an in-memory broker's one log directory."""
    return f"/minikafka/broker-{broker_id}"


def _lag(cluster: ClusterPort, replica: Replica) -> int:
    """How far this replica's log end is behind its partition's high watermark."""
    if replica.is_leader:
        return 0
    leader = cluster.leader_replica(replica.topic, replica.partition)
    hw = leader.high_watermark if leader is not None else replica.high_watermark
    return max(0, hw - replica.log_end_offset)


def describe_log_dirs(cluster: ClusterPort, broker_id: int,
                      partitions: Iterable[TopicPartition] | None = None
                      ) -> list[LogDirDescription]:
    """Every log directory of the broker with the replicas in it (only `partitions`, if
    given), a replica being moved listed a second time as the future one in its
    destination; total and usable bytes come from the directory's file system."""
    broker = cluster.brokers[broker_id]
    wanted = None if partitions is None else set(partitions)
    replicas = [r for tp, r in sorted(broker.replicas.items())
                if wanted is None or tp in wanted]
    dirs = cluster.log_dirs.get(broker_id)
    if dirs is None:
        return [LogDirDescription(
            memory_log_dir(broker_id), errors.NONE,
            [LogDirReplica(r.topic, r.partition, r.log.size_bytes, _lag(cluster, r), False)
             for r in replicas], -1, -1)]
    out = []
    for d in dirs.dirs:
        listed = []
        for r in replicas:
            tp = (r.topic, r.partition)
            if dirs.placed.get(tp) is d:
                listed.append(LogDirReplica(r.topic, r.partition, r.log.size_bytes,
                                            _lag(cluster, r), False))
            if dirs.future.get(tp) is d:  # the copy is under way: nothing caught up yet
                listed.append(LogDirReplica(r.topic, r.partition, 0, r.log_end_offset, True))
        usage = shutil.disk_usage(d.path)
        out.append(LogDirDescription(str(d.path), errors.NONE, listed,
                                     usage.total, usage.free))
    return out


def alter_replica_log_dirs(cluster: ClusterPort, broker_id: int,
                           moves: Mapping[TopicPartition, str]) -> dict[TopicPartition, int]:
    """Move each replica to the named directory of the same broker, as Kafka's
    ReplicaManager.alterReplicaLogDirs: a directory not in log.dirs is LOG_DIR_NOT_FOUND;
    a replica the broker does not host is REPLICA_NOT_AVAILABLE, and the directory is
    remembered so that the replica is created there when it comes (what
    kafka-reassign-partitions relies on); naming the current directory stops a move."""
    broker = cluster.brokers[broker_id]
    dirs = cluster.log_dirs.get(broker_id)
    out = {}
    for tp, path in moves.items():
        if dirs is None:
            here = path == memory_log_dir(broker_id)
            out[tp] = (errors.LOG_DIR_NOT_FOUND if not here else
                       errors.NONE if tp in broker.replicas else errors.REPLICA_NOT_AVAILABLE)
            continue
        dest = dirs.find(path)
        if dest is None:
            out[tp] = errors.LOG_DIR_NOT_FOUND
            continue
        replica = broker.replicas.get(tp)
        if replica is None or tp not in dirs.placed:
            dirs.preferred[tp] = dest
            out[tp] = errors.REPLICA_NOT_AVAILABLE
            continue
        out[tp] = errors.NONE
        if dirs.placed[tp] is dest:
            dirs.future.pop(tp, None)
        elif dirs.future.get(tp) is not dest:
            dirs.future[tp] = dest
            cluster.clock.call_later(REPLICA_MOVE_MS, _finish_move, cluster, broker_id, tp, dest)
            cluster.journal.record(cluster.now_ms, "log_dir.move.started", broker=broker_id,
                                   topic=tp[0], partition=tp[1], log_dir=path)
    return out


def _finish_move(cluster: ClusterPort, broker_id: int, tp: TopicPartition,
                 dest: LogDir) -> None:
    """The copy is done: the future replica replaces the current one."""
    with cluster.lock:
        broker = cluster.brokers[broker_id]
        dirs = cluster.log_dirs[broker_id]
        replica = broker.replicas.get(tp)
        if dirs.future.get(tp) is not dest or replica is None or not broker.running:
            return
        if dirs.finish_move(*tp, replica.log):
            dirs.write_checkpoints(broker.replicas.values())
            cluster.journal.record(cluster.now_ms, "log_dir.move.completed", broker=broker_id,
                                   topic=tp[0], partition=tp[1], log_dir=str(dest.path))
