"""ConsumerGroupHeartbeat and ConsumerGroupDescribe (KIP-848) as the coordinator serves them.

One function per API, both doors call it: the wire handlers (API keys 68 and 69) decode
a request into ``ConsumerHeartbeat`` and encode the ``HeartbeatAnswer``; the in-process
consumer (``group_protocol="consumer"``) builds the same request. Topics are named by
topic id, as on the wire. Every change is written to ``__consumer_offsets`` as Kafka's
records (``records.py``) so a coordinator elsewhere, or after a restart, replays it.

Kafka's rules kept here (GroupMetadataManager.consumerGroupHeartbeat, Kafka 4.x):

- epoch 0 joins (a new member, or a known one starting over), -1 leaves, -2 is a static
  member leaving for a while (it keeps its partitions until its session expires);
- a member's epoch must be the coordinator's (or the previous one, with only
  partitions it still owns, when an answer was lost): otherwise FENCED_MEMBER_EPOCH
  and the member rejoins with epoch 0;
- a consumer member joining an empty classic group converts it (its offsets stay);
  joining a classic group with members upgrades it online when
  group.consumer.migration.policy allows (``mixed``): the classic members stay, as
  classic members of the consumer group; otherwise GROUP_ID_NOT_FOUND ("... is not a
  consumer group").
"""
from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .. import errors
from ..kafka_configs import BROKER
from ..offsets import group_metadata_key
from . import records as rec
from .assignors import ASSIGNORS, Assignment
from .consumer import (
    DEAD,
    EMPTY,
    JOIN_EPOCH,
    LEAVE_EPOCH,
    STATIC_LEAVE_EPOCH,
    ClassicMetadata,
    ConsumerGroup,
    ConsumerMember,
    MemberState,
    reconcile,
)
from .mixed import MixedGroups

if TYPE_CHECKING:
    from .port import CoordinatorHost

# The broker configs the consumer protocol reads, with Kafka's defaults.
CONSUMER_DEFAULTS: dict[str, Any] = {k: BROKER[k].default for k in (
    "group.consumer.session.timeout.ms", "group.consumer.heartbeat.interval.ms",
    "group.consumer.max.size", "group.consumer.assignors", "group.consumer.migration.policy")}
# group.consumer.assignors takes class names or the assignors' own names.
_ASSIGNOR_CLASSES = {"org.apache.kafka.coordinator.group.assignor.UniformAssignor": "uniform",
                     "org.apache.kafka.coordinator.group.assignor.RangeAssignor": "range"}

Rows = tuple[tuple[str, tuple[int, ...]], ...]  # (topic id, partitions)



@dataclass(frozen=True)
class ConsumerHeartbeat:
    """ConsumerGroupHeartbeatRequest; None means "unchanged since the last heartbeat"."""

    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    owned: Rows | None = None
    client_id: str = ""
    client_host: str = ""
    version: int = 1


@dataclass(frozen=True)
class HeartbeatAnswer:
    error: int
    error_message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: Rows | None = None  # None: unchanged


@dataclass(frozen=True)
class MemberView:
    member_id: str
    instance_id: str | None
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    assignment: Rows
    target_assignment: Rows
    state: str
    member_type: int = 1  # ConsumerGroupDescribe v1 (KIP-1099): 0 classic, 1 consumer


@dataclass(frozen=True)
class ConsumerGroupView:
    """One group of a ConsumerGroupDescribe answer."""

    error: int
    group_id: str
    error_message: str | None = None
    state: str = ""
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor_name: str = ""
    members: tuple[MemberView, ...] = ()


