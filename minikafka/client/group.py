"""The consumer's side of a consumer group (what kafka-python's ConsumerCoordinator does).

A member finds its coordinator, joins (JoinGroup), lets the elected leader run the
assignor, receives its partitions (SyncGroup) and heartbeats in the background. All of
it happens on the simulated clock and over the simulated network:

- heartbeats go every heartbeat_interval_ms whatever the application does; a process
  that dies (``consumer.crash()``) stops them and the coordinator removes it after
  session_timeout_ms;
- a process that is alive but stops calling poll() is caught by its own heartbeat
  thread after max_poll_interval_ms: it leaves the group (a static member just stops
  heartbeating) and rejoins on its next poll, having lost its partitions;
- joining and syncing advance only inside poll(), as in the Java and kafka-python
  clients: a member that does not poll holds a rebalance up for up to its
  max_poll_interval_ms (the rebalance timeout).

Kafka 4.x defaults apply (see minikafka.client.consumer.DEFAULTS); the assignment
strategy defaults to [range, cooperative-sticky] as in the Java client since 3.0
(KIP-726) -- with range in the list the group rebalances eagerly, and it becomes
cooperative once range is removed. kafka-python's own default is (range, roundrobin).
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import Any

from kafka import errors as Errors
from kafka.future import Future
from kafka.structs import ConsumerGroupMetadata, MemberState, OffsetAndMetadata, TopicPartition

from .. import errors as kerrors
from ..core import api, errors
from ..core.api import authz
from ..core.assignors import (
    ASSIGNORS,
    REBALANCE_PROTOCOLS,
    RebalanceProtocol,
    Subscription,
    get_assignor,
)
from ..core.groups.classic import JoinResult, SyncResult
from ..core.offsets import (
    ConsumerAssignment,
    ConsumerSubscription,
    StickyUserData,
    decode_assignment,
    decode_sticky_user_data,
    decode_subscription,
    encode_assignment,
    encode_sticky_user_data,
    encode_subscription,
)
from .security import refusals_error

CLIENT_HOST = "/127.0.0.1"

# The Java client's class names, so a config copied from a Java app works.
JAVA_ASSIGNORS = {
    "org.apache.kafka.clients.consumer.RangeAssignor": "range",
    "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
    "org.apache.kafka.clients.consumer.StickyAssignor": "sticky",
    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky",
}
KAFKA_DEFAULT_ASSIGNORS = ("range", "cooperative-sticky")

# Member states, as the Java client names them.
UNJOINED = "UNJOINED"
PREPARING_REBALANCE = "PREPARING_REBALANCE"
COMPLETING_REBALANCE = "COMPLETING_REBALANCE"
STABLE = "STABLE"

COORDINATOR_ERRORS = frozenset({
    errors.COORDINATOR_NOT_AVAILABLE, errors.NOT_COORDINATOR, errors.NETWORK_EXCEPTION,
    errors.REQUEST_TIMED_OUT, errors.COORDINATOR_LOAD_IN_PROGRESS})


def parse_assignors(strategy: Any) -> list[str]:
    """partition_assignment_strategy as names: accepts "range", Java class names, a
    comma-separated string, or kafka-python's assignor classes (they carry .name)."""
    if strategy is None:
        return list(KAFKA_DEFAULT_ASSIGNORS)
    if isinstance(strategy, str):
        strategy = [s.strip() for s in strategy.split(",") if s.strip()]
    names = []
    for item in strategy:
        name = item if isinstance(item, str) else getattr(item, "name", None)
        name = JAVA_ASSIGNORS.get(name, name)
        if name not in ASSIGNORS:
            raise Errors.KafkaConfigurationError(
                f"Invalid value {item!r} for configuration partition_assignment_strategy: "
                f"unknown assignor; valid names: {', '.join(sorted(ASSIGNORS))}")
        names.append(name)
    if not names:
        raise Errors.KafkaConfigurationError("partition_assignment_strategy must not be empty")
    return names


def rebalance_protocol(assignors: Sequence[str]) -> RebalanceProtocol:
    """The protocol every configured assignor supports, the most advanced one: any eager-only
    assignor in the list (range) keeps the whole group eager."""
    if all(REBALANCE_PROTOCOLS[a] == RebalanceProtocol.COOPERATIVE for a in assignors):
        return RebalanceProtocol.COOPERATIVE
    return RebalanceProtocol.EAGER


def wake_up() -> None:
    """A wake-up: run_until checks its condition after every event."""


