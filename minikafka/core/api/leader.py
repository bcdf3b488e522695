"""The leader check every partition request starts with (Produce, Fetch, ListOffsets,
OffsetForLeaderEpoch, DeleteRecords, ShareFetch), the same for the wire and in process.
The broker calls it too, so it needs nothing of the broker but its replicas."""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from .. import errors

if TYPE_CHECKING:
    from ..controller import TopicMetadata
    from ..replica import Replica


class ReplicaHost(Protocol):
    """A broker as the leader check sees it: the replicas it holds."""

    @property
    def replicas(self) -> Mapping[tuple[str, int], Replica]: ...


def led_replica(broker: ReplicaHost, topics: Mapping[str, TopicMetadata], name: str, index: int,
                current_leader_epoch: int = -1) -> tuple[int, Replica | None]:
    """(error code, replica) for a request only a partition's leader may answer, checked
    in Kafka's order: the partition here and led by this broker (else NOT_LEADER_OR_FOLLOWER
    for a partition the cluster has, UNKNOWN_TOPIC_OR_PARTITION otherwise), then the
    leader epoch the client saw (KIP-320; -1 when it names none): FENCED_LEADER_EPOCH when
    it is older than the leader's, UNKNOWN_LEADER_EPOCH when newer."""
    replica = broker.replicas.get((name, index))
    if replica is None or not replica.is_leader:
        meta = topics.get(name)
        known = meta is not None and 0 <= index < len(meta.partitions)
        return (errors.NOT_LEADER_OR_FOLLOWER if known else errors.UNKNOWN_TOPIC_OR_PARTITION,
                None)
    if 0 <= current_leader_epoch != replica.leader_epoch:
        return (errors.FENCED_LEADER_EPOCH if current_leader_epoch < replica.leader_epoch
                else errors.UNKNOWN_LEADER_EPOCH, None)
    return errors.NONE, replica
