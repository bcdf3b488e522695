"""What `kafka-metadata-quorum.sh describe` prints, for an in-process cluster.

Kafka's tool sends DescribeQuorum to the active controller and prints its view of the
metadata log's replicas: `--status` a summary (leader, epoch, high watermark, the voters
and observers), `--replication` one row per replica. These functions print the same two
layouts from a minikafka Cluster, so a lesson can put them next to real Kafka's output.

The view is the one DescribeQuorum answers with (minikafka.core.api.describe_quorum):
every node keeps a copy of `__cluster_metadata`. Voters (the controllers) elect the leader
and count towards the high watermark; observers (brokers that are not controllers) fetch
the log the same way but do not vote. A replica cut off from the leader keeps the offset
it last had; one that has not fetched from the current leader shows -1, as in Kafka.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.api import describe_quorum

if TYPE_CHECKING:
    from ..cluster import Cluster

__all__ = ["QuorumReplica", "describe_replication", "describe_status", "quorum_replicas"]


@dataclass(frozen=True)
class QuorumReplica:
    node_id: int
    log_end_offset: int  # -1: unknown to the active controller
    lag: int  # the leader's log end minus this replica's (Kafka's Lag column)
    status: str  # "Leader", "Follower" (a voter) or "Observer"
    fetching: bool  # it fetches from the active controller now


def quorum_replicas(cluster: Cluster) -> list[QuorumReplica]:
    """The active controller's view: the leader, the other voters, then the observers."""
    info = describe_quorum(cluster, cluster.cluster_id)
    return [QuorumReplica(r.replica_id, r.log_end_offset, info.lag(r), status,
                          r.last_fetch_timestamp == cluster.now_ms)
            for r, status in info.replicas()]


def describe_status(cluster: Cluster) -> str:
    """`kafka-metadata-quorum.sh describe --status`: the quorum in one summary."""
    info = describe_quorum(cluster, cluster.cluster_id)
    if info.leader_id < 0:
        return ("Error: no active controller (a majority of the controller quorum is "
                "unavailable)")
    lines = [
        ("ClusterId", cluster.cluster_id),
        ("LeaderId", info.leader_id),
        ("LeaderEpoch", info.leader_epoch),
        ("HighWatermark", info.high_watermark),
        ("MaxFollowerLag", max((info.lag(r) for r, status in info.replicas()
                                if status == "Follower"), default=0)),
        ("CurrentVoters", json.dumps([{"id": r.replica_id}
                                      for r in sorted(info.voters, key=lambda r: r.replica_id)])),
        ("CurrentObservers", json.dumps([{"id": r.replica_id} for r in info.observers])),
    ]
    return "\n".join(f"{k + ':':<24}{v}" for k, v in lines)


def describe_replication(cluster: Cluster) -> str:
    """`kafka-metadata-quorum.sh describe --replication`: one row per replica."""
    if cluster.controller.quorum.leader is None:  # no active controller to answer
        return describe_status(cluster)
    rows = [("NodeId", "LogEndOffset", "Lag", "Status")]
    rows += [(str(r.node_id), str(r.log_end_offset), str(r.lag), r.status)
             for r in quorum_replicas(cluster)]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
                     for row in rows)
