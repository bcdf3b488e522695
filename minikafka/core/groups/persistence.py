"""Persistence in __consumer_offsets: appends (acks=all, offsets.commit.timeout.ms) and
loading a partition when its broker becomes the coordinator -- replaying offsets, classic
generations and consumer-group (KIP-848) records into groups, through the state machines'
own transitions -- and unloading when it stops being one."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from .. import errors
from ..offsets import (
    OFFSETS_TOPIC,
    GroupKey,
    GroupValue,
    MemberMetadata,
    OffsetKey,
    decode_key,
    decode_value,
    group_metadata_key,
    group_metadata_value,
)
from ..records import RecordBatch
from . import records as cg_records
from .classic import (
    RESTORE_PATH,
    TP,
    UNLOAD,
    CommittedOffset,
    Group,
    JoinResult,
    Member,
    SyncResult,
)
from .consumer import ConsumerGroup


class Persistence:
    """Writing and replaying __consumer_offsets (a part of GroupCoordinator)."""

    def _ensure_loaded(self, partition: int, host: tuple[int, int]) -> None:
        if self._loaded.get(partition) == host:
            return
        now = self.clock.now_ms
        for group in [g for g in self.groups.values() if g.partition == partition]:
            self._unload(group)
        replica = self.sim.brokers[host[0]].replicas[(OFFSETS_TOPIC, partition)]
        offsets: dict[str, dict[TP, CommittedOffset]] = {}
        metadata: dict[str, GroupValue | None] = {}
        consumer_groups: dict[str, ConsumerGroup | None] = {}
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
                    if metadata[k.group] is not None:
                        consumer_groups.pop(k.group, None)  # a consumer group turned classic
                elif isinstance(k, cg_records.ConsumerGroupKey):
                    if k.type == cg_records.GROUP_METADATA and value is not None:
                        metadata.pop(k.group, None)  # a classic group turned consumer
                    self.consumer.replay(consumer_groups, partition, k, decode_value(k, value))
        for group_id in sorted(set(offsets) | set(metadata) | set(consumer_groups)):
            consumer_group = consumer_groups.get(group_id)
            if consumer_group is not None:
                consumer_group.offsets = offsets.get(group_id, {})
                self.groups[group_id] = consumer_group
                continue
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
            if isinstance(group, ConsumerGroup):
                self.consumer.loaded(group)
                continue
            for member in group.members.values():
                self.reschedule_heartbeat(group, member)
        for group_id, tp, committed in self._pending_txn.pop(partition, []):
            self._apply_txn_offsets(group_id, {tp: committed})

    def _restore(self, group: Group, value: GroupValue) -> None:
        """A classic group as its latest GroupMetadataValue left it: Empty, or (with
        members) Stable, reached by replaying a rebalance through TRANSITIONS."""
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
        if group.members:
            for trigger in RESTORE_PATH:
                group.fire(trigger, group.state_since_ms)

    def _unload(self, group: Group | ConsumerGroup) -> None:
        now = self.clock.now_ms
        if isinstance(group, ConsumerGroup):
            self.consumer.cancel_timers(group)
            group.dead = True
            del self.groups[group.group_id]
            return
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


    # -- appends to __consumer_offsets -------------------------------------------------------
    def append_records(self, partition: int, records: list[tuple[bytes, bytes | None]],
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

    def group_record(self, group: Group,
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


    def _load_all(self) -> None:
        if OFFSETS_TOPIC not in self.sim.controller.topics:
            return
        for p in range(self.num_partitions):
            host = self._host(p)
            if host is not None:
                self._ensure_loaded(p, host)



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