class _Refused(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def _rows(partitions: Assignment) -> Rows:
    return rec.as_rows(partitions)


def _owned(rows: Rows | None) -> Assignment | None:
    if rows is None:
        return None
    out: dict[str, frozenset[int]] = {}
    for t, ps in rows:
        out[t] = out.get(t, frozenset()) | frozenset(ps)
    return out


class ConsumerProtocol:
    """The consumer group protocol beside the classic one, inside one coordinator (the
    owner of group placement, loading and the __consumer_offsets appends)."""

    def __init__(self, coordinator: CoordinatorHost, broker_config: Any) -> None:
        self.coordinator = coordinator
        self.clock = coordinator.clock
        self.journal = coordinator.journal
        self.config = {k: type(v)(broker_config.get(k, v)) for k, v in CONSUMER_DEFAULTS.items()}
        names = [_ASSIGNOR_CLASSES.get(a.strip(), a.strip())
                 for a in str(self.config["group.consumer.assignors"]).split(",")]
        self.assignors = [a for a in names if a in ASSIGNORS] or ["uniform"]
        self.mixed = MixedGroups(self)

    # -- ConsumerGroupHeartbeat --------------------------------------------------------------
    def heartbeat(self, broker_id: int | None, req: ConsumerHeartbeat) -> HeartbeatAnswer:
        try:
            self._validate(req)
            found = self.coordinator.group_at(broker_id, req.group_id)
            if req.member_epoch in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
                return self._leave(found, req)
            return self._heartbeat(found, req)
        except _Refused as exc:
            return HeartbeatAnswer(exc.code, exc.message)
        except errors.KafkaCoreError as exc:
            return HeartbeatAnswer(exc.code, exc.message or None)

    def _validate(self, req: ConsumerHeartbeat) -> None:
        def invalid(message: str) -> _Refused:
            return _Refused(errors.INVALID_REQUEST, message)

        if not req.group_id:
            raise invalid("GroupId can't be empty.")
        if req.instance_id == "":
            raise invalid("InstanceId can't be empty.")
        if req.rack_id == "":
            raise invalid("RackId can't be empty.")
        if req.version >= 1 and not req.member_id:
            raise invalid("MemberId can't be empty.")
        if req.member_epoch > 0 or req.member_epoch == LEAVE_EPOCH:
            if not req.member_id:
                raise invalid("MemberId can't be empty.")
        elif req.member_epoch == JOIN_EPOCH:
            if req.rebalance_timeout_ms == -1:
                raise invalid("RebalanceTimeoutMs must be provided in first request.")
            if req.owned is None or len(req.owned) != 0:
                raise invalid("TopicPartitions must be empty when (re-)joining.")
            if not req.subscribed_topic_names and not req.subscribed_topic_regex:
                raise invalid("SubscribedTopicNames or SubscribedTopicRegex must be set in "
                              "first request.")
        elif req.member_epoch == STATIC_LEAVE_EPOCH:
            if not req.member_id:
                raise invalid("MemberId can't be empty.")
            if req.instance_id is None:
                raise invalid("InstanceId can't be null.")
        else:
            raise invalid("MemberEpoch is invalid.")
        if req.server_assignor is not None and req.server_assignor not in self.assignors:
            raise _Refused(errors.UNSUPPORTED_ASSIGNOR,
                           f"ServerAssignor {req.server_assignor} is not supported. Supported "
                           f"assignors: {', '.join(self.assignors)}.")
        if req.subscribed_topic_regex:
            try:
                re.compile(req.subscribed_topic_regex)
            except re.error as exc:
                raise _Refused(errors.INVALID_REGULAR_EXPRESSION,
                               f"SubscribedTopicRegex `{req.subscribed_topic_regex}` is not a "
                               f"valid regular expression: {exc}.") from None

    def _group(self, found: Any, group_id: str, create: bool) -> ConsumerGroup:
        """Kafka's getOrMaybeCreateConsumerGroup."""
        coord = self.coordinator
        if isinstance(found, ConsumerGroup) and not found.dead:
            return found
        if found is None or found.state == DEAD:
            if not create:
                raise _Refused(errors.GROUP_ID_NOT_FOUND, f"Consumer group {group_id} not found.")
            group = ConsumerGroup(group_id, coord.partition_for(group_id),
                                  state_since_ms=self.clock.now_ms)
            coord.groups[group_id] = group
            self.journal.record(self.clock.now_ms, "group.created", group=group_id,
                                type="consumer")
            return group
        if create and found.state == EMPTY and not found.members:
            # An empty classic group becomes a consumer group; its offsets stay.
            coord.append_records(found.partition, [(group_metadata_key(group_id), None)])
            for member_timer in found.pending_timers.values():
                member_timer.cancel()
            group = ConsumerGroup(group_id, found.partition, offsets=found.offsets,
                                  state_since_ms=self.clock.now_ms)
            coord.groups[group_id] = group
            self.journal.record(self.clock.now_ms, "group.converted", group=group_id,
                                previous="classic", type="consumer")
            return group
        if create and self.mixed.may_upgrade(found):
            # Online upgrade: the classic members stay, as classic members of the group.
            try:
                return self.mixed.to_consumer_group(found)
            except ValueError:
                raise _Refused(errors.GROUP_ID_NOT_FOUND,
                               f"Cannot upgrade the classic group {group_id} to consumer group "
                               f"because the embedded consumer protocol is malformed.") from None
        raise _Refused(errors.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")

    def _member(self, group: ConsumerGroup, req: ConsumerHeartbeat, member_id: str,
                records: list) -> ConsumerMember:
        create = req.member_epoch == JOIN_EPOCH
        if req.instance_id is None:
            member = group.members.get(member_id)
            if member is None:
                if not create:
                    raise _Refused(errors.UNKNOWN_MEMBER_ID,
                                   f"Member {member_id} is not a member of group "
                                   f"{group.group_id}.")
                return ConsumerMember(member_id)
            if not create:
                self._check_epoch(member, req)
            return member
        existing_id = group.static_members.get(req.instance_id)
        existing = group.members.get(existing_id) if existing_id else None
        if create:
            if existing is None:
                return ConsumerMember(member_id, instance_id=req.instance_id)
            if existing.member_id == member_id:
                return existing
            if existing.member_epoch != STATIC_LEAVE_EPOCH:
                raise _Refused(errors.UNRELEASED_INSTANCE_ID,
                               f"Static member {member_id} with instance id "
                               f"{req.instance_id} cannot join the group because the instance "
                               f"id is owned by {existing.member_id} member.")
            return self.replace_static(group, existing, member_id, records)
        if existing is None:
            raise _Refused(errors.UNKNOWN_MEMBER_ID,
                           f"Instance id {req.instance_id} is unknown.")
        if existing.member_id != member_id:
            raise _Refused(errors.FENCED_INSTANCE_ID,
                           f"Static member {member_id} with instance id {req.instance_id} is "
                           f"fenced by existing member {existing.member_id}.")
        self._check_epoch(existing, req)
        return existing

    def replace_static(self, group: ConsumerGroup, existing: ConsumerMember, member_id: str,
                       records: list) -> ConsumerMember:
        """The static member is back under a new member id: it takes the old one's place
        at epoch 0, its partitions and target included, with no new group epoch (Kafka's
        replaceMember), so nobody else has to move."""
        target = group.target.get(existing.member_id, {})
        self._drop_member(group, existing, records, bump=False)
        back = replace(existing, member_id=member_id, member_epoch=0,
                       previous_member_epoch=0, session_timer=None, rebalance_timer=None,
                       join_timer=None, sync_timer=None)
        group.put_member(back)
        group.target[member_id] = target
        records.append((rec.member_key(rec.TARGET_MEMBER, group.group_id, member_id),
                        rec.encode_value(b"", rec.TargetMemberValue(_rows(target)))))
        records.append(self.member_record(group, back))
        self.journal.record(self.clock.now_ms, "group.member.replaced",
                            group=group.group_id, instance=existing.instance_id,
                            previous=existing.member_id, member=member_id)
        return back

    @staticmethod
    def _check_epoch(member: ConsumerMember, req: ConsumerHeartbeat) -> None:
        epoch = req.member_epoch
        if epoch > member.member_epoch:
            raise _Refused(errors.FENCED_MEMBER_EPOCH,
                           f"The consumer group member has a greater member epoch ({epoch}) "
                           f"than the one known by the group coordinator "
                           f"({member.member_epoch}). The member must abandon all its "
                           f"partitions and rejoin.")
        if epoch < member.member_epoch:
            owned = _owned(req.owned)
            subset = owned is not None and all(
                ps <= member.assigned.get(t, frozenset()) for t, ps in owned.items())
            if epoch != member.previous_member_epoch or not subset:
                raise _Refused(errors.FENCED_MEMBER_EPOCH,
                               f"The consumer group member has a smaller member epoch "
                               f"({epoch}) than the one known by the group coordinator "
                               f"({member.member_epoch}). The member must abandon all its "
                               f"partitions and rejoin.")

    def _heartbeat(self, found: Any, req: ConsumerHeartbeat) -> HeartbeatAnswer:
        coord = self.coordinator
        group = self._group(found, req.group_id, req.member_epoch == JOIN_EPOCH)
        member_id = req.member_id or str(uuid.UUID(int=coord.random_bits(), version=4))
        if len(group.members) >= self.config["group.consumer.max.size"] and \
                member_id not in group.members:
            raise _Refused(errors.GROUP_MAX_SIZE_REACHED,
                           f"The consumer group has reached its maximum capacity of "
                           f"{self.config['group.consumer.max.size']} members.")
        records: list[tuple[bytes, bytes | None]] = []
        before_state = group.state
        member = self._member(group, req, member_id, records)
        is_new = member.member_id not in group.members
        updated = replace(
            member,
            instance_id=req.instance_id if req.instance_id is not None else member.instance_id,
            rack_id=req.rack_id if req.rack_id is not None else member.rack_id,
            rebalance_timeout_ms=req.rebalance_timeout_ms if req.rebalance_timeout_ms != -1
            else member.rebalance_timeout_ms,
            server_assignor=req.server_assignor if req.server_assignor is not None
            else member.server_assignor,
            subscribed_topic_names=tuple(req.subscribed_topic_names)
            if req.subscribed_topic_names is not None else member.subscribed_topic_names,
            subscribed_topic_regex=req.subscribed_topic_regex
            if req.subscribed_topic_regex is not None else member.subscribed_topic_regex,
            client_id=req.client_id, client_host=req.client_host, classic=None)
        updated = self.update_member(group, member, updated, _owned(req.owned), records,
                                     before_state)
        full = req.member_epoch == JOIN_EPOCH or (
            req.rebalance_timeout_ms != -1 and req.subscribed_topic_names is not None
            and req.owned is not None)
        changed = updated.assigned != member.assigned or is_new
        return HeartbeatAnswer(
            errors.NONE, None, updated.member_id, updated.member_epoch,
            self.config["group.consumer.heartbeat.interval.ms"],
            _rows(updated.assigned) if full or changed else None)

    def update_member(self, group: ConsumerGroup, member: ConsumerMember,
                      updated: ConsumerMember, owned: Assignment | None, records: list,
                      before_state: str) -> ConsumerMember:
        """Steps 1-3 of a heartbeat (a ConsumerGroupHeartbeat, or a classic member's
        JoinGroup): store the member, bump the group epoch if its subscription changed, a
        new target if the epoch moved, then one reconciliation step; the records are
        appended and the session timer restarts."""
        coord = self.coordinator
        now = self.clock.now_ms
        is_new = member.member_id not in group.members
        bump = is_new or updated.subscription() != member.subscription()
        if is_new or self._member_value(updated) != self._member_value(member):
            records.append(self.member_record(group, updated))
        group.put_member(updated)
        if is_new:
            self.journal.record(now, "group.member.joined", group=group.group_id,
                                member=updated.member_id, instance=updated.instance_id,
                                client=updated.client_id,
                                protocol="classic" if updated.classic else "consumer")
        metadata = self.compute_subscription_metadata(group)
        if metadata != group.subscription_metadata:
            group.subscription_metadata = metadata
            bump = True
        if bump:
            group.group_epoch += 1
            records.append(self.epoch_record(group))
            self.journal.record(now, "group.epoch", group=group.group_id,
                                epoch=group.group_epoch)
        if group.group_epoch > group.assignment_epoch:
            self._update_target(group, records)
        updated = self._reconcile(group, group.members[updated.member_id], owned, records)
        self.schedule_session(group, updated)
        if records:
            coord.append_records(group.partition, records)
        self._note_state(group, before_state)
        return updated

    def compute_subscription_metadata(self, group: ConsumerGroup) -> dict[str, tuple[str, int]]:
        topics = self.coordinator.sim.controller.topics
        out = {}
        for name, meta in topics.items():
            if meta.internal and name not in {t for m in group.members.values()
                                              for t in m.subscribed_topic_names}:
                continue
            if any(m.subscribes_to(name) for m in group.members.values()):
                out[name] = (meta.topic_id, len(meta.partitions))
        return dict(sorted(out.items()))

    def _update_target(self, group: ConsumerGroup, records: list) -> None:
        """A new target assignment for the new group epoch (TargetAssignmentBuilder)."""
        name = group.preferred_assignor() or self.assignors[0]
        by_id = dict(group.subscription_metadata.values())
        subs = {m.member_id: {tid for topic, (tid, _) in group.subscription_metadata.items()
                              if m.subscribes_to(topic)}
                for m in group.members.values()}
        target = ASSIGNORS[name](subs, by_id, group.target)
        for member_id, assignment in target.items():
            if group.target.get(member_id) != assignment or member_id not in group.target:
                records.append((rec.member_key(rec.TARGET_MEMBER, group.group_id, member_id),
                                rec.encode_value(b"", rec.TargetMemberValue(_rows(assignment)))))
        group.target = target
        group.assignment_epoch = group.group_epoch
        key = rec.group_key(rec.TARGET_METADATA, group.group_id)
        records.append((key, rec.encode_value(key, rec.TargetMetadataValue(
            group.assignment_epoch, self.clock.now_ms))))
        self.journal.record(self.clock.now_ms, "group.target", group=group.group_id,
                            epoch=group.assignment_epoch, assignor=name,
                            target={m: self._names(a) for m, a in target.items()})

    def _reconcile(self, group: ConsumerGroup, member: ConsumerMember,
                   owned: Assignment | None, records: list) -> ConsumerMember:
        if member.is_reconciled_to(group.assignment_epoch):
            return member
        nxt = reconcile(member, group, group.assignment_epoch,
                        group.target.get(member.member_id, {}), owned)
        if nxt is member:
            return member
        group.put_member(nxt)
        records.append(self.assignment_record(group, nxt))
        if nxt.state == MemberState.UNREVOKED_PARTITIONS and (
                nxt.pending_revocation != member.pending_revocation
                or member.state != MemberState.UNREVOKED_PARTITIONS):
            self._schedule_rebalance(group, nxt)
        elif nxt.state != MemberState.UNREVOKED_PARTITIONS and nxt.rebalance_timer is not None:
            nxt.rebalance_timer.cancel()
            nxt.rebalance_timer = None
        self.journal.record(self.clock.now_ms, "group.member.epoch", group=group.group_id,
                            member=nxt.member_id, epoch=nxt.member_epoch,
                            state=nxt.state.name, assigned=self._names(nxt.assigned),
                            revoking=self._names(nxt.pending_revocation))
        return nxt

    # -- leaving, and the coordinator's timers ---------------------------------------------------
    def _leave(self, found: Any, req: ConsumerHeartbeat) -> HeartbeatAnswer:
        if not isinstance(found, ConsumerGroup) or found.dead:
            message = f"Consumer group {req.group_id} not found." if found is None else \
                f"Group {req.group_id} is not a consumer group."
            raise _Refused(errors.GROUP_ID_NOT_FOUND, message)
        group = found
        if req.instance_id is None:
            member = group.members.get(req.member_id)
            if member is None:
                raise _Refused(errors.UNKNOWN_MEMBER_ID,
                               f"Member {req.member_id} is not a member of group "
                               f"{group.group_id}.")
        else:
            member = group.members.get(group.static_members.get(req.instance_id, ""))
            if member is None:
                raise _Refused(errors.UNKNOWN_MEMBER_ID,
                               f"Instance id {req.instance_id} is unknown.")
            if member.member_id != req.member_id:
                raise _Refused(errors.FENCED_INSTANCE_ID,
                               f"Static member {req.member_id} with instance id "
                               f"{req.instance_id} is fenced by existing member "
                               f"{member.member_id}.")
            if req.member_epoch == STATIC_LEAVE_EPOCH:
                # Gone for a while: keeps its partitions until its session expires.
                away = replace(member, member_epoch=STATIC_LEAVE_EPOCH, pending_revocation={})
                group.put_member(away)
                self.coordinator.append_records(group.partition,
                                         [self.assignment_record(group, away)])
                self.journal.record(self.clock.now_ms, "group.member.left", group=group.group_id,
                                    member=member.member_id, instance=req.instance_id,
                                    temporarily=True)
                return HeartbeatAnswer(errors.NONE, None, member.member_id, STATIC_LEAVE_EPOCH)
        self.fence(group, member, "the member left the group")
        return HeartbeatAnswer(errors.NONE, None, req.member_id, req.member_epoch)

    def fence(self, group: ConsumerGroup, member: ConsumerMember, reason: str) -> None:
        """Remove a member (it left, or its session or rebalance timeout expired): the
        group epoch goes up and the others reconcile without it."""
        if self.mixed.may_downgrade(group, member.member_id):
            # Online downgrade: only classic members would be left.
            self.mixed.to_classic_group(group, member, reason)
            return
        before = group.state
        records: list = []
        self._drop_member(group, member, records, bump=True)
        # Kafka 4.x computes the new target at once (the others learn it on their next
        # heartbeat); for a group left empty that is just the new assignment epoch.
        self._update_target(group, records)
        self.journal.record(self.clock.now_ms, "group.member.removed", group=group.group_id,
                            member=member.member_id, instance=member.instance_id,
                            reason=reason)
        self.coordinator.append_records(group.partition, records)
        self._note_state(group, before)

    def _drop_member(self, group: ConsumerGroup, member: ConsumerMember, records: list,
                     bump: bool) -> None:
        for timer in member.timers():
            if timer is not None:
                timer.cancel()
        group.remove_member(member.member_id)
        gid, mid = group.group_id, member.member_id
        records.extend([(rec.member_key(rec.CURRENT_ASSIGNMENT, gid, mid), None),
                        (rec.member_key(rec.TARGET_MEMBER, gid, mid), None),
                        (rec.member_key(rec.MEMBER_METADATA, gid, mid), None)])
        if bump:
            group.subscription_metadata = self.compute_subscription_metadata(group)
            group.group_epoch += 1
            records.append(self.epoch_record(group))

    def schedule_session(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        if member.session_timer is not None:
            member.session_timer.cancel()
        # A classic member keeps the session.timeout.ms of its JoinGroup.
        timeout = member.classic.session_timeout_ms if member.classic is not None \
            else self.config["group.consumer.session.timeout.ms"]
        member.session_timer = self.clock.call_later(timeout, self._session_expired, group,
                                                     member.member_id)

    def _session_expired(self, group: ConsumerGroup, member_id: str) -> None:
        member = group.members.get(member_id)
        if member is None or not self.coordinator.is_live(group):
            return
        self.fence(group, member, "the member session expired "
                                  "(group.consumer.session.timeout.ms)")

    def _schedule_rebalance(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        if member.rebalance_timer is not None:
            member.rebalance_timer.cancel()
        member.rebalance_timer = self.clock.call_later(
            max(member.rebalance_timeout_ms, 0), self._rebalance_expired, group,
            member.member_id, member.member_epoch)

    def _rebalance_expired(self, group: ConsumerGroup, member_id: str, epoch: int) -> None:
        member = group.members.get(member_id)
        if member is None or not self.coordinator.is_live(group):
            return
        if member.state == MemberState.UNREVOKED_PARTITIONS and member.member_epoch == epoch:
            self.fence(group, member, "the member failed to revoke partitions within the "
                                      "rebalance timeout")

    def cancel_timers(self, group: ConsumerGroup) -> None:
        for member in group.members.values():
            for timer in member.timers():
                if timer is not None:
                    timer.cancel()

    def _note_state(self, group: ConsumerGroup, before: str) -> None:
        after = group.state
        if after != before:
            group.state_since_ms = self.clock.now_ms
            self.journal.record(self.clock.now_ms, "group.state", group=group.group_id,
                                previous=before, state=after, generation=group.group_epoch,
                                type="consumer")

    # -- records -----------------------------------------------------------------------------
    @staticmethod
    def _member_value(m: ConsumerMember) -> rec.MemberValue:
        classic = (m.classic.session_timeout_ms, m.classic.protocols) if m.classic else None
        return rec.MemberValue(m.instance_id, m.rack_id, m.client_id, m.client_host,
                               m.subscribed_topic_names, m.subscribed_topic_regex,
                               m.rebalance_timeout_ms, m.server_assignor, classic)

    def member_record(self, group: ConsumerGroup, m: ConsumerMember) -> tuple[bytes, bytes]:
        key = rec.member_key(rec.MEMBER_METADATA, group.group_id, m.member_id)
        return key, rec.encode_value(key, self._member_value(m))

    @staticmethod
    def epoch_record(group: ConsumerGroup) -> tuple[bytes, bytes]:
        key = rec.group_key(rec.GROUP_METADATA, group.group_id)
        return key, rec.encode_value(key, rec.GroupEpochValue(group.group_epoch))

    @staticmethod
    def assignment_record(group: ConsumerGroup, m: ConsumerMember) -> tuple[bytes, bytes]:
        key = rec.member_key(rec.CURRENT_ASSIGNMENT, group.group_id, m.member_id)
        return key, rec.encode_value(key, rec.CurrentAssignmentValue(
            m.member_epoch, m.previous_member_epoch, int(m.state), _rows(m.assigned),
            _rows(m.pending_revocation)))

    def tombstones(self, group: ConsumerGroup) -> list[tuple[bytes, None]]:
        """What deleting an (empty) consumer group writes, besides its offsets."""
        return [(rec.group_key(rec.TARGET_METADATA, group.group_id), None),
                (rec.group_key(rec.GROUP_METADATA, group.group_id), None)]

    def replay(self, groups: dict[str, ConsumerGroup | None], partition: int,
               key: rec.ConsumerGroupKey, value: rec.Value | None) -> None:
        """Rebuild a group from its records (a new coordinator loading the partition)."""
        group = groups.get(key.group)
        if group is None:
            if value is None:
                return
            group = groups[key.group] = ConsumerGroup(key.group, partition,
                                                      state_since_ms=self.clock.now_ms)
        if key.type == rec.GROUP_METADATA:
            if value is None:
                groups[key.group] = None
            else:
                group.group_epoch = value.epoch
            return
        if key.type == rec.TARGET_METADATA:
            group.assignment_epoch = value.assignment_epoch if value is not None else 0
            return
        if key.member is None:
            return
        member = group.members.get(key.member) or ConsumerMember(key.member)
        if key.type == rec.MEMBER_METADATA:
            if value is None:
                group.remove_member(key.member)
                return
            group.put_member(replace(
                member, instance_id=value.instance_id, rack_id=value.rack_id,
                client_id=value.client_id, client_host=value.client_host,
                subscribed_topic_names=value.subscribed_topic_names,
                subscribed_topic_regex=value.subscribed_topic_regex,
                rebalance_timeout_ms=value.rebalance_timeout_ms,
                server_assignor=value.server_assignor,
                classic=ClassicMetadata(*value.classic) if value.classic else None))
        elif key.type == rec.TARGET_MEMBER:
            if value is None:
                group.target.pop(key.member, None)
            else:
                group.target[key.member] = rec.from_rows(value.partitions)
        elif key.type == rec.CURRENT_ASSIGNMENT and value is not None \
                and key.member in group.members:
            group.put_member(replace(
                member, member_epoch=value.member_epoch,
                previous_member_epoch=value.previous_member_epoch,
                state=MemberState(value.state) if value.state in MemberState._value2member_map_
                else MemberState.UNKNOWN,
                assigned=rec.from_rows(value.assigned),
                pending_revocation=rec.from_rows(value.pending_revocation)))

    def loaded(self, group: ConsumerGroup) -> None:
        """After a load: the subscriptions as of now, and every member's session restarts."""
        group.subscription_metadata = self.compute_subscription_metadata(group)
        for member in group.members.values():
            self.schedule_session(group, member)

    # -- offsets with member epochs (OffsetCommit v9+) ---------------------------------------------
    @staticmethod
    def validate_offset_commit(group: ConsumerGroup, member_id: str, member_epoch: int,
                               instance_id: str | None, api_version: int | None = None) -> int:
        """Kafka's ConsumerGroup.validateOffsetCommit: the admin client (epoch -1) may
        commit for an empty group only; a member commits with OffsetCommit v9+ and its
        current epoch."""
        if member_epoch < 0 and not group.members:
            return errors.NONE
        member = group.members.get(member_id)
        if member is None:
            return errors.UNKNOWN_MEMBER_ID
        if api_version is not None and api_version < 9 and member.classic is None:
            return errors.UNSUPPORTED_VERSION
        if instance_id is not None and member.instance_id != instance_id:
            return errors.FENCED_INSTANCE_ID
        if member_epoch != member.member_epoch:
            # A classic member commits with its generation, which is its member epoch.
            return errors.ILLEGAL_GENERATION if member.classic is not None \
                else errors.STALE_MEMBER_EPOCH
        return errors.NONE

    # -- ConsumerGroupDescribe ---------------------------------------------------------------------
    def describe(self, broker_id: int | None, group_id: str) -> ConsumerGroupView:
        try:
            found = self.coordinator.group_at(broker_id, group_id)
        except errors.KafkaCoreError as exc:
            return ConsumerGroupView(exc.code, group_id, exc.message or None)
        if found is None or found.state == DEAD:
            return ConsumerGroupView(errors.GROUP_ID_NOT_FOUND, group_id,
                                     f"Group {group_id} not found.")
        if not isinstance(found, ConsumerGroup):
            return ConsumerGroupView(errors.GROUP_ID_NOT_FOUND, group_id,
                                     f"Group {group_id} is not a consumer group.")
        g = found
        members = tuple(
            MemberView(m.member_id, m.instance_id, m.rack_id, m.member_epoch, m.client_id,
                       m.client_host, m.subscribed_topic_names, m.subscribed_topic_regex,
                       _rows(m.assigned), _rows(g.target.get(m.member_id, {})), m.state.name,
                       0 if m.classic is not None else 1)
            for m in g.members.values())
        return ConsumerGroupView(errors.NONE, group_id, None, g.state, g.group_epoch,
                                 g.assignment_epoch, g.preferred_assignor() or self.assignors[0],
                                 members)

    # -- names for people -------------------------------------------------------------------------
    def _names(self, partitions: Assignment) -> list[str]:
        return [f"{self.topic_name(t)}-{p}" for t, ps in sorted(partitions.items())
                for p in sorted(ps)]

    def topic_name(self, topic_id: str) -> str:
        for name, meta in self.coordinator.sim.controller.topics.items():
            if meta.topic_id == topic_id:
                return name
        return topic_id

    def topic_id(self, name: str) -> str | None:
        meta = self.coordinator.sim.controller.topics.get(name)
        return meta.topic_id if meta is not None else None

