"""The consumer's side of a KIP-848 consumer group (``group_protocol="consumer"``).

What the Java client's ConsumerMembershipManager does, on the simulated clock: no
JoinGroup/SyncGroup and no leader; the member heartbeats (ConsumerGroupHeartbeat, the
coordinator's ``consumer_group_heartbeat``, the same function the wire handler calls)
every ``group.consumer.heartbeat.interval.ms`` the broker hands out, and each answer
may carry a new assignment. The member then reconciles in its next poll(): it revokes
what it lost (listener ``on_partitions_revoked``, after committing them when
auto-commit is on), takes what it gained (``on_partitions_assigned``) and tells the
coordinator at once, so the partitions it gave up can go to their new owner.

Offsets are committed with the member epoch (OffsetCommit v9+ semantics): a commit
from an older epoch is refused with STALE_MEMBER_EPOCH.
"""
from __future__ import annotations

import base64
import contextlib
from functools import partial
from typing import Any

from kafka import errors as Errors
from kafka.structs import ConsumerGroupMetadata, MemberState, TopicPartition

from .. import errors as kerrors
from ..core import api, errors
from ..core.groups.consumer_protocol import ConsumerHeartbeat, HeartbeatAnswer
from .group import COORDINATOR_ERRORS, STABLE, UNJOINED, GroupMember, wake_up

JOINING = "JOINING"
RECONCILING = "RECONCILING"
LEAVING = "LEAVING"

# Errors after which the member must start over: its partitions are lost.
_FENCED = frozenset({errors.FENCED_MEMBER_EPOCH, errors.UNKNOWN_MEMBER_ID})


