"""Consumer groups of type ``consumer``: the consumer group protocol of KIP-848 (Kafka 4.0+).

The classic protocol makes every member stop, rejoin and wait for a leader consumer's
assignment. Here the coordinator assigns, and each member moves on its own through
one request, ConsumerGroupHeartbeat:

- the **group epoch** goes up whenever the group changes (a member joins, leaves or
  changes its subscription; a subscribed topic gains partitions);
- the coordinator then computes a **target assignment** with a server-side assignor
  (``uniform`` or ``range``) and stamps it with the group epoch (the assignment epoch);
- each member **reconciles** towards its target on its own heartbeats: it first gives
  up the partitions it must lose (it stays at its old **member epoch** until its
  heartbeat no longer lists them), then receives the new ones and the new epoch. A
  partition is handed to its new owner only once the previous owner released it.

A worked example, one topic with 2 partitions; ``a`` alone, then ``b`` joins::

    a: epoch 0 -> 2, owns {0, 1}                       group epoch 2, Stable
    b joins:   group epoch 3, target a {0}, b {1}
    b: epoch 3, owns {} (1 is not released yet)        UNRELEASED_PARTITIONS, Reconciling
    a: heartbeat -> revoke {1}, stays at epoch 2       UNREVOKED_PARTITIONS
    a: heartbeat owning {0} -> epoch 3, owns {0}       STABLE
    b: heartbeat -> epoch 3, owns {1}                  STABLE; the group is Stable

(A new group starts at epoch 1, as in Kafka 4.x: the first join makes it 2.)

The member's moves are Kafka's CurrentAssignmentBuilder, written as a table
(``MEMBER_TRANSITIONS``) that ``reconcile`` checks and a picture can draw. The
group's state is derived, as Kafka derives it: Empty, Assigning (epoch ahead of the
target), Reconciling (a member not yet at the target), Stable.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from enum import IntEnum
from typing import Any

from .assignors import Assignment

# -- the group, its members and their states -----------------------------------------------------

EMPTY = "Empty"
ASSIGNING = "Assigning"
RECONCILING = "Reconciling"
STABLE = "Stable"
DEAD = "Dead"
GROUP_STATES = (EMPTY, ASSIGNING, RECONCILING, STABLE, DEAD)

JOIN_EPOCH = 0
LEAVE_EPOCH = -1
STATIC_LEAVE_EPOCH = -2


class MemberState(IntEnum):
    """Kafka's MemberState (the byte stored in ConsumerGroupCurrentMemberAssignment)."""

    STABLE = 0
    UNREVOKED_PARTITIONS = 1
    UNRELEASED_PARTITIONS = 2
    UNKNOWN = 127


# (from, to) moves CurrentAssignmentBuilder makes; anything else is a coordinator bug.
MEMBER_TRANSITIONS: frozenset[tuple[MemberState, MemberState]] = frozenset(
    (a, b) for a in (MemberState.STABLE, MemberState.UNREVOKED_PARTITIONS,
                     MemberState.UNRELEASED_PARTITIONS)
    for b in (MemberState.STABLE, MemberState.UNREVOKED_PARTITIONS,
              MemberState.UNRELEASED_PARTITIONS)
) | {(MemberState.UNKNOWN, s) for s in MemberState if s != MemberState.UNKNOWN}


@dataclass(frozen=True)
class ClassicMetadata:
    """What a classic member (JoinGroup/SyncGroup) of a consumer group keeps: Kafka's
    ConsumerGroupMemberMetadataValue.ClassicMemberMetadata."""

    session_timeout_ms: int
    protocols: tuple[tuple[str, bytes], ...]  # (assignor name, subscription), in order


