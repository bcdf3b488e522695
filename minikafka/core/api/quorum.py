"""DescribeQuorum (key 55): the KRaft quorum of the metadata log, as
`kafka-metadata-quorum.sh describe --status|--replication` prints it.

minikafka runs KRaft in combined mode: the voters are brokers that are also controllers,
so each voter's log end offset is how far its broker has replayed the metadata log, and
the observers are the brokers that do not vote. The metadata log commits as it is
appended (the active controller's high watermark is its log end offset); a voter or
observer cut off from the active controller stops fetching and falls behind.
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


def directory_id(cluster_id: str, node_id: int) -> uuid.UUID:
    """The node's directory.id (its meta.properties'), as a UUID."""
    return uuid.UUID(int=random.Random(f"{cluster_id}/{node_id}").getrandbits(128))


def describe_quorum(cluster: ClusterPort, cluster_id: str) -> QuorumInfo:
    controller = cluster.controller
    quorum = controller.quorum
    end = len(controller.log)
    now = cluster.now_ms
    leader = quorum.leader

    def state(node: int) -> QuorumReplica:
        broker = cluster.brokers.get(node)
        if node == leader:
            leo, fetched, caught_up = end, now, now
        elif broker is None:
            leo, fetched, caught_up = -1, -1, -1
        elif cluster.can_reach_controller(node):
            # It fetches all the time, and the log commits as it is appended.
            leo, fetched, caught_up = end, now, now
        else:  # cut off: what it had when it last reached the active controller
            leo = broker.metadata_offset
            fetched, caught_up = broker.metadata_fetch_ms, broker.metadata_caught_up_ms
        return QuorumReplica(node, directory_id(cluster_id, node), leo, fetched, caught_up)

    voters = [state(v) for v in quorum.voters]
    observers = [state(b) for b in sorted(cluster.brokers) if b not in quorum.voters]
    return QuorumInfo(-1 if leader is None else leader, quorum.term,
                      end if leader is not None else -1, voters, observers)
