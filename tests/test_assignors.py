"""minikafka.core.assignors against kafka-python 3.0.12's assignors, plus properties.

kafka-python is the reference: each case is run through its assignor classes
with member metadata encoded and decoded the way its consumer coordinator does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter

import pytest
from hypothesis import HealthCheck, currently_in_test_context, given, settings
from hypothesis import event as _event
from hypothesis import strategies as st
from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from kafka.coordinator.assignors.sticky import partition_movements, sticky_assignor
from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
from kafka.protocol.consumer.group import JoinGroupResponse
from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription
from kafka.structs import TopicPartition

from minikafka.core.assignors import (
    ASSIGNORS,
    REBALANCE_PROTOCOLS,
    RebalanceProtocol,
    Subscription,
    UnknownAssignorError,
    cooperative_sticky_assign,
    get_assignor,
    range_assign,
    roundrobin_assign,
    sticky_assign,
)

# ---------------------------------------------------------------- adapter to kafka-python


class _OrderedPicks(set):
    """A set whose pop() and iteration go in sorted order.

    kafka-python's sticky assignor takes "any element" of a set in two places
    (a partition that recently changed owner; a partition to move back), so its
    answer there depends on PYTHONHASHSEED.  minikafka takes the smallest; this
    pins kafka-python to the same choice.  Nothing else changes.
    """

    def pop(self):
        smallest = min(self)
        self.remove(smallest)
        return smallest

    def __iter__(self):
        return iter(sorted(set.__iter__(self)))

    def intersection(self, *others):
        return _OrderedPicks(set.intersection(self, *others))


@pytest.fixture(scope="module", autouse=True)
def _pin_kafka_python_picks():
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sticky_assignor, "set", _OrderedPicks, raising=False)
        mp.setattr(partition_movements, "set", _OrderedPicks, raising=False)
        yield


class _Cluster:
    """The two ClusterMetadata methods the assignors call."""

    def __init__(self, partitions_per_topic):
        self._partitions = dict(partitions_per_topic)

    def topics(self):
        return set(self._partitions)

    def partitions_for_topic(self, topic):
        if topic not in self._partitions:
            return None
        return set(range(self._partitions[topic]))


def _grouped(owned):
    """Owned partitions grouped by topic, in first-seen order, as on the wire."""
    by_topic = {}
    for topic, partition in owned:
        by_topic.setdefault(topic, []).append(partition)
    return by_topic


def _wire_metadata(name, sub):
    """The ConsumerProtocolSubscription a kafka-python member would send, round-tripped."""
    if name == "sticky":
        owned = None
        if sub.owned_partitions or sub.generation != -1:
            owned = [TopicPartition(t, p) for t, p in sub.owned_partitions]
        metadata = StickyPartitionAssignor._metadata(list(sub.topics), owned, sub.generation)
    elif name == "cooperative-sticky":
        tp = ConsumerProtocolSubscription.TopicPartition
        metadata = ConsumerProtocolSubscription(
            version=2,  # v2 carries GenerationId; kafka-python itself sends v1 (generation -1)
            topics=list(sub.topics),
            user_data=b"",
            owned_partitions=[
                tp(topic=t, partitions=ps) for t, ps in _grouped(sub.owned_partitions).items()
            ],
            generation_id=sub.generation,
        )
    else:
        metadata = ConsumerProtocolSubscription(version=0, topics=list(sub.topics), user_data=b"")
    return ConsumerProtocolSubscription.decode(metadata.encode())


def kafka_python_assign(name, members, partitions_per_topic):
    assignor = {
        "range": RangePartitionAssignor,
        "roundrobin": RoundRobinPartitionAssignor,
        "sticky": StickyPartitionAssignor(),
        "cooperative-sticky": CooperativeStickyAssignor(),
    }[name]
    join_members = [
        JoinGroupResponse.JoinGroupResponseMember(
            member_id=member_id,
            group_instance_id=sub.group_instance_id,
            metadata=_wire_metadata(name, sub),
        )
        for member_id, sub in members.items()
    ]
    result = assignor.assign(_Cluster(partitions_per_topic), join_members)
    return {m: sorted((tp.topic, tp.partition) for tp in a.partitions()) for m, a in result.items()}


def static_first(members):
    """kafka-python groups static/dynamic members with itertools.groupby, which
    only works when each kind is contiguous (see test_kafka_python_groupby_bug)."""
    return dict(sorted(members.items(), key=lambda kv: kv[1].group_instance_id is None))


def reference(name, members, partitions_per_topic):
    if name in ("range", "roundrobin"):
        members = static_first(members)
    return kafka_python_assign(name, members, partitions_per_topic)


# ---------------------------------------------------------------- checks


def check_valid(members, partitions_per_topic, assignment, *, complete=True):
    """Every member listed; partitions exist, go to subscribers, at most once
    (exactly once when ``complete``)."""
    assert list(assignment) == list(members)
    owners = Counter(tp for tps in assignment.values() for tp in tps)
    assert all(n == 1 for n in owners.values()), owners
    for member, tps in assignment.items():
        assert tps == sorted(tps)
        for topic, partition in tps:
            assert topic in members[member].topics
            assert 0 <= partition < partitions_per_topic[topic]
    if complete:
        wanted = {
            (t, p)
            for sub in members.values()
            for t in sub.topics
            if t in partitions_per_topic
            for p in range(partitions_per_topic[t])
        }
        assert set(owners) == wanted


def counts(assignment):
    return sorted(len(tps) for tps in assignment.values())


def subs(topics_by_member, **extra):
    return {m: Subscription(tuple(ts), **extra) for m, ts in topics_by_member.items()}


def tps(text):
    """'t0-0 t1-2' -> [('t0', 0), ('t1', 2)]"""
    return [(t, int(p)) for t, p in (x.rsplit("-", 1) for x in text.split())]


# ---------------------------------------------------------------- registry


def test_registry_names_and_protocols():
    assert set(ASSIGNORS) == {"range", "roundrobin", "sticky", "cooperative-sticky"}
    assert get_assignor("range") is range_assign
    assert get_assignor("cooperative-sticky") is cooperative_sticky_assign
    assert REBALANCE_PROTOCOLS == {
        "range": RebalanceProtocol.EAGER,
        "roundrobin": RebalanceProtocol.EAGER,
        "sticky": RebalanceProtocol.EAGER,
        "cooperative-sticky": RebalanceProtocol.COOPERATIVE,
    }
    # Same names and protocol values as kafka-python's assignor classes.
    for cls in (
        RangePartitionAssignor,
        RoundRobinPartitionAssignor,
        StickyPartitionAssignor,
        CooperativeStickyAssignor,
    ):
        assert [int(p) for p in cls().supported_protocols()] == [int(REBALANCE_PROTOCOLS[cls.name])]


def test_unknown_assignor():
    with pytest.raises(
        UnknownAssignorError, match="valid names: cooperative-sticky, range, roundrobin, sticky"
    ):
        get_assignor("uniform")
    assert issubclass(UnknownAssignorError, ValueError)


# ---------------------------------------------------------------- hand-picked cases

ALL = sorted(ASSIGNORS)


@pytest.mark.parametrize("name", ALL)
def test_more_consumers_than_partitions_leaves_idle_consumers(name):
    # The seed's "3 partitions and you have 5 consumers".
    members = subs({f"consumer-{i}": ["customers"] for i in range(5)})
    got = ASSIGNORS[name](members, {"customers": 3})
    check_valid(members, {"customers": 3}, got)
    assert counts(got) == [0, 0, 1, 1, 1]
    assert got == reference(name, members, {"customers": 3})


SEED_GROUPS = [
    (3, 2),
    (10, 3),
    (500, 100),
    (500, 500),
    (1, 1),
    (12, 12),
]  # customers, truck-GPS, retail


# kafka-python's sticky assignors take seconds on 500 consumers; 500/100 covers them.
SEED_CASES = [(name, p, c) for name in ALL for p, c in SEED_GROUPS
              if not ("sticky" in name and c == 500)]


@pytest.mark.parametrize("name, n_partitions, n_consumers", SEED_CASES)
def test_seed_scenarios_match_kafka_python(name, n_partitions, n_consumers):
    members = subs({f"consumer-{i}": ["t"] for i in range(n_consumers)})
    got = ASSIGNORS[name](members, {"t": n_partitions})
    check_valid(members, {"t": n_partitions}, got)
    assert counts(got)[-1] - counts(got)[0] <= 1
    assert got == reference(name, members, {"t": n_partitions})


def test_range_contiguous_and_first_consumers_get_extra():
    # Two members, two 3-partition topics: the range imbalance.
    members = subs({"C0": ["t0", "t1"], "C1": ["t0", "t1"]})
    got = range_assign(members, {"t0": 3, "t1": 3})
    assert got == {"C0": tps("t0-0 t0-1 t1-0 t1-1"), "C1": tps("t0-2 t1-2")}
    # The customers seed: consumer1 reads partitions 0 and 1, consumer2 partition 2.
    members = subs({"consumer2": ["customers"], "consumer1": ["customers"]})
    assert range_assign(members, {"customers": 3}) == {
        "consumer2": tps("customers-2"),
        "consumer1": tps("customers-0 customers-1"),
    }


def test_roundrobin_documented_examples():
    members = subs({"C0": ["t0", "t1"], "C1": ["t0", "t1"]})
    assert roundrobin_assign(members, {"t0": 3, "t1": 3}) == {
        "C0": tps("t0-0 t0-2 t1-1"),
        "C1": tps("t0-1 t1-0 t1-2"),
    }
    members = subs({"C0": ["t0"], "C1": ["t0", "t1"], "C2": ["t0", "t1", "t2"]})
    assert roundrobin_assign(members, {"t0": 1, "t1": 2, "t2": 3}) == {
        "C0": tps("t0-0"),
        "C1": tps("t1-0"),
        "C2": tps("t1-1 t2-0 t2-1 t2-2"),
    }


@pytest.mark.parametrize("name", ALL)
def test_two_topics_with_different_partition_counts(name):
    members = subs(
        {"a": ["orders", "payments"], "b": ["orders", "payments"], "c": ["orders", "payments"]}
    )
    ppt = {"orders": 7, "payments": 2}
    got = ASSIGNORS[name](members, ppt)
    check_valid(members, ppt, got)
    assert got == reference(name, members, ppt)


@pytest.mark.parametrize("name", ALL)
def test_members_subscribed_to_different_topics(name):
    members = subs({"C0": ["t0"], "C1": ["t0", "t1"], "C2": ["t0", "t1", "t2"], "C3": ["t3"]})
    ppt = {"t0": 1, "t1": 2, "t2": 3, "t3": 2, "unsubscribed": 4}
    got = ASSIGNORS[name](members, ppt)
    check_valid(members, ppt, got)
    if name == "roundrobin":  # kafka-python crashes here: test_kafka_python_roundrobin_cannot_skip
        assert got == {
            "C0": tps("t0-0"),
            "C1": tps("t1-0"),
            "C2": tps("t1-1 t2-0 t2-1 t2-2"),
            "C3": tps("t3-0 t3-1"),
        }
    else:
        assert got == reference(name, members, ppt)


@pytest.mark.parametrize("name", ALL)
def test_subscribed_topic_without_metadata_is_skipped(name):
    members = subs({"a": ["t0", "missing"], "b": ["t0"]})
    got = ASSIGNORS[name](members, {"t0": 4})
    check_valid(members, {"t0": 4}, got)
    assert got == reference(name, members, {"t0": 4})


@pytest.mark.parametrize("name", ALL)
def test_no_members(name):
    assert ASSIGNORS[name]({}, {"t": 3}) == {}


def test_member_ids_sort_as_strings():
    members = subs({"consumer-10": ["t"], "consumer-9": ["t"], "consumer-2": ["t"]})
    got = range_assign(members, {"t": 3})
    assert got == {"consumer-10": tps("t-0"), "consumer-2": tps("t-1"), "consumer-9": tps("t-2")}


@pytest.mark.parametrize("name", ["range", "roundrobin"])
def test_static_members_first_by_instance_id(name):
    members = {
        "zzz-dynamic": Subscription(("t",)),
        "m-1": Subscription(("t",), group_instance_id="host-b"),
        "aaa-dynamic": Subscription(("t",)),
        "m-2": Subscription(("t",), group_instance_id="host-a"),
    }
    got = ASSIGNORS[name](members, {"t": 4})
    # host-a, host-b, then dynamic by member id.
    assert [got[m] for m in ("m-2", "m-1", "aaa-dynamic", "zzz-dynamic")] == [
        [("t", i)] for i in range(4)
    ]
    assert got == reference(name, members, {"t": 4})
    # A restarted static member gets a new member id but keeps its partitions.
    restarted = dict(members)
    restarted["m-9"] = restarted.pop("m-1")
    assert ASSIGNORS[name](restarted, {"t": 4})["m-9"] == got["m-1"]


@pytest.mark.parametrize("name", ["range", "roundrobin"])
def test_kafka_python_groupby_bug(name):
    """kafka-python 3.0.12 sorts static and dynamic members with itertools.groupby
    and a dict, so when the kinds interleave in JoinGroup order an earlier run is
    overwritten: here static "s-1" silently gets nothing.  We sort as intended
    (and as Java does), so the member keeps its share."""
    members = {
        "s-1": Subscription(("t",), group_instance_id="i-1"),
        "d-1": Subscription(("t",)),
        "s-2": Subscription(("t",), group_instance_id="i-2"),
    }
    theirs = kafka_python_assign(name, members, {"t": 3})
    ours = ASSIGNORS[name](members, {"t": 3})
    assert theirs["s-1"] == []
    assert ours == {"s-1": [("t", 0)], "s-2": [("t", 1)], "d-1": [("t", 2)]}
    assert ours == kafka_python_assign(name, static_first(members), {"t": 3})


def test_kafka_python_roundrobin_cannot_skip():
    """kafka-python 3.0.12's roundrobin rebinds member_id to a (group_instance_id,
    member_id) tuple while skipping a member not subscribed to a topic, then
    looks the tuple up: KeyError.  So it fails whenever subscriptions differ,
    even on its own docstring example.  We follow that docstring (and Java)."""
    members = subs({"C0": ["t0"], "C1": ["t0", "t1"], "C2": ["t0", "t1", "t2"]})
    with pytest.raises(KeyError):
        kafka_python_assign("roundrobin", members, {"t0": 1, "t1": 2, "t2": 3})


def test_sticky_documented_example_1():
    # Four 2-partition topics, three members; then C1 leaves: nothing else moves.
    ppt = {"t0": 2, "t1": 2, "t2": 2, "t3": 2}
    topics = ["t0", "t1", "t2", "t3"]
    first = sticky_assign(subs({"C0": topics, "C1": topics, "C2": topics}), ppt)
    assert first == reference("sticky", subs({"C0": topics, "C1": topics, "C2": topics}), ppt)
    assert counts(first) == [2, 3, 3]
    after = {
        m: Subscription(tuple(topics), owned_partitions=tuple(first[m]), generation=1)
        for m in ("C0", "C2")
    }
    second = sticky_assign(after, ppt)
    check_valid(after, ppt, second)
    assert set(first["C0"]) <= set(second["C0"]) and set(first["C2"]) <= set(second["C2"])
    assert second == reference("sticky", after, ppt)


def test_sticky_documented_example_2():
    # Subscriptions differ; sticky balances better than roundrobin, then C0 leaves.
    members = subs({"C0": ["t0"], "C1": ["t0", "t1"], "C2": ["t0", "t1", "t2"]})
    ppt = {"t0": 1, "t1": 2, "t2": 3}
    first = sticky_assign(members, ppt)
    assert first == {"C0": tps("t0-0"), "C1": tps("t1-0 t1-1"), "C2": tps("t2-0 t2-1 t2-2")}
    after = {m: Subscription(members[m].topics, tuple(first[m]), 1) for m in ("C1", "C2")}
    second = sticky_assign(after, ppt)
    assert second == {"C1": tps("t0-0 t1-0 t1-1"), "C2": tps("t2-0 t2-1 t2-2")}
    assert second == reference("sticky", after, ppt)


def test_sticky_newest_generation_wins_a_double_claim():
    # b still claims t-0 from generation 1; a took it in generation 2.
    members = {
        "a": Subscription(("t",), tps("t-0 t-1"), 2),
        "b": Subscription(("t",), tps("t-0"), 1),
        "c": Subscription(("t",), (), -1),
    }
    got = sticky_assign(members, {"t": 3})
    assert got == {"a": tps("t-0 t-1"), "b": tps("t-2"), "c": []} or counts(got) == [1, 1, 1]
    assert got == reference("sticky", members, {"t": 3})


def test_sticky_double_claims_in_one_generation():
    """Two members claim t-0 in the same generation: the first claim stands
    (kafka-python logs a warning).  Generation 0 is the exception: kafka-python
    tests it for truth, so there the last claim wins.  Kafka generations start at
    1, so a real group never sends 0."""
    for generation, owner in ((2, "a"), (0, "b")):
        members = {
            "a": Subscription(("t",), tps("t-0"), generation),
            "b": Subscription(("t",), tps("t-0"), generation),
        }
        got = sticky_assign(members, {"t": 2})
        assert ("t", 0) in got[owner]
        assert got == reference("sticky", members, {"t": 2})


def test_sticky_drops_claims_on_unsubscribed_topics():
    members = {
        "a": Subscription(("t1",), tps("t0-0 t0-1 t1-0"), 3),
        "b": Subscription(("t0", "t1"), tps("t1-1"), 3),
    }
    ppt = {"t0": 2, "t1": 2}
    got = sticky_assign(members, ppt)
    check_valid(members, ppt, got)
    assert got["b"][:2] == tps("t0-0 t0-1")
    assert got == reference("sticky", members, ppt)


def test_cooperative_revokes_first_then_assigns():
    # a owned everything; b joins.  Round 1: the partitions b should get are
    # taken from a but not yet given to b.  Round 2 gives them to b.
    ppt = {"t": 4}
    round1_in = {
        "a": Subscription(("t",), tps("t-0 t-1 t-2 t-3"), 1),
        "b": Subscription(("t",), (), -1),
    }
    round1 = cooperative_sticky_assign(round1_in, ppt)
    assert round1 == reference("cooperative-sticky", round1_in, ppt)
    check_valid(round1_in, ppt, round1, complete=False)
    assert len(round1["a"]) == 2 and round1["b"] == []
    revoked = set(round1_in["a"].owned_partitions) - set(round1["a"])
    round2_in = {
        "a": Subscription(("t",), tuple(round1["a"]), 2),
        "b": Subscription(("t",), (), 2),
    }
    round2 = cooperative_sticky_assign(round2_in, ppt)
    check_valid(round2_in, ppt, round2)
    assert round2 == {"a": round1["a"], "b": sorted(revoked)}
    assert round2 == reference("cooperative-sticky", round2_in, ppt)
    # The eager sticky assignor would hand the partitions over in one round.
    assert sticky_assign(round1_in, ppt) == round2


def test_cooperative_last_claimant_counts_as_owner():
    """kafka-python takes the *last* claimant (member order) as a partition's
    current owner, whatever the generations; the sticky target prefers the
    newest generation.  So the newer owner "a" is denied a partition it keeps."""
    members = {
        "a": Subscription(("t",), tps("t-0"), 5),
        "b": Subscription(("t",), tps("t-0"), 3),
    }
    assert sticky_assign(members, {"t": 2}) == {"a": tps("t-0"), "b": tps("t-1")}
    got = cooperative_sticky_assign(members, {"t": 2})
    assert got == {"a": [], "b": tps("t-1")}
    assert got == reference("cooperative-sticky", members, {"t": 2})


# ---------------------------------------------------------------- generated groups

MEMBER_IDS = [f"consumer-{i}" for i in (1, 2, 3, 9, 10, 11, 20, 100)]
TOPICS = ["alpha", "beta", "gamma", "delta"]


@st.composite
def groups(draw, history=False):
    """(members, partitions_per_topic): 1-8 members, 1-4 topics, 1-12 partitions each."""
    topics = TOPICS[: draw(st.integers(1, 4))]
    ppt = {t: draw(st.integers(1, 12)) for t in topics}
    ids = draw(st.permutations(MEMBER_IDS))[: draw(st.integers(1, 8))]
    same = draw(st.booleans())
    shared = draw(st.lists(st.sampled_from(topics), min_size=1, unique=True))
    instance_ids = iter(draw(st.permutations(range(8))))
    members = {}
    for member in ids:
        mine = shared if same else draw(st.lists(st.sampled_from(topics), min_size=1, unique=True))
        static = draw(st.integers(0, 3)) == 0
        members[member] = Subscription(
            tuple(mine), group_instance_id=f"host-{next(instance_ids)}" if static else None
        )
    if not history:
        return members, ppt
    # A previous world: partition counts may have grown or shrunk, a topic may be
    # gone, owners may have left.  Plus some stale double claims.
    previous = {t: max(1, n + draw(st.integers(-2, 2))) for t, n in ppt.items()}
    if draw(st.booleans()):
        previous["deleted"] = draw(st.integers(1, 3))
    owners = list(ids) + ["departed", None]
    claims = {m: [] for m in ids}
    for topic, n in previous.items():
        for p in range(n):
            owner = draw(st.sampled_from(owners))
            if owner in claims:
                claims[owner].append((topic, p))
            if draw(st.integers(0, 9)) == 0:  # a stale second claim
                claims[draw(st.sampled_from(ids))].append((topic, p))
    out = {}
    for member, sub in members.items():
        mine = list(dict.fromkeys(claims[member]))
        by_topic = _grouped(mine)
        order = draw(st.permutations(list(by_topic)))
        owned = [(t, p) for t in order for p in draw(st.permutations(by_topic[t]))]
        generation = draw(st.sampled_from([-1, 0, 1, 2, 3, 3, 3]))
        out[member] = Subscription(sub.topics, tuple(owned), generation, sub.group_instance_id)
    return out, ppt


def _homogeneous(members):
    return len({frozenset(s.topics) for s in members.values()}) == 1


FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.property
@FAST
@given(groups())
def test_range_matches_kafka_python(group):
    members, ppt = group
    got = range_assign(members, ppt)
    check_valid(members, ppt, got)
    assert got == reference("range", members, ppt)
    if _homogeneous(members) and len(next(iter(members.values())).topics) == 1:
        assert counts(got)[-1] - counts(got)[0] <= 1


@pytest.mark.property
@FAST
@given(groups())
def test_roundrobin_matches_kafka_python(group):
    members, ppt = group
    got = roundrobin_assign(members, ppt)
    check_valid(members, ppt, got)
    theirs = _reference_or_none("roundrobin", members, ppt)
    if theirs is not None:
        assert got == theirs
    else:
        assert not _homogeneous(members)  # it only fails when it must skip a member
    if _homogeneous(members):
        assert counts(got)[-1] - counts(got)[0] <= 1


def event(text):
    if currently_in_test_context():  # the helpers also serve plain tests
        _event(text)


def _stray(members, assignment):
    return {
        (m, tp) for m, tps_ in assignment.items() for tp in tps_ if tp[0] not in members[m].topics
    }


def _reference_or_none(name, members, ppt):
    """kafka-python's answer, or None where it crashes (see
    test_kafka_python_roundrobin_cannot_skip and
    test_kafka_python_hands_partition_back_to_unsubscribed_member)."""
    try:
        return reference(name, members, ppt)
    except KeyError:
        event(f"kafka-python {name} raised KeyError")
        return None


def assert_sticky_parity(members, ppt, got, theirs):
    """Equal, except that partitions kafka-python leaves with a member no longer
    subscribed to their topic are, in ours, with a subscriber instead."""
    stray = _stray(members, theirs)
    if not stray:
        assert got == theirs
        return
    event("kafka-python assigned an unsubscribed topic")
    for member in members:
        kept = [tp for tp in theirs[member] if (member, tp) not in stray]
        assert set(kept) <= set(got[member])
    moved = {tp for _, tp in stray}
    assert {tp for m in got for tp in got[m] if tp not in theirs[m]} == moved


@pytest.mark.property
@settings(max_examples=90, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups(history=True))
def test_sticky_matches_kafka_python(group):
    members, ppt = group
    got = sticky_assign(members, ppt)
    check_valid(members, ppt, got)
    theirs = _reference_or_none("sticky", members, ppt)
    if theirs is not None:
        assert_sticky_parity(members, ppt, got, theirs)
    if _homogeneous(members):
        assert counts(got)[-1] - counts(got)[0] <= 1


@pytest.mark.property
@FAST
@given(groups())
def test_sticky_fresh_matches_kafka_python(group):
    members, ppt = group
    got = sticky_assign(members, ppt)
    check_valid(members, ppt, got)
    assert got == reference("sticky", members, ppt)


@pytest.mark.property
@settings(max_examples=90, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups(history=True))
def test_cooperative_sticky_matches_kafka_python(group):
    members, ppt = group
    got = cooperative_sticky_assign(members, ppt)
    check_valid(members, ppt, got, complete=False)
    theirs = _reference_or_none("cooperative-sticky", members, ppt)
    if theirs is not None:
        # kafka-python's cooperative assignor filters its (possibly invalid) sticky target.
        if _stray(members, reference("sticky", members, ppt)):
            event("kafka-python's sticky target assigned an unsubscribed topic")
        else:
            assert got == theirs
    # Withheld = the sticky target minus partitions whose current owner differs.
    target = sticky_assign(members, ppt)
    owner = {tp: m for m, s in members.items() for tp in s.owned_partitions}
    for member in members:
        assert set(got[member]) <= set(target[member])
        for tp in set(target[member]) - set(got[member]):
            assert owner[tp] != member


def _next_generation(members, assignment, generation):
    return {
        m: Subscription(s.topics, tuple(assignment[m]), generation, s.group_instance_id)
        for m, s in members.items()
    }


@pytest.mark.property
@FAST
@given(groups(), st.data())
def test_sticky_keeps_partitions_when_a_member_leaves(group, data):
    members, ppt = group
    if not _homogeneous(members) or len(members) < 2:
        members = {m: Subscription(tuple(ppt)) for m in members} if len(members) >= 2 else members
    first = sticky_assign(members, ppt)
    if len(members) < 2:
        return
    leaver = data.draw(st.sampled_from(sorted(members)))
    stayers = {m: s for m, s in _next_generation(members, first, 1).items() if m != leaver}
    second = sticky_assign(stayers, ppt)
    check_valid(stayers, ppt, second)
    assert counts(second)[-1] - counts(second)[0] <= 1
    for m in stayers:
        assert set(first[m]) <= set(second[m])
    # Already balanced: an unchanged group keeps exactly what it had.
    again = sticky_assign(_next_generation(stayers, second, 2), ppt)
    assert again == second


@pytest.mark.property
@FAST
@given(groups(history=True))
def test_cooperative_converges_in_few_rounds(group):
    """Each round the owners give up what moved; soon nothing is withheld and
    every partition is assigned exactly once."""
    members, ppt = group
    generation = max(s.generation for s in members.values())
    rounds = 0
    while True:
        rounds += 1
        got = cooperative_sticky_assign(members, ppt)
        generation += 1
        nxt = _next_generation(members, got, generation)
        if cooperative_sticky_assign(nxt, ppt) == got:
            break
        assert rounds < 4, "no stable assignment after 4 rounds"
        members = nxt
    event(f"rounds: {rounds}")
    check_valid(members, ppt, got)


@st.composite
def rebalance_histories(draw):
    """A group living through joins, leaves, resubscriptions, partition growth
    and plain rejoins; each step is one rebalance."""
    topics = TOPICS[: draw(st.integers(1, 3))]
    ppt = {t: draw(st.integers(1, 8)) for t in topics}
    kinds = st.sampled_from(["join", "leave", "resubscribe", "grow", "rejoin"])
    steps = draw(st.lists(st.tuples(kinds, st.integers(0, 999)), min_size=1, max_size=6))
    return ppt, steps


@pytest.mark.property
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["sticky", "cooperative-sticky"]), rebalance_histories())
def test_rebalance_history_matches_kafka_python(name, history):
    ppt, steps = history
    topics = list(ppt)
    members = {"consumer-1": tuple(topics), "consumer-2": tuple(topics)}
    owned = {}
    for generation, (kind, n) in enumerate(steps, start=1):
        if kind == "join":
            members[f"consumer-{n + 3}"] = tuple(topics[: 1 + n % len(topics)])
        elif kind == "leave" and len(members) > 1:
            del members[sorted(members)[n % len(members)]]
        elif kind == "resubscribe":
            member = sorted(members)[n % len(members)]
            members[member] = tuple(topics[n % len(topics) :]) or tuple(topics)
        elif kind == "grow":
            ppt[topics[n % len(topics)]] += 1 + n % 3
        group = {
            m: Subscription(ts, tuple(owned.get(m, ())), generation - 1 if m in owned else -1)
            for m, ts in members.items()
        }
        got = ASSIGNORS[name](group, ppt)
        check_valid(group, ppt, got, complete=name == "sticky")
        theirs = reference(name, group, ppt)
        if _stray(group, reference("sticky", group, ppt)):
            event("kafka-python assigned an unsubscribed topic")
        else:
            assert got == theirs
        owned = got


@pytest.mark.property
@FAST
@given(st.sampled_from(ALL), groups(history=True))
def test_deterministic_and_member_order_free_for_range_roundrobin(name, group):
    members, ppt = group
    got = ASSIGNORS[name](members, ppt)
    assert ASSIGNORS[name](members, ppt) == got
    if name in ("range", "roundrobin"):
        reordered = dict(reversed(list(members.items())))
        assert ASSIGNORS[name](reordered, ppt) == {m: got[m] for m in reordered}


def test_kafka_python_hands_partition_back_to_unsubscribed_member():
    """kafka-python's (and pre-2.8 Java's) "give it back to its previous owner"
    rule does not check that the previous owner still subscribes to the topic.
    We run the same moves (so results stay equal elsewhere) and then hand such
    a partition to the least-loaded subscriber."""
    members = {
        "a": Subscription(("t1",), tps("t0-0"), 1),  # owned t0-0 in gen 1, now on t1 only
        "b": Subscription(("t0", "t1"), tps("t0-0 t0-1 t0-2 t1-0 t1-1 t1-2"), 2),
        "c": Subscription(("t0",), (), -1),
    }
    ppt = {"t0": 3, "t1": 3}
    theirs = kafka_python_assign("sticky", members, ppt)
    assert ("t0", 0) in theirs["a"]  # a does not subscribe to t0
    ours = sticky_assign(members, ppt)
    check_valid(members, ppt, ours)
    assert_sticky_parity(members, ppt, ours, theirs)


# ---------------------------------------------------------------- hash-seed independence

_DETERMINISM_SCRIPT = """
import json, sys
from minikafka.core.assignors import ASSIGNORS, Subscription
S = Subscription
members = {
    "c-3": S(("b", "a"), (("a", 0), ("a", 1), ("b", 2)), 4),
    "c-1": S(("a", "b"), (("a", 0), ("b", 0), ("b", 1)), 3),
    "c-2": S(("a",), (("a", 2), ("a", 3)), 3),
    "c-9": S(("a", "b"), (), -1, "static-1"),
}
ppt = {"a": 7, "b": 5, "c": 2}
print(json.dumps({n: f(members, ppt) for n, f in sorted(ASSIGNORS.items())}, sort_keys=True))
"""


def test_same_answer_under_any_hash_seed():
    outputs = set()
    for seed in ("0", "1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        done = subprocess.run(
            [sys.executable, "-c", _DETERMINISM_SCRIPT],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1
    assert json.loads(outputs.pop())["range"]["c-9"] == [["a", 0], ["a", 1], ["b", 0], ["b", 1]]
