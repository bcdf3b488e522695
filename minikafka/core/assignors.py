"""Classic consumer-group partition assignors, as pure functions.

In the classic group protocol the *group leader* (a consumer, not the broker)
turns every member's subscription into an assignment.  Each function here takes
the members (in the order the coordinator lists them in its JoinGroup response)
and the partition count of every topic the leader knows about, and returns
``{member_id: sorted [(topic, partition), ...]}``.  Every member appears, idle
members with an empty list.

The results are the same as kafka-python 3.0.12's assignors (checked in
``tests/test_assignors.py``), tie-breaks and quirks included, except where
kafka-python crashes or gives an invalid answer: it drops static members that
are not listed contiguously (range, roundrobin), raises KeyError whenever
roundrobin must skip an unsubscribed member, and the sticky assignor can hand a
partition back to a previous owner that no longer subscribes to its topic.
Here those cases follow Java's rules or stay valid; see each docstring.

Eager or cooperative (KIP-429) -- what the group coordinator must know:

* **eager**: ``range``, ``roundrobin``, ``sticky``.  Before rejoining, every
  member revokes *all* its partitions; the new assignment is then handed out
  whole.  Simple, but the whole group stops consuming during a rebalance.
* **cooperative**: ``cooperative-sticky``.  Members keep consuming what they
  own while rejoining.  A partition that must change owner is left out of this
  round's assignment; its old owner revokes it and rejoins, and the next round
  gives it to the new owner.  A rebalance therefore takes two rounds when
  partitions move.

``REBALANCE_PROTOCOLS`` records which is which.  (Kafka 4's KIP-848
``group.protocol=consumer`` moves assignment to the broker; that is not here.)
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum

TopicPartition = tuple[str, int]
Assignment = dict[str, list[TopicPartition]]


@dataclass(frozen=True)
class Subscription:
    """What a member sends in its JoinGroup metadata.

    ``owned_partitions`` and ``generation`` are what the member last owned and
    in which generation: the sticky assignor reads them from its user data, the
    cooperative one from the subscription's OwnedPartitions/GenerationId fields.
    Keep them in the order the member sent them (grouped by topic, as on the
    wire): the sticky algorithm breaks some ties by that order.
    """

    topics: tuple[str, ...]
    owned_partitions: tuple[TopicPartition, ...] = ()
    generation: int = -1
    group_instance_id: str | None = None  # static membership (KIP-345)

    def __post_init__(self) -> None:
        # Accept lists too, but store tuples so a subscription stays immutable.
        object.__setattr__(self, "topics", tuple(self.topics))
        owned = tuple((t, p) for t, p in self.owned_partitions)
        object.__setattr__(self, "owned_partitions", owned)


AssignFn = Callable[[Mapping[str, Subscription], Mapping[str, int]], Assignment]


class RebalanceProtocol(IntEnum):
    """KIP-429 rebalance protocols; values as in Kafka's and kafka-python's enums."""

    EAGER = 0
    COOPERATIVE = 1


class UnknownAssignorError(ValueError):
    """A partition.assignment.strategy name that no assignor here answers to."""


def _leader_order(members: Mapping[str, Subscription]) -> list[str]:
    # Static members first, by group.instance.id, then dynamic ones by member
    # id (Java's MemberInfo order), so a restarted static member gets the same
    # partitions back.  Sorted as a whole: kafka-python's groupby-based version
    # drops members when static and dynamic ones interleave.
    def key(member_id: str) -> tuple[int, str, str]:
        instance_id = members[member_id].group_instance_id
        if instance_id is None:
            return (1, member_id, "")
        return (0, instance_id, member_id)

    return sorted(members, key=key)


def _result(members: Iterable[str], chosen: Mapping[str, Iterable[TopicPartition]]) -> Assignment:
    return {m: sorted(chosen.get(m, ())) for m in members}


def range_assign(
    members: Mapping[str, Subscription], partitions_per_topic: Mapping[str, int]
) -> Assignment:
    """Per topic, split its partitions into contiguous ranges over its subscribers.

    The first ``n % consumers`` subscribers (in leader order) get one extra.
    3 partitions over 5 consumers: c0..c2 get one each, c3 and c4 stay idle.
    Range is applied topic by topic, so with many topics the first consumers
    collect all the extras -- the classic range imbalance.  (Java 3.5+ also
    makes range rack-aware when members send rack ids, KIP-881; not modelled.)
    """
    order = _leader_order(members)
    chosen: dict[str, list[TopicPartition]] = {m: [] for m in members}
    topics = sorted({t for sub in members.values() for t in sub.topics})
    for topic in topics:
        if topic not in partitions_per_topic:
            continue  # no metadata yet: nothing to hand out
        consumers = [m for m in order if topic in members[m].topics]
        share, extra = divmod(partitions_per_topic[topic], len(consumers))
        start = 0
        for i, member in enumerate(consumers):
            length = share + (1 if i < extra else 0)
            chosen[member].extend((topic, p) for p in range(start, start + length))
            start += length
    return _result(members, chosen)


def roundrobin_assign(
    members: Mapping[str, Subscription], partitions_per_topic: Mapping[str, int]
) -> Assignment:
    """Deal all subscribed partitions, sorted, to members in turn (leader order).

    A member not subscribed to a partition's topic is skipped for that card,
    which can unbalance groups whose members subscribe to different topics.
    (kafka-python 3.0.12 raises KeyError on any such skip; this follows Java
    and kafka-python's own documented examples.)
    """
    order = _leader_order(members)
    chosen: dict[str, list[TopicPartition]] = {m: [] for m in members}
    topics = {t for sub in members.values() for t in sub.topics}
    dealer = itertools.cycle(order)
    for topic in sorted(t for t in topics if t in partitions_per_topic):
        for p in range(partitions_per_topic[topic]):
            member = next(dealer)
            # Terminates: the topic came from some member's subscription.
            while topic not in members[member].topics:
                member = next(dealer)
            chosen[member].append((topic, p))
    return _result(members, chosen)


class _Movements:
    """Partitions moved during one sticky rebalance, to avoid moving back and forth.

    If A->B already happened for some partition of a topic, a later B->A move
    of another partition of that topic is served by undoing the earlier one.
    """

    def __init__(self) -> None:
        self.moves: dict[TopicPartition, tuple[str, str]] = {}  # tp -> (first owner, now)
        self.by_topic: dict[str, dict[tuple[str, str], set[TopicPartition]]] = {}

    def _add(self, tp: TopicPartition, pair: tuple[str, str]) -> None:
        self.moves[tp] = pair
        self.by_topic.setdefault(tp[0], {}).setdefault(pair, set()).add(tp)

    def _drop(self, tp: TopicPartition) -> tuple[str, str]:
        pair = self.moves.pop(tp)
        pairs = self.by_topic[tp[0]]
        pairs[pair].discard(tp)
        if not pairs[pair]:
            del pairs[pair]
        if not pairs:
            del self.by_topic[tp[0]]
        return pair

    def record(self, tp: TopicPartition, old: str, new: str) -> None:
        if tp in self.moves:
            src, _ = self._drop(tp)
            if src != new:  # moving back home erases the record
                self._add(tp, (src, new))
        else:
            self._add(tp, (old, new))

    def partition_to_move(self, tp: TopicPartition, old: str, new: str) -> TopicPartition:
        pairs = self.by_topic.get(tp[0])
        if not pairs:
            return tp
        if tp in self.moves:
            old = self.moves[tp][0]
        reverse = pairs.get((new, old))
        # kafka-python takes an arbitrary (hash-ordered) element; the smallest is
        # our deterministic stand-in.
        return min(reverse) if reverse else tp


class _Sticky:
    """One run of the KIP-54 sticky algorithm as kafka-python implements it.

    Goals, in order: balance (counts differ by at most one, or no partition can
    move to a member with 2+ fewer), then keep partitions where they were.
    This is the pre-2.8 Java algorithm; Java today uses a different "constrained"
    algorithm when all members subscribe to the same topics, so Java and
    kafka-python can disagree on which balanced assignment they pick.
    """

    def __init__(
        self, members: Mapping[str, Subscription], partitions_per_topic: Mapping[str, int]
    ):
        self.members = members
        # Every known partition, even of topics nobody subscribes to (kafka-python
        # uses all topics in its cluster metadata; that matters in _identical()).
        self.candidates: dict[TopicPartition, list[str]] = {
            (t, p): [] for t, n in partitions_per_topic.items() for p in range(n)
        }
        self.potential: dict[str, list[TopicPartition]] = {}
        for member, sub in members.items():
            self.potential[member] = []
            for topic in sub.topics:
                for p in range(partitions_per_topic.get(topic, 0)):
                    self.potential[member].append((topic, p))
                    self.candidates[(topic, p)].append(member)
        self.current: dict[str, list[TopicPartition]] = {}
        self.previous: dict[TopicPartition, str] = {}  # owner one generation back
        self._read_claims()
        self.fresh = not self.current
        for member in members:
            self.current.setdefault(member, [])
        self.owner = {tp: m for m, tps in self.current.items() for tp in tps}
        self.active = set(members)  # members still allowed to gain or lose partitions
        self.movements = _Movements()

    def _read_claims(self) -> None:
        # The newest generation wins a partition claimed twice; the runner-up is
        # remembered as its previous owner.
        claims: dict[TopicPartition, dict[int, str]] = {}
        for member, sub in self.members.items():
            for tp in sub.owned_partitions:
                by_generation = claims.setdefault(tp, {})
                # Same generation twice: keep the first claim.  kafka-python tests
                # the generation for truth, so generation 0 overwrites instead.
                if not sub.generation or sub.generation not in by_generation:
                    by_generation[sub.generation] = member
        for tp, by_generation in claims.items():
            generations = sorted(by_generation, reverse=True)
            self.current.setdefault(by_generation[generations[0]], []).append(tp)
            if len(generations) > 1:
                self.previous[tp] = by_generation[generations[1]]

    def _identical(self) -> bool:
        # Order-sensitive list comparison, as in kafka-python and old Java.
        def all_equal(lists: list[list]) -> bool:
            return all(a == b for a, b in itertools.pairwise(lists))

        return all_equal(list(self.candidates.values())) and all_equal(
            list(self.potential.values())
        )

    def _sorted_partitions(self) -> list[TopicPartition]:
        # Fewest potential consumers first: the hardest to place go first.
        by_scarcity = sorted(self.candidates, key=lambda tp: (len(self.candidates[tp]), tp))
        if self.fresh or not self._identical():
            return by_scarcity
        # Identical subscriptions on a rebalance: list one partition at a time
        # from whoever holds most, preferring ones that recently changed owner.
        held = {m: [tp for tp in tps if tp in self.candidates] for m, tps in self.current.items()}
        order: list[TopicPartition] = []
        while any(held.values()):
            member = max((m for m in held if held[m]), key=lambda m: (len(held[m]), m))
            recently_moved = [tp for tp in held[member] if tp in self.previous]
            if recently_moved:
                tp = min(recently_moved)  # kafka-python: arbitrary set element
                held[member].remove(tp)
            else:
                tp = held[member].pop()
            order.append(tp)
        return order + [tp for tp in by_scarcity if tp not in order]

    def _drop_invalid_claims(
        self, sorted_partitions: list[TopicPartition]
    ) -> tuple[list[TopicPartition], bool]:
        """Forget claims on vanished partitions or unsubscribed topics.

        Returns the partitions left to place, and whether some member lost one
        by unsubscribing (then balancing may not start with new partitions only).
        """
        unassigned = list(sorted_partitions)
        revocation_required = False
        for member, tps in self.current.items():
            kept = []
            for tp in tps:
                if tp not in self.candidates:
                    del self.owner[tp]
                elif tp[0] not in self.members[member].topics:
                    del self.owner[tp]
                    revocation_required = True
                else:
                    unassigned.remove(tp)
                    kept.append(tp)
            self.current[member] = kept
        return unassigned, revocation_required

    def _load(self, member: str) -> tuple[int, str]:
        return (len(self.current[member]), member)

    def _least_loaded_first(self) -> list[str]:
        return sorted(self.active, key=self._load)

    def _least_loaded_taker(self, tp: TopicPartition) -> str:
        return min((m for m in self.active if tp[0] in self.members[m].topics), key=self._load)

    def _movable(self, tp: TopicPartition) -> bool:
        return len(self.candidates[tp]) >= 2

    def _can_change(self, member: str) -> bool:
        mine = self.current[member]
        return len(mine) < len(self.potential[member]) or any(self._movable(tp) for tp in mine)

    def _is_balanced(self) -> bool:
        """Loads within one, or no member could take a partition from a busier one."""
        loads = [len(self.current[m]) for m in self.active]
        if min(loads) >= max(loads) - 1:
            return True
        owner = {tp: m for m, tps in self.current.items() for tp in tps}
        for member in self._least_loaded_first():
            count = len(self.current[member])
            if count == len(self.potential[member]):
                continue
            for tp in self.potential[member]:
                if tp not in self.current[member] and count < len(self.current[owner[tp]]):
                    return False
        return True

    def _move(self, tp: TopicPartition, new: str) -> None:
        old = self.owner[tp]
        self.movements.record(tp, old, new)
        self.current[old].remove(tp)
        self.current[new].append(tp)
        self.owner[tp] = new

    def _reassign(self, tp: TopicPartition, new: str) -> None:
        old = self.owner[tp]
        moving = self.movements.partition_to_move(tp, old, new)
        substitute_owner = self.owner[moving]
        if substitute_owner != old:
            # Both moved earlier this round: undo both, else old stays overloaded.
            self._move(tp, substitute_owner)
        self._move(moving, new)

    def _reassign_rounds(self, partitions: list[TopicPartition]) -> bool:
        performed = False
        while True:
            modified = False
            for tp in partitions:
                if self._is_balanced():
                    break
                owner = self.owner[tp]
                load = len(self.current[owner])
                previous = self.previous.get(tp)
                if previous is not None:
                    # kafka-python reads a defaultdict here: a frozen previous
                    # owner comes back as an empty entry, which then counts in
                    # the balance score below.
                    previous_load = len(self.current.setdefault(previous, []))
                    # Like kafka-python, this does not check that the previous
                    # owner still subscribes to the topic (_repair() fixes the
                    # result).  A frozen one makes kafka-python crash; we skip it.
                    if load > previous_load + 1 and previous in self.active:
                        self._reassign(tp, previous)
                        performed = modified = True
                        continue
                if any(load > len(self.current[o]) + 1 for o in self.candidates[tp]):
                    self._reassign(tp, self._least_loaded_taker(tp))
                    performed = modified = True
            if not modified:
                return performed

    @staticmethod
    def _imbalance(assignment: Mapping[str, list]) -> int:
        counts = [len(tps) for tps in assignment.values()]
        return sum(abs(a - b) for a, b in itertools.combinations(counts, 2))

    def run(self) -> Assignment:
        sorted_partitions = self._sorted_partitions()
        unassigned, revocation_required = self._drop_invalid_claims(sorted_partitions)
        initializing = all(not tps for tps in self.current.values())

        for tp in unassigned:
            if self.candidates[tp]:
                member = self._least_loaded_taker(tp)
                self.current[member].append(tp)
                self.owner[tp] = member

        # Only partitions with 2+ candidates and members that could change take
        # part in balancing; the rest are set aside.
        sorted_partitions = [tp for tp in sorted_partitions if self._movable(tp)]
        unassigned = [tp for tp in unassigned if self._movable(tp)]
        frozen = {}
        for member in self.members:
            if not self._can_change(member):
                self.active.discard(member)
                frozen[member] = self.current.pop(member)

        before = {m: list(tps) for m, tps in self.current.items()}
        owner_before = dict(self.owner)
        if not revocation_required:
            self._reassign_rounds(unassigned)  # first try moving only new partitions
        performed = self._reassign_rounds(sorted_partitions)
        # Keep the moves only if they improved balance (not checked for the
        # first pass above, as in kafka-python).
        if (
            not initializing
            and performed
            and self._imbalance(self.current) >= self._imbalance(before)
        ):
            self.current, self.owner = before, owner_before

        self.current.update(frozen)
        self._repair()
        return _result(self.members, self.current)

    def _repair(self) -> None:
        # The previous-owner rule above can leave a partition with a member that
        # no longer subscribes to its topic; kafka-python returns that invalid
        # assignment.  Hand such partitions to the least-loaded subscriber.
        for member in self.members:
            stray = [tp for tp in self.current[member] if tp[0] not in self.members[member].topics]
            for tp in sorted(stray):
                new = min(self.candidates[tp], key=self._load)
                self.current[member].remove(tp)
                self.current[new].append(tp)


def sticky_assign(
    members: Mapping[str, Subscription], partitions_per_topic: Mapping[str, int]
) -> Assignment:
    """KIP-54 sticky assignment (eager): balanced, moving as few partitions as possible.

    Reads each member's ``owned_partitions``/``generation`` (its previous
    assignment).  Member order matters for ties, as in kafka-python.  Pass only
    subscribed topics in ``partitions_per_topic`` to behave like Java; extra
    topics are tolerated but, as in kafka-python, can change tie-breaks.
    """
    if not members:
        return {}
    return _Sticky(members, partitions_per_topic).run()


def cooperative_sticky_assign(
    members: Mapping[str, Subscription], partitions_per_topic: Mapping[str, int]
) -> Assignment:
    """KIP-429 cooperative sticky: the sticky target, minus partitions changing owner.

    A partition whose target owner differs from its current owner is given to
    nobody this round; the current owner revokes it (it is absent from its new
    assignment) and rejoins, and the next round places it.  Like kafka-python,
    the "current owner" of a partition claimed twice is the *last* claimant in
    member order, whatever the generations (Java uses the generation-checked
    owner).
    """
    target = sticky_assign(members, partitions_per_topic)
    owned_by = {tp: m for m, sub in members.items() for tp in sub.owned_partitions}
    return {
        member: [tp for tp in tps if owned_by.get(tp, member) == member]
        for member, tps in target.items()
    }


ASSIGNORS: dict[str, AssignFn] = {
    "range": range_assign,
    "roundrobin": roundrobin_assign,
    "sticky": sticky_assign,
    "cooperative-sticky": cooperative_sticky_assign,
}

REBALANCE_PROTOCOLS: dict[str, RebalanceProtocol] = {
    "range": RebalanceProtocol.EAGER,
    "roundrobin": RebalanceProtocol.EAGER,
    "sticky": RebalanceProtocol.EAGER,
    "cooperative-sticky": RebalanceProtocol.COOPERATIVE,
}


def get_assignor(name: str) -> AssignFn:
    """The assign function for a protocol name such as ``"range"``."""
    try:
        return ASSIGNORS[name]
    except KeyError:
        valid = ", ".join(sorted(ASSIGNORS))
        raise UnknownAssignorError(
            f"unknown partition assignor {name!r}; valid names: {valid}"
        ) from None
