"""What `kafka-metadata-quorum.sh describe` prints, for an in-process cluster.

Kafka's tool sends DescribeQuorum to the active controller and prints its view of the
metadata log's replicas: `--status` a summary (leader, epoch, high watermark, the voters
and observers), `--replication` one row per replica. These functions print the same two
layouts from a minikafka Cluster, so a lesson can put them next to real Kafka's output.

The model behind them: every node keeps a copy of `__cluster_metadata`. Voters (the
controllers) elect the leader and count towards the high watermark; observers (brokers
that are not controllers) fetch the log the same way but do not vote. A record is
committed (below the high watermark) once a majority of the voters have it. In minikafka
a voter that is also a broker has replayed `broker.metadata_offset` records; a dedicated
controller node is modelled as caught up while it is up. The leader knows the offset of
a replica it can reach; for one it cannot reach this shows -1, as Kafka does for a
replica that has not fetched from the current leader.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["QuorumReplica", "describe_replication", "describe_status", "quorum_replicas"]


@dataclass(frozen=True)
class QuorumReplica:
    node_id: int
    log_end_offset: int  # -1: unknown to the active controller
    lag: int  # the leader's log end minus this replica's (Kafka's Lag column)
    status: str  # "Leader", "Follower" (a voter) or "Observer"


def _reachable(cluster: Any, node: int) -> bool:
    leader = cluster.controller.quorum.leader
    network = cluster.network
    if leader is None or node in network.down or node in network.isolated:
        return False
    return node == leader or network.reachable(node, leader)


def _log_end(cluster: Any, node: int) -> int:
    if not _reachable(cluster, node):
        return -1
    broker = cluster.brokers.get(node)
    return len(cluster.metadata_log) if broker is None else broker.metadata_offset


def quorum_replicas(cluster: Any) -> list[QuorumReplica]:
    """The active controller's view: the leader, the other voters, then the observers."""
    quorum = cluster.controller.quorum
    end = len(cluster.metadata_log)
    voters = sorted(quorum.voters, key=lambda v: (v != quorum.leader, v))
    observers = sorted(b for b in cluster.brokers if b not in quorum.voters
                       and _reachable(cluster, b))
    rows = []
    for node in voters + observers:
        leo = end if node == quorum.leader else _log_end(cluster, node)
        status = ("Leader" if node == quorum.leader else
                  "Follower" if node in quorum.voters else "Observer")
        rows.append(QuorumReplica(node, leo, end - leo, status))
    return rows


def describe_status(cluster: Any) -> str:
    """`kafka-metadata-quorum.sh describe --status`: the quorum in one summary."""
    quorum = cluster.controller.quorum
    if quorum.leader is None:
        return ("Error: no active controller (a majority of the controller quorum is "
                "unavailable)")
    replicas = quorum_replicas(cluster)
    followers = [r for r in replicas if r.status == "Follower"]
    lines = [
        ("ClusterId", cluster.cluster_id),
        ("LeaderId", quorum.leader),
        ("LeaderEpoch", quorum.term),
        ("HighWatermark", len(cluster.metadata_log)),
        ("MaxFollowerLag", max((r.lag for r in followers), default=0)),
        ("CurrentVoters", json.dumps([{"id": v} for v in sorted(quorum.voters)])),
        ("CurrentObservers", json.dumps([{"id": r.node_id} for r in replicas
                                         if r.status == "Observer"])),
    ]
    return "\n".join(f"{k + ':':<24}{v}" for k, v in lines)


def describe_replication(cluster: Any) -> str:
    """`kafka-metadata-quorum.sh describe --replication`: one row per replica."""
    if cluster.controller.quorum.leader is None:
        return describe_status(cluster)
    rows = [("NodeId", "LogEndOffset", "Lag", "Status")]
    rows += [(str(r.node_id), str(r.log_end_offset), str(r.lag), r.status)
             for r in quorum_replicas(cluster)]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
                     for row in rows)
