"""The server-side assignors of the consumer group protocol (KIP-848): ``uniform`` (the
default, Kafka's UniformAssignor) and ``range`` (its RangeAssignor).

With KIP-848 the coordinator, not a leader consumer, computes the group's target
assignment. Each assignor is a pure function of the members' subscriptions, the
partitions they already have and the topics' partition counts:

    >>> topics = {"t1": 3}
    >>> subs = {"a": {"t1"}, "b": {"t1"}}
    >>> uniform(subs, topics, {})
    {'a': {'t1': frozenset({0, 2})}, 'b': {'t1': frozenset({1})}}
    >>> uniform(subs, topics, {"b": {"t1": frozenset({0, 1})}})   # sticky: b keeps what it can
    {'a': {'t1': frozenset({2})}, 'b': {'t1': frozenset({0, 1})}}
    >>> range_(subs, topics, {})
    {'a': {'t1': frozenset({0, 1})}, 'b': {'t1': frozenset({2})}}

Topics are keyed by topic id in the coordinator; any hashable name works here.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

Assignment = dict[str, frozenset[int]]
Assignor = Callable[[Mapping[str, set[str]], Mapping[str, int], Mapping[str, Assignment]],
                    dict[str, Assignment]]


def _pack(owned: dict[str, list[tuple[str, int]]]) -> dict[str, Assignment]:
    out: dict[str, Assignment] = {}
    for member, tps in sorted(owned.items()):
        by_topic: dict[str, set[int]] = {}
        for t, p in tps:
            by_topic.setdefault(t, set()).add(p)
        out[member] = {t: frozenset(ps) for t, ps in sorted(by_topic.items())}
    return out


def uniform(subscriptions: Mapping[str, set[str]], topics: Mapping[str, int],
            current: Mapping[str, Assignment]) -> dict[str, Assignment]:
    """Spread every subscribed partition evenly, moving as few as possible.

    Each member's quota is its fair share of the partitions it may take (for identical
    subscriptions: all partitions divided by the members, the remainder one each to
    the first members). A member keeps the partitions it has up to its quota; the
    rest go, one at a time, to the least loaded member subscribed to the topic.
    """
    members = sorted(subscriptions)
    if not members:
        return {}
    partitions = [(t, p) for t in sorted(topics) for p in range(topics[t])
                  if any(t in subscriptions[m] for m in members)]
    homogeneous = len({frozenset(subscriptions[m] & set(topics)) for m in members}) == 1
    quota: dict[str, int] = {}
    if homogeneous:
        base, extra = divmod(len(partitions), len(members))
        # Members that already hold more than the base share get the extra slots first.
        by_load = sorted(members, key=lambda m: (-sum(len(ps) for ps in
                                                      current.get(m, {}).values()), m))
        for i, m in enumerate(by_load):
            quota[m] = base + (1 if i < extra else 0)
    else:
        for m in members:
            share = sum(topics[t] / sum(1 for o in members if t in subscriptions[o])
                        for t in subscriptions[m] if t in topics)
            quota[m] = int(share + 0.999999)
    owned: dict[str, list[tuple[str, int]]] = {m: [] for m in members}
    taken: set[tuple[str, int]] = set()
    for m in members:
        for t, ps in sorted(current.get(m, {}).items()):
            if t not in topics or t not in subscriptions[m]:
                continue
            for p in sorted(ps):
                if p < topics[t] and (t, p) not in taken and len(owned[m]) < quota[m]:
                    owned[m].append((t, p))
                    taken.add((t, p))
    for t, p in partitions:
        if (t, p) in taken:
            continue
        eligible = [m for m in members if t in subscriptions[m]]
        m = min(eligible, key=lambda x: (len(owned[x]) >= quota[x], len(owned[x]), x))
        owned[m].append((t, p))
    return _pack(owned)


def range_(subscriptions: Mapping[str, set[str]], topics: Mapping[str, int],
           current: Mapping[str, Assignment]) -> dict[str, Assignment]:
    """Per topic, consecutive ranges of partitions to the members subscribed to it in
    member id order; the first (partitions % members) get one more. Members with the
    same subscriptions get the same partition numbers of co-partitioned topics."""
    owned: dict[str, list[tuple[str, int]]] = {m: [] for m in subscriptions}
    for t in sorted(topics):
        subscribers = sorted(m for m in subscriptions if t in subscriptions[m])
        if not subscribers:
            continue
        base, extra = divmod(topics[t], len(subscribers))
        start = 0
        for i, m in enumerate(subscribers):
            n = base + (1 if i < extra else 0)
            owned[m].extend((t, p) for p in range(start, start + n))
            start += n
    return _pack(owned)


# Kafka's names (group.consumer.assignors lists uniform first: the default).
ASSIGNORS: dict[str, Assignor] = {"uniform": uniform, "range": range_}
DEFAULT_ASSIGNOR = "uniform"
