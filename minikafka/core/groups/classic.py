"""The classic consumer-group protocol's state machine, as data, and its groups and members.

The group's life is the table below (``TRANSITIONS``): the coordinator goes through
``Group.fire(trigger)`` and nothing else, restoring a group from __consumer_offsets
included, and a picture can draw the same table. A worked example, three consumers
starting together::

    Empty --JoinGroup--> PreparingRebalance     (waits group.initial.rebalance.delay.ms)
    PreparingRebalance --all members joined--> CompletingRebalance   (generation 1)
    CompletingRebalance --leader's SyncGroup--> Stable
    Stable --LeaveGroup / session timeout--> PreparingRebalance  ... and round again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .. import errors
from ..offsets import decode_assignment, decode_subscription

# -- the state machine, as data ---------------------------------------------------------------

EMPTY = "Empty"
PREPARING_REBALANCE = "PreparingRebalance"
COMPLETING_REBALANCE = "CompletingRebalance"
STABLE = "Stable"
DEAD = "Dead"
STATES = (EMPTY, PREPARING_REBALANCE, COMPLETING_REBALANCE, STABLE, DEAD)

JOIN = "JoinGroup"  # a new member, a member with new metadata, or the leader rejoining
LEAVE = "member left"  # LeaveGroup, session timeout, or no SyncGroup in time
ALL_JOINED = "all members joined"  # or the rebalance timeout passed
NONE_JOINED = "no member left"
LEADER_SYNC = "leader's SyncGroup"
DELETE = "group deleted"  # DeleteGroups, or every offset of an empty group expired
UNLOAD = "coordinator moved"  # the __consumer_offsets partition changed leader

TRIGGERS = (JOIN, LEAVE, ALL_JOINED, NONE_JOINED, LEADER_SYNC, DELETE, UNLOAD)

TRANSITIONS: dict[tuple[str, str], str] = {
    (EMPTY, JOIN): PREPARING_REBALANCE,
    (EMPTY, DELETE): DEAD,
    (EMPTY, UNLOAD): DEAD,
    (PREPARING_REBALANCE, JOIN): PREPARING_REBALANCE,
    (PREPARING_REBALANCE, LEAVE): PREPARING_REBALANCE,
    (PREPARING_REBALANCE, ALL_JOINED): COMPLETING_REBALANCE,
    (PREPARING_REBALANCE, NONE_JOINED): EMPTY,
    (PREPARING_REBALANCE, UNLOAD): DEAD,
    (COMPLETING_REBALANCE, LEADER_SYNC): STABLE,
    (COMPLETING_REBALANCE, JOIN): PREPARING_REBALANCE,
    (COMPLETING_REBALANCE, LEAVE): PREPARING_REBALANCE,
    (COMPLETING_REBALANCE, UNLOAD): DEAD,
    (STABLE, JOIN): PREPARING_REBALANCE,
    (STABLE, LEAVE): PREPARING_REBALANCE,
    (STABLE, UNLOAD): DEAD,
}


# A stored generation with members finished a rebalance: restoring it replays that path
# through the table (Kafka builds the loaded group Stable; the table stays Kafka's).
RESTORE_PATH = (JOIN, ALL_JOINED, LEADER_SYNC)

def valid_previous_states() -> dict[str, set[str]]:
    """For each state, the states that may lead to it (Kafka's ClassicGroupState table)."""
    out: dict[str, set[str]] = {s: set() for s in STATES}
    for (src, _), dst in TRANSITIONS.items():
        if src != dst:
            out[dst].add(src)
    return out


GROUP_DEFAULTS: dict[str, int] = {
    "group.initial.rebalance.delay.ms": 3_000,
    "group.min.session.timeout.ms": 6_000,
    "group.max.session.timeout.ms": 1_800_000,
    "group.max.size": 2**31 - 1,
    "offsets.retention.minutes": 10_080,  # 7 days (Kafka 2.0+, KIP-186)
    "offsets.retention.check.interval.ms": 600_000,
    "offsets.commit.timeout.ms": 5_000,
    "offset.metadata.max.bytes": 4_096,
    "offsets.topic.num.partitions": 50,
    "offsets.topic.replication.factor": 3,
    "offsets.topic.segment.bytes": 104_857_600,
}
NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000


# -- requests and answers ---------------------------------------------------------------------

Protocols = list[tuple[str, bytes]]
TP = tuple[str, int]


@dataclass(frozen=True)
class JoinResult:
    error: int
    member_id: str = ""
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    members: tuple[tuple[str, str | None, bytes], ...] = ()  # for the leader only
    skip_assignment: bool = False


@dataclass(frozen=True)
class SyncResult:
    error: int
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


@dataclass(frozen=True)
class CommittedOffset:
    offset: int
    leader_epoch: int = -1
    metadata: str = ""
    commit_timestamp: int = 0


@dataclass(frozen=True)
class MemberDescription:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@dataclass(frozen=True)
class GroupDescription:
    error: int
    group_id: str
    state: str
    protocol_type: str
    protocol_name: str
    members: tuple[MemberDescription, ...] = ()
    error_message: str | None = None


# -- group and member state -------------------------------------------------------------------

@dataclass(eq=False)
class Member:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: Protocols
    assignment: bytes = b""
    awaiting_join: Callable[[JoinResult], None] | None = None
    awaiting_sync: Callable[[SyncResult], None] | None = None
    is_new: bool = False
    heartbeat_timer: Any = None

    def matches(self, protocols: Protocols) -> bool:
        return list(self.protocols) == list(protocols)

    def metadata(self, protocol: str | None) -> bytes:
        return next((m for name, m in self.protocols if name == protocol), b"")

    def vote(self, candidates: set[str]) -> str:
        return next(name for name, _ in self.protocols if name in candidates)

    def has_satisfied_heartbeat(self) -> bool:
        if self.is_new:
            return False
        return self.awaiting_join is not None or self.awaiting_sync is not None


@dataclass(eq=False)
class Group:
    group_id: str
    partition: int
    state: str = EMPTY
    previous_state: str = EMPTY
    state_since_ms: int = 0
    generation_id: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str | None = None
    members: dict[str, Member] = field(default_factory=dict)
    pending_members: set[str] = field(default_factory=set)
    pending_sync: set[str] = field(default_factory=set)
    static_members: dict[str, str] = field(default_factory=dict)  # instance id -> member id
    offsets: dict[TP, CommittedOffset] = field(default_factory=dict)
    new_member_added: bool = False
    join_timer: Any = None
    sync_timer: Any = None
    pending_timers: dict[str, Any] = field(default_factory=dict)  # pending member heartbeats

    def fire(self, trigger: str, now_ms: int) -> tuple[str, str]:
        """Move along TRANSITIONS; anything not in the table is a coordinator bug."""
        new = TRANSITIONS.get((self.state, trigger))
        if new is None:
            raise RuntimeError(f"group {self.group_id}: no transition from {self.state} "
                               f"on {trigger!r}")
        old = self.state
        if new != old:
            self.previous_state, self.state, self.state_since_ms = old, new, now_ms
        return old, new

    # -- membership ------------------------------------------------------------------------
    def add(self, member: Member) -> None:
        if not self.members:
            self.protocol_type = member.protocol_type
        self.members[member.member_id] = member
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.pending_members.discard(member.member_id)

    def remove(self, member_id: str) -> Member | None:
        member = self.members.pop(member_id, None)
        if member is not None and member.group_instance_id is not None:
            self.static_members.pop(member.group_instance_id, None)
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        self.pending_members.discard(member_id)
        self.pending_sync.discard(member_id)
        return member

    def awaiting_join_count(self) -> int:
        return sum(1 for m in self.members.values() if m.awaiting_join is not None)

    def has_all_members_joined(self) -> bool:
        return len(self.members) == self.awaiting_join_count() and not self.pending_members

    def candidate_protocols(self) -> set[str]:
        sets = [{name for name, _ in m.protocols} for m in self.members.values()]
        return set.intersection(*sets) if sets else set()

    def supports_protocols(self, protocol_type: str, names: Iterable[str]) -> bool:
        names = list(names)
        if self.state == EMPTY or not self.members:
            return bool(protocol_type) and bool(names)
        return self.protocol_type == protocol_type and any(
            n in self.candidate_protocols() for n in names)

    def select_protocol(self) -> str:
        """Each member votes for its most preferred protocol that all members support."""
        candidates = self.candidate_protocols()
        votes: dict[str, int] = {}
        for m in self.members.values():
            name = m.vote(candidates)
            votes[name] = votes.get(name, 0) + 1
        return max(votes, key=lambda n: votes[n])  # ties: the first voted for

    def validate_member(self, member_id: str, instance_id: str | None) -> int:
        if instance_id is not None:
            existing = self.static_members.get(instance_id)
            if existing is None:
                return errors.UNKNOWN_MEMBER_ID
            if existing != member_id:
                return errors.FENCED_INSTANCE_ID
        if member_id not in self.members:
            return errors.UNKNOWN_MEMBER_ID
        return errors.NONE

    def maybe_elect_new_joined_leader(self) -> bool:
        if self.leader_id is None:
            return False
        leader = self.members.get(self.leader_id)
        if leader is not None and leader.awaiting_join is not None:
            return True
        for m in self.members.values():
            if m.awaiting_join is not None:
                self.leader_id = m.member_id
                return True
        return False

    def subscribed_topics(self) -> set[str] | None:
        if self.protocol_type != "consumer" or self.protocol_name is None:
            return None
        topics: set[str] = set()
        for m in self.members.values():
            try:
                topics.update(decode_subscription(m.metadata(self.protocol_name)).topics)
            except Exception:  # metadata from a client we cannot read
                return None
        return topics


def describe_assignment(data: bytes) -> list[str]:
    try:
        return [f"{t}-{p}" for t, p in decode_assignment(data).partitions]
    except Exception:  # not the consumer protocol
        return []

