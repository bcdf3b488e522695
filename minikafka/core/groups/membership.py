"""JoinGroup, SyncGroup, Heartbeat and LeaveGroup: the classic protocol's requests, and the
rebalance they drive (the barrier of JoinGroup, the leader's assignment in SyncGroup,
session and rebalance timeouts). Answers that must wait go to a ``respond`` callback."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from .. import errors
from .classic import (
    ALL_JOINED,
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    JOIN,
    LEADER_SYNC,
    LEAVE,
    NEW_MEMBER_JOIN_TIMEOUT_MS,
    NONE_JOINED,
    PREPARING_REBALANCE,
    STABLE,
    Group,
    JoinResult,
    Member,
    Protocols,
    SyncResult,
    describe_assignment,
)
from .consumer import ConsumerGroup


class ClassicMembership:
    """The classic group protocol's requests (a part of GroupCoordinator)."""

    # -- JoinGroup ------------------------------------------------------------------------------
    def join_group(self, broker_id: int | None, group_id: str, member_id: str,
                   group_instance_id: str | None, client_id: str, client_host: str,
                   protocol_type: str, protocols: Protocols, session_timeout_ms: int,
                   rebalance_timeout_ms: int, respond: Callable[[JoinResult], None],
                   reason: str = "") -> None:
        try:
            group = self.group_at(broker_id, group_id)
        except errors.KafkaCoreError as exc:
            respond(JoinResult(exc.code, member_id))
            return
        cfg = self.config
        if not (cfg["group.min.session.timeout.ms"] <= session_timeout_ms
                <= cfg["group.max.session.timeout.ms"]):
            respond(JoinResult(errors.INVALID_SESSION_TIMEOUT, member_id))
            return
        unknown = member_id == ""
        if isinstance(group, ConsumerGroup):
            if group.members:
                # A classic member of a consumer group (a mixed group, see ``mixed``).
                self.consumer.mixed.join(group, member_id, group_instance_id, client_id,
                                         client_host, protocol_type, protocols,
                                         session_timeout_ms, rebalance_timeout_ms, respond)
                return
            group = self._consumer_to_classic(group)
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
            new_id = self.new_member_id(group_instance_id or client_id)
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
            self.start_rebalance(group, JOIN, f"member {member_id} rejoins; {reason}")
        elif group.state == COMPLETING_REBALANCE:
            if member.matches(protocols):
                # A repeat of a join whose answer was lost: the same answer again.
                respond(self._join_answer(group, member))
            else:
                self._update_member(group, member, *args[2:])
                self.start_rebalance(group, JOIN, f"member {member_id} changed metadata")
        elif group.state == STABLE:
            if group.leader_id == member_id or not member.matches(protocols):
                # The leader rejoining is how a consumer asks for a rebalance the
                # coordinator cannot see (new partitions, a new topic for a pattern).
                self._update_member(group, member, *args[2:])
                why = "leader rejoins" if group.leader_id == member_id else "metadata changed"
                self.start_rebalance(group, JOIN, f"member {member_id}: {why}; {reason}")
            else:
                respond(JoinResult(errors.NONE, member_id, group.generation_id,
                                   group.protocol_type, group.protocol_name,
                                   group.leader_id or ""))
        else:
            respond(JoinResult(errors.UNKNOWN_MEMBER_ID, member_id))

    def _consumer_to_classic(self, group: ConsumerGroup) -> Group:
        """An empty consumer group becomes a classic one when a classic member joins
        (Kafka's maybeDeleteEmptyConsumerGroup); its offsets stay."""
        self.append_records(group.partition, self.consumer.tombstones(group))
        self.consumer.cancel_timers(group)
        group.dead = True
        classic = Group(group.group_id, group.partition, state_since_ms=self.clock.now_ms)
        classic.offsets = group.offsets
        self.groups[group.group_id] = classic
        self.journal.record(self.clock.now_ms, "group.converted", group=group.group_id,
                            previous="consumer", type="classic")
        return classic

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
        self.reschedule_heartbeat(group, member, NEW_MEMBER_JOIN_TIMEOUT_MS)
        self.start_rebalance(group, JOIN, f"new member {member_id}; {reason}")

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
        self.reschedule_heartbeat(group, member)
        member.awaiting_join = respond
        if group.state == STABLE and group.select_protocol() == group.protocol_name:
            member.awaiting_join = None
            is_leader = group.leader_id == new_id

            def persisted(code: int) -> None:
                if code != errors.NONE:
                    respond(JoinResult(code, ""))
                else:
                    respond(self._join_answer(group, member, skip=is_leader))

            self.append_records(group.partition, [self.group_record(group)], persisted)
        elif group.state == COMPLETING_REBALANCE:
            self.start_rebalance(group, JOIN, f"static member {instance_id} restarted")
        else:
            self.start_rebalance(group, JOIN, f"static member {instance_id} rejoins")

    # -- rebalancing ----------------------------------------------------------------------------
    def start_rebalance(self, group: Group, trigger: str, reason: str) -> None:
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
        if self.is_live(group):
            self._complete_join(group)

    def _initial_rebalance_tick(self, group: Group, delay: int, remaining: int) -> None:
        """group.initial.rebalance.delay.ms: a new group waits for more members, extending
        while new ones keep arriving, so consumers started together share a generation."""
        if not self.is_live(group):
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
            self.append_records(group.partition, [self.group_record(group)])
            return
        group.protocol_name = group.select_protocol()
        self._fire(group, ALL_JOINED, now)
        for member in list(group.members.values()):
            if member.awaiting_join is not None:
                respond, member.awaiting_join = member.awaiting_join, None
                member.is_new = False
                self.reschedule_heartbeat(group, member)
                group.pending_sync.add(member.member_id)
                respond(self._join_answer(group, member))
        if group.state == COMPLETING_REBALANCE:
            timeout = max(m.rebalance_timeout_ms for m in group.members.values())
            group.sync_timer = self.clock.call_later(timeout, self._expire_sync, group,
                                                     group.generation_id)

    def _expire_sync(self, group: Group, generation: int) -> None:
        if not self.is_live(group) or group.generation_id != generation:
            return
        if group.state in (COMPLETING_REBALANCE, STABLE) and group.pending_sync:
            now = self.clock.now_ms
            for member_id in sorted(group.pending_sync):
                member = group.remove(member_id)
                if member is not None and member.heartbeat_timer is not None:
                    member.heartbeat_timer.cancel()
                self.journal.record(now, "group.member.removed", group=group.group_id,
                                    member=member_id, reason="no SyncGroup in time")
            self.start_rebalance(group, LEAVE, "members did not sync in time")

    # -- SyncGroup ------------------------------------------------------------------------------
    def sync_group(self, broker_id: int | None, group_id: str, member_id: str,
                   group_instance_id: str | None, generation_id: int,
                   protocol_type: str | None, protocol_name: str | None,
                   assignments: Mapping[str, bytes],
                   respond: Callable[[SyncResult], None]) -> None:
        try:
            group = self.group_at(broker_id, group_id)
        except errors.KafkaCoreError as exc:
            respond(SyncResult(exc.code))
            return
        if isinstance(group, ConsumerGroup):
            self.consumer.mixed.sync(group, member_id, group_instance_id, generation_id,
                                     protocol_type, protocol_name, respond)
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
                self.start_rebalance(group, LEAVE, f"could not store the assignment ({code})")
                return
            self._propagate_assignment(group, errors.NONE, full)
            self._fire(group, LEADER_SYNC, self.clock.now_ms)
            self.journal.record(self.clock.now_ms, "group.assignment", group=group.group_id,
                                generation=generation, protocol=group.protocol_name,
                                assignment={m: describe_assignment(a) for m, a in full.items()})

        self.append_records(group.partition, [self.group_record(group, full)], persisted)

    def _propagate_assignment(self, group: Group, code: int,
                              assignment: Mapping[str, bytes]) -> None:
        for member in list(group.members.values()):
            member.assignment = assignment.get(member.member_id, b"") if code == errors.NONE \
                else b""
            if member.awaiting_sync is not None:
                respond, member.awaiting_sync = member.awaiting_sync, None
                self.reschedule_heartbeat(group, member)
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
            group = self.group_at(broker_id, group_id)
        except errors.KafkaCoreError as exc:
            return exc.code
        if isinstance(group, ConsumerGroup):
            return self.consumer.mixed.heartbeat(group, member_id, group_instance_id,
                                                 generation_id)
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
        self.reschedule_heartbeat(group, group.members[member_id])
        if group.state == PREPARING_REBALANCE:
            return errors.REBALANCE_IN_PROGRESS
        return errors.NONE

    def reschedule_heartbeat(self, group: Group, member: Member,
                              timeout_ms: int | None = None) -> None:
        if member.heartbeat_timer is not None:
            member.heartbeat_timer.cancel()
        member.heartbeat_timer = self.clock.call_later(
            member.session_timeout_ms if timeout_ms is None else timeout_ms,
            self._expire_member, group, member)

    def _expire_member(self, group: Group, member: Member) -> None:
        if not self.is_live(group) or group.members.get(member.member_id) is not member:
            return
        if member.has_satisfied_heartbeat():
            return
        self._remove_member(group, member, "session timeout expired (session.timeout.ms)")

    def _expire_pending(self, group: Group, member_id: str) -> None:
        group.pending_timers.pop(member_id, None)
        if not self.is_live(group) or member_id not in group.pending_members:
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
            self.start_rebalance(group, LEAVE, f"{member.member_id}: {reason}")
        elif group.state == PREPARING_REBALANCE:
            self._fire(group, LEAVE, now, reason)
            if group.has_all_members_joined():
                self._complete_join(group)

    def leave_group(self, broker_id: int | None, group_id: str,
                    members: Iterable[tuple[str, str | None]],
                    reason: str = "the consumer is leaving the group") -> tuple[int, list[int]]:
        """LeaveGroup (v3+ batch form): [(member_id, group_instance_id)] -> per-member errors."""
        try:
            group = self.group_at(broker_id, group_id)
        except errors.KafkaCoreError as exc:
            return exc.code, []
        members = list(members)
        if isinstance(group, ConsumerGroup):
            return errors.NONE, self.consumer.mixed.leave(group, members, reason)
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