class ConsumerGroupMember(GroupMember):
    """A member of a consumer group of type ``consumer``."""

    def __init__(self, consumer: Any) -> None:
        super().__init__(consumer)
        cfg = consumer.config
        self.remote_assignor: str | None = cfg.get("group_remote_assignor")
        raw = self.cluster.random.getrandbits(128).to_bytes(16, "big")
        # The client makes its member id (v1): a Uuid as Java prints it (base64, url-safe).
        self.member_id = base64.urlsafe_b64encode(raw).decode().rstrip("=")
        self.epoch = 0
        self.heartbeat_interval_ms = 0  # until the coordinator says
        self._answer: HeartbeatAnswer | None = None
        self._target: list[TopicPartition] | None = None  # an assignment to reconcile
        self._sent_subscription: tuple[str, ...] | None = None
        self._ack_needed = False

    # -- what the consumer calls ---------------------------------------------------------------
    def subscribe(self, topics: Any, listener: Any = None) -> None:
        self.listener = listener
        topics = set(topics)
        if topics != self.subscribed:
            self.subscribed = topics
            if self.state == STABLE:
                self._ack_needed = True  # the next heartbeat carries the new subscription

    def unsubscribe(self) -> None:
        self._on_leave_prepare()
        self._leave("the consumer unsubscribed from all topics")
        self.subscribed = set()

    def needs_poll(self) -> bool:
        if self._answer is not None or self._target is not None or self._fatal:
            return True
        now = self.cluster.now_ms
        if self._managed() and self.state == UNJOINED and not self._in_flight \
                and now >= self._retry_at:
            return True
        if now - self._last_poll >= self.max_poll_interval_ms // 2:
            return True
        return self.auto_commit and now >= self._auto_commit_at and self._can_commit()

    def group_metadata(self) -> ConsumerGroupMetadata:
        state = MemberState.STABLE if self.state == STABLE else MemberState.REBALANCING
        return ConsumerGroupMetadata(self.group_id, self.epoch, self.member_id,
                                     self.instance_id, state)

    def _leave_on_close(self, reason: str) -> None:
        self._leave(reason)

    # -- joining, heartbeats, reconciling -------------------------------------------------------
    def _step(self) -> bool:
        if self._fatal is not None:
            self._check_usable()
        if self._answer is not None:
            answer, self._answer = self._answer, None
            self._on_answer(answer)
            return True
        if self._target is not None:
            self._reconcile(self._target)
            self._target = None
            return True
        if self.state == UNJOINED and not self._in_flight and self._managed() \
                and self.cluster.now_ms >= self._retry_at:
            if not self._find_coordinator():
                if self._fatal is None:
                    self._coordinator_dead()
                return False
            self.state = JOINING
            self._send_heartbeat(full=True)
        elif self._ack_needed and not self._in_flight and self.state != UNJOINED:
            self._send_heartbeat()
        return False

    def _owned_rows(self) -> tuple[tuple[str, tuple[int, ...]], ...]:
        by_topic: dict[str, list[int]] = {}
        for tp in self.consumer._assignment:
            topic_id = self.cluster.groups.consumer.topic_id(tp.topic)
            if topic_id is not None:
                by_topic.setdefault(topic_id, []).append(tp.partition)
        return tuple((t, tuple(sorted(ps))) for t, ps in sorted(by_topic.items()))

    def _request(self, epoch: int, full: bool) -> ConsumerHeartbeat:
        subscription = tuple(sorted(self.subscribed))
        send_subscription = full or subscription != self._sent_subscription
        return ConsumerHeartbeat(
            group_id=self.group_id, member_id=self.member_id, member_epoch=epoch,
            instance_id=self.instance_id,
            rebalance_timeout_ms=self.rebalance_timeout_ms if full else -1,
            subscribed_topic_names=subscription if send_subscription else None,
            server_assignor=self.remote_assignor if full else None,
            owned=() if epoch == 0 else self._owned_rows(), client_id=self.client_id,
            client_host="/127.0.0.1")

    def _send_heartbeat(self, full: bool = False) -> None:
        self._in_flight = True
        self._ack_needed = False
        request = self._request(self.epoch, full)
        self._sent_subscription = request.subscribed_topic_names or self._sent_subscription

        def answered(answer: HeartbeatAnswer) -> None:
            self._in_flight = False
            self._answer = answer
            self.cluster.clock.call_later(0, wake_up)

        self._send(partial(api.consumer_group_heartbeat, self.cluster, self.consumer.caller),
                   (request,), answered,
                   HeartbeatAnswer(errors.NETWORK_EXCEPTION), waits=False)

    def _on_answer(self, answer: HeartbeatAnswer) -> None:
        code = answer.error
        if code == errors.NONE:
            first = self.state == JOINING
            self.epoch = answer.member_epoch
            self.generation = answer.member_epoch
            if answer.member_id:
                self.member_id = answer.member_id
            self.heartbeat_interval_ms = answer.heartbeat_interval_ms
            if self.state in (JOINING, UNJOINED):
                self.state = STABLE
            if answer.assignment is not None:
                names = self.cluster.groups.consumer.topic_name
                self._target = sorted(TopicPartition(names(t), p)
                                      for t, ps in answer.assignment for p in ps)
            if first:
                self.cluster.journal.record(self.cluster.now_ms, "consumer.join",
                                            client=self.client_id, group=self.group_id,
                                            member=self.member_id, protocol="consumer")
            self._schedule_heartbeat()
        elif code in _FENCED:
            # Fenced: give everything up, start over at epoch 0 with the same member id.
            owned = set(self.consumer._assignment)
            if owned:
                self._listener_call("on_partitions_lost", owned)
            self.consumer._set_assignment([])
            self.epoch = self.generation = 0
            self.state = UNJOINED
        elif code in COORDINATOR_ERRORS:
            self.state = UNJOINED if self.epoch == 0 else self.state
            self._coordinator_dead()
            self._schedule_heartbeat(self.retry_backoff_ms)
        else:
            self.state = UNJOINED
            self._fatal = kerrors.for_code(
                code, answer.error_message or f"ConsumerGroupHeartbeat failed for group "
                                              f"{self.group_id}")
            self._check_usable()

    def _reconcile(self, target: list[TopicPartition]) -> None:
        """Revoke what is no longer ours (committing first), then take the rest."""
        consumer = self.consumer
        owned = set(consumer._assignment)
        revoked, added = owned - set(target), set(target) - owned
        if not revoked and not added:
            return
        if revoked:
            if self.auto_commit:
                offsets = {tp: o for tp, o in self._all_consumed().items() if tp in revoked}
                if offsets:
                    with contextlib.suppress(Errors.KafkaError):
                        self._commit_sync(offsets, self.rebalance_timeout_ms)
            self._listener_call("on_partitions_revoked", revoked)
        consumer._set_assignment(sorted(target))
        self._journal_assigned(target, revoked, self.epoch)
        self._committed.clear()
        fresh = [tp for tp in sorted(target) if tp not in consumer._positions]
        if fresh:
            self._committed.update(self._fetch_offsets(fresh))
        # As the Java client: called after every reconciliation, with what is new (maybe
        # nothing, when the member only gave partitions up).
        self._listener_call("on_partitions_assigned", added)
        # Tell the coordinator now: what we released can go to its next owner.
        self._ack_needed = True

    def _subscription_changed(self) -> None:
        """A pattern matches new topics: the next heartbeat tells the coordinator (it
        assigns their partitions; no rejoin as in the classic protocol)."""
        self._ack_needed = self.state == STABLE

    def _check_partition_counts(self) -> None:
        """The coordinator sees new partitions itself: there is no leader to notice them."""

    def _schedule_heartbeat(self, delay: int | None = None) -> None:
        if self._hb_timer is not None:
            self._hb_timer.cancel()
        self._hb_timer = self.cluster.clock.call_later(
            self.heartbeat_interval_ms if delay is None else delay, self._heartbeat_tick,
            self._incarnation)

    def _heartbeat_tick(self, incarnation: int) -> None:
        self._hb_timer = None
        if incarnation != self._incarnation or self.state == UNJOINED:
            return
        if self.cluster.now_ms - self._last_poll > self.max_poll_interval_ms:
            self._poll_timeout()
            return
        if self._in_flight or not self._find_coordinator():
            self._schedule_heartbeat()
            return
        self._send_heartbeat()

    def _poll_timeout(self) -> None:
        self.cluster.journal.record(
            self.cluster.now_ms, "consumer.poll_timeout", client=self.client_id,
            group=self.group_id, member=self.member_id,
            reason="consumer poll timeout has expired (max_poll_interval_ms)")
        self._leave("consumer poll timeout has expired", wait=False)
        self._lost = True

    def _leave(self, reason: str, wait: bool = True) -> None:
        """Heartbeat with epoch -1 (-2 for a static member: it keeps its partitions for
        its session timeout, KIP-848's static membership)."""
        if self.state != UNJOINED and self.epoch > 0 and self._find_coordinator():
            epoch = -2 if self.instance_id is not None else -1
            request = ConsumerHeartbeat(group_id=self.group_id, member_id=self.member_id,
                                        member_epoch=epoch, instance_id=self.instance_id)
            if wait:
                self._request_sync(self.cluster.groups.consumer_group_heartbeat, (request,),
                                   None, waits=False)
            else:
                self._send(self.cluster.groups.consumer_group_heartbeat, (request,),
                           lambda _: None, None, waits=False)
            self.cluster.journal.record(self.cluster.now_ms, "consumer.leave",
                                        client=self.client_id, group=self.group_id,
                                        member=self.member_id, reason=reason)
        self.epoch = self.generation = 0
        self.state = UNJOINED
        if self._hb_timer is not None:
            self._hb_timer.cancel()
            self._hb_timer = None

    # -- offsets --------------------------------------------------------------------------------
    def _can_commit(self) -> bool:
        return not self._managed() or (self.state == STABLE and self.epoch > 0)

    def _commit_identity(self) -> tuple[int, str, str | None]:
        if not self._managed():
            return -1, "", None
        if self.state != STABLE or self.epoch <= 0:
            raise Errors.CommitFailedError(
                "Offset commit cannot be completed since the consumer is not part of an "
                "active group for auto partition assignment; it is likely that the consumer "
                "was kicked out of the group.")
        return self.epoch, self.member_id, self.instance_id

    def _commit_outcome(self, result: dict) -> Exception | None:
        codes = set(result.values())
        if codes <= {errors.NONE}:
            return None
        if errors.STALE_MEMBER_EPOCH in codes or errors.UNKNOWN_MEMBER_ID in codes:
            code = min(codes - {errors.NONE})
            return Errors.CommitFailedError(kerrors.for_code(code))
        for code in codes:
            if code in COORDINATOR_ERRORS:
                self._coordinator_dead()
        return kerrors.for_code(max(codes), f"OffsetCommit failed for group {self.group_id}")

    def settled_in(self, group: Any) -> bool:
        """Is this member reconciled to its group's target (settle_group)?"""
        member = group.members.get(self.member_id)
        return (member is not None and self.state == STABLE and self._target is None
                and self._answer is None and not self._ack_needed
                and member.is_reconciled_to(group.assignment_epoch)
                and self.epoch == member.member_epoch)


def attach_member(consumer: Any) -> GroupMember:
    """The hook KafkaConsumer calls when it has a group_id: a classic member, or a
    member of a KIP-848 consumer group with group_protocol="consumer"."""
    if str(consumer.config.get("group_protocol", "classic")).lower() == "consumer":
        return ConsumerGroupMember(consumer)
    return GroupMember(consumer)
