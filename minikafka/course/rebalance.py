"""Rebalances as the lessons watch them: ``RebalanceLog`` notes what a consumer's
rebalance listener is told, and ``rebalance_timeline()`` runs lesson 10's seeded
scenario for ``minikafka.viz.rebalance_view``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from kafka.structs import TopicPartition

if TYPE_CHECKING:
    from ..cluster import Cluster


class RebalanceLog:
    """A rebalance listener (kafka-python's ConsumerRebalanceListener methods) that
    writes down every revocation and assignment it is told about, as
    ("revoked" | "assigned" | "lost", [partition numbers]) pairs."""

    def __init__(self) -> None:
        self.events: list[tuple] = []

    def _note(self, what: str, tps: Iterable[TopicPartition]) -> None:
        self.events.append((what, sorted(tp.partition for tp in tps)))

    def on_partitions_revoked(self, revoked: Iterable[TopicPartition]) -> None:
        self._note("revoked", revoked)

    def on_partitions_assigned(self, assigned: Iterable[TopicPartition]) -> None:
        self._note("assigned", assigned)

    def on_partitions_lost(self, lost: Iterable[TopicPartition]) -> None:
        self._note("lost", lost)


class TimedRebalanceLog(RebalanceLog):
    """One member's listener for a shared timeline: (time, member, what, partitions)
    for every call that names partitions."""

    def __init__(self, cluster: Cluster, member: str, events: list) -> None:
        self.cluster, self.member, self.events = cluster, member, events

    def _note(self, what: str, tps: Iterable[TopicPartition]) -> None:
        parts = sorted(tp.partition for tp in tps)
        if parts:
            self.events.append((self.cluster.now_ms, self.member, what, parts))


def rebalance_timeline(strategy: str, *, partitions: int = 4, seed: int = 9,
                       poll_ms: int = 100, run_ms: int = 8_000) -> dict[str, Any]:
    """Consumer a owns every partition of `customers`; consumer b joins the group. Both
    poll every `poll_ms` until `run_ms` after b started. Plain data::

        {"strategy", "protocol": "eager" | "cooperative", "partitions": n,
         "members": ["a", "b"], "generations": [g, ...],
         "moments": [{"time_ms", "what": "a revoked [0, 1]", "owners": {p: member | None}}]}

    time_ms counts from b's start; the first moment is the state before it.
    """
    from minikafka.cluster import Cluster, settle_group
    from minikafka.core.assignors import REBALANCE_PROTOCOLS

    cluster = Cluster(brokers=3, seed=seed)
    cluster.create_topic("customers", partitions=partitions, replication_factor=3)
    events: list[tuple[int, str, str, list[int]]] = []
    a = cluster.consumer(group_id="g", client_id="a", partition_assignment_strategy=[strategy])
    a.subscribe(["customers"], listener=TimedRebalanceLog(cluster, "a", events))
    settle_group([a])
    events.clear()
    start = cluster.now_ms
    b = cluster.consumer(group_id="g", client_id="b", partition_assignment_strategy=[strategy])
    b.subscribe(["customers"], listener=TimedRebalanceLog(cluster, "b", events))
    generations = []
    while cluster.now_ms - start < run_ms:
        for c in (a, b):
            c.poll(timeout_ms=poll_ms)
        gen = cluster.groups.snapshot()["g"]["generation"]
        if not generations or generations[-1] != gen:
            generations.append(gen)
    owners: dict[int, str | None] = dict.fromkeys(range(partitions), "a")
    moments = [{"time_ms": 0, "what": "b starts", "owners": dict(owners)}]
    for time_ms, member, what, parts in events:
        for p in parts:
            if what == "assigned":
                owners[p] = member
            elif owners.get(p) == member:
                owners[p] = None
        moments.append({"time_ms": time_ms - start, "what": f"{member} {what} {parts}",
                        "owners": dict(owners)})
    a.close(autocommit=False)
    b.close(autocommit=False)
    return {"strategy": strategy, "protocol": REBALANCE_PROTOCOLS[strategy].name.lower(),
            "partitions": partitions, "members": ["a", "b"], "generations": generations,
            "moments": moments}
