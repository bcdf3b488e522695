"""KafkaShareConsumer for a minikafka Cluster: Kafka's share consumer (KIP-932), with the
Java client's behaviour under Python names.

    consumer = cluster.share_consumer("workers", ["jobs"])
    records = consumer.poll(timeout_ms=1000)   # {TopicPartition: [ShareRecord, ...]}

Members of one share group share the records of the same partitions: each fetch acquires
records for this member alone, under a lock of `group.share.record.lock.duration.ms`.
With `share_acknowledgement_mode="implicit"` (the default) every record a poll returned is
accepted by the next poll(), commit_sync() or close(); with "explicit" the application
acknowledges each one, `acknowledge(record, AcknowledgeType.RELEASE)` to have it delivered
again (its `delivery_count` goes up) or `REJECT` to give up on it. Acknowledgements ride on
the next fetch, or go at once with commit_sync(). Time moves only on the simulated clock:
poll() waits on it, heartbeats are timers on it.
"""
from __future__ import annotations

import base64
from collections import namedtuple
from collections.abc import Iterable
from typing import Any

from kafka.consumer.fetcher import ConsumerRecord
from kafka.errors import IllegalStateError, KafkaConfigurationError
from kafka.structs import TopicPartition

from .. import errors as kerrors
from ..core import errors
from ..core.api import authz, share_groups
from ..core.api import share as share_api
from ..core.errors import FENCED_MEMBER_EPOCH
from ..core.records import LOG_APPEND_TIME
from ..core.share.coordinator import LEAVE_EPOCH, HeartbeatResult
from ..core.share.partition import AcknowledgementBatch, AcknowledgeType
from .port import ClientHost
from .security import (
    IN_PROCESS_HOST,
    SECURITY_DEFAULTS,
    authenticate,
    caller,
    refused_error,
)

__all__ = ["AcknowledgeType", "KafkaShareConsumer", "ShareRecord"]

# A ConsumerRecord with the delivery count a share consumer sees (Java's deliveryCount()).
ShareRecord = namedtuple("ShareRecord", ConsumerRecord._fields + ("delivery_count",))

IMPLICIT, EXPLICIT = "implicit", "explicit"

DEFAULTS: dict[str, Any] = {
    "client_id": None,
    "key_deserializer": None,
    "value_deserializer": None,
    "max_poll_records": 500,
    "fetch_max_wait_ms": 500,
    "fetch_max_bytes": 52_428_800,
    "share_acknowledgement_mode": IMPLICIT,
    "retry_backoff_ms": 100,
    **SECURITY_DEFAULTS,
}