class GroupMember:
    def __init__(self, consumer: Any) -> None:
        cfg = consumer.config
        self.consumer = consumer
        self.cluster = consumer.cluster
        self.group_id: str = cfg["group_id"]
        self.instance_id: str | None = cfg["group_instance_id"]
        self.assignors = parse_assignors(cfg["partition_assignment_strategy"])
        self.protocol = rebalance_protocol(self.assignors)
        self.session_timeout_ms = int(cfg["session_timeout_ms"])
        self.heartbeat_interval_ms = int(cfg["heartbeat_interval_ms"])
        self.max_poll_interval_ms = int(cfg["max_poll_interval_ms"])
        self.rebalance_timeout_ms = int(cfg["rebalance_timeout_ms"] or self.max_poll_interval_ms)
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise Errors.KafkaConfigurationError(
                "heartbeat_interval_ms must be smaller than session_timeout_ms")
        self.auto_commit = bool(cfg["enable_auto_commit"])
        self.auto_commit_interval_ms = int(cfg["auto_commit_interval_ms"])
        self.retry_backoff_ms = int(cfg["retry_backoff_ms"])
        self.request_timeout_ms = int(cfg["request_timeout_ms"])
        self.metadata_max_age_ms = int(cfg.get("metadata_max_age_ms", 300_000))
        self.client_id: str = consumer.client_id

        self.state = UNJOINED
        self.member_id = ""
        self.generation = -1
        self.protocol_name: str | None = None
        self.leader_id = ""
        self.coordinator: int | None = None
        self.subscribed: set[str] = set()
        self.listener: Any = None
        self.rejoin_needed = False
        self.rejoin_reason = ""
        now = self.cluster.now_ms
        self._join_result: JoinResult | None = None
        self._sync_result: SyncResult | None = None
        self._in_flight = False
        self._join_prepared = False
        self._lost = False
        self._fatal: Exception | None = None
        self._retry_at = 0
        self._incarnation = 0
        self._closed = False
        self._hb_timer = None
        self._hb_in_flight = False
        self._last_poll = now
        self._auto_commit_at = now + self.auto_commit_interval_ms
        self._metadata_at = now + self.metadata_max_age_ms
        self._completed_commits: deque = deque()
        self._committed: dict[TopicPartition, OffsetAndMetadata | None] = {}
        self._group_topics: set[str] = set()
        self._assignment_snapshot: dict[str, int] = {}
        self._previous: tuple[tuple[str, int], ...] = ()  # for the sticky assignor's user data
        self._previous_generation = -1

    # -- what the consumer calls -------------------------------------------------------------
    def subscribe(self, topics: Iterable[str], listener: Any = None) -> None:
        self.listener = listener
        topics = set(topics)
        if topics != self.subscribed:
            self.subscribed = topics
            self._request_rejoin("subscription changed")

    def unsubscribe(self) -> None:
        self._on_leave_prepare()
        self._maybe_leave_group("the consumer unsubscribed from all topics", wait=True)
        self.subscribed = set()
        self.rejoin_needed = False

    def needs_poll(self) -> bool:
        """Should a waiting poll() return to let the group move on?"""
        if self._join_result is not None or self._sync_result is not None or self._fatal:
            return True
        now = self.cluster.clock.now_ms
        if self._managed() and (self.state == UNJOINED or self.rejoin_needed) \
                and not self._in_flight and now >= self._retry_at:
            return True
        if now >= self._metadata_at:
            return True
        if now - self._last_poll >= self.max_poll_interval_ms // 2:
            return True  # a long poll() still counts as polling: refresh the poll timer
        return self.auto_commit and now >= self._auto_commit_at and self._can_commit()

    def on_records_returned(self) -> None:
        """Records went to the application: nothing to do until the next poll()."""

    def poll(self) -> None:
        """The group's share of KafkaConsumer.poll(): runs callbacks, joins, auto-commits."""
        self._check_usable()
        now = self.cluster.now_ms
        self._last_poll = now
        self._invoke_commit_callbacks()
        if now >= self._metadata_at:
            self._refresh_metadata(now)
        if self.consumer._manual:
            self._maybe_auto_commit(now)
            return
        if not self._managed():
            raise Errors.IllegalStateError(
                "Consumer is not subscribed to any topics or assigned any partitions")
        for _ in range(16):  # each step may enable the next (join answer -> sync ...)
            if not self._step():
                break
        self._maybe_auto_commit(self.cluster.now_ms)

    def committed_offset(self, tp: TopicPartition) -> int | None:
        """Where a newly assigned partition starts: its committed offset, if any."""
        if tp not in self._committed:
            missing = [p for p in self.consumer._assignment
                       if p not in self._committed and p not in self.consumer._positions]
            self._committed.update(self._fetch_offsets(missing or [tp]))
        found = self._committed.pop(tp, None)
        return None if found is None else found.offset

    def committed(self, tp: TopicPartition, metadata: bool = False, timeout_ms: int | None = None):
        self._check_usable()
        found = self._fetch_offsets([tp], timeout_ms).get(tp)
        if found is None:
            return None
        return found if metadata else found.offset

    def commit(self, offsets: Mapping | None = None, timeout_ms: int | None = None) -> None:
        self._check_usable()
        self._invoke_commit_callbacks()
        offsets = self._offsets_arg(offsets)
        if offsets:
            self._commit_sync(offsets, timeout_ms)

    def commit_async(self, offsets: Mapping | None = None, callback: Callable | None = None):
        self._check_usable()
        self._invoke_commit_callbacks()
        offsets = self._offsets_arg(offsets)
        future = Future()

        def done(exc: Exception | None) -> None:
            if exc is None:
                future.success(None)
            else:
                future.failure(exc)
            if callback is not None:
                # Run in the application's thread at its next poll/commit, as kafka-python does.
                self._completed_commits.append((callback, offsets, exc))

        if not offsets:
            done(None)
        else:
            self._commit_async(offsets, done)
        return future

    def group_metadata(self) -> ConsumerGroupMetadata:
        # A member that knows it must join again (a cooperative rebalance's second round,
        # a changed subscription) has not converged yet: REBALANCING until it has.
        state = {STABLE: MemberState.STABLE, UNJOINED: MemberState.UNJOINED}.get(
            self.state, MemberState.REBALANCING)
        if state == MemberState.STABLE and self.rejoin_needed:
            state = MemberState.REBALANCING
        return ConsumerGroupMetadata(self.group_id, self.generation, self.member_id,
                                     self.instance_id, state)

    def close(self, autocommit: bool = True) -> None:
        if self._closed:
            return
        try:
            if autocommit and self.auto_commit:
                offsets = self._all_consumed()
                if offsets and self._can_commit():
                    # As in Java: a failed commit on close is logged, not raised.
                    with contextlib.suppress(Errors.KafkaError):
                        self._commit_sync(offsets, self.request_timeout_ms)
            self._invoke_commit_callbacks()
            if self._managed():
                self._on_leave_prepare()  # partitions lost if the generation already was
            self._leave_on_close("the consumer is being closed")
        finally:
            self._shutdown()

    def _leave_on_close(self, reason: str) -> None:
        # Static members do not leave (KIP-345): a restart within session.timeout.ms
        # takes their place back without a rebalance.
        self._maybe_leave_group(reason, wait=True)

    def _journal_assigned(self, assigned, revoked, generation: int) -> None:
        """The consumer.assigned event the replay slider and the checkers read."""
        self.cluster.journal.record(
            self.cluster.now_ms, "consumer.assigned", client=self.client_id,
            group=self.group_id, member=self.member_id, generation=generation,
            partitions=[f"{tp.topic}-{tp.partition}" for tp in sorted(assigned)],
            revoked=[f"{tp.topic}-{tp.partition}" for tp in sorted(revoked)])

    def crash(self) -> None:
        """The process dies (kill -9): no commit, no LeaveGroup, heartbeats stop. The
        coordinator notices after session_timeout_ms."""
        self.cluster.journal.record(self.cluster.now_ms, "consumer.crashed",
                                    client=self.client_id, group=self.group_id,
                                    member=self.member_id)
        self._shutdown()

    # -- state helpers -----------------------------------------------------------------------
    def _managed(self) -> bool:
        return not self.consumer._manual and bool(self.subscribed or self.consumer._pattern)

    def _check_usable(self) -> None:
        if self._closed:
            raise Errors.IllegalStateError("Consumer is closed")
        if self._fatal is not None:
            exc, self._fatal = self._fatal, None
            raise exc

    def _shutdown(self) -> None:
        self._closed = True
        self._incarnation += 1
        if self._hb_timer is not None:
            self._hb_timer.cancel()
            self._hb_timer = None

    def _request_rejoin(self, reason: str) -> None:
        if not self.rejoin_needed:
            self.rejoin_needed = True
            self.rejoin_reason = reason

    def _reset_generation(self, reset_member_id: bool, reason: str) -> None:
        """Kicked out (or left): the partitions are lost and the member must rejoin."""
        self.generation = -1
        if reset_member_id:
            self.member_id = ""
        self.state = UNJOINED
        self._lost = True
        self._join_prepared = False
        self._request_rejoin(reason)

    def _can_commit(self) -> bool:
        return not self._managed() or (self.state == STABLE and self.generation >= 0)

    def _all_consumed(self) -> dict[TopicPartition, OffsetAndMetadata]:
        positions = self.consumer._positions
        epochs = self.consumer._last_epochs
        return {tp: OffsetAndMetadata(positions[tp], "", epochs.get(tp, -1))
                for tp in self.consumer._assignment if tp in positions}

    def _offsets_arg(self, offsets: Mapping | None) -> dict[TopicPartition, OffsetAndMetadata]:
        if offsets is None:
            return self._all_consumed()
        out = {}
        for tp, value in offsets.items():
            if not isinstance(tp, TopicPartition):
                raise TypeError("offsets must be dict[TopicPartition, OffsetAndMetadata]")
            if isinstance(value, int):
                value = OffsetAndMetadata(value, "", -1)
            if not isinstance(value, OffsetAndMetadata):
                raise TypeError("offsets must be dict[TopicPartition, OffsetAndMetadata]")
            out[tp] = value
        return out

    def _invoke_commit_callbacks(self) -> None:
        while self._completed_commits:
            callback, offsets, result = self._completed_commits.popleft()
            callback(offsets, result)

    def _listener_call(self, method: str, partitions: set[TopicPartition]) -> None:
        listener = self.listener
        if listener is None:
            return
        fn = getattr(listener, method, None)
        if fn is None and method == "on_partitions_lost":
            fn = getattr(listener, "on_partitions_revoked", None)
        if fn is not None:
            fn(set(partitions))

    # -- talking to the coordinator -----------------------------------------------------------
    def _refused(self, refusals: Mapping[str, int]) -> Exception | None:
        """kafka-python's error if the coordinator would refuse this member's request:
        FindCoordinator's rule (DESCRIBE on the group), then the request's own
        (`refusals`, from core.api.authz)."""
        code = authz.find_coordinator(self.cluster, self.consumer.caller, authz.GROUP_KEY,
                                      self.group_id)
        return refusals_error({self.group_id: code} if code else refusals, self.group_id)

    def _find_coordinator(self) -> bool:
        if self.coordinator is not None:
            return True
        try:
            self.coordinator = self.cluster.groups.find_coordinator(self.group_id)
            return True
        except errors.KafkaCoreError as exc:
            if not exc.retriable:
                self._fatal = kerrors.translate(exc)
            return False

    def _coordinator_dead(self) -> None:
        self.coordinator = None
        self._retry_at = self.cluster.now_ms + self.retry_backoff_ms
        self.cluster.clock.call_at(self._retry_at, wake_up)

    def _send(self, handler: Callable, args: tuple, on_response: Callable[[Any], None],
              failed: Any, waits: bool, timeout_ms: int | None = None) -> None:
        """handler(coordinator, *args[, respond]) at the coordinator, through the network.

        ``waits``: the handler answers through a callback (JoinGroup, SyncGroup,
        OffsetCommit) rather than by returning. An unreachable coordinator or a lost
        answer comes back as ``failed``.
        """
        cluster = self.cluster
        node = self.coordinator
        incarnation = self._incarnation
        state = {"done": False, "timer": None}
        if node is None:  # the coordinator was lost meanwhile: fail, the caller retries
            cluster.clock.call_later(cluster.network.latency_ms, on_response, failed)
            return

        def deliver(result: Any) -> None:
            if state["done"] or incarnation != self._incarnation:
                return
            state["done"] = True
            if state["timer"] is not None:
                state["timer"].cancel()
            on_response(result)

        def respond(result: Any) -> None:
            cluster.network.send(node, self.client_id, deliver, result)

        def at_coordinator() -> None:
            if waits:
                handler(node, *args, respond)
            else:
                respond(handler(node, *args))

        if not cluster.network.send(self.client_id, node, at_coordinator):
            # Connection refused: the client hears about it at once.
            cluster.clock.call_later(cluster.network.latency_ms, deliver, failed)
            return
        state["timer"] = cluster.clock.call_later(timeout_ms or self.request_timeout_ms,
                                                  deliver, failed)

    def _request_sync(self, handler: Callable, args: tuple, failed: Any, waits: bool,
                      timeout_ms: int | None = None) -> Any:
        """Send and run the clock until the answer, as a blocking client call does."""
        box: list = []
        self._send(handler, args, box.append, failed, waits)
        self.cluster.run_until(lambda: bool(box), timeout_ms or self.request_timeout_ms + 1)
        return box[0] if box else failed

    # -- joining ------------------------------------------------------------------------------
    def _step(self) -> bool:
        if self._fatal is not None:
            self._check_usable()
        if self._sync_result is not None:
            result, self._sync_result = self._sync_result, None
            self._in_flight = False
            self._on_sync(result)
            return True
        if self._join_result is not None:
            result, self._join_result = self._join_result, None
            self._in_flight = False
            self._on_join(result)
            return True
        if self._in_flight or (self.state == STABLE and not self.rejoin_needed):
            return False
        if self.cluster.now_ms < self._retry_at:
            return False
        if not self._find_coordinator():
            if self._fatal is None:
                self._coordinator_dead()
            return False
        if not self._join_prepared:
            self._on_join_prepare()
            self._join_prepared = True
        self._send_join()
        return False

    def _on_join_prepare(self) -> None:
        """Before (re)joining: commit, then give partitions up as the protocol says."""
        owned = set(self.consumer._assignment)
        if self.auto_commit and self.generation >= 0 and self.state == STABLE:
            offsets = self._all_consumed()
            if offsets:
                # Java logs a failure; the partitions' next owner reads from the last commit.
                with contextlib.suppress(Errors.KafkaError):
                    self._commit_sync(offsets, self.rebalance_timeout_ms)
        if self._lost or self.generation < 0:
            if owned:
                self._listener_call("on_partitions_lost", owned)
            revoked = owned
        elif self.protocol == RebalanceProtocol.EAGER:
            if owned:
                self._listener_call("on_partitions_revoked", owned)
            revoked = owned
        else:
            revoked = {tp for tp in owned if tp.topic not in self.subscribed}
            if revoked:
                self._listener_call("on_partitions_revoked", revoked)
        self._lost = False
        if revoked:
            self.consumer._set_assignment([tp for tp in self.consumer._assignment
                                           if tp not in revoked])

    def _subscription_metadata(self, assignor: str) -> bytes:
        owned = tuple((tp.topic, tp.partition) for tp in sorted(self.consumer._assignment))
        user_data = None
        if assignor == "sticky":
            user_data = encode_sticky_user_data(
                StickyUserData(self._previous, self._previous_generation))
        return encode_subscription(ConsumerSubscription(
            tuple(sorted(self.subscribed)), user_data, owned,
            self.generation if self.generation >= 0 else self._previous_generation))

    def _send_join(self) -> None:
        self.state = PREPARING_REBALANCE
        self._in_flight = True
        protocols = [(a, self._subscription_metadata(a)) for a in self.assignors]
        reason = self.rejoin_reason
        self.rejoin_needed = False
        self.rejoin_reason = ""

        def answered(result: JoinResult) -> None:
            self._join_result = result

        self._send(partial(api.join_group, self.cluster, self.consumer.caller),
                   (self.group_id, self.member_id, self.instance_id, self.client_id, CLIENT_HOST,
                    "consumer", protocols, self.session_timeout_ms, self.rebalance_timeout_ms),
                   answered, JoinResult(errors.NETWORK_EXCEPTION, self.member_id), waits=True,
                   # A JoinGroup may wait out a whole rebalance (as in the Java client).
                   timeout_ms=max(self.request_timeout_ms, self.rebalance_timeout_ms + 5_000))
        self.cluster.journal.record(self.cluster.now_ms, "consumer.join", client=self.client_id,
                                    group=self.group_id, member=self.member_id, reason=reason)

    def _on_join(self, r: JoinResult) -> None:
        code = r.error
        if code == errors.NONE:
            self.member_id = r.member_id
            self.generation = r.generation_id
            self.protocol_name = r.protocol_name
            self.leader_id = r.leader
            self.state = COMPLETING_REBALANCE
            self._start_heartbeats()
            assignments: dict[str, bytes] = {}
            if r.leader == r.member_id and not r.skip_assignment:
                assignments = self._assign(r)
            self._send_sync(assignments)
        elif code == errors.MEMBER_ID_REQUIRED:
            self.member_id = r.member_id
            self._send_join()
        elif code == errors.UNKNOWN_MEMBER_ID:
            self.member_id, self.generation, self.state = "", -1, UNJOINED
            self._request_rejoin("unknown member id")
        elif code == errors.ILLEGAL_GENERATION:
            self.generation, self.state = -1, UNJOINED
            self._request_rejoin("illegal generation")
        elif code in COORDINATOR_ERRORS or code == errors.REBALANCE_IN_PROGRESS:
            self.state = UNJOINED
            self._coordinator_dead()
            self._request_rejoin(kerrors.for_code(code).__class__.__name__)
        else:
            self.state = UNJOINED
            self._fatal = kerrors.for_code(code, f"JoinGroup failed for group {self.group_id}")
            self._check_usable()

    def _assign(self, r: JoinResult) -> dict[str, bytes]:
        """The leader's job in the classic protocol: run the chosen assignor."""
        name = r.protocol_name or self.assignors[0]
        members: dict[str, Subscription] = {}
        for member_id, instance_id, metadata in r.members:
            sub = decode_subscription(metadata)
            if name == "sticky":
                data = decode_sticky_user_data(sub.user_data)
                owned, generation = data.previous, data.generation
            elif REBALANCE_PROTOCOLS[name] == RebalanceProtocol.COOPERATIVE:
                owned, generation = sub.owned_partitions, sub.generation_id
            else:
                owned, generation = (), -1
            members[member_id] = Subscription(tuple(sub.topics), tuple(owned), generation,
                                              instance_id)
        topics = set().union(*(m.topics for m in members.values())) if members else set()
        self._group_topics = topics
        counts = self._partition_counts(topics)
        self._assignment_snapshot = counts
        result = get_assignor(name)(members, counts)
        return {m: encode_assignment(ConsumerAssignment(tuple(tps))) for m, tps in result.items()}

    def _partition_counts(self, topics: Iterable[str]) -> dict[str, int]:
        known = self.cluster.controller.topics
        return {t: len(known[t].partitions) for t in sorted(topics) if t in known}

    def _send_sync(self, assignments: dict[str, bytes]) -> None:
        self._in_flight = True

        def answered(result: SyncResult) -> None:
            self._sync_result = result

        self._send(partial(api.sync_group, self.cluster, self.consumer.caller),
                   (self.group_id, self.member_id, self.instance_id, self.generation, "consumer",
                    self.protocol_name, assignments),
                   answered, SyncResult(errors.NETWORK_EXCEPTION), waits=True)

    def _on_sync(self, r: SyncResult) -> None:
        code = r.error
        if code == errors.NONE:
            self.state = STABLE
            self._join_prepared = False
            self._on_join_complete(decode_assignment(r.assignment).partitions)
        elif code == errors.REBALANCE_IN_PROGRESS:
            self.state = PREPARING_REBALANCE
            self._request_rejoin("rebalance in progress at SyncGroup")
        elif code in (errors.UNKNOWN_MEMBER_ID, errors.ILLEGAL_GENERATION):
            self._reset_generation(code == errors.UNKNOWN_MEMBER_ID,
                                   kerrors.for_code(code).__class__.__name__)
        elif code in COORDINATOR_ERRORS:
            self.state = UNJOINED
            self._coordinator_dead()
            self._request_rejoin("coordinator unavailable at SyncGroup")
        else:
            self.state = UNJOINED
            self._fatal = kerrors.for_code(code, f"SyncGroup failed for group {self.group_id}")
            self._check_usable()

    def _on_join_complete(self, partitions: Sequence[tuple[str, int]]) -> None:
        consumer = self.consumer
        new = [TopicPartition(t, p) for t, p in partitions]
        owned = set(consumer._assignment)
        self._previous, self._previous_generation = tuple(partitions), self.generation
        self._committed.clear()
        if self.auto_commit:
            # The next auto-commit is due auto_commit_interval_ms after the assignment, as
            # ConsumerCoordinator.onJoinComplete reschedules it.
            self._auto_commit_at = self.cluster.now_ms + self.auto_commit_interval_ms
            self.cluster.clock.call_at(self._auto_commit_at, wake_up)
        if self.protocol == RebalanceProtocol.EAGER:
            consumer._set_assignment(sorted(new))
            added, revoked = set(new), set()
        else:
            revoked, added = owned - set(new), set(new) - owned
            if revoked:
                self._listener_call("on_partitions_revoked", revoked)
            consumer._set_assignment(sorted(new))
        self._journal_assigned(new, revoked, self.generation)
        fresh = [tp for tp in sorted(new) if tp not in consumer._positions]
        if fresh:
            self._committed.update(self._fetch_offsets(fresh))
        self._listener_call("on_partitions_assigned", added)
        if revoked:
            # Cooperative: what we gave up goes to its new owner in a second round.
            self._request_rejoin("partitions revoked; rejoin to hand them over")

    def _refresh_metadata(self, now: int) -> None:
        """metadata.max.age.ms: what a consumer learns when it refreshes metadata: a
        pattern may match other topics, a subscribed topic may have new partitions."""
        self._metadata_at = now + self.metadata_max_age_ms
        self.cluster.clock.call_at(self._metadata_at, wake_up)
        if self.consumer._pattern is not None:
            topics = self.consumer.subscription()
            if topics != self.subscribed:
                self.subscribed = topics
                self._subscription_changed()
        self._check_partition_counts()

    def _subscription_changed(self) -> None:
        self._request_rejoin("pattern matches different topics")

    def _check_partition_counts(self) -> None:
        if self.state == STABLE and self.member_id == self.leader_id:
            counts = self._partition_counts(self._group_topics)
            if counts != self._assignment_snapshot:
                # Only the leader notices; it rejoins, which makes the coordinator rebalance.
                self._request_rejoin("partitions of subscribed topics changed")

    # -- heartbeats and the poll timer --------------------------------------------------------
    def _start_heartbeats(self) -> None:
        if self._hb_timer is None:
            self._hb_timer = self.cluster.clock.call_later(
                self.heartbeat_interval_ms, self._heartbeat_tick, self._incarnation)

    def _heartbeat_tick(self, incarnation: int) -> None:
        self._hb_timer = None
        if incarnation != self._incarnation or self.state not in (COMPLETING_REBALANCE, STABLE):
            return  # the heartbeat thread sleeps while the member is not in a generation
        now = self.cluster.now_ms
        if now - self._last_poll > self.max_poll_interval_ms:
            self._poll_timeout()
            return
        self._hb_timer = self.cluster.clock.call_later(
            self.heartbeat_interval_ms, self._heartbeat_tick, incarnation)
        if self._hb_in_flight or not self._find_coordinator():
            return
        self._hb_in_flight = True
        self._send(partial(api.heartbeat, self.cluster, self.consumer.caller),
                   (self.group_id, self.member_id, self.instance_id, self.generation),
                   self._on_heartbeat, errors.NETWORK_EXCEPTION, waits=False)

    def _on_heartbeat(self, code: int) -> None:
        self._hb_in_flight = False
        if code == errors.NONE:
            return
        if code == errors.REBALANCE_IN_PROGRESS:
            if self.state == STABLE:
                self._request_rejoin("the group is rebalancing")
        elif code == errors.ILLEGAL_GENERATION:
            self._reset_generation(False, "heartbeat: illegal generation")
        elif code == errors.UNKNOWN_MEMBER_ID:
            self._reset_generation(True, "heartbeat: unknown member id")
        elif code == errors.FENCED_INSTANCE_ID:
            self._fatal = Errors.FencedInstanceIdError(
                f"group.instance.id {self.instance_id} is used by another consumer")
            self.state = UNJOINED
        elif code == errors.GROUP_AUTHORIZATION_FAILED:  # READ on the group was revoked
            self._fatal = refusals_error({self.group_id: code}, self.group_id)
        elif code in COORDINATOR_ERRORS:
            self._coordinator_dead()

    def _poll_timeout(self) -> None:
        """max.poll.interval.ms passed without a poll(): the heartbeat thread gives up the
        membership so the group can move on without this stuck consumer."""
        self.cluster.journal.record(
            self.cluster.now_ms, "consumer.poll_timeout", client=self.client_id,
            group=self.group_id, member=self.member_id,
            reason="consumer poll timeout has expired (max_poll_interval_ms)")
        self._maybe_leave_group("consumer poll timeout has expired")
        self._reset_generation(True, "poll timeout expired")

    def _maybe_leave_group(self, reason: str, wait: bool = False) -> None:
        """LeaveGroup for a dynamic member. ``wait``: block for the answer, as close() and
        unsubscribe() do (not from the heartbeat thread, which must not block)."""
        dynamic = self.instance_id is None
        # As kafka-python and Java: any member id will do, also during the first join.
        if dynamic and self.member_id and self.state != UNJOINED and self._find_coordinator():
            args = (self.group_id, [(self.member_id, None)], reason)
            leave = partial(api.leave_group, self.cluster, self.consumer.caller)
            if wait:
                self._request_sync(leave, args, None, waits=False)
            else:
                self._send(leave, args, lambda _: None, None, waits=False)
        self.generation = -1
        if dynamic:
            self.member_id = ""
        self.state = UNJOINED
        self._join_prepared = False

    def _on_leave_prepare(self) -> None:
        owned = set(self.consumer._assignment)
        if not owned:
            return
        if self.generation < 0 or self._lost:
            self._listener_call("on_partitions_lost", owned)
        else:
            self._listener_call("on_partitions_revoked", owned)

    # -- offsets ------------------------------------------------------------------------------
    def _maybe_auto_commit(self, now: int) -> None:
        if not self.auto_commit or now < self._auto_commit_at:
            return
        self._auto_commit_at = now + self.auto_commit_interval_ms
        self.cluster.clock.call_at(self._auto_commit_at, wake_up)
        if not self._can_commit():
            return
        offsets = self._all_consumed()
        if offsets:
            self._commit_async(offsets, lambda exc: None)

    def _commit_identity(self) -> tuple[int, str, str | None]:
        if not self._managed():
            return -1, "", None
        if self.state != STABLE or self.generation < 0:
            if self.state in (PREPARING_REBALANCE, COMPLETING_REBALANCE) or self.rejoin_needed \
                    and self.generation >= 0:
                raise Errors.RebalanceInProgressError(
                    "Offset commit cannot be completed since the consumer is undergoing a "
                    "rebalance for auto partition assignment. You can try completing the "
                    "rebalance by calling poll() and then retry the operation.")
            raise Errors.CommitFailedError(
                "Offset commit cannot be completed since the consumer is not part of an "
                "active group for auto partition assignment; it is likely that the consumer "
                "was kicked out of the group.")
        return self.generation, self.member_id, self.instance_id

    def _commit_async(self, offsets: dict[TopicPartition, OffsetAndMetadata],
                      done: Callable[[Exception | None], None]) -> None:
        try:
            generation, member_id, instance_id = self._commit_identity()
        except Errors.KafkaError as exc:
            done(exc)
            return
        refused = self._refused({})  # FindCoordinator's rule; OffsetCommit's is the API's
        if refused is not None:
            done(refused)
            return
        if not self._find_coordinator():
            self._coordinator_dead()
            done(self._fatal or Errors.CoordinatorNotAvailableError(self.group_id))
            return
        request = {(tp.topic, tp.partition): (o.offset, -1 if o.leader_epoch is None
                                              else o.leader_epoch, o.metadata or "")
                   for tp, o in offsets.items()}
        self._send(partial(api.offset_commit, self.cluster, self.consumer.caller),
                   (self.group_id, generation, member_id, instance_id, request),
                   lambda result: done(self._commit_outcome(result)),
                   dict.fromkeys(request, errors.NETWORK_EXCEPTION), waits=True)

    def _commit_outcome(self, result: dict) -> Exception | None:
        """kafka-python's handling of an OffsetCommit answer, as an exception or None."""
        codes = set(result.values())
        if codes <= {errors.NONE}:
            return None
        refused = {t: c for (t, _), c in result.items()
                   if c in (errors.GROUP_AUTHORIZATION_FAILED, errors.TOPIC_AUTHORIZATION_FAILED)}
        if refused:
            return refusals_error(refused, self.group_id)
        for code in sorted(codes):
            if code in (errors.UNKNOWN_MEMBER_ID, errors.ILLEGAL_GENERATION):
                self._reset_generation(code == errors.UNKNOWN_MEMBER_ID, "commit rejected")
                return Errors.CommitFailedError(kerrors.for_code(code))
            if code == errors.REBALANCE_IN_PROGRESS:
                self._request_rejoin("commit found the group rebalancing")
                return Errors.CommitFailedError(kerrors.for_code(code))
            if code in COORDINATOR_ERRORS:
                self._coordinator_dead()
        return kerrors.for_code(max(codes), f"OffsetCommit failed for group {self.group_id}")

    def _commit_sync(self, offsets: dict[TopicPartition, OffsetAndMetadata],
                     timeout_ms: int | None = None) -> None:
        """commit(): retry retriable errors (coordinator moving) until the timeout."""
        cluster = self.cluster
        deadline = cluster.now_ms + (timeout_ms if timeout_ms is not None else 60_000)
        while True:
            box: list = []
            self._commit_async(offsets, box.append)
            cluster.run_until(box.__len__, max(deadline - cluster.now_ms, 0) +
                              self.request_timeout_ms + 1)
            exc = box[0] if box else Errors.KafkaTimeoutError("commit timed out")
            if exc is None:
                return
            if not getattr(exc, "retriable", False) or cluster.now_ms >= deadline:
                raise exc
            cluster.advance(self.retry_backoff_ms)

    def _fetch_offsets(self, partitions: Sequence[TopicPartition], timeout_ms: int | None = None
                       ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        """OffsetFetch, blocking and retrying while the coordinator moves."""
        cluster = self.cluster
        deadline = cluster.now_ms + (timeout_ms if timeout_ms is not None
                                     else self.request_timeout_ms * 2)
        tps = [(tp.topic, tp.partition) for tp in partitions]
        refused = self._refused({})  # FindCoordinator's rule; OffsetFetch's is the API's
        if refused is not None:
            raise refused
        fetch = partial(api.offset_fetch, self.cluster, self.consumer.caller)
        while True:
            if self._find_coordinator():
                code, found = self._request_sync(fetch, (self.group_id, tps),
                                                 (errors.NETWORK_EXCEPTION, {}), waits=False)
            else:
                if self._fatal is not None:
                    self._check_usable()
                code, found = errors.COORDINATOR_NOT_AVAILABLE, {}
            if code == errors.GROUP_AUTHORIZATION_FAILED:
                raise refusals_error({self.group_id: code}, self.group_id)
            if code == errors.NONE:
                failed = {t: c for (t, _), (_, _, _, c) in found.items() if c}
                if failed:
                    raise refusals_error(failed, self.group_id)
                out: dict[TopicPartition, OffsetAndMetadata | None] = {}
                for (t, p), (offset, epoch, metadata, _) in found.items():
                    out[TopicPartition(t, p)] = None if offset < 0 else OffsetAndMetadata(
                        offset, metadata, epoch)
                return out
            if code not in COORDINATOR_ERRORS or cluster.now_ms >= deadline:
                raise kerrors.for_code(code, f"OffsetFetch failed for group {self.group_id}")
            self._coordinator_dead()
            cluster.advance(self.retry_backoff_ms)
