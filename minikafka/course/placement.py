"""Lesson 2's experiment: where a fresh cluster places a new topic's replicas, rack by rack."""

from __future__ import annotations

from collections.abc import Mapping

from minikafka.course.tables import Table

SIX_BROKERS_TWO_RACKS = {0: "rack-1", 1: "rack-1", 2: "rack-1",
                         3: "rack-2", 4: "rack-2", 5: "rack-2"}


def placement(partitions: int = 10, replication_factor: int = 3,
              racks: Mapping[int, str] | None = None, seed: int = 2) -> Table:
    """Where a fresh cluster (brokers and racks from ``racks``, six brokers in two racks
    by default) puts the replicas of a new topic: per partition the replica list (the
    first is the preferred leader) and the racks it covers."""
    from minikafka.cluster import Cluster

    racks = dict(SIX_BROKERS_TWO_RACKS if racks is None else racks)
    cluster = Cluster(brokers=sorted(racks), racks=racks, seed=seed,
                      controllers=[1001, 1002, 1003])
    desc = cluster.create_topic("placed", partitions=partitions,
                                replication_factor=replication_factor)
    rows = [{"partition": p.partition, "replicas": list(p.replicas),
             "preferred leader": p.replicas[0],
             "racks": sorted({racks[b] for b in p.replicas})} for p in desc.partitions]
    return Table(rows, title=f"{partitions} partitions x {replication_factor} replicas "
                             f"on {len(racks)} brokers")
