"""Mixed consumer groups (Kafka 4.x): classic and consumer-protocol members in one group.

A consumer group (KIP-848) may hold *classic members*: consumers that still speak
JoinGroup, SyncGroup, Heartbeat and LeaveGroup. The coordinator assigns them as it assigns
everyone (the target assignment); the classic requests are only a way to carry it:

- JoinGroup is one reconciliation step (Kafka's classicGroupJoinToConsumerGroup): the
  member's generation is its member epoch, and nobody is the leader;
- SyncGroup returns the member's assigned partitions, encoded as a ConsumerProtocol
  assignment; REBALANCE_IN_PROGRESS if the group epoch moved on since it joined;
- Heartbeat answers REBALANCE_IN_PROGRESS when the member must rejoin: the group epoch
  moved on, it has partitions to revoke, or partitions it waited for are free now. A
  classic member revokes by rejoining without them (revocation before assignment).

How groups change type, as ``group.consumer.migration.policy`` allows (Kafka's default
``bidirectional``; ``upgrade``, ``downgrade`` or ``disabled``):

- online upgrade: a consumer-protocol member joining a classic group with members
  converts it; the classic members keep their partitions and generation (as their member
  epoch), if the group uses the consumer protocol type and is not above
  ``group.consumer.max.size`` (Kafka's validateOnlineUpgrade);
- with ``disabled``, neither happens, and no classic member joins a consumer group;
- online downgrade: when the last consumer-protocol member leaves (or is fenced) and
  only classic members remain, the group becomes a classic group again, Stable at the
  group epoch with each member's target assignment, and rebalances at once (Kafka's
  validateOnlineDowngradeWithFencedMember and convertToClassicGroup).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from .. import errors
from ..offsets import (
    ASSIGNMENT_VERSION,
    ConsumerAssignment,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    group_metadata_key,
)
from . import records as rec
from .assignors import Assignment
from .classic import (
    LEAVE,
    RESTORE_PATH,
    Group,
    JoinResult,
    Member,
    Protocols,
    SyncResult,
)
from .consumer import ClassicMetadata, ConsumerGroup, ConsumerMember, MemberState

if TYPE_CHECKING:
    from .port import ConsumerProtocolHost

MIGRATION_POLICIES = ("disabled", "upgrade", "downgrade", "bidirectional")
CONSUMER_PROTOCOL_TYPE = "consumer"


class MixedGroups:
    """Classic members inside consumer groups, and the conversions between group types
    (a part of ``ConsumerProtocol``)."""

    def __init__(self, protocol: ConsumerProtocolHost) -> None:
        self.protocol = protocol
        self.coordinator = protocol.coordinator
        self.clock = protocol.clock
        self.journal = protocol.journal
        policy = str(protocol.config["group.consumer.migration.policy"]).strip().lower()
        if policy not in MIGRATION_POLICIES:  # Kafka refuses to start (a ConfigException)
            raise ValueError(f"Invalid value {policy} for configuration "
                             f"group.consumer.migration.policy: String must be one of "
                             f"(case insensitive): {', '.join(sorted(MIGRATION_POLICIES))}")
        self.policy = policy

    # -- the policy ---------------------------------------------------------------------------
    @property
    def upgrade_enabled(self) -> bool:
        return self.policy in ("upgrade", "bidirectional")

    @property
    def downgrade_enabled(self) -> bool:
        return self.policy in ("downgrade", "bidirectional")

    def may_upgrade(self, classic: Group) -> bool:
        """Kafka's validateOnlineUpgrade."""
        return (self.upgrade_enabled and classic.protocol_type == CONSUMER_PROTOCOL_TYPE
                and len(classic.members) <= self.protocol.config["group.consumer.max.size"])

    def may_downgrade(self, group: ConsumerGroup, leaving_id: str) -> bool:
        """Kafka's validateOnlineDowngradeWithFencedMember."""
        return (group.all_classic_except(leaving_id) and len(group.members) > 1
                and self.downgrade_enabled
                and len(group.members) - 1 <= self.coordinator.config["group.max.size"])

    def may_downgrade_on_replace(self, group: ConsumerGroup, replaced_id: str) -> bool:
        """Kafka's validateOnlineDowngradeWithReplacedMemberId: the static member replaced by
        a classic one was the last consumer-protocol member."""
        return (group.all_classic_except(replaced_id) and self.downgrade_enabled
                and len(group.members) <= self.coordinator.config["group.max.size"])

    # -- topic names and ids ----------------------------------------------------------------
    def _by_id(self, partitions: Iterable[tuple[str, int]]) -> Assignment:
        out: dict[str, frozenset[int]] = {}
        for name, p in partitions:
            topic_id = self.protocol.topic_id(name)
            if topic_id is not None:
                out[topic_id] = out.get(topic_id, frozenset()) | {p}
        return out

    def _encoded(self, partitions: Assignment, subscription: bytes) -> bytes:
        """The partitions as a ConsumerProtocol assignment, at the member's version."""
        version = int.from_bytes(subscription[:2], "big", signed=True) if subscription else 0
        tps = tuple((self.protocol.topic_name(t), p) for t, ps in sorted(partitions.items())
                    for p in sorted(ps))
        return encode_assignment(ConsumerAssignment(tps),
                                 max(0, min(version, ASSIGNMENT_VERSION)))

    # -- online upgrade -----------------------------------------------------------------------
    def to_consumer_group(self, classic: Group) -> ConsumerGroup:
        """Kafka's convertToConsumerGroup: every classic member becomes a classic member of
        a consumer group at the group's generation, Stable with the partitions it was
        given. Raises ValueError if a member's embedded protocol cannot be read."""
        coord = self.coordinator
        generation = classic.generation_id
        group = ConsumerGroup(classic.group_id, classic.partition, group_epoch=generation,
                              assignment_epoch=generation, offsets=classic.offsets,
                              state_since_ms=self.clock.now_ms)
        members = []
        for m in classic.members.values():
            name = classic.protocol_name or (m.protocols[0][0] if m.protocols else None)
            try:
                sub = decode_subscription(m.metadata(name))
                assigned = self._by_id(decode_assignment(m.assignment).partitions)
            except Exception as exc:  # a member whose metadata is not the consumer protocol
                raise ValueError(str(exc)) from exc
            members.append(ConsumerMember(
                m.member_id, instance_id=m.group_instance_id, rack_id=sub.rack_id,
                client_id=m.client_id, client_host=m.client_host,
                subscribed_topic_names=tuple(sub.topics),
                rebalance_timeout_ms=m.rebalance_timeout_ms, member_epoch=generation,
                previous_member_epoch=generation, state=MemberState.STABLE,
                assigned=assigned,
                classic=ClassicMetadata(m.session_timeout_ms, tuple(m.protocols))))
        # Waiting classic requests learn of the new rebalance and rejoin.
        for m in classic.members.values():
            if m.awaiting_join is not None:
                respond, m.awaiting_join = m.awaiting_join, None
                respond(JoinResult(errors.REBALANCE_IN_PROGRESS, m.member_id))
            if m.awaiting_sync is not None:
                respond_sync, m.awaiting_sync = m.awaiting_sync, None
                respond_sync(SyncResult(errors.REBALANCE_IN_PROGRESS))
            if m.heartbeat_timer is not None:
                m.heartbeat_timer.cancel()
        for timer in (classic.join_timer, classic.sync_timer, *classic.pending_timers.values()):
            if timer is not None:
                timer.cancel()
        records: list[tuple[bytes, bytes | None]] = [(group_metadata_key(classic.group_id),
                                                      None)]
        for member in members:
            group.put_member(member)
            group.target[member.member_id] = member.assigned
            records.append(self.protocol.member_record(group, member))
        group.subscription_metadata = self.protocol.compute_subscription_metadata(group)
        records.append(self.protocol.epoch_record(group))
        for member in members:
            records.append((rec.member_key(rec.TARGET_MEMBER, group.group_id, member.member_id),
                            rec.encode_value(b"", rec.TargetMemberValue(
                                rec.as_rows(member.assigned)))))
        key = rec.group_key(rec.TARGET_METADATA, group.group_id)
        records.append((key, rec.encode_value(key, rec.TargetMetadataValue(
            group.assignment_epoch, self.clock.now_ms))))
        records.extend(self.protocol.assignment_record(group, m) for m in members)
        coord.groups[group.group_id] = group
        coord.append_records(group.partition, records)
        for member in members:
            self.protocol.schedule_session(group, member)
        self.journal.record(self.clock.now_ms, "group.converted", group=group.group_id,
                            previous="classic", type="consumer", online=True,
                            classic_members=[m.member_id for m in members])
        return group

    # -- online downgrade ---------------------------------------------------------------------
    def to_classic_group(self, group: ConsumerGroup, leaving: ConsumerMember,
                         reason: str, joining: Member | None = None) -> Group:
        """Kafka's convertToClassicGroup: the classic members that remain form a classic
        group, Stable at the group epoch with their target assignments, and a rebalance
        starts at once; unless a classic static member ``joining`` replaces ``leaving``:
        it takes the leaving member's assignment, and nobody has to move."""
        coord = self.coordinator
        now = self.clock.now_ms
        records: list[tuple[bytes, bytes | None]] = []
        for mid in group.members:
            records.extend((rec.member_key(t, group.group_id, mid), None)
                           for t in (rec.CURRENT_ASSIGNMENT, rec.TARGET_MEMBER,
                                     rec.MEMBER_METADATA))
        records.extend(self.protocol.tombstones(group))
        self.protocol.cancel_timers(group)
        group.dead = True
        classic = Group(group.group_id, group.partition, generation_id=group.group_epoch,
                        protocol_type=CONSUMER_PROTOCOL_TYPE, offsets=group.offsets,
                        state_since_ms=now)
        for m in group.members.values():
            if m.member_id == leaving.member_id or m.classic is None:
                continue
            classic.add(Member(m.member_id, m.instance_id, m.client_id, m.client_host,
                               m.rebalance_timeout_ms, m.classic.session_timeout_ms,
                               CONSUMER_PROTOCOL_TYPE, list(m.classic.protocols)))
        if joining is not None:
            classic.add(joining)
        classic.protocol_name = classic.select_protocol()
        for member in classic.members.values():
            owner = leaving.member_id if member is joining else member.member_id
            member.assignment = self._encoded(group.target.get(owner, {}),
                                              member.metadata(classic.protocol_name))
        for trigger in RESTORE_PATH:  # Empty -> ... -> Stable, through the classic table
            classic.fire(trigger, now)
        coord.groups[group.group_id] = classic
        records.append(coord.group_record(classic))
        coord.append_records(classic.partition, records)
        self.journal.record(now, "group.member.removed", group=group.group_id,
                            member=leaving.member_id, instance=leaving.instance_id,
                            reason=reason)
        self.journal.record(now, "group.converted", group=group.group_id, previous="consumer",
                            type="classic", online=True)
        for member in classic.members.values():
            coord.reschedule_heartbeat(classic, member)
        if joining is None:
            coord.start_rebalance(classic, LEAVE,
                             f"Downgrade group {group.group_id} from consumer to classic.")
        return classic

    def _join_downgrading(self, group: ConsumerGroup, replaced: ConsumerMember,
                          member_id: str, client_id: str, client_host: str,
                          protocols: Protocols, session_timeout_ms: int,
                          rebalance_timeout_ms: int,
                          respond: Callable[[JoinResult], None]) -> None:
        """A classic static member replaces the last consumer-protocol member (same
        instance id): the group is a classic group again, Stable, the newcomer holding the
        replaced member's partitions (its SyncGroup collects them)."""
        joining = Member(member_id, replaced.instance_id, client_id, client_host,
                         rebalance_timeout_ms, session_timeout_ms, CONSUMER_PROTOCOL_TYPE,
                         list(protocols))
        classic = self.to_classic_group(group, replaced, "replaced by a classic static member "
                                        "with the same instance id", joining)
        respond(JoinResult(errors.NONE, member_id, classic.generation_id,
                           CONSUMER_PROTOCOL_TYPE, classic.protocol_name, leader=""))

    # -- classic requests to a consumer group -------------------------------------------------
    def join(self, group: ConsumerGroup, member_id: str, instance_id: str | None,
             client_id: str, client_host: str, protocol_type: str, protocols: Protocols,
             session_timeout_ms: int, rebalance_timeout_ms: int,
             respond: Callable[[JoinResult], None]) -> None:
        """Kafka's classicGroupJoinToConsumerGroup: answered at once. With the policy
        ``disabled`` a classic member may not join (KAFKA-20640, Kafka 4.4): the group
        could never become single-protocol again."""
        coord = self.coordinator
        unknown = member_id == ""
        if unknown:
            member_id = coord.new_member_id(instance_id or client_id)
        max_size = self.protocol.config["group.consumer.max.size"]
        if member_id not in group.members and len(group.members) >= max_size:
            respond(JoinResult(errors.GROUP_MAX_SIZE_REACHED, ""))
            return
        if self.policy == "disabled" or not protocols or not group.supports_classic_protocols(
                protocol_type, {n for n, _ in protocols}):
            respond(JoinResult(errors.INCONSISTENT_GROUP_PROTOCOL, member_id))
            return
        if unknown and instance_id is None:
            respond(JoinResult(errors.MEMBER_ID_REQUIRED, member_id))
            return
        try:
            sub = decode_subscription(protocols[0][1])
        except Exception:  # not the consumer protocol's subscription
            respond(JoinResult(errors.INCONSISTENT_GROUP_PROTOCOL, member_id))
            return
        records: list = []
        replaced: ConsumerMember | None = None
        if instance_id is None:
            member = group.members.get(member_id) or ConsumerMember(member_id)
        else:  # Kafka's getOrMaybeSubscribeStaticConsumerGroupMember
            existing = group.members.get(group.static_members.get(instance_id, ""))
            if existing is None:
                if not unknown:
                    respond(JoinResult(errors.UNKNOWN_MEMBER_ID, member_id))
                    return
                member = ConsumerMember(member_id, instance_id=instance_id)
            elif existing.member_id == member_id:
                member = existing
            elif not unknown:
                respond(JoinResult(errors.FENCED_INSTANCE_ID, member_id))
                return
            else:  # the static member is back with a new member id: it takes the old place
                replaced = existing
                if self.may_downgrade_on_replace(group, existing.member_id):
                    self._join_downgrading(group, existing, member_id, client_id, client_host,
                                           protocols, session_timeout_ms,
                                           rebalance_timeout_ms, respond)
                    return
                member = self.protocol.replace_static(group, existing, member_id, records)
        if replaced is None and group.members.get(member.member_id) is not None \
                and member.classic is None:
            respond(JoinResult(errors.UNKNOWN_MEMBER_ID, member_id))
            return
        updated = replace(
            member, instance_id=instance_id, rack_id=sub.rack_id or member.rack_id,
            rebalance_timeout_ms=rebalance_timeout_ms, server_assignor=None,
            subscribed_topic_names=tuple(sub.topics), client_id=client_id,
            client_host=client_host,
            classic=ClassicMetadata(session_timeout_ms, tuple(protocols)))
        before = group.state
        # A classic member gives up partitions before it rejoins (eager) or says in its
        # subscription what it still owns (cooperative): never "unknown".
        updated = self.protocol.update_member(group, member, updated,
                                              self._by_id(sub.owned_partitions), records,
                                              before)
        self._cancel(updated, "join_timer")
        self._deadline(group, updated, "sync_timer", "the classic member did not send "
                       "SyncGroup within its rebalance timeout")
        respond(JoinResult(errors.NONE, updated.member_id, updated.member_epoch,
                           CONSUMER_PROTOCOL_TYPE, protocols[0][0], leader=""))

    def _classic_member(self, group: ConsumerGroup, member_id: str,
                        instance_id: str | None) -> tuple[int, ConsumerMember | None]:
        """Kafka's validateConsumerGroupMember and throwIfMemberDoesNotUseClassicProtocol."""
        if instance_id is None:
            member = group.members.get(member_id)
        else:
            member = group.members.get(group.static_members.get(instance_id, ""))
            if member is not None and member.member_id != member_id:
                return errors.FENCED_INSTANCE_ID, None
        if member is None or member.classic is None:
            return errors.UNKNOWN_MEMBER_ID, None
        return errors.NONE, member

    def sync(self, group: ConsumerGroup, member_id: str, instance_id: str | None,
             generation_id: int, protocol_type: str | None, protocol_name: str | None,
             respond: Callable[[SyncResult], None]) -> None:
        """Kafka's classicGroupSyncToConsumerGroup: the member's assigned partitions."""
        code, member = self._classic_member(group, member_id, instance_id)
        if member is not None and generation_id != member.member_epoch:
            code = errors.ILLEGAL_GENERATION
        if member is not None and code == errors.NONE:
            chosen = member.classic.protocols[0][0]
            if (protocol_type is not None and protocol_type != CONSUMER_PROTOCOL_TYPE) or \
                    (protocol_name is not None and protocol_name != chosen):
                code = errors.INCONSISTENT_GROUP_PROTOCOL
            elif group.group_epoch > member.member_epoch and \
                    member.state != MemberState.UNREVOKED_PARTITIONS:
                code = errors.REBALANCE_IN_PROGRESS
                self._rejoin_deadline(group, member)
        if code != errors.NONE or member is None:
            respond(SyncResult(code))
            return
        self._cancel(member, "sync_timer")
        self.protocol.schedule_session(group, member)
        respond(SyncResult(errors.NONE, CONSUMER_PROTOCOL_TYPE, member.classic.protocols[0][0],
                           self._encoded(member.assigned, member.classic.protocols[0][1])))

    def heartbeat(self, group: ConsumerGroup, member_id: str, instance_id: str | None,
                  generation_id: int) -> int:
        """Kafka's classicGroupHeartbeatToConsumerGroup: REBALANCE_IN_PROGRESS asks the
        member to rejoin (new epoch, partitions to revoke, or partitions free now)."""
        code, member = self._classic_member(group, member_id, instance_id)
        if member is None:
            return code
        if generation_id != member.member_epoch:
            return errors.ILLEGAL_GENERATION
        self.protocol.schedule_session(group, member)
        if member.member_epoch < group.group_epoch or \
                member.state == MemberState.UNREVOKED_PARTITIONS or \
                (member.state == MemberState.UNRELEASED_PARTITIONS
                 and not group.waiting_on_unreleased_partition(member)):
            self._rejoin_deadline(group, member)
            return errors.REBALANCE_IN_PROGRESS
        return errors.NONE

    # -- a classic member's deadlines (Kafka's join and sync timeouts) ------------------------
    def _rejoin_deadline(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        if member.join_timer is None:  # scheduleConsumerGroupJoinTimeoutIfAbsent
            self._deadline(group, member, "join_timer", "the classic member did not rejoin "
                           "within its rebalance timeout")

    def _deadline(self, group: ConsumerGroup, member: ConsumerMember, which: str,
                  reason: str) -> None:
        self._cancel(member, which)
        setattr(member, which, self.clock.call_later(
            max(member.rebalance_timeout_ms, 0), self._expired, group, member.member_id,
            which, reason))

    @staticmethod
    def _cancel(member: ConsumerMember, which: str) -> None:
        timer = getattr(member, which)
        if timer is not None:
            timer.cancel()
            setattr(member, which, None)

    def _expired(self, group: ConsumerGroup, member_id: str, which: str, reason: str) -> None:
        member = group.members.get(member_id)
        if member is None or not self.coordinator.is_live(group):
            return
        setattr(member, which, None)
        self.protocol.fence(group, member, reason)

    def leave(self, group: ConsumerGroup, members: list[tuple[str, str | None]],
              reason: str) -> list[int]:
        """Kafka's classicGroupLeaveToConsumerGroup: per member, NONE or its error."""
        out = []
        for member_id, instance_id in members:
            if instance_id is not None and not member_id:
                member_id = group.static_members.get(instance_id, "")
            code, member = self._classic_member(group, member_id, instance_id)
            if member is None:
                out.append(code)
                continue
            self.protocol.fence(group, member, reason)
            out.append(errors.NONE)
        return out
