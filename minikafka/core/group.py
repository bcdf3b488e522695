"""The group coordinator: Kafka's classic consumer-group protocol on the simulated clock.

Each group lives on the broker that leads its partition of ``__consumer_offsets``
(``partition_for(group_id)``). Members join (JoinGroup), the coordinator waits until
every known member has rejoined, picks a leader and a protocol, the leader's
assignment comes back in SyncGroup, and members prove they are alive with
heartbeats. Everything the coordinator must remember -- commits and each generation
of the group -- is written to ``__consumer_offsets`` first, so a coordinator on
another broker can rebuild it after a failover.

The group's life is the state machine below, kept as data (``TRANSITIONS``): the code
goes through ``Group.fire(trigger)`` and nothing else, and a picture can draw the
same table. A worked example, three consumers starting together::

    Empty --JoinGroup--> PreparingRebalance     (waits group.initial.rebalance.delay.ms)
    PreparingRebalance --all members joined--> CompletingRebalance   (generation 1)
    CompletingRebalance --leader's SyncGroup--> Stable
    Stable --LeaveGroup / session timeout--> PreparingRebalance  ... and round again.

Request handlers take the id of the broker that received the request, so a request
sent to a broker that is not (or no longer) the coordinator gets NOT_COORDINATOR, as
in Kafka. Answers that must wait (JoinGroup, SyncGroup, OffsetCommit) go to a
``respond`` callback.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import errors
from .controller import NO_LEADER
from .offsets import (
    OFFSETS_TOPIC,
    GroupKey,
    GroupValue,
    MemberMetadata,
    OffsetKey,
    decode_assignment,
    decode_key,
    decode_subscription,
    decode_value,
    group_metadata_key,
    group_metadata_value,
    offset_commit_key,
    offset_commit_value,
    partition_for,
)
from .records import RecordBatch

# Error codes the core error table does not name yet.
OFFSET_METADATA_TOO_LARGE = 12
GROUP_SUBSCRIBED_TO_TOPIC = 86

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


# -- the coordinator --------------------------------------------------------------------------

class GroupCoordinator:
    """All groups of a cluster; each is served by the leader of its __consumer_offsets
    partition. ``sim`` is the Cluster (clock, journal, controller, brokers)."""

    def __init__(self, sim: Any) -> None:
        self.sim = sim
        self.clock = sim.clock
        self.journal = sim.journal
        self.config = {k: int(sim.broker_config.get(k, v)) for k, v in GROUP_DEFAULTS.items()}
        self.groups: dict[str, Group] = {}
        # Which (broker, leader epoch) each offsets partition was loaded from.
        self._loaded: dict[int, tuple[int, int]] = {}
        # Transactional offsets that arrived while their coordinator was unavailable.
        self._pending_txn: dict[int, list[tuple[str, TP, CommittedOffset]]] = {}
        self._expiry_timer = self.clock.call_later(
            self.config["offsets.retention.check.interval.ms"], self._expire_offsets)

    # -- placement and loading -------------------------------------------------------------
    @property
    def num_partitions(self) -> int:
        topic = self.sim.controller.topics.get(OFFSETS_TOPIC)
        return len(topic.partitions) if topic else self.config["offsets.topic.num.partitions"]

    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.num_partitions)

    def ensure_offsets_topic(self) -> None:
        """Create __consumer_offsets on first use, as Kafka does on the first FindCoordinator.

        Kafka refuses while fewer brokers are alive than offsets.topic.replication.factor;
        minikafka takes min(factor, live brokers) so a 1-broker lesson works (the setting
        a single-broker Kafka needs anyway)."""
        ctl = self.sim.controller
        if OFFSETS_TOPIC in ctl.topics:
            return
        if ctl.quorum.leader is None:
            raise errors.KafkaCoreError(errors.COORDINATOR_NOT_AVAILABLE, "no active controller")
        live = len(ctl.unfenced())
        if live == 0:
            raise errors.KafkaCoreError(errors.COORDINATOR_NOT_AVAILABLE, "no live brokers")
        rf = min(self.config["offsets.topic.replication.factor"], live)
        topic = ctl.create_topic(
            OFFSETS_TOPIC, self.config["offsets.topic.num.partitions"], rf,
            {"cleanup.policy": "compact", "compression.type": "producer",
             "segment.bytes": str(self.config["offsets.topic.segment.bytes"])},
            internal=True)
        self.journal.record(self.clock.now_ms, "topic.created", topic=OFFSETS_TOPIC,
                            partitions=len(topic.partitions),
                            replicas=[list(p.replicas) for p in topic.partitions], internal=True)
        self.sim._publish()

    def _host(self, partition: int) -> tuple[int, int] | None:
        """(broker, leader epoch) serving a partition of __consumer_offsets, if any."""
        topic = self.sim.controller.topics.get(OFFSETS_TOPIC)
        if topic is None or partition >= len(topic.partitions):
            return None
        reg = topic.partitions[partition]
        if reg.leader == NO_LEADER:
            return None
        broker = self.sim.brokers.get(reg.leader)
        if broker is None or not broker.running:
            return None
        replica = broker.replicas.get((OFFSETS_TOPIC, partition))
        if replica is None or not replica.is_leader or replica.leader_epoch != reg.leader_epoch:
            return None
        return reg.leader, reg.leader_epoch

    def find_coordinator(self, group_id: str) -> int:
        """FindCoordinator: the broker id; raises COORDINATOR_NOT_AVAILABLE while the
        group's partition has no leader."""
        if not group_id:
            raise errors.KafkaCoreError(errors.INVALID_GROUP_ID, "group id must not be empty")
        self.ensure_offsets_topic()
        host = self._host(self.partition_for(group_id))
        if host is None:
            raise errors.KafkaCoreError(errors.COORDINATOR_NOT_AVAILABLE,
                                        f"The coordinator for {group_id} is not available")
        return host[0]

    def _serve(self, broker_id: int | None, group_id: str) -> Group | None:
        """The group as the coordinator broker holds it; raises for the wrong broker."""
        if not group_id:
            raise errors.KafkaCoreError(errors.INVALID_GROUP_ID, "group id must not be empty")
        if OFFSETS_TOPIC not in self.sim.controller.topics:
            self.ensure_offsets_topic()
        partition = self.partition_for(group_id)
        host = self._host(partition)
        if host is None:
            raise errors.KafkaCoreError(errors.COORDINATOR_NOT_AVAILABLE,
                                        f"The coordinator for {group_id} is not available")
        if broker_id is not None and host[0] != broker_id:
            raise errors.KafkaCoreError(errors.NOT_COORDINATOR,
                                        f"Broker {broker_id} is not the coordinator of {group_id}")
        self._ensure_loaded(partition, host)
        return self.groups.get(group_id)

    def _live(self, group: Group) -> bool:
        """Is this group object still what its coordinator holds? (Timers of a group whose
        broker died or lost leadership must do nothing.)"""
        return (self.groups.get(group.group_id) is group and group.state != DEAD
                and self._loaded.get(group.partition) == self._host(group.partition))

    def _ensure_loaded(self, partition: int, host: tuple[int, int]) -> None:
        if self._loaded.get(partition) == host:
            return
        now = self.clock.now_ms
        for group in [g for g in self.groups.values() if g.partition == partition]:
            self._unload(group)
        replica = self.sim.brokers[host[0]].replicas[(OFFSETS_TOPIC, partition)]
        offsets: dict[str, dict[TP, CommittedOffset]] = {}
        metadata: dict[str, GroupValue | None] = {}
        for batch in replica.log.batches():
            if batch.is_control:
                continue
            for _, _, key, value, _ in batch.records:
                k = decode_key(key)
                if isinstance(k, OffsetKey):
                    by_group = offsets.setdefault(k.group, {})
                    v = decode_value(k, value)
                    if v is None:
                        by_group.pop((k.topic, k.partition), None)
                    else:
                        by_group[(k.topic, k.partition)] = CommittedOffset(
                            v.offset, v.leader_epoch, v.metadata, v.commit_timestamp)
                elif isinstance(k, GroupKey):
                    metadata[k.group] = decode_value(k, value)
        for group_id in sorted(set(offsets) | set(metadata)):
            value = metadata.get(group_id)
            if value is None and not offsets.get(group_id):
                continue
            group = Group(group_id, partition, state_since_ms=now)
            group.offsets = offsets.get(group_id, {})
            if value is not None:
                self._restore(group, value)
            self.groups[group_id] = group
        moved = partition in self._loaded
        self._loaded[partition] = host
        loaded = sorted(g for g, x in self.groups.items() if x.partition == partition)
        if moved or loaded:
            self.journal.record(now, "group.loaded", partition=partition, broker=host[0],
                                groups=loaded)
        for group in [g for g in self.groups.values() if g.partition == partition]:
            for member in group.members.values():
                self._reschedule_heartbeat(group, member)
        for group_id, tp, committed in self._pending_txn.pop(partition, []):
            self._apply_txn_offsets(group_id, {tp: committed})

    def _restore(self, group: Group, value: GroupValue) -> None:
        group.protocol_type = value.protocol_type or None
        group.generation_id = value.generation
        group.protocol_name = value.protocol
        group.leader_id = value.leader
        if value.current_state_timestamp >= 0:
            group.state_since_ms = value.current_state_timestamp
        for m in value.members:
            member = Member(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                            m.rebalance_timeout, m.session_timeout, group.protocol_type or "",
                            [(value.protocol or "", m.subscription)], m.assignment)
            group.add(member)
        group.leader_id = value.leader if value.leader in group.members else group.leader_id
        group.state = STABLE if group.members else EMPTY

    def _unload(self, group: Group) -> None:
        now = self.clock.now_ms
        for timer in (group.join_timer, group.sync_timer, *group.pending_timers.values()):
            if timer is not None:
                timer.cancel()
        for member in group.members.values():
            if member.heartbeat_timer is not None:
                member.heartbeat_timer.cancel()
            if member.awaiting_join is not None:
                respond, member.awaiting_join = member.awaiting_join, None
                respond(JoinResult(errors.NOT_COORDINATOR, member.member_id))
            if member.awaiting_sync is not None:
                respond, member.awaiting_sync = member.awaiting_sync, None
                respond(SyncResult(errors.NOT_COORDINATOR))
        self._fire(group, UNLOAD, now)
        del self.groups[group.group_id]

    # -- journal and state changes -------------------------------------------------------------
    def _fire(self, group: Group, trigger: str, now: int, reason: str = "") -> tuple[str, str]:
        old, new = group.fire(trigger, now)
        if old != new:
            self.journal.record(now, "group.state", group=group.group_id, previous=old,
                                state=new, trigger=trigger, generation=group.generation_id,
                                reason=reason)
        return old, new

    def _new_member_id(self, prefix: str) -> str:
        return f"{prefix}-{uuid.UUID(int=self.sim.random.getrandbits(128), version=4)}"

    # -- appends to __consumer_offsets -------------------------------------------------------
    def _append(self, partition: int, records: list[tuple[bytes, bytes | None]],
                done: Callable[[int], None] | None = None) -> None:
        """Write records to the group's partition with acks=all; done(error) when the
        high watermark passes them (offsets.commit.timeout.ms at most)."""
        host = self._host(partition)
        if host is None or self._loaded.get(partition) != host:
            if done:
                done(errors.NOT_COORDINATOR)
            return
        now = self.clock.now_ms
        batch = RecordBatch([(i, now, k, v, ()) for i, (k, v) in enumerate(records)],
                            first_timestamp=now, max_timestamp=now)
        tp = (OFFSETS_TOPIC, partition)

        def respond(results: dict) -> None:
            code = results.get(tp, (errors.REQUEST_TIMED_OUT, -1))[0]
            if done:
                done(_commit_error(code))

        self.sim.brokers[host[0]].handle_produce(
            {tp: batch}, -1, self.config["offsets.commit.timeout.ms"], respond)

    def _group_record(self, group: Group,
                      assignment: Mapping[str, bytes] | None = None) -> tuple[bytes, bytes]:
        members = tuple(
            MemberMetadata(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                           m.rebalance_timeout_ms, m.session_timeout_ms,
                           m.metadata(group.protocol_name),
                           (assignment or {}).get(m.member_id, m.assignment))
            for m in group.members.values())
        value = GroupValue(group.protocol_type or "", group.generation_id, group.protocol_name,
                           group.leader_id, group.state_since_ms, members)
        return group_metadata_key(group.group_id), group_metadata_value(value)

    # -- JoinGroup ------------------------------------------------------------------------------
    def join_group(self, broker_id: int | None, group_id: str, member_id: str,
                   group_instance_id: str | None, client_id: str, client_host: str,
                   protocol_type: str, protocols: Protocols, session_timeout_ms: int,
                   rebalance_timeout_ms: int, respond: Callable[[JoinResult], None],
                   reason: str = "") -> None:
        try:
            group = self._serve(broker_id, group_id)
        except errors.KafkaCoreError as exc:
            respond(JoinResult(exc.code, member_id))
            return
        cfg = self.config
        if not (cfg["group.min.session.timeout.ms"] <= session_timeout_ms
                <= cfg["group.max.session.timeout.ms"]):
            respond(JoinResult(errors.INVALID_SESSION_TIMEOUT, member_id))
            return
        unknown = member_id == ""
        if group is None:
            if not unknown:
                respond(JoinResult(errors.UNKNOWN_MEMBER_ID, member_id))
                return
            group = Group(group_id, self.partition_for(group_id),
                          state_since_ms=self.clock.now_ms)
            self.groups[group_id] = group
        if not self._accept_joining_member(group, member_id):
            respond(JoinResult(errors.GROUP_MAX_SIZE_REACHED, ""))
            return
        if group.state == DEAD:
            respond(JoinResult(errors.COORDINATOR_NOT_AVAILABLE, member_id))
            return
        if not group.supports_protocols(protocol_type, (n for n, _ in protocols)):
            respond(JoinResult(errors.INCONSISTENT_GROUP_PROTOCOL, member_id))
            return
        args = (client_id, client_host, protocol_type, protocols, session_timeout_ms,
                rebalance_timeout_ms, respond)
        if unknown:
            new_id = self._new_member_id(group_instance_id or client_id)
            if group_instance_id is None:
                # KIP-394 (Kafka 2.2+): hand out the id and ask the member to come back
                # with it, so a client that times out cannot leave ghost members behind.
                group.pending_members.add(new_id)
                group.pending_timers[new_id] = self.clock.call_later(
                    session_timeout_ms, self._expire_pending, group, new_id)
                respond(JoinResult(errors.MEMBER_ID_REQUIRED, new_id))
            elif group_instance_id in group.static_members:
                self._replace_static_member(group, group_instance_id, new_id, *args)
            else:
                self._add_member(group, new_id, group_instance_id, *args, reason=reason)
            return
        if member_id in group.pending_members:
            timer = group.pending_timers.pop(member_id, None)
            if timer is not None:
                timer.cancel()
            self._add_member(group, member_id, group_instance_id, *args, reason=reason)
            return
        code = group.validate_member(member_id, group_instance_id)
        if code != errors.NONE:
            respond(JoinResult(code, member_id))
            return
        member = group.members[member_id]
        if group.state == PREPARING_REBALANCE:
            self._update_member(group, member, *args[2:])
            self._rebalance(group, JOIN, f"member {member_id} rejoins; {reason}")
        elif group.state == COMPLETING_REBALANCE:
            if member.matches(protocols):
                # A repeat of a join whose answer was lost: the same answer again.
                respond(self._join_answer(group, member))
            else:
                self._update_member(group, member, *args[2:])
                self._rebalance(group, JOIN, f"member {member_id} changed metadata")
        elif group.state == STABLE:
            if group.leader_id == member_id or not member.matches(protocols):
                # The leader rejoining is how a consumer asks for a rebalance the
                # coordinator cannot see (new partitions, a new topic for a pattern).
                self._update_member(group, member, *args[2:])
                why = "leader rejoins" if group.leader_id == member_id else "metadata changed"
                self._rebalance(group, JOIN, f"member {member_id}: {why}; {reason}")
            else:
                respond(JoinResult(errors.NONE, member_id, group.generation_id,
                                   group.protocol_type, group.protocol_name,
                                   group.leader_id or ""))
        else:
            respond(JoinResult(errors.UNKNOWN_MEMBER_ID, member_id))

    def _accept_joining_member(self, group: Group, member_id: str) -> bool:
        max_size = self.config["group.max.size"]
        if group.state in (EMPTY, DEAD):
            return True
        if group.state == PREPARING_REBALANCE:
            member = group.members.get(member_id)
            return (member is not None and member.awaiting_join is not None) or \
                group.awaiting_join_count() < max_size
        return member_id in group.members or len(group.members) < max_size

    def _join_answer(self, group: Group, member: Member, skip: bool = False) -> JoinResult:
        is_leader = group.leader_id == member.member_id
        members = tuple((m.member_id, m.group_instance_id, m.metadata(group.protocol_name))
                        for m in group.members.values()) if is_leader else ()
        return JoinResult(errors.NONE, member.member_id, group.generation_id,
                          group.protocol_type, group.protocol_name, group.leader_id or "",
                          members, skip)

    def _update_member(self, group: Group, member: Member, protocol_type: str,
                       protocols: Protocols, session_timeout_ms: int, rebalance_timeout_ms: int,
                       respond: Callable[[JoinResult], None]) -> None:
        member.protocol_type = protocol_type
        member.protocols = list(protocols)
        member.session_timeout_ms = session_timeout_ms
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.awaiting_join = respond

    def _add_member(self, group: Group, member_id: str, instance_id: str | None,
                    client_id: str, client_host: str, protocol_type: str, protocols: Protocols,
                    session_timeout_ms: int, rebalance_timeout_ms: int,
                    respond: Callable[[JoinResult], None], reason: str = "") -> None:
        member = Member(member_id, instance_id, client_id, client_host, rebalance_timeout_ms,
                        session_timeout_ms, protocol_type, list(protocols), is_new=True,
                        awaiting_join=respond)
        if group.state == PREPARING_REBALANCE and group.previous_state == EMPTY:
            group.new_member_added = True  # the initial rebalance waits a little longer
        group.add(member)
        self.journal.record(self.clock.now_ms, "group.member.joined", group=group.group_id,
                            member=member_id, instance=instance_id, client=client_id)
        # A new member cannot heartbeat until it has joined; bound how long it may wait.
        self._reschedule_heartbeat(group, member, NEW_MEMBER_JOIN_TIMEOUT_MS)
        self._rebalance(group, JOIN, f"new member {member_id}; {reason}")

    def _replace_static_member(self, group: Group, instance_id: str, new_id: str,
                               client_id: str, client_host: str, protocol_type: str,
                               protocols: Protocols, session_timeout_ms: int,
                               rebalance_timeout_ms: int,
                               respond: Callable[[JoinResult], None]) -> None:
        """A static member restarts (KIP-345): it takes over its old member id's place,
        and in a Stable group gets its partitions back with no rebalance."""
        old_id = group.static_members[instance_id]
        old = group.members.pop(old_id)
        if old.heartbeat_timer is not None:
            old.heartbeat_timer.cancel()
        if old.awaiting_join is not None:
            old.awaiting_join(JoinResult(errors.FENCED_INSTANCE_ID, old_id))
        if old.awaiting_sync is not None:
            old.awaiting_sync(SyncResult(errors.FENCED_INSTANCE_ID))
        member = Member(new_id, instance_id, client_id, client_host, rebalance_timeout_ms,
                        session_timeout_ms, protocol_type, list(protocols), old.assignment)
        group.members[new_id] = member
        group.static_members[instance_id] = new_id
        if group.leader_id == old_id:
            group.leader_id = new_id
        if old_id in group.pending_sync:
            group.pending_sync.discard(old_id)
            group.pending_sync.add(new_id)
        self.journal.record(self.clock.now_ms, "group.member.replaced", group=group.group_id,
                            instance=instance_id, previous=old_id, member=new_id)
        self._reschedule_heartbeat(group, member)
        member.awaiting_join = respond
        if group.state == STABLE and group.select_protocol() == group.protocol_name:
            member.awaiting_join = None
            is_leader = group.leader_id == new_id

            def persisted(code: int) -> None:
                if code != errors.NONE:
                    respond(JoinResult(code, ""))
                else:
                    respond(self._join_answer(group, member, skip=is_leader))

            self._append(group.partition, [self._group_record(group)], persisted)
        elif group.state == COMPLETING_REBALANCE:
            self._rebalance(group, JOIN, f"static member {instance_id} restarted")
        else:
            self._rebalance(group, JOIN, f"static member {instance_id} rejoins")

    # -- rebalancing ----------------------------------------------------------------------------
    def _rebalance(self, group: Group, trigger: str, reason: str) -> None:
        """Something changed membership: start a rebalance, or try to finish the one on."""
        now = self.clock.now_ms
        old = group.state
        if old == COMPLETING_REBALANCE:
            self._propagate_assignment(group, errors.REBALANCE_IN_PROGRESS, {})
        if old in (COMPLETING_REBALANCE, STABLE):
            group.pending_sync.clear()
            if group.sync_timer is not None:
                group.sync_timer.cancel()
                group.sync_timer = None
        self._fire(group, trigger, now, reason)
        if old == EMPTY:
            delay = self.config["group.initial.rebalance.delay.ms"]
            timeout = max((m.rebalance_timeout_ms for m in group.members.values()), default=0)
            remaining = max(timeout - delay, 0)
            group.join_timer = self.clock.call_later(
                delay, self._initial_rebalance_tick, group, delay, remaining)
        elif old != PREPARING_REBALANCE:
            if group.has_all_members_joined():
                self._complete_join(group)
            else:
                self._schedule_join_timeout(group)
        else:
            self._maybe_complete_join(group)

    def _schedule_join_timeout(self, group: Group) -> None:
        if group.join_timer is not None:
            group.join_timer.cancel()
        timeout = max((m.rebalance_timeout_ms for m in group.members.values()), default=0)
        group.join_timer = self.clock.call_later(timeout, self._join_timeout, group)

    def _join_timeout(self, group: Group) -> None:
        if self._live(group):
            self._complete_join(group)

    def _initial_rebalance_tick(self, group: Group, delay: int, remaining: int) -> None:
        """group.initial.rebalance.delay.ms: a new group waits for more members, extending
        while new ones keep arriving, so consumers started together share a generation."""
        if not self._live(group):
            return
        if group.new_member_added and remaining != 0:
            group.new_member_added = False
            new_delay = min(self.config["group.initial.rebalance.delay.ms"], remaining)
            group.join_timer = self.clock.call_later(
                new_delay, self._initial_rebalance_tick, group, new_delay,
                max(remaining - delay, 0))
        else:
            self._complete_join(group)

    def _maybe_complete_join(self, group: Group) -> None:
        if group.state != PREPARING_REBALANCE or group.previous_state == EMPTY:
            return
        if group.has_all_members_joined():
            self._complete_join(group)

    def _complete_join(self, group: Group) -> None:
        if group.join_timer is not None:
            group.join_timer.cancel()
            group.join_timer = None
        now = self.clock.now_ms
        for member in [m for m in group.members.values()
                       if m.awaiting_join is None and m.group_instance_id is None]:
            group.remove(member.member_id)
            if member.heartbeat_timer is not None:
                member.heartbeat_timer.cancel()
            self.journal.record(now, "group.member.removed", group=group.group_id,
                                member=member.member_id, reason="did not rejoin in time")
        if group.state == DEAD:
            return
        if not group.maybe_elect_new_joined_leader() and group.members:
            group.join_timer = self.clock.call_later(
                max(m.rebalance_timeout_ms for m in group.members.values()),
                self._join_timeout, group)
            return
        group.generation_id += 1
        group.pending_sync.clear()
        if not group.members:
            group.protocol_name = None
            group.leader_id = None
            self._fire(group, NONE_JOINED, now)
            self._append(group.partition, [self._group_record(group)])
            return
        group.protocol_name = group.select_protocol()
        self._fire(group, ALL_JOINED, now)
        for member in list(group.members.values()):
            if member.awaiting_join is not None:
                respond, member.awaiting_join = member.awaiting_join, None
                member.is_new = False
                self._reschedule_heartbeat(group, member)
                group.pending_sync.add(member.member_id)
                respond(self._join_answer(group, member))
        if group.state == COMPLETING_REBALANCE:
            timeout = max(m.rebalance_timeout_ms for m in group.members.values())
            group.sync_timer = self.clock.call_later(timeout, self._expire_sync, group,
                                                     group.generation_id)

    def _expire_sync(self, group: Group, generation: int) -> None:
        if not self._live(group) or group.generation_id != generation:
            return
        if group.state in (COMPLETING_REBALANCE, STABLE) and group.pending_sync:
            now = self.clock.now_ms
            for member_id in sorted(group.pending_sync):
                member = group.remove(member_id)
                if member is not None and member.heartbeat_timer is not None:
                    member.heartbeat_timer.cancel()
                self.journal.record(now, "group.member.removed", group=group.group_id,
                                    member=member_id, reason="no SyncGroup in time")
            self._rebalance(group, LEAVE, "members did not sync in time")

    # -- SyncGroup ------------------------------------------------------------------------------
    def sync_group(self, broker_id: int | None, group_id: str, member_id: str,
                   group_instance_id: str | None, generation_id: int,
                   protocol_type: str | None, protocol_name: str | None,
                   assignments: Mapping[str, bytes],
                   respond: Callable[[SyncResult], None]) -> None:
        try:
            group = self._serve(broker_id, group_id)
        except errors.KafkaCoreError as exc:
            respond(SyncResult(exc.code))
            return
        if group is None:
            respond(SyncResult(errors.UNKNOWN_MEMBER_ID))
            return
        if group.state == DEAD:
            respond(SyncResult(errors.COORDINATOR_NOT_AVAILABLE))
            return
        code = group.validate_member(member_id, group_instance_id)
        if code == errors.NONE and generation_id != group.generation_id:
            code = errors.ILLEGAL_GENERATION
        if code == errors.NONE and (
                (protocol_type is not None and protocol_type != group.protocol_type)
                or (protocol_name is not None and protocol_name != group.protocol_name)):
            code = errors.INCONSISTENT_GROUP_PROTOCOL
        if code != errors.NONE:
            respond(SyncResult(code))
            return
        if group.state == PREPARING_REBALANCE:
            respond(SyncResult(errors.REBALANCE_IN_PROGRESS))
            return
        member = group.members[member_id]
        group.pending_sync.discard(member_id)
        if group.state == STABLE:
            respond(SyncResult(errors.NONE, group.protocol_type, group.protocol_name,
                               member.assignment))
            return
        member.awaiting_sync = respond  # COMPLETING_REBALANCE: wait for the leader
        if group.leader_id != member_id:
            return
        full = {m: bytes(assignments.get(m, b"")) for m in group.members}
        generation = group.generation_id

        def persisted(code: int) -> None:
            if group.state != COMPLETING_REBALANCE or group.generation_id != generation:
                return  # someone joined or left while the record was being written
            if code != errors.NONE:
                self._propagate_assignment(group, code, {})
                self._rebalance(group, LEAVE, f"could not store the assignment ({code})")
                return
            self._propagate_assignment(group, errors.NONE, full)
            self._fire(group, LEADER_SYNC, self.clock.now_ms)
            self.journal.record(self.clock.now_ms, "group.assignment", group=group.group_id,
                                generation=generation, protocol=group.protocol_name,
                                assignment={m: _describe_assignment(a) for m, a in full.items()})

        self._append(group.partition, [self._group_record(group, full)], persisted)

    def _propagate_assignment(self, group: Group, code: int,
                              assignment: Mapping[str, bytes]) -> None:
        for member in list(group.members.values()):
            member.assignment = assignment.get(member.member_id, b"") if code == errors.NONE \
                else b""
            if member.awaiting_sync is not None:
                respond, member.awaiting_sync = member.awaiting_sync, None
                self._reschedule_heartbeat(group, member)
                if code == errors.NONE:
                    respond(SyncResult(code, group.protocol_type, group.protocol_name,
                                       member.assignment))
                else:
                    respond(SyncResult(code))

    # -- Heartbeat, session timeouts, LeaveGroup ------------------------------------------------
    def heartbeat(self, broker_id: int | None, group_id: str, member_id: str,
                  group_instance_id: str | None, generation_id: int) -> int:
        """Heartbeat: NONE, or REBALANCE_IN_PROGRESS to ask the member to rejoin."""
        try:
            group = self._serve(broker_id, group_id)
        except errors.KafkaCoreError as exc:
            return exc.code
        if group is None:
            return errors.UNKNOWN_MEMBER_ID
        if group.state == DEAD:
            return errors.COORDINATOR_NOT_AVAILABLE
        code = group.validate_member(member_id, group_instance_id)
        if code != errors.NONE:
            return code
        if generation_id != group.generation_id:
            return errors.ILLEGAL_GENERATION
        if group.state == EMPTY:
            return errors.UNKNOWN_MEMBER_ID
        self._reschedule_heartbeat(group, group.members[member_id])
        if group.state == PREPARING_REBALANCE:
            return errors.REBALANCE_IN_PROGRESS
        return errors.NONE

    def _reschedule_heartbeat(self, group: Group, member: Member,
                              timeout_ms: int | None = None) -> None:
        if member.heartbeat_timer is not None:
            member.heartbeat_timer.cancel()
        member.heartbeat_timer = self.clock.call_later(
            member.session_timeout_ms if timeout_ms is None else timeout_ms,
            self._expire_member, group, member)

    def _expire_member(self, group: Group, member: Member) -> None:
        if not self._live(group) or group.members.get(member.member_id) is not member:
            return
        if member.has_satisfied_heartbeat():
            return
        self._remove_member(group, member, "session timeout expired (session.timeout.ms)")

    def _expire_pending(self, group: Group, member_id: str) -> None:
        group.pending_timers.pop(member_id, None)
        if not self._live(group) or member_id not in group.pending_members:
            return
        group.pending_members.discard(member_id)
        if group.state == PREPARING_REBALANCE and group.has_all_members_joined():
            self._complete_join(group)

    def _remove_member(self, group: Group, member: Member, reason: str) -> None:
        now = self.clock.now_ms
        if member.awaiting_join is not None:
            respond, member.awaiting_join = member.awaiting_join, None
            respond(JoinResult(errors.UNKNOWN_MEMBER_ID, ""))
        if member.heartbeat_timer is not None:
            member.heartbeat_timer.cancel()
        group.remove(member.member_id)
        self.journal.record(now, "group.member.removed", group=group.group_id,
                            member=member.member_id, instance=member.group_instance_id,
                            reason=reason)
        if group.state in (STABLE, COMPLETING_REBALANCE):
            self._rebalance(group, LEAVE, f"{member.member_id}: {reason}")
        elif group.state == PREPARING_REBALANCE:
            self._fire(group, LEAVE, now, reason)
            if group.has_all_members_joined():
                self._complete_join(group)

    def leave_group(self, broker_id: int | None, group_id: str,
                    members: Iterable[tuple[str, str | None]],
                    reason: str = "the consumer is leaving the group") -> tuple[int, list[int]]:
        """LeaveGroup (v3+ batch form): [(member_id, group_instance_id)] -> per-member errors."""
        try:
            group = self._serve(broker_id, group_id)
        except errors.KafkaCoreError as exc:
            return exc.code, []
        members = list(members)
        if group is None or group.state == DEAD:
            code = errors.UNKNOWN_MEMBER_ID if group is None else errors.COORDINATOR_NOT_AVAILABLE
            return errors.NONE, [code] * len(members)
        out = []
        for member_id, instance_id in members:
            if instance_id is not None:
                existing = group.static_members.get(instance_id)
                if existing is None:
                    out.append(errors.UNKNOWN_MEMBER_ID)
                    continue
                if member_id and member_id != existing:
                    out.append(errors.FENCED_INSTANCE_ID)
                    continue
                member_id = existing
            if member_id in group.pending_members:
                self._expire_pending(group, member_id)
                out.append(errors.NONE)
                continue
            member = group.members.get(member_id)
            if member is None:
                out.append(errors.UNKNOWN_MEMBER_ID)
                continue
            self._remove_member(group, member, reason)
            out.append(errors.NONE)
        return errors.NONE, out

    # -- offsets --------------------------------------------------------------------------------
    def offset_commit(self, broker_id: int | None, group_id: str, generation_id: int,
                      member_id: str, group_instance_id: str | None,
                      offsets: Mapping[TP, tuple[int, int, str]],
                      respond: Callable[[dict[TP, int]], None]) -> None:
        """OffsetCommit: {(topic, partition): (offset, leader_epoch, metadata)}; the answer
        comes once the records are replicated (acks=all) in __consumer_offsets."""
        tps = list(offsets)
        try:
            group = self._serve(broker_id, group_id)
        except errors.KafkaCoreError as exc:
            respond(dict.fromkeys(tps, exc.code))
            return
        if group is None:
            if generation_id >= 0:
                respond(dict.fromkeys(tps, errors.ILLEGAL_GENERATION))
                return
            # A consumer without group management (assign()) or the admin client.
            group = Group(group_id, self.partition_for(group_id),
                          state_since_ms=self.clock.now_ms)
            self.groups[group_id] = group
        code = self._validate_offset_commit(group, member_id, group_instance_id, generation_id)
        if code != errors.NONE:
            respond(dict.fromkeys(tps, code))
            return
        now = self.clock.now_ms
        result: dict[TP, int] = {}
        records = []
        accepted = {}
        for tp, (offset, epoch, metadata) in offsets.items():
            if len((metadata or "").encode()) > self.config["offset.metadata.max.bytes"]:
                result[tp] = OFFSET_METADATA_TOO_LARGE
                continue
            accepted[tp] = CommittedOffset(int(offset), int(epoch), metadata or "", now)
            records.append((offset_commit_key(group_id, tp[0], tp[1]),
                            offset_commit_value(int(offset), int(epoch), metadata or "", now)))
        if not records:
            respond(result)
            return

        def persisted(code: int) -> None:
            if code == errors.NONE and self.groups.get(group_id) is group:
                group.offsets.update(accepted)
                self.journal.record(self.clock.now_ms, "offsets.committed", group=group_id,
                                    generation=generation_id, member=member_id,
                                    offsets={f"{t}-{p}": c.offset
                                             for (t, p), c in accepted.items()})
            result.update(dict.fromkeys(accepted, code))
            respond(result)

        self._append(group.partition, records, persisted)

    def validate_txn_offset_commit(self, group_id: str, generation_id: int, member_id: str,
                                   instance_id: str | None) -> int:
        """TxnOffsetCommit's check of the consumer a transaction commits for: an empty or
        unknown group takes generation -1 (a consumer without group management, or one
        that left); a member must be the group's, at its generation."""
        group = self.groups.get(group_id)
        if group is None:
            return errors.ILLEGAL_GENERATION if generation_id >= 0 else errors.NONE
        return self._validate_offset_commit(group, member_id, instance_id, generation_id,
                                            transactional=True)

    @staticmethod
    def _validate_offset_commit(group: Group, member_id: str, instance_id: str | None,
                                generation_id: int, transactional: bool = False) -> int:
        # Kafka's ClassicGroup.validateOffsetCommit.
        if group.state == DEAD:
            return errors.COORDINATOR_NOT_AVAILABLE
        if generation_id < 0 and group.state == EMPTY:
            return errors.NONE  # the admin client, or a consumer using assign()
        if generation_id >= 0 or member_id or instance_id is not None:
            code = group.validate_member(member_id, instance_id)
            if code != errors.NONE:
                return code
            if generation_id != group.generation_id:
                return errors.ILLEGAL_GENERATION
        elif not transactional and group.state != EMPTY:
            return errors.UNKNOWN_MEMBER_ID
        if group.state == COMPLETING_REBALANCE:
            return errors.REBALANCE_IN_PROGRESS
        return errors.NONE

    def commit_transactional(self, group_id: str, offsets: Mapping[Any, Any]) -> None:
        """The offsets a transaction carried (TxnOffsetCommit), made visible at its commit
        marker. Keys are (topic, partition); values an offset or anything with .offset
        (kafka-python's OffsetAndMetadata)."""
        now = self.clock.now_ms
        parsed: dict[TP, CommittedOffset] = {}
        for tp, value in offsets.items():
            offset = getattr(value, "offset", value)
            epoch = getattr(value, "leader_epoch", -1)
            metadata = getattr(value, "metadata", "") or ""
            parsed[(tp[0], int(tp[1]))] = CommittedOffset(
                int(offset), -1 if epoch is None else int(epoch), metadata, now)
        try:
            group = self._serve(None, group_id)
        except errors.KafkaCoreError:
            # The coordinator is away: like a marker Kafka retries, the offsets land when
            # a leader for the partition loads it.
            self._pending_txn.setdefault(self.partition_for(group_id), []).extend(
                (group_id, tp, c) for tp, c in parsed.items())
            return
        if group is None:
            group = Group(group_id, self.partition_for(group_id), state_since_ms=now)
            self.groups[group_id] = group
        self._apply_txn_offsets(group_id, parsed)

    def _apply_txn_offsets(self, group_id: str, offsets: Mapping[TP, CommittedOffset]) -> None:
        group = self.groups.get(group_id)
        if group is None:
            group = Group(group_id, self.partition_for(group_id),
                          state_since_ms=self.clock.now_ms)
            self.groups[group_id] = group
        group.offsets.update(offsets)
        self._append(group.partition, [
            (offset_commit_key(group_id, t, p),
             offset_commit_value(c.offset, c.leader_epoch, c.metadata, c.commit_timestamp))
            for (t, p), c in offsets.items()])
        self.journal.record(self.clock.now_ms, "offsets.committed", group=group_id,
                            transactional=True,
                            offsets={f"{t}-{p}": c.offset for (t, p), c in offsets.items()})

    def offset_fetch(self, broker_id: int | None, group_id: str,
                     partitions: Iterable[TP] | None = None
                     ) -> tuple[int, dict[TP, CommittedOffset | None]]:
        """OffsetFetch: committed offsets (None where there is no commit)."""
        try:
            group = self._serve(broker_id, group_id)
        except errors.KafkaCoreError as exc:
            return exc.code, {}
        stored = group.offsets if group is not None else {}
        if partitions is None:
            return errors.NONE, dict(sorted(stored.items()))
        return errors.NONE, {tuple(tp): stored.get(tuple(tp)) for tp in partitions}

    def delete_offsets(self, broker_id: int | None, group_id: str,
                       partitions: Iterable[TP]) -> tuple[int, dict[TP, int]]:
        """OffsetDelete: refused per partition while the group consumes that topic."""
        try:
            group = self._serve(broker_id, group_id)
        except errors.KafkaCoreError as exc:
            return exc.code, {}
        if group is None or group.state == DEAD:
            return errors.GROUP_ID_NOT_FOUND, {}
        active = group.state in (STABLE, PREPARING_REBALANCE, COMPLETING_REBALANCE)
        if active and group.protocol_type != "consumer":
            return errors.NON_EMPTY_GROUP, {}
        subscribed = (group.subscribed_topics() or set()) if active else set()
        out: dict[TP, int] = {}
        tombstones = []
        for tp in partitions:
            tp = (tp[0], int(tp[1]))
            if tp[0] in subscribed:
                out[tp] = GROUP_SUBSCRIBED_TO_TOPIC
                continue
            out[tp] = errors.NONE
            if group.offsets.pop(tp, None) is not None:
                tombstones.append((offset_commit_key(group_id, *tp), None))
        if tombstones:
            self._append(group.partition, tombstones)
        return errors.NONE, out

    # -- admin: list, describe, delete ------------------------------------------------------------
    def _load_all(self) -> None:
        if OFFSETS_TOPIC not in self.sim.controller.topics:
            return
        for p in range(self.num_partitions):
            host = self._host(p)
            if host is not None:
                self._ensure_loaded(p, host)

    def list_groups(self, broker_id: int | None = None,
                    states: Iterable[str] | None = None) -> list[tuple[str, str, str]]:
        """ListGroups: [(group_id, protocol_type, state)] of groups whose coordinator is
        broker_id (every broker when None)."""
        self._load_all()
        wanted = {s.lower() for s in states} if states else None
        out = []
        for group_id, group in sorted(self.groups.items()):
            host = self._loaded.get(group.partition)
            if host is None or host != self._host(group.partition):
                continue
            if broker_id is not None and host[0] != broker_id:
                continue
            if wanted is not None and group.state.lower() not in wanted:
                continue
            out.append((group_id, group.protocol_type or "", group.state))
        return out

    def describe_group(self, broker_id: int | None, group_id: str) -> GroupDescription:
        """DescribeGroups: state, protocol and members; an unknown group is Dead."""
        try:
            group = self._serve(broker_id, group_id)
        except errors.KafkaCoreError as exc:
            return GroupDescription(exc.code, group_id, "", "", "")
        if group is None:
            return GroupDescription(errors.NONE, group_id, DEAD, "", "")
        show_assignment = group.state == STABLE
        members = tuple(
            MemberDescription(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                              m.metadata(group.protocol_name),
                              m.assignment if show_assignment else b"")
            for m in group.members.values())
        return GroupDescription(errors.NONE, group_id, group.state, group.protocol_type or "",
                                group.protocol_name or "", members)

    def delete_groups(self, broker_id: int | None, group_ids: Iterable[str]) -> dict[str, int]:
        """DeleteGroups: only empty groups; their offsets become tombstones."""
        out: dict[str, int] = {}
        for group_id in group_ids:
            try:
                group = self._serve(broker_id, group_id)
            except errors.KafkaCoreError as exc:
                out[group_id] = exc.code
                continue
            if group is None or group.state == DEAD:
                out[group_id] = errors.GROUP_ID_NOT_FOUND
            elif group.state != EMPTY:
                out[group_id] = errors.NON_EMPTY_GROUP
            else:
                self._delete(group, "DeleteGroups")
                out[group_id] = errors.NONE
        return out

    def _delete(self, group: Group, reason: str) -> None:
        records: list[tuple[bytes, bytes | None]] = [
            (offset_commit_key(group.group_id, t, p), None) for t, p in sorted(group.offsets)]
        records.append((group_metadata_key(group.group_id), None))
        self._append(group.partition, records)
        group.offsets.clear()
        self._fire(group, DELETE, self.clock.now_ms, reason)
        del self.groups[group.group_id]

    # -- offsets.retention.minutes ------------------------------------------------------------
    def _expire_offsets(self) -> None:
        """Every offsets.retention.check.interval.ms: drop offsets of groups that have been
        Empty for offsets.retention.minutes (Kafka 2.1+, KIP-211), and of standalone
        (assign()) consumers that have not committed for that long; delete groups left
        with nothing."""
        now = self.clock.now_ms
        retention = self.config["offsets.retention.minutes"] * 60_000
        self._expiry_timer = self.clock.call_later(
            self.config["offsets.retention.check.interval.ms"], self._expire_offsets)
        for group in list(self.groups.values()):
            if not self._live(group):
                continue
            if group.protocol_type and group.state != EMPTY:
                # A group with members keeps its offsets, except that a Stable consumer
                # group loses those of topics it no longer subscribes to, counted from
                # their commit (KIP-496, Kafka 2.4).
                subscribed = group.subscribed_topics() if group.state == STABLE else None
                if subscribed is None:
                    continue
                expired = sorted(tp for tp, c in group.offsets.items()
                                 if tp[0] not in subscribed
                                 and now - c.commit_timestamp >= retention)
            else:
                # A group that used group management counts from when it became Empty.
                expired = sorted(
                    tp for tp, c in group.offsets.items()
                    if now - (group.state_since_ms if group.protocol_type else c.commit_timestamp)
                    >= retention)
            if expired:
                for tp in expired:
                    del group.offsets[tp]
                self._append(group.partition,
                             [(offset_commit_key(group.group_id, *tp), None) for tp in expired])
                self.journal.record(now, "offsets.expired", group=group.group_id,
                                    partitions=[f"{t}-{p}" for t, p in expired])
            if not group.offsets and group.state == EMPTY:
                self._delete(group, "offsets expired")

    # -- views ----------------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """Plain data of every loaded group, for pictures and tests."""
        out = {}
        for group_id, g in sorted(self.groups.items()):
            out[group_id] = {
                "state": g.state, "generation": g.generation_id, "protocol": g.protocol_name,
                "leader": g.leader_id, "partition": g.partition,
                "coordinator": (self._loaded.get(g.partition) or (None,))[0],
                "members": {m.member_id: {"instance": m.group_instance_id,
                                          "client_id": m.client_id,
                                          "assignment": _describe_assignment(m.assignment)}
                            for m in g.members.values()},
                "offsets": {f"{t}-{p}": c.offset for (t, p), c in sorted(g.offsets.items())},
            }
        return out


def _describe_assignment(data: bytes) -> list[str]:
    try:
        return [f"{t}-{p}" for t, p in decode_assignment(data).partitions]
    except Exception:  # not the consumer protocol
        return []


def _commit_error(code: int) -> int:
    """Produce errors on __consumer_offsets as an OffsetCommit reports them."""
    if code in (errors.NONE,):
        return code
    if code in (errors.NOT_ENOUGH_REPLICAS, errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
                errors.REQUEST_TIMED_OUT, errors.UNKNOWN_TOPIC_OR_PARTITION):
        return errors.COORDINATOR_NOT_AVAILABLE
    if code in (errors.NOT_LEADER_OR_FOLLOWER, errors.KAFKA_STORAGE_ERROR):
        return errors.NOT_COORDINATOR
    if code in (errors.MESSAGE_TOO_LARGE, errors.RECORD_LIST_TOO_LARGE):
        return errors.INVALID_COMMIT_OFFSET_SIZE
    return code
