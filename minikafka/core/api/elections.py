"""ElectLeaders (key 43, kafka-leader-election.sh): preferred or unclean election for the
named partitions, or for every partition when none are named.

A preferred election moves leadership back to the first replica when it is in sync and
live; an unclean one elects any live replica for a partition that has no leader. Each
partition answers on its own: ELECTION_NOT_NEEDED when it already has the leader asked
for, PREFERRED_LEADER_NOT_AVAILABLE or ELIGIBLE_LEADERS_NOT_AVAILABLE when no election
can happen, UNKNOWN_TOPIC_OR_PARTITION for a partition that does not exist.

    >>> from minikafka.cluster import Cluster
    >>> cluster = Cluster(brokers=3, seed=1)
    >>> _ = cluster.create_topic("t", 1, 3)
    >>> for r in elect_leaders(cluster, PREFERRED, {"t": [0, 7]}):
    ...     print(r.partition, r.error_code, r.error_message)
    0 84 Leader election not needed for topic partition.
    7 3 The partition does not exist.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING

from .. import errors

if TYPE_CHECKING:
    from .port import ClusterPort


class ElectionType(IntEnum):
    """Kafka's ElectionType codes."""

    PREFERRED = 0
    UNCLEAN = 1


PREFERRED, UNCLEAN = ElectionType.PREFERRED, ElectionType.UNCLEAN

# The messages Kafka's controller sends with each answer.
MESSAGES = {
    errors.ELECTION_NOT_NEEDED: "Leader election not needed for topic partition.",
    errors.PREFERRED_LEADER_NOT_AVAILABLE: "Failed to elect leader for partition: "
                                            "the preferred replica is not in sync or not live.",
    errors.ELIGIBLE_LEADERS_NOT_AVAILABLE: "No live replica can become leader.",
    errors.UNKNOWN_TOPIC_OR_PARTITION: "The partition does not exist.",
}


@dataclass(frozen=True)
class ElectionResult:
    topic: str
    partition: int
    error_code: int = errors.NONE
    error_message: str | None = None


def elect_leaders(cluster: ClusterPort, election_type: ElectionType,
                  partitions: Mapping[str, Sequence[int]] | None = None
                  ) -> list[ElectionResult]:
    """One result per partition, by topic and partition. ``partitions`` None: every
    partition of every topic. The brokers learn the new leaders in one metadata update,
    and the election is journaled as ``leaders.elected``."""
    controller = cluster.controller
    unclean = election_type == UNCLEAN
    codes: dict[tuple[str, int], int] = {}
    if partitions is None:
        codes.update(controller.elect_leaders(None, None, unclean))
    for topic, wanted in (partitions or {}).items():
        count = len(controller.topics[topic].partitions) if topic in controller.topics else 0
        present = [p for p in wanted if 0 <= p < count]
        codes.update({(topic, p): errors.UNKNOWN_TOPIC_OR_PARTITION
                      for p in wanted if not 0 <= p < count})
        if present:
            codes.update(controller.elect_leaders(topic, present, unclean))
    kind = "unclean" if unclean else "preferred"
    cluster.journal.record(cluster.now_ms, "leaders.elected", election_type=kind,
                           results={f"{t}-{p}": c for (t, p), c in sorted(codes.items())})
    cluster.publish_metadata()
    return [ElectionResult(t, p, code, MESSAGES.get(code))
            for (t, p), code in sorted(codes.items())]
