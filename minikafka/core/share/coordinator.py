"""The share-group coordinator (KIP-932): share groups, their members, their assignment,
and the share-partitions their fetches acquire records from.

A member joins with a ShareGroupHeartbeat of epoch 0 naming the topics it subscribes to,
keeps heartbeating every `group.share.heartbeat.interval.ms`, and leaves with epoch -1 (or
is removed when its heartbeats stop for `group.share.session.timeout.ms`). Each change of
members or subscriptions bumps the group epoch and the coordinator reassigns at once with
Kafka's `simple` assignor: a share group has no revocation phase, since owning a partition
gives no exclusive right to its records. A group is Empty or Stable (Dead once deleted)::

    Empty --first member joins--> Stable --last member leaves or times out--> Empty

The coordinator of a share group is the broker that coordinates a consumer group of that
name (FindCoordinator answers the same). minikafka keeps the share groups and the state of
their share-partitions in the cluster, where Kafka keeps them in __consumer_offsets and
__share_group_state: they survive coordinator moves; when a partition's leader stops, its
share-partitions are reloaded from their written state as Kafka's new leader loads them;
with a log directory they survive a restart too (see `persist`).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .. import errors, group_config
from ..kafka_configs import BROKER
from . import assignor
from .partition import SharePartition, ShareSettings
from .sessions import ShareSessionCache

if TYPE_CHECKING:
    from ..clock import SimClock
    from ..controller import Controller
    from ..groups.coordinator import GroupCoordinator
    from ..journal import Journal
    from ..replica import Replica

EMPTY = "Empty"
STABLE = "Stable"
DEAD = "Dead"
STATES = (EMPTY, STABLE, DEAD)

LEAVE_EPOCH = -1

TP = tuple[str, int]

# Group configs (kafka-configs --entity-type groups) a share group takes, each with the
# broker config giving its default and the broker configs bounding it.
GROUP_CONFIGS: dict[str, tuple[str, str, str]] = {
    "share.record.lock.duration.ms": ("group.share.record.lock.duration.ms",
                                      "group.share.min.record.lock.duration.ms",
                                      "group.share.max.record.lock.duration.ms"),
    "share.delivery.count.limit": ("group.share.delivery.count.limit",
                                   "group.share.min.delivery.count.limit",
                                   "group.share.max.delivery.count.limit"),
    "share.partition.max.record.locks": ("group.share.partition.max.record.locks",
                                         "group.share.min.partition.max.record.locks",
                                         "group.share.max.partition.max.record.locks"),
}
AUTO_OFFSET_RESET = "share.auto.offset.reset"


@dataclass
class ShareMember:
    member_id: str
    member_epoch: int
    client_id: str
    client_host: str
    rack_id: str | None
    subscribed_topics: list[str]
    assignment: dict[str, list[int]] = field(default_factory=dict)
    sent_assignment: dict[str, list[int]] | None = None  # what its last answer carried
    timer: Any = None


@dataclass
class ShareGroup:
    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ShareMember] = field(default_factory=dict)  # join order
    partition_counts: dict[str, int] = field(default_factory=dict)  # at the last assignment

    @property
    def state(self) -> str:
        return STABLE if self.members else EMPTY

    def subscribed_topics(self) -> set[str]:
        return {t for m in self.members.values() for t in m.subscribed_topics}


@dataclass(frozen=True)
class HeartbeatResult:
    error_code: int
    error_message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: dict[str, list[int]] | None = None  # None: unchanged since the last answer


@dataclass(frozen=True)
class ShareMemberDescription:
    member_id: str
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topics: tuple[str, ...]
    assignment: dict[str, list[int]]


@dataclass(frozen=True)
class ShareGroupDescription:
    error_code: int
    group_id: str
    state: str = DEAD
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor: str = assignor.NAME
    members: tuple[ShareMemberDescription, ...] = ()
    error_message: str | None = None


class ShareHost(Protocol):
    """What the share-group coordinator needs of the cluster (minikafka.cluster.Cluster is
    one): the clock, the journal, the controller, the broker settings, the consumer-group
    coordinator that places groups, and the partitions' leaders."""

    clock: SimClock
    journal: Journal
    controller: Controller
    broker_config: Mapping[str, Any]

    @property
    def groups(self) -> GroupCoordinator: ...

    def leader_replica(self, topic: str, partition: int) -> Replica | None: ...


