"""Replica placement for new partitions, as KRaft's StripedReplicaPlacer does it.

Racks are sorted and visited from a random starting rack; within a rack, brokers are
sorted and visited from a random starting broker. Each partition takes its first
replica (the preferred leader, never a fenced broker) from the current rack and the
rest round-robin across the other racks, then the starting rack moves on by one, so
with racks A, B, C partitions start A,B,C / B,C,A / C,A,B. After as many partitions
as there are unfenced brokers, the lists are shuffled to avoid repeating a pattern.
Seeded, so the same cluster seed gives the same placement.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from . import errors


class _Brokers:
    def __init__(self, ids: list[int], rng: random.Random) -> None:
        self.ids = sorted(ids)
        self.offset = rng.randrange(len(self.ids)) if self.ids else 0
        self.index = 0
        self.epoch = 0

    def next(self, epoch: int) -> int:
        if not self.ids:
            return -1
        if epoch != self.epoch:
            self.epoch, self.index = epoch, 0
            self.offset = (self.offset + 1) % len(self.ids)
        if self.index >= len(self.ids):
            return -1
        broker = self.ids[(self.index + self.offset) % len(self.ids)]
        self.index += 1
        return broker


class _Rack:
    def __init__(self, unfenced: list[int], fenced: list[int], rng: random.Random) -> None:
        self.fenced = _Brokers(fenced, rng)
        self.unfenced = _Brokers(unfenced, rng)

    def next(self, epoch: int) -> int:
        result = self.unfenced.next(epoch)
        return result if result >= 0 else self.fenced.next(epoch)


def place_replicas(
    num_partitions: int,
    replication_factor: int,
    brokers: Mapping[int, str | None],
    fenced: set[int],
    rng: random.Random,
) -> list[list[int]]:
    """Replica lists for new partitions; brokers maps broker id -> rack (or None)."""
    if replication_factor <= 0:
        raise errors.KafkaCoreError(
            errors.INVALID_REPLICATION_FACTOR,
            f"Invalid replication factor {replication_factor}: the replication factor "
            "must be positive.")
    unfenced_count = sum(1 for b in brokers if b not in fenced)
    if unfenced_count == 0:
        raise errors.KafkaCoreError(errors.INVALID_REPLICATION_FACTOR,
                                    "All brokers are currently fenced.")
    if replication_factor > len(brokers):
        raise errors.KafkaCoreError(
            errors.INVALID_REPLICATION_FACTOR,
            f"The target replication factor of {replication_factor} cannot be reached "
            f"because only {len(brokers)} broker(s) are registered.")
    by_rack: dict[str, tuple[list[int], list[int]]] = {}
    for broker, rack in brokers.items():
        entry = by_rack.setdefault(rack or "", ([], []))
        entry[1 if broker in fenced else 0].append(broker)
    names = sorted(by_rack)
    racks = {name: _Rack(by_rack[name][0], by_rack[name][1], rng) for name in names}
    offset = rng.randrange(len(names))
    epoch = 0
    placements: list[list[int]] = []
    for _ in range(num_partitions):
        if epoch == unfenced_count and unfenced_count > 1:
            rng.shuffle(names)
            for rack in racks.values():
                rng.shuffle(rack.unfenced.ids)
                rng.shuffle(rack.fenced.ids)
            epoch = 0
        if offset == len(names):
            offset = 0
        chosen: list[int] = []
        first = offset
        while True:  # the leader: the next unfenced broker from the current rack on
            result = racks[names[first]].unfenced.next(epoch)
            if result >= 0:
                chosen.append(result)
                break
            first = (first + 1) % len(names)
        rack_index = offset
        for _ in range(1, replication_factor):
            result = -1
            while result < 0:
                if rack_index == first:
                    first = -1  # the leader's rack already gave one this round
                else:
                    result = racks[names[rack_index]].next(epoch)
                rack_index = (rack_index + 1) % len(names)
            chosen.append(result)
        epoch += 1
        offset += 1
        placements.append(chosen)
    return placements


def zookeeper_era_assignment(num_partitions: int, replication_factor: int,
                             brokers: Sequence[tuple[int, str | None]],
                             start_index: int, shift: int) -> list[list[int]]:
    """History: AdminUtils' rack-alternated assignment (pre-KRaft, still used by
    kafka-reassign-partitions --generate). Racks {0,1,2},{3,4,5} alternate as 0,3,1,4,2,5."""
    by_rack: dict[str | None, list[int]] = {}
    for b, rack in sorted(brokers):
        by_rack.setdefault(rack, []).append(b)
    order: list[int] = []
    lists = [by_rack[r] for r in sorted(by_rack, key=str)]
    for i in range(max(len(x) for x in lists)):
        order.extend(x[i] for x in lists if i < len(x))
    n = len(order)
    result = []
    for p in range(num_partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = (p + start_index) % n
        replicas = [order[first]]
        for j in range(replication_factor - 1):
            replicas.append(order[(first + 1 + (shift + j) % (n - 1)) % n])
        result.append(replicas)
    return result
