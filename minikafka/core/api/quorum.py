"""DescribeQuorum (key 55): the KRaft quorum of the metadata log, as
`kafka-metadata-quorum.sh describe --status|--replication` prints it.

minikafka runs KRaft in combined mode: the voters are brokers that are also controllers,
so each voter's log end offset is how far its broker has replayed the metadata log, and
the observers are the brokers that do not vote. The metadata log commits as it is
appended (the active controller's high watermark is its log end offset); a voter or
observer cut off from the active controller stops fetching and falls behind; one that has
not fetched since the current leader was elected is unknown to it (log end offset -1), as
in Kafka, where a new leader's view of the replicas starts empty. A controller-only node
(Cluster(controllers=[...])) has the whole log while it is up and reaches the leader.

    >>> from minikafka.cluster import Cluster
    >>> info = describe_quorum(Cluster(brokers=4, seed=3), "c")
    >>> [(r.replica_id, status) for r, status in info.replicas()]
    [(1, 'Leader'), (2, 'Follower'), (3, 'Follower'), (4, 'Observer')]
"""
from __future__ import annotations

import random
import uuid
from dataclasses import dataclass

from .port import ClusterPort


@dataclass(frozen=True)
class QuorumReplica:
    """One replica of the metadata log: ReplicaState in the DescribeQuorum response."""

    replica_id: int
    directory_id: uuid.UUID
    log_end_offset: int
    last_fetch_timestamp: int  # -1: never fetched
    last_caught_up_timestamp: int


@dataclass(frozen=True)
class QuorumInfo:
    leader_id: int  # -1 without an active controller
    leader_epoch: int
    high_watermark: int
    voters: list[QuorumReplica]
    observers: list[QuorumReplica]

    def replicas(self) -> list[tuple[QuorumReplica, str]]:
        """Each replica with its status, as `kafka-metadata-quorum.sh describe
        --replication` lists them: the leader, the other voters ("Follower"), then the
        observers."""
        voters = sorted(self.voters, key=lambda r: (r.replica_id != self.leader_id,
                                                    r.replica_id))
        return [(r, "Leader" if r.replica_id == self.leader_id else "Follower")
                for r in voters] + [(r, "Observer") for r in self.observers]

    def lag(self, replica: QuorumReplica) -> int:
        """The leader's log end offset minus the replica's (the tool's Lag column; a
        replica the leader knows nothing of, -1, lags the whole log plus one)."""
        return self.high_watermark - replica.log_end_offset


def directory_id(cluster_id: str, node_id: int) -> uuid.UUID:
    """The node's directory.id (its meta.properties'), as a UUID."""
    return uuid.UUID(int=random.Random(f"{cluster_id}/{node_id}").getrandbits(128))


def describe_quorum(cluster: ClusterPort, cluster_id: str) -> QuorumInfo:
    """The active controller's view of the metadata log's replicas (DescribeQuorum)."""
    controller = cluster.controller
    quorum = controller.quorum
    end = len(controller.log)
    now = cluster.now_ms
    leader = quorum.leader
    # Where the leader's term starts (its LeaderChangeMessage): a replica without that
    # record has not fetched from this leader.
    term_start = end
    while term_start > 0 and controller.log[term_start - 1].term == quorum.term:
        term_start -= 1

    def state(node: int) -> QuorumReplica:
        broker = cluster.brokers.get(node)
        if node == leader or (leader is not None and cluster.can_reach_controller(node)):
            # It fetches all the time, and the log commits as it is appended.
            leo, fetched, caught_up = end, now, now
        elif broker is None or broker.metadata_offset <= term_start:
            leo, fetched, caught_up = -1, -1, -1
        else:  # cut off: what it had when it last reached the active controller
            leo = broker.metadata_offset
            fetched, caught_up = broker.metadata_fetch_ms, broker.metadata_caught_up_ms
        return QuorumReplica(node, directory_id(cluster_id, node), leo, fetched, caught_up)

    voters = [state(v) for v in quorum.voters]
    observers = [state(b) for b in sorted(cluster.brokers) if b not in quorum.voters]
    return QuorumInfo(-1 if leader is None else leader, quorum.term,
                      end if leader is not None else -1, voters, observers)