class ShareGroupCoordinator:
    """Every share group of a cluster (``sim``: see ``ShareHost``)."""

    def __init__(self, sim: ShareHost) -> None:
        self.sim = sim
        self.clock = sim.clock
        self.groups: dict[str, ShareGroup] = {}
        self.partitions: dict[tuple[str, str, int], SharePartition] = {}
        self.group_configs: dict[str, dict[str, Any]] = {}
        self.sessions: dict[int, ShareSessionCache] = {}
        # Called with the coordinator after a change that must survive a restart.
        self.persist: Callable[[ShareGroupCoordinator], None] | None = None

    # -- configuration ---------------------------------------------------------------------
    def broker_setting(self, key: str) -> int:
        return int(self.sim.broker_config.get(key, BROKER[key].default))  # type: ignore[call-overload]

    def settings(self, group_id: str) -> ShareSettings:
        own = self.group_configs.get(group_id, {})

        def value(name: str) -> int:
            return int(own.get(name, self.broker_setting(GROUP_CONFIGS[name][0])))
        return ShareSettings(value("share.record.lock.duration.ms"),
                             value("share.delivery.count.limit"),
                             value("share.partition.max.record.locks"))

    def auto_offset_reset(self, group_id: str) -> str:
        return str(self.group_configs.get(group_id, {}).get(AUTO_OFFSET_RESET, "latest"))

    def alter_group_config(self, group_id: str, changes: Mapping[str, Any]) -> None:
        """Set (or with None, remove) a group's own configs; the group's resulting configs
        are checked as Kafka's GroupConfig checks them (core.group_config: INVALID_CONFIG
        with Kafka's message) and apply all or none. A share group reads its share.*
        keys; by_duration resets start where latest does."""
        own = dict(self.group_configs.get(group_id, {}))
        for name, value in changes.items():
            if value is None:
                own.pop(name, None)
            else:
                own[name] = value
        self.group_configs[group_id] = group_config.validate(
            own, lambda key: self.sim.broker_config.get(key, BROKER[key].default))
        self._changed()

    # -- placement -------------------------------------------------------------------------
    def check_coordinator(self, broker_id: int | None, group_id: str) -> None:
        """Raise NOT_COORDINATOR (or COORDINATOR_NOT_AVAILABLE) unless `broker_id`
        coordinates `group_id`; INVALID_GROUP_ID for an empty id, GROUP_ID_NOT_FOUND when
        a consumer group already has the name."""
        if not group_id:
            raise errors.KafkaCoreError(errors.INVALID_GROUP_ID, "group id must not be empty")
        host = self.sim.groups.find_coordinator(group_id)
        if broker_id is not None and host != broker_id:
            raise errors.KafkaCoreError(errors.NOT_COORDINATOR,
                                        f"Broker {broker_id} is not the coordinator of {group_id}")
        if group_id not in self.groups and group_id in self.sim.groups.groups:
            raise errors.KafkaCoreError(errors.GROUP_ID_NOT_FOUND,
                                        f"Group {group_id} is not a share group.")

    # -- ShareGroupHeartbeat ---------------------------------------------------------------
    def heartbeat(self, broker_id: int | None, group_id: str, member_id: str, member_epoch: int,
                  subscribed_topics: Iterable[str] | None = None, rack_id: str | None = None,
                  client_id: str = "", client_host: str = "") -> HeartbeatResult:
        try:
            self.check_coordinator(broker_id, group_id)
        except errors.KafkaCoreError as exc:
            return HeartbeatResult(exc.code, exc.message)
        if not member_id:
            return HeartbeatResult(errors.INVALID_REQUEST, "MemberId can't be empty.")
        topics = None if subscribed_topics is None else sorted(set(subscribed_topics))
        group = self.groups.get(group_id)
        member = group.members.get(member_id) if group is not None else None
        if member_epoch == LEAVE_EPOCH:
            if member is not None:
                self._remove(group, member)
            return HeartbeatResult(errors.NONE, None, member_id, LEAVE_EPOCH,
                                   self.broker_setting("group.share.heartbeat.interval.ms"))
        if member_epoch == 0:
            if not topics and member is None:
                return HeartbeatResult(errors.INVALID_REQUEST,
                                       "SubscribedTopicNames must be set in first request.")
        elif member is None:
            return HeartbeatResult(errors.UNKNOWN_MEMBER_ID,
                                   f"Member {member_id} is not a member of group {group_id}.")
        elif member_epoch != member.member_epoch:
            return HeartbeatResult(errors.FENCED_MEMBER_EPOCH,
                                   f"The share group member has a smaller member epoch "
                                   f"({member_epoch}) than the one known by the group "
                                   f"coordinator ({member.member_epoch}).")
        if group is None:
            group = self.groups[group_id] = ShareGroup(group_id)
        changed = False
        if member is None:
            if len(group.members) >= self.broker_setting("group.share.max.size"):
                return HeartbeatResult(errors.GROUP_MAX_SIZE_REACHED,
                                       f"The share group has reached its maximum capacity of "
                                       f"{len(group.members)} members.")
            member = group.members[member_id] = ShareMember(
                member_id, 0, client_id, client_host, rack_id, topics or [])
            changed = True
        elif member_epoch == 0:
            member.sent_assignment = None  # a rejoin: send the whole assignment again
        if topics is not None and topics != member.subscribed_topics:
            member.subscribed_topics = topics
            changed = True
        if rack_id is not None:
            member.rack_id = rack_id
        if changed or self._metadata_changed(group):
            self._reassign(group)
        self._touch(group, member)
        member.member_epoch = group.assignment_epoch
        assignment = None
        if member.sent_assignment != member.assignment:
            assignment = member.sent_assignment = {t: list(p) for t, p in member.assignment.items()}
        return HeartbeatResult(errors.NONE, None, member_id, member.member_epoch,
                               self.broker_setting("group.share.heartbeat.interval.ms"), assignment)

    def _metadata_changed(self, group: ShareGroup) -> bool:
        """A subscribed topic appeared, went or grew: the assignment must follow."""
        return self._partition_counts(group) != group.partition_counts

    def _partition_counts(self, group: ShareGroup) -> dict[str, int]:
        topics = self.sim.controller.topics
        return {t: len(topics[t].partitions) for t in group.subscribed_topics() if t in topics}

    def _reassign(self, group: ShareGroup) -> None:
        group.group_epoch += 1
        group.partition_counts = self._partition_counts(group)
        current = {m.member_id: {(t, p) for t, ps in m.assignment.items() for p in ps}
                   for m in group.members.values()}
        target = assignor.assign({m.member_id: m.subscribed_topics for m in group.members.values()},
                                 group.partition_counts, current)
        for member in group.members.values():
            by_topic: dict[str, list[int]] = {}
            for t, p in sorted(target.get(member.member_id, ())):
                by_topic.setdefault(t, []).append(p)
            member.assignment = by_topic  # each member learns its epoch at its next heartbeat
            for t, ps in by_topic.items():
                for p in ps:
                    self.share_partition(group.group_id, t, p)  # initialized on assignment
        group.assignment_epoch = group.group_epoch
        self.sim.journal.record(self.clock.now_ms, "share.group.assigned", group=group.group_id,
                                epoch=group.group_epoch,
                                assignment={m.member_id: sorted(f"{t}-{p}" for t, ps in
                                                                m.assignment.items() for p in ps)
                                            for m in group.members.values()})

    def _touch(self, group: ShareGroup, member: ShareMember) -> None:
        if member.timer is not None:
            member.timer.cancel()
        member.timer = self.clock.call_later(self.broker_setting("group.share.session.timeout.ms"),
                                             self._expire, group.group_id, member.member_id)

    def _expire(self, group_id: str, member_id: str) -> None:
        group = self.groups.get(group_id)
        member = group.members.get(member_id) if group else None
        if member is not None:
            self.sim.journal.record(self.clock.now_ms, "share.member.expired", group=group_id,
                                    member=member_id)
            self._remove(group, member)

    def _remove(self, group: ShareGroup, member: ShareMember) -> None:
        if member.timer is not None:
            member.timer.cancel()
        del group.members[member.member_id]
        self.release_member(group.group_id, member.member_id)
        self._reassign(group)

    def release_member(self, group_id: str, member_id: str) -> int:
        """Release what `member_id` holds in every share-partition of the group."""
        return sum(sp.release_member(member_id) for (g, _, _), sp in self.partitions.items()
                   if g == group_id)

    # -- share-partitions ------------------------------------------------------------------
    def share_partition(self, group_id: str, topic: str, partition: int) -> SharePartition:
        """The share-partition, made on first use at the offset share.auto.offset.reset
        picks then (latest: the high watermark; earliest: the log start offset)."""
        key = (group_id, topic, partition)
        sp = self.partitions.get(key)
        if sp is None:
            sp = self.partitions[key] = SharePartition(
                group_id, topic, partition, self._reset_offset(group_id, topic, partition),
                self.clock, lambda: self.settings(group_id), self._partition_changed,
                self._journal_for(group_id, topic, partition))
            self._changed()
        return sp

    def _reset_offset(self, group_id: str, topic: str, partition: int) -> int:
        replica = self.sim.leader_replica(topic, partition)
        if replica is None:
            return 0
        if self.auto_offset_reset(group_id) == "earliest":
            return replica.log_start_offset
        return replica.high_watermark

    def _journal_for(self, group_id: str, topic: str, partition: int) -> Callable[..., None]:
        def record(kind: str, **fields: Any) -> None:
            self.sim.journal.record(self.clock.now_ms, kind, group=group_id,
                                    partition=f"{topic}-{partition}", **fields)
        return record

    def _partition_changed(self, sp: SharePartition) -> None:
        self._changed()

    def _changed(self) -> None:
        if self.persist is not None:
            self.persist(self)

    def broker_stopped(self, broker_id: int, led: Iterable[TP]) -> None:
        """A broker went down: its share sessions go with it, and the share-partitions it
        led are loaded afresh by their new leaders (see SharePartition.reload)."""
        self.sessions.pop(broker_id, None)
        moved = set(led)
        for (_, topic, partition), sp in self.partitions.items():
            if (topic, partition) in moved:
                sp.reload()

    def session_cache(self, broker_id: int) -> ShareSessionCache:
        cache = self.sessions.get(broker_id)
        if cache is None:
            cache = self.sessions[broker_id] = ShareSessionCache()
        return cache

    # -- describe, list, delete ------------------------------------------------------------
    def describe(self, broker_id: int | None, group_id: str) -> ShareGroupDescription:
        try:
            self.check_coordinator(broker_id, group_id)
        except errors.KafkaCoreError as exc:
            return ShareGroupDescription(exc.code, group_id, error_message=exc.message)
        group = self.groups.get(group_id)
        if group is None:
            return ShareGroupDescription(errors.GROUP_ID_NOT_FOUND, group_id,
                                         error_message=f"Group {group_id} not found.")
        members = tuple(ShareMemberDescription(
            m.member_id, m.rack_id, m.member_epoch, m.client_id, m.client_host,
            tuple(m.subscribed_topics), {t: list(p) for t, p in m.assignment.items()})
            for m in group.members.values())
        return ShareGroupDescription(errors.NONE, group_id, group.state, group.group_epoch,
                                     group.assignment_epoch, assignor.NAME, members)

    def list_groups(self, broker_id: int | None = None,
                    states: Iterable[str] | None = None) -> list[tuple[str, str]]:
        """[(group id, state)] of the share groups `broker_id` coordinates (all if None)."""
        wanted = {s.lower() for s in states} if states else None
        out = []
        for group_id, group in sorted(self.groups.items()):
            if broker_id is not None:
                try:
                    if self.sim.groups.find_coordinator(group_id) != broker_id:
                        continue
                except errors.KafkaCoreError:
                    continue
            if wanted is not None and group.state.lower() not in wanted:
                continue
            out.append((group_id, group.state))
        return out

    def delete_group(self, group_id: str, broker_id: int | None = None) -> int:
        """DeleteGroups for a share group: only an empty one (NON_EMPTY_GROUP otherwise);
        its share-partitions' state goes with it."""
        try:
            self.check_coordinator(broker_id, group_id)
        except errors.KafkaCoreError as exc:
            return exc.code
        group = self.groups.get(group_id)
        if group is None:
            return errors.GROUP_ID_NOT_FOUND
        if group.members:
            return errors.NON_EMPTY_GROUP
        del self.groups[group_id]
        for key in [k for k in self.partitions if k[0] == group_id]:
            del self.partitions[key]
        self.group_configs.pop(group_id, None)
        self._changed()
        return errors.NONE

    def alter_offsets(self, broker_id: int | None, group_id: str, offsets: Mapping[TP, int]
                      ) -> tuple[int, str | None, dict[TP, int]]:
        """AlterShareGroupOffsets (kafka-share-groups --reset-offsets): each share-partition
        starts again at its new offset with nothing in flight. Only while the group has no
        members (NON_EMPTY_GROUP); (error code, message, per-partition codes)."""
        code, message = self._check_empty(broker_id, group_id)
        if code:
            return code, message, {}
        out: dict[TP, int] = {}
        topics = self.sim.controller.topics
        for (topic, partition), offset in offsets.items():
            meta = topics.get(topic)
            if meta is None or not 0 <= partition < len(meta.partitions):
                out[(topic, partition)] = errors.UNKNOWN_TOPIC_OR_PARTITION
                continue
            self.groups.setdefault(group_id, ShareGroup(group_id))
            self.share_partition(group_id, topic, partition).reset_to(offset)
            out[(topic, partition)] = errors.NONE
        return errors.NONE, None, out

    def delete_offsets(self, broker_id: int | None, group_id: str, topics: Iterable[str]
                       ) -> tuple[int, str | None, dict[str, int]]:
        """DeleteShareGroupOffsets: forget the group's share-partitions of `topics` (a later
        assignment starts them afresh from share.auto.offset.reset). Only an empty group."""
        code, message = self._check_empty(broker_id, group_id)
        if code:
            return code, message, {}
        out: dict[str, int] = {}
        for topic in topics:
            if topic not in self.sim.controller.topics:
                out[topic] = errors.UNKNOWN_TOPIC_OR_PARTITION
                continue
            for key in [k for k in self.partitions if k[0] == group_id and k[1] == topic]:
                del self.partitions[key]
            out[topic] = errors.NONE
        self._changed()
        return errors.NONE, None, out

    def _check_empty(self, broker_id: int | None, group_id: str) -> tuple[int, str | None]:
        try:
            self.check_coordinator(broker_id, group_id)
        except errors.KafkaCoreError as exc:
            return exc.code, exc.message
        group = self.groups.get(group_id)
        if group is not None and group.members:
            return errors.NON_EMPTY_GROUP, "The group is not empty."
        return errors.NONE, None

    # -- what a restart keeps -------------------------------------------------------------
    def state(self) -> dict:
        """Share groups' epochs and configs and every share-partition's state (members are
        not kept: after a restart they join again, as after a coordinator failover)."""
        return {
            "groups": {g: {"group_epoch": grp.group_epoch} for g, grp in self.groups.items()},
            "configs": self.group_configs,
            "partitions": [[g, t, p, sp.state()] for (g, t, p), sp in
                           sorted(self.partitions.items())],
        }

    def restore(self, state: Mapping[str, Any]) -> None:
        for group_id, value in state.get("groups", {}).items():
            self.groups[group_id] = ShareGroup(group_id, int(value["group_epoch"]),
                                               int(value["group_epoch"]))
        self.group_configs = {g: dict(c) for g, c in state.get("configs", {}).items()}
        for group_id, topic, partition, sp_state in state.get("partitions", []):
            sp = SharePartition(group_id, topic, int(partition), 0, self.clock,
                                lambda g=group_id: self.settings(g), self._partition_changed,
                                self._journal_for(group_id, topic, int(partition)))
            sp.restore(sp_state)
            self.partitions[(group_id, topic, int(partition))] = sp

