"""Kafka's `simple` share-group assignor (SimpleAssignor, KIP-932): a pure function.

Unlike a consumer group, a share group may give one partition to several members: the
records of a partition are shared out record by record at fetch time, not by owning the
partition. Kafka's rules, for members that all subscribe to the same topics:

1. each member is hashed onto one partition (Java's String.hashCode of its member id,
   modulo the number of partitions), so with more members than partitions several
   members share a partition;
2. partitions no member hashed to and nobody had before go round robin over the members;
3. partitions members already had (and still subscribe to) stay theirs: the assignment is
   sticky.

With one partition, every member gets it: two consumers of a one-partition topic share it.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..offsets import java_string_hash

TP = tuple[str, int]

NAME = "simple"


def _java_mod(a: int, b: int) -> int:
    """Java's % (the sign of the dividend)."""
    r = abs(a) % b
    return -r if a < 0 else r


def assign(members: Mapping[str, Sequence[str]], partitions: Mapping[str, int],
           current: Mapping[str, set[TP]] | None = None) -> dict[str, set[TP]]:
    """member id -> the partitions it gets. `members` maps each member (in join order) to
    its subscribed topics; `partitions` gives each topic's partition count (topics the
    cluster lacks are left out); `current` is the assignment so far."""
    current = current or {}
    out: dict[str, set[TP]] = {m: set() for m in members}
    wanted = {m: [(t, p) for t in sorted(set(topics)) if t in partitions
                  for p in range(partitions[t])] for m, topics in members.items()}
    owners: dict[TP, list[str]] = {}
    for member, tps in current.items():
        for tp in tps:
            owners.setdefault(tp, []).append(member)
    hashed: dict[TP, list[str]] = {}
    for member, targets in wanted.items():  # step 1
        if targets:
            tp = targets[abs(_java_mod(java_string_hash(member), len(targets)))]
            hashed.setdefault(tp, []).append(member)
    everything: list[TP] = []
    for targets in wanted.values():
        everything.extend(tp for tp in targets if tp not in everything)
    for topic in sorted({t for t, _ in everything}):  # step 2, per topic
        subscribers = [m for m, targets in wanted.items() if any(t == topic for t, _ in targets)]
        free = [tp for tp in everything if tp[0] == topic and tp not in hashed and tp not in owners]
        for i, tp in enumerate(free):
            hashed.setdefault(tp, []).append(subscribers[i % len(subscribers)])
    for tp, had in owners.items():  # step 3
        for member in had:
            if member in out and tp in wanted[member]:
                out[member].add(tp)
    for tp, got in hashed.items():
        for member in got:
            out[member].add(tp)
    return out
