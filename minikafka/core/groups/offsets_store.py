"""Committed offsets: OffsetCommit (checked against the classic generation or the KIP-848
member epoch), transactional commits, OffsetFetch, OffsetDelete, and
offsets.retention.minutes. Every commit is a record in __consumer_offsets first."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .. import errors
from ..offsets import (
    offset_commit_key,
    offset_commit_value,
)
from .classic import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
    TP,
    CommittedOffset,
    Group,
)
from .consumer import ConsumerGroup


class OffsetStore:
    """Offsets of every group (a part of GroupCoordinator)."""

    # -- offsets --------------------------------------------------------------------------------
    def offset_commit(self, broker_id: int | None, group_id: str, generation_id: int,
                      member_id: str, group_instance_id: str | None,
                      offsets: Mapping[TP, tuple[int, int, str]],
                      respond: Callable[[dict[TP, int]], None],
                      api_version: int | None = None) -> None:
        """OffsetCommit: {(topic, partition): (offset, leader_epoch, metadata)}; the answer
        comes once the records are replicated (acks=all) in __consumer_offsets.
        ``api_version``: the request's, from the wire (a KIP-848 member needs v9+).

        A partition the metadata does not have gets UNKNOWN_TOPIC_OR_PARTITION and is not
        written, as Kafka's KafkaApis answers it before the coordinator sees the request."""
        topics = self.sim.controller.topics
        unknown = {tp: errors.UNKNOWN_TOPIC_OR_PARTITION for tp in offsets
                   if tp[0] not in topics or not 0 <= tp[1] < len(topics[tp[0]].partitions)}
        if unknown:
            offsets = {tp: v for tp, v in offsets.items() if tp not in unknown}
            if not offsets:
                respond(unknown)
                return
            answer = respond

            def respond(result: dict[TP, int]) -> None:
                answer({**result, **unknown})
        tps = list(offsets)
        try:
            group = self.group_at(broker_id, group_id)
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
        if isinstance(group, ConsumerGroup):
            # generation_id is the member epoch (OffsetCommit v9+, KIP-848)
            code = self.consumer.validate_offset_commit(group, member_id, generation_id,
                                                        group_instance_id, api_version)
        else:
            code = self._validate_offset_commit(group, member_id, group_instance_id,
                                                generation_id)
        if code != errors.NONE:
            respond(dict.fromkeys(tps, code))
            return
        now = self.clock.now_ms
        result: dict[TP, int] = {}
        records = []
        accepted = {}
        for tp, (offset, epoch, metadata) in offsets.items():
            if len((metadata or "").encode()) > self.config["offset.metadata.max.bytes"]:
                result[tp] = errors.OFFSET_METADATA_TOO_LARGE
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

        self.append_records(group.partition, records, persisted)

    def validate_txn_offset_commit(self, group_id: str, generation_id: int, member_id: str,
                                   instance_id: str | None) -> int:
        """TxnOffsetCommit's check of the consumer a transaction commits for: an empty or
        unknown group takes generation -1 (a consumer without group management, or one
        that left); a member must be the group's, at its generation (a KIP-848 member: at
        its epoch)."""
        group = self.groups.get(group_id)
        if group is None:
            return errors.ILLEGAL_GENERATION if generation_id >= 0 else errors.NONE
        if isinstance(group, ConsumerGroup):
            return self.consumer.validate_offset_commit(group, member_id, generation_id,
                                                        instance_id)
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
            group = self.group_at(None, group_id)
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
        self.append_records(group.partition, [
            (offset_commit_key(group_id, t, p),
             offset_commit_value(c.offset, c.leader_epoch, c.metadata, c.commit_timestamp))
            for (t, p), c in offsets.items()])
        self.journal.record(self.clock.now_ms, "offsets.committed", group=group_id,
                            transactional=True,
                            offsets={f"{t}-{p}": c.offset for (t, p), c in offsets.items()})

    def offset_fetch(self, broker_id: int | None, group_id: str,
                     partitions: Iterable[TP] | None = None, member_id: str | None = None,
                     member_epoch: int = -1
                     ) -> tuple[int, dict[TP, CommittedOffset | None]]:
        """OffsetFetch: committed offsets (None where there is no commit). A member of a
        consumer group (OffsetFetch v9+) gives its id and epoch, checked as in a commit."""
        try:
            group = self.group_at(broker_id, group_id)
        except errors.KafkaCoreError as exc:
            return exc.code, {}
        if isinstance(group, ConsumerGroup) and (member_id or member_epoch >= 0):
            member = group.members.get(member_id or "")
            if member is None:
                return errors.UNKNOWN_MEMBER_ID, {}
            if member.member_epoch != member_epoch:
                return errors.STALE_MEMBER_EPOCH, {}
        stored = group.offsets if group is not None else {}
        if partitions is None:
            return errors.NONE, dict(sorted(stored.items()))
        return errors.NONE, {tuple(tp): stored.get(tuple(tp)) for tp in partitions}

    def delete_offsets(self, broker_id: int | None, group_id: str,
                       partitions: Iterable[TP]) -> tuple[int, dict[TP, int]]:
        """OffsetDelete: refused per partition while the group consumes that topic."""
        try:
            group = self.group_at(broker_id, group_id)
        except errors.KafkaCoreError as exc:
            return exc.code, {}
        if group is None or group.state == DEAD:
            return errors.GROUP_ID_NOT_FOUND, {}
        if isinstance(group, ConsumerGroup):
            subscribed = group.subscribed_topics()
        else:
            active = group.state in (STABLE, PREPARING_REBALANCE, COMPLETING_REBALANCE)
            if active and group.protocol_type != "consumer":
                return errors.NON_EMPTY_GROUP, {}
            subscribed = (group.subscribed_topics() or set()) if active else set()
        out: dict[TP, int] = {}
        tombstones = []
        for tp in partitions:
            tp = (tp[0], int(tp[1]))
            if tp[0] in subscribed:
                out[tp] = errors.GROUP_SUBSCRIBED_TO_TOPIC
                continue
            out[tp] = errors.NONE
            if group.offsets.pop(tp, None) is not None:
                tombstones.append((offset_commit_key(group_id, *tp), None))
        if tombstones:
            self.append_records(group.partition, tombstones)
        return errors.NONE, out


    def on_topic_deleted(self, topic: str) -> None:
        """A deleted topic's committed offsets leave every group, each as a tombstone in
        __consumer_offsets (Kafka's coordinator onPartitionsDeleted): a topic created again
        under the name starts with no committed offsets."""
        self._load_all()
        for group in list(self.groups.values()):
            if not self.is_live(group):
                continue
            gone = sorted(tp for tp in group.offsets if tp[0] == topic)
            if gone:
                for tp in gone:
                    del group.offsets[tp]
                self.append_records(group.partition,
                                    [(offset_commit_key(group.group_id, *tp), None) for tp in gone])

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
            if not self.is_live(group):
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
                self.append_records(group.partition,
                             [(offset_commit_key(group.group_id, *tp), None) for tp in expired])
                self.journal.record(now, "offsets.expired", group=group.group_id,
                                    partitions=[f"{t}-{p}" for t, p in expired])
            if not group.offsets and group.state == EMPTY:
                self._delete(group, "offsets expired")