@dataclass(eq=False)
class ConsumerMember:
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    rebalance_timeout_ms: int = -1
    server_assignor: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    assigned: Assignment = field(default_factory=dict)
    pending_revocation: Assignment = field(default_factory=dict)
    session_timer: Any = None
    rebalance_timer: Any = None
    classic: ClassicMetadata | None = None  # set for a member using the classic protocol
    # a classic member's deadlines: to rejoin when asked, and to sync after joining
    join_timer: Any = None
    sync_timer: Any = None

    def timers(self) -> tuple[Any, ...]:
        return (self.session_timer, self.rebalance_timer, self.join_timer, self.sync_timer)

    def subscription(self) -> tuple:
        return (self.subscribed_topic_names, self.subscribed_topic_regex)

    def is_reconciled_to(self, epoch: int) -> bool:
        return self.state == MemberState.STABLE and self.member_epoch == epoch

    def subscribes_to(self, topic: str) -> bool:
        if topic in self.subscribed_topic_names:
            return True
        regex = self.subscribed_topic_regex
        return bool(regex) and re.fullmatch(regex, topic) is not None


@dataclass(eq=False)
class ConsumerGroup:
    group_id: str
    partition: int
    # Kafka 4.x starts a new group at epoch 1 (ModernGroup), so the first member to join
    # gets epoch 2 and no member epoch is ever 1.
    group_epoch: int = 1
    assignment_epoch: int = 0
    members: dict[str, ConsumerMember] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)  # instance id -> member id
    target: dict[str, Assignment] = field(default_factory=dict)
    # (topic id, partition) -> epoch of the member that owns it (or is still revoking it)
    partition_epochs: dict[tuple[str, int], int] = field(default_factory=dict)
    # subscribed topic name -> (topic id, partitions): what the target was computed from
    subscription_metadata: dict[str, tuple[str, int]] = field(default_factory=dict)
    offsets: dict = field(default_factory=dict)
    state_since_ms: int = 0
    dead: bool = False
    protocol_type: str = "consumer"  # what ListGroups and DescribeGroups show
    group_type: str = "consumer"

    @property
    def state(self) -> str:
        """Kafka's ConsumerGroup.maybeUpdateGroupState, computed on demand."""
        if self.dead:
            return DEAD
        if not self.members:
            return EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ASSIGNING
        if any(not m.is_reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return RECONCILING
        return STABLE

    @property
    def protocol_name(self) -> str:
        return self.preferred_assignor() or ""

    def preferred_assignor(self) -> str | None:
        """The assignor most members ask for (ties: the name first in sort order);
        None means the broker's default."""
        votes: dict[str, int] = {}
        for m in self.members.values():
            if m.server_assignor:
                votes[m.server_assignor] = votes.get(m.server_assignor, 0) + 1
        return min(votes, key=lambda n: (-votes[n], n)) if votes else None

    def current_partition_epoch(self, topic_id: str, partition: int) -> int:
        return self.partition_epochs.get((topic_id, partition), -1)

    def add_partition_epochs(self, partitions: Assignment, epoch: int) -> None:
        for t, ps in partitions.items():
            for p in ps:
                self.partition_epochs[(t, p)] = epoch

    def remove_partition_epochs(self, partitions: Assignment) -> None:
        for t, ps in partitions.items():
            for p in ps:
                self.partition_epochs.pop((t, p), None)

    def put_member(self, member: ConsumerMember) -> None:
        """Add or replace a member, keeping the partition epochs in step (Kafka's
        ConsumerGroup.updateMember)."""
        old = self.members.get(member.member_id)
        if old is not None:
            self.remove_partition_epochs(old.assigned)
            self.remove_partition_epochs(old.pending_revocation)
        self.members[member.member_id] = member
        if member.instance_id is not None:
            self.static_members[member.instance_id] = member.member_id
        self.add_partition_epochs(member.assigned, member.member_epoch)
        self.add_partition_epochs(member.pending_revocation, member.member_epoch)

    def remove_member(self, member_id: str) -> ConsumerMember | None:
        member = self.members.pop(member_id, None)
        if member is None:
            return None
        self.remove_partition_epochs(member.assigned)
        self.remove_partition_epochs(member.pending_revocation)
        if member.instance_id is not None and \
                self.static_members.get(member.instance_id) == member_id:
            del self.static_members[member.instance_id]
        self.target.pop(member_id, None)
        return member

    def subscribed_topics(self) -> set[str]:
        return set(self.subscription_metadata)

    def supports_classic_protocols(self, protocol_type: str, names: set[str]) -> bool:
        """Kafka's ConsumerGroup.supportsClassicProtocols: a classic member may join if it
        speaks the consumer protocol and one of its assignors every classic member has."""
        if protocol_type != "consumer":
            return False
        classic = [m for m in self.members.values() if m.classic is not None]
        if not self.members:
            return bool(names)
        return any(all(n in {p for p, _ in m.classic.protocols} for m in classic)
                   for n in names)

    def all_classic_except(self, member_id: str) -> bool:
        return all(m.classic is not None for mid, m in self.members.items() if mid != member_id)

    def waiting_on_unreleased_partition(self, member: ConsumerMember) -> bool:
        """Is a partition of the member's target still held by another member?"""
        for t, ps in self.target.get(member.member_id, {}).items():
            for p in ps - member.assigned.get(t, frozenset()):
                if self.current_partition_epoch(t, p) != -1:
                    return True
        return False


# -- reconciliation: Kafka's CurrentAssignmentBuilder -------------------------------------------------

def _owns_any(owned: Assignment | None, partitions: Assignment) -> bool:
    """Does the member (by its heartbeat) still hold any of these? Unknown (None): yes."""
    if owned is None:
        return True
    return any(owned.get(t, frozenset()) & ps for t, ps in partitions.items())


def reconcile(member: ConsumerMember, group: ConsumerGroup, target_epoch: int,
              target: Assignment, owned: Assignment | None) -> ConsumerMember:
    """The member's next step towards its target assignment. ``owned`` is what its
    heartbeat says it holds (None: the heartbeat did not say)."""
    if member.state == MemberState.STABLE:
        if member.member_epoch == target_epoch:
            return member
        nxt = _next(member, group, member.member_epoch, target_epoch, target, owned)
    elif member.state == MemberState.UNREVOKED_PARTITIONS:
        if _owns_any(owned, member.pending_revocation):
            return member
        nxt = _next(member, group, member.member_epoch + 1, target_epoch, target, owned)
    else:  # UNRELEASED_PARTITIONS, or UNKNOWN after a downgrade: reconcile from scratch
        nxt = _next(member, group, member.member_epoch, target_epoch, target, owned)
    if (member.state, nxt.state) not in MEMBER_TRANSITIONS:
        raise RuntimeError(f"member {member.member_id}: no move {member.state.name} -> "
                           f"{nxt.state.name}")
    return nxt


def _next(member: ConsumerMember, group: ConsumerGroup, epoch: int, target_epoch: int,
          target: Assignment, owned: Assignment | None) -> ConsumerMember:
    unreleased = False
    assigned: Assignment = {}
    revoking: Assignment = {}
    pending: Assignment = {}
    for t in sorted(set(target) | set(member.assigned)):
        want = target.get(t, frozenset())
        have = member.assigned.get(t, frozenset())
        keep = have & want
        lose = have - keep
        gain = {p for p in want - keep if group.current_partition_epoch(t, p) == -1}
        unreleased = unreleased or len(gain) < len(want - keep)
        if keep:
            assigned[t] = keep
        if lose:
            revoking[t] = lose
        if gain:
            pending[t] = frozenset(gain)
    if revoking and _owns_any(owned, revoking):
        # Give up first: same epoch, wait for a heartbeat without these partitions.
        return _moved(member, MemberState.UNREVOKED_PARTITIONS, epoch, assigned, revoking)
    for t, ps in pending.items():
        assigned[t] = assigned.get(t, frozenset()) | ps
    state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
    return _moved(member, state, target_epoch, assigned, {})


def _moved(member: ConsumerMember, state: MemberState, epoch: int, assigned: Assignment,
           revoking: Assignment) -> ConsumerMember:
    # Kafka's updateMemberEpoch: the previous epoch is always the one it had.
    return replace(member, state=state, member_epoch=epoch,
                   previous_member_epoch=member.member_epoch,
                   assigned=assigned, pending_revocation=revoking,
                   session_timer=member.session_timer, rebalance_timer=member.rebalance_timer)