class KafkaShareConsumer:
    def __init__(self, cluster: ClientHost, group_id: str, topics: Iterable[str] | str = (),
                 **configs: Any) -> None:
        unknown = set(configs) - set(DEFAULTS)
        if unknown:
            raise KafkaConfigurationError(f"Unrecognized configs: {sorted(unknown)}")
        cfg = {**DEFAULTS, **configs}
        if cfg["share_acknowledgement_mode"] not in (IMPLICIT, EXPLICIT):
            raise KafkaConfigurationError(
                f"Invalid value {cfg['share_acknowledgement_mode']} for configuration "
                "share.acknowledgement.mode: implicit or explicit")
        if not group_id:
            raise kerrors.InvalidGroupIdError("group_id must be set for a share consumer")
        self.config = cfg
        self.cluster = cluster
        self.principal = authenticate(cluster, cfg)
        self.caller = caller(self.principal)
        self.group_id = group_id
        self.client_id = cfg["client_id"] or cluster.new_client_id("share-consumer")
        # The Java client makes its member id (a random Uuid); the cluster's seeded RNG
        # keeps lessons reproducible.
        self.member_id = base64.urlsafe_b64encode(
            cluster.random.getrandbits(128).to_bytes(16, "big")).decode().rstrip("=")
        self.member_epoch = 0
        self._subscription: list[str] = []
        self._assignment: list[TopicPartition] = []
        self._heartbeat_timer = None
        self._joined = False
        self._sessions: dict[int, int] = {}  # broker id -> the next share session epoch
        self._delivered: dict[tuple[TopicPartition, int], int | None] = {}  # last poll's
        self._pending: dict[TopicPartition, list[tuple[int, int]]] = {}  # acks not yet sent
        self._results: dict[TopicPartition, Exception | None] = {}
        self._lock_timeout_ms: int | None = None
        self._error: Exception | None = None  # a heartbeat's fatal error, raised by poll()
        self._refused: Exception | None = None  # the last heartbeat's authorization error
        self._closed = False
        if isinstance(topics, str):
            topics = [topics]
        if topics:
            self.subscribe(topics)

    # -- the group ---------------------------------------------------------------------------
    def subscribe(self, topics: Iterable[str]) -> None:
        self._check_open()
        if isinstance(topics, str):
            topics = [topics]
        topics = sorted(set(topics))
        if not topics:
            self.unsubscribe()
            return
        self._subscription = topics
        self._heartbeat()

    def subscription(self) -> set[str]:
        return set(self._subscription)

    def unsubscribe(self) -> None:
        self._check_open()
        self._acknowledge_implicitly()
        self._send_acknowledgements(final=True)
        if self._joined:
            self._leave()
        self._subscription = []
        self._assignment = []

    def assignment(self) -> set[TopicPartition]:
        return set(self._assignment)

    def _heartbeat(self) -> None:
        """One ShareGroupHeartbeat, then the next one a heartbeat interval later (a timer on
        the simulated clock). A retriable error (no coordinator yet) is retried after
        retry_backoff_ms; any other is kept for poll() to raise, as the Java client does."""
        if self._closed or not self._subscription:
            return
        if self._heartbeat_timer is not None:
            self._heartbeat_timer.cancel()
            self._heartbeat_timer = None
        result = self._send_heartbeat(self.member_epoch)
        if result.error_code in (errors.GROUP_AUTHORIZATION_FAILED,
                                 errors.TOPIC_AUTHORIZATION_FAILED):
            # poll() raises it; the heartbeat goes on, in case an ACL is added
            self._refused = refused_error(
                result.error_code,
                authz.describe_topics(self.cluster, self.caller, self._subscription)
                if result.error_code == errors.TOPIC_AUTHORIZATION_FAILED else self.group_id)
            self._heartbeat_timer = self.cluster.clock.call_later(
                int(self.config["retry_backoff_ms"]), self._heartbeat)
            return
        self._refused = None
        if result.error_code in (errors.UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH):
            self.member_epoch = 0  # fenced or forgotten: join again
            self._joined = False
            result = self._send_heartbeat(0)
        clock = self.cluster.clock
        if result.error_code in errors.RETRIABLE:
            self._heartbeat_timer = clock.call_later(int(self.config["retry_backoff_ms"]),
                                                     self._heartbeat)
            return
        if result.error_code:
            self._error = kerrors.for_code(result.error_code, result.error_message or "")
            return
        self._joined = True
        self.member_epoch = result.member_epoch
        if result.assignment is not None:
            self._assignment = [TopicPartition(t, p) for t in sorted(result.assignment)
                                for p in result.assignment[t]]
        self._heartbeat_timer = clock.call_later(result.heartbeat_interval_ms, self._heartbeat)

    def _send_heartbeat(self, epoch: int) -> HeartbeatResult:
        """ShareGroupHeartbeat at the coordinator (core.api.share_group_heartbeat): the
        subscription with a join or a heartbeat, none with a leave (epoch -1)."""
        return share_groups.share_group_heartbeat(
            self.cluster, self.caller, None, self.group_id, self.member_id, epoch,
            None if epoch == LEAVE_EPOCH else self._subscription, None, self.client_id,
            "/" + IN_PROCESS_HOST)

    def _leave(self) -> None:
        if self._heartbeat_timer is not None:
            self._heartbeat_timer.cancel()
            self._heartbeat_timer = None
        self._send_heartbeat(LEAVE_EPOCH)
        self._joined = False
        self.member_epoch = 0

    # -- poll ----------------------------------------------------------------------------------
    def poll(self, timeout_ms: int = 0) -> dict[TopicPartition, list[ShareRecord]]:
        """Records acquired for this member, waiting up to timeout_ms (simulated) for some.
        Implicit mode accepts what the previous poll returned; explicit mode requires it
        acknowledged (IllegalStateError otherwise)."""
        self._check_open()
        if not self._subscription:
            raise IllegalStateError("Consumer is not subscribed to any topics.")
        if self._error is not None:
            raise self._error
        if self._refused is not None:
            refused, self._refused = self._refused, None
            raise refused
        self._acknowledge_implicitly()
        if any(kind is None for kind in self._delivered.values()):
            raise IllegalStateError("All records must be acknowledged in explicit "
                                    "acknowledgement mode.")
        self._delivered = {}
        cluster = self.cluster
        # Even poll(0) lets a millisecond pass, as KafkaConsumer.poll does here.
        deadline = cluster.now_ms + max(int(timeout_ms), 1)
        while True:
            records = self._fetch()
            if records or cluster.now_ms >= deadline:
                return records
            if self._has_available():  # nothing acquired though something looked ready
                cluster.clock.run_until(min(deadline, cluster.now_ms + 1))
            else:
                cluster.clock.run_while(lambda: not self._has_available(), deadline)

    def _has_available(self) -> bool:
        share = self.cluster.share_groups
        for tp in self._assignment:
            replica = self.cluster.leader_replica(tp.topic, tp.partition)
            sp = share.partitions.get((self.group_id, tp.topic, tp.partition))
            if replica is not None and (sp is None or sp.has_available(replica)):
                return True
        return False

    def _by_leader(self) -> dict[int, list[TopicPartition]]:
        out: dict[int, list[TopicPartition]] = {}
        topics = self.cluster.controller.topics
        for tp in sorted(set(self._assignment) | set(self._pending)):
            meta = topics.get(tp.topic)
            if meta is None or tp.partition >= len(meta.partitions):
                continue
            leader = meta.partitions[tp.partition].leader
            broker = self.cluster.brokers.get(leader)
            if broker is not None and broker.running:
                out.setdefault(leader, []).append(tp)
        return out

    def _fetch(self) -> dict[TopicPartition, list[ShareRecord]]:
        """One ShareFetch per leader (core.api.share.share_fetch). Its refusals are
        kafka-python's errors: the group's at once, a topic's (no READ) once the records
        of this round are returned, by the next poll."""
        out: dict[TopicPartition, list[ShareRecord]] = {}
        unreadable: set[str] = set()
        left = int(self.config["max_poll_records"])
        for broker_id, tps in self._by_leader().items():
            epoch = self._sessions.get(broker_id, 0)
            acks = {} if epoch == 0 else self._take_pending(tps)
            wanted = {(tp.topic, tp.partition): acks.get((tp.topic, tp.partition), [])
                      for tp in tps if tp in self._assignment}
            for key, batches in acks.items():
                wanted.setdefault(key, batches)
            request = share_api.ShareFetchRequest(
                self.group_id, self.member_id, epoch, wanted, (), max(left, 0),
                int(self.config["fetch_max_bytes"]))
            result = share_api.share_fetch(self.cluster, broker_id, request, self.caller)
            if result.error_code:
                self._sessions.pop(broker_id, None)  # start a new session next time
                self._fail(acks, result.error_code, result.error_message)
                if result.error_code == errors.GROUP_AUTHORIZATION_FAILED:
                    raise refused_error(result.error_code, self.group_id)
                continue
            self._sessions[broker_id] = epoch + 1
            self._lock_timeout_ms = result.acquisition_lock_timeout_ms
            for p in result.partitions:
                tp = TopicPartition(p.topic, p.partition)
                if p.error_code == errors.TOPIC_AUTHORIZATION_FAILED:
                    unreadable.add(p.topic)
                if p.acknowledged:
                    self._results[tp] = (kerrors.for_code(p.acknowledge_error_code)
                                         if p.acknowledge_error_code else None)
                records = self._records(tp, p)
                if records:
                    out[tp] = records
                    left -= len(records)
        for tp, records in out.items():
            for r in records:
                self._delivered[(tp, r.offset)] = None
        if unreadable:
            refused = refused_error(errors.TOPIC_AUTHORIZATION_FAILED, unreadable)
            if not out:
                raise refused
            self._refused = refused
        return out

    def _records(self, tp: TopicPartition, p) -> list[ShareRecord]:
        counts = {o: n for r in p.acquired for o, n in
                  ((o, r.delivery_count) for o in range(r.first_offset, r.last_offset + 1))}
        kd, vd = self.config["key_deserializer"], self.config["value_deserializer"]
        out = []
        for batch in p.batches:
            if batch.is_control:
                continue
            log_ts = batch.max_timestamp if batch.timestamp_type == LOG_APPEND_TIME else None
            for delta, ts, key, value, headers in batch.records:
                offset = batch.base_offset + delta
                if offset not in counts:
                    continue
                out.append(ShareRecord(
                    tp.topic, tp.partition, batch.partition_leader_epoch, offset,
                    ts if log_ts is None else log_ts, batch.timestamp_type,
                    kd(key) if kd and key is not None else key,
                    vd(value) if vd and value is not None else value, headers, None,
                    -1 if key is None else len(key), -1 if value is None else len(value), -1,
                    counts[offset]))
        return out

    # -- acknowledgements ------------------------------------------------------------------
    def acknowledge(self, record, type: AcknowledgeType = AcknowledgeType.ACCEPT) -> None:
        """Acknowledge a record the last poll returned (explicit mode only): ACCEPT it,
        RELEASE it for another delivery, or REJECT it."""
        self._check_open()
        if self.config["share_acknowledgement_mode"] != EXPLICIT:
            raise IllegalStateError("The acknowledge() method is not supported when using "
                                    "implicit acknowledgement mode.")
        key = (TopicPartition(record.topic, record.partition), record.offset)
        if key not in self._delivered:
            raise IllegalStateError("The record cannot be acknowledged.")
        kind = AcknowledgeType(type)
        if kind not in (AcknowledgeType.ACCEPT, AcknowledgeType.RELEASE, AcknowledgeType.REJECT):
            raise ValueError(f"cannot acknowledge with {kind.name}")
        self._delivered[key] = kind
        self._pending.setdefault(key[0], []).append((record.offset, int(kind)))

    def _acknowledge_implicitly(self) -> None:
        if self.config["share_acknowledgement_mode"] != IMPLICIT:
            return
        for (tp, offset), kind in self._delivered.items():
            if kind is None:
                self._delivered[(tp, offset)] = AcknowledgeType.ACCEPT
                self._pending.setdefault(tp, []).append((offset, int(AcknowledgeType.ACCEPT)))

    def _take_pending(self, tps: list[TopicPartition]) -> dict[tuple[str, int], list]:
        out = {}
        for tp in tps:
            acks = self._pending.pop(tp, None)
            if acks:
                out[(tp.topic, tp.partition)] = _batches(acks)
        return out

    def _fail(self, acks: dict, code: int, message: str | None) -> None:
        for topic, partition in acks:
            self._results[TopicPartition(topic, partition)] = kerrors.for_code(code, message or "")

    def _send_acknowledgements(self, final: bool = False) -> None:
        for broker_id, tps in self._by_leader().items():
            epoch = self._sessions.get(broker_id, 0)
            if epoch == 0:
                continue  # no session there: nothing was acquired from that broker
            acks = self._take_pending(tps)
            if not acks and not final:
                continue
            request = share_api.ShareAcknowledgeRequest(
                self.group_id, self.member_id, -1 if final else epoch, acks)
            result = share_api.share_acknowledge(self.cluster, broker_id, request, self.caller)
            if final or result.error_code:
                self._sessions.pop(broker_id, None)
            else:
                self._sessions[broker_id] = epoch + 1
            if result.error_code:
                self._fail(acks, result.error_code, result.error_message)
                continue
            for (topic, partition), code in result.partitions.items():
                self._results[TopicPartition(topic, partition)] = (
                    kerrors.for_code(code) if code else None)

    def commit_sync(self, timeout_ms: int | None = None) -> dict[TopicPartition, Exception | None]:
        """Send the acknowledgements so far now; per partition, None or the error."""
        self._check_open()
        self._acknowledge_implicitly()
        self._results = {}
        self._send_acknowledgements()
        results, self._results = self._results, {}
        return results

    def commit_async(self) -> None:
        self.commit_sync()

    def acquisition_lock_timeout_ms(self) -> int | None:
        """The lock duration the brokers reported (None before the first fetch)."""
        return self._lock_timeout_ms

    # -- lifecycle ---------------------------------------------------------------------------
    def close(self) -> None:
        """Accept (implicit mode) or send what was acknowledged, close the share sessions
        (the brokers release the records still held) and leave the group."""
        if self._closed:
            return
        self._acknowledge_implicitly()
        self._send_acknowledgements(final=True)
        if self._joined:
            self._leave()
        self._closed = True

    def crash(self) -> None:
        """minikafka only: the process dies. No acknowledgements, no leave: its records
        come back when their locks time out, and the group drops it after
        group.share.session.timeout.ms."""
        if self._heartbeat_timer is not None:
            self._heartbeat_timer.cancel()
        self._closed = True

    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateError("This consumer has already been closed.")

    def __enter__(self) -> KafkaShareConsumer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"<KafkaShareConsumer {self.client_id} group={self.group_id} "
                f"member={self.member_id} epoch={self.member_epoch}>")


def _batches(acks: list[tuple[int, int]]) -> list[AcknowledgementBatch]:
    """(offset, type) pairs as AcknowledgementBatches: runs of consecutive offsets."""
    out: list[AcknowledgementBatch] = []
    run: list[tuple[int, int]] = []
    for offset, kind in sorted(acks):
        if run and offset != run[-1][0] + 1:
            out.append(_batch(run))
            run = []
        run.append((offset, kind))
    if run:
        out.append(_batch(run))
    return out


def _batch(run: list[tuple[int, int]]) -> AcknowledgementBatch:
    kinds = tuple(k for _, k in run)
    if len(set(kinds)) == 1:
        kinds = kinds[:1]
    return AcknowledgementBatch(run[0][0], run[-1][0], kinds)
