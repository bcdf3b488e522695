"""KafkaConsumer for a minikafka Cluster, with kafka-python's names and Kafka 4.x defaults.

poll() fetches from partition leaders through the simulated network and drives the
clock while it waits, as a real consumer's poll blocks. A consumer sees only records
below the high watermark (read_uncommitted) or below the last stable offset
(read_committed, which also skips aborted transactions and control markers).
"""

from __future__ import annotations

import re
from collections import deque
from typing import TYPE_CHECKING, Any

from kafka.consumer.fetcher import ConsumerRecord
from kafka.errors import (
    IllegalStateError,
    KafkaConfigurationError,
    NoOffsetForPartitionError,
    OffsetOutOfRangeError,
)
from kafka.structs import ConsumerGroupMetadata, OffsetAndTimestamp, TopicPartition

from .. import errors as kerrors
from ..core import api, errors
from ..core.api import authz
from ..core.api.fetch import committed_batches
from ..core.records import LOG_APPEND_TIME
from .security import (
    SECURITY_DEFAULTS,
    authenticate,
    caller,
    raise_refusals,
    raise_refused,
    refused_error,
)

if TYPE_CHECKING:
    from .port import ClientHost

# records-lag-max as the Java client samples it: metrics.num.samples windows of
# metrics.sample.window.ms each (their defaults).
LAG_SAMPLES = 2
LAG_SAMPLE_WINDOW_MS = 30_000

DEFAULTS: dict[str, Any] = {
    "bootstrap_servers": "minikafka",
    "client_id": None,
    "group_id": None,
    "group_instance_id": None,
    "key_deserializer": None,
    "value_deserializer": None,
    "auto_offset_reset": "latest",
    "enable_auto_commit": True,
    "auto_commit_interval_ms": 5_000,
    "max_poll_records": 500,
    "max_poll_interval_ms": 300_000,
    "session_timeout_ms": 45_000,       # Kafka 3.0+ (KIP-735); was 10 s
    "heartbeat_interval_ms": 3_000,
    "fetch_min_bytes": 1,
    "fetch_max_wait_ms": 500,
    "fetch_max_bytes": 52_428_800,
    "max_partition_fetch_bytes": 1_048_576,
    "request_timeout_ms": 30_000,
    "retry_backoff_ms": 100,
    "isolation_level": "read_uncommitted",
    # Kafka 3.0+ (KIP-726): range first, so groups stay eager until range is removed.
    # kafka-python's default is (range, roundrobin).
    "partition_assignment_strategy": ("range", "cooperative-sticky"),
    "metadata_max_age_ms": 300_000,
    "consumer_timeout_ms": float("inf"),
    "exclude_internal_topics": True,
    "allow_auto_create_topics": True,
    "api_version": None,
    "rebalance_timeout_ms": None,
    # KIP-848 (Kafka 4.0+): "consumer" makes the coordinator assign (group.protocol);
    # group_remote_assignor picks its assignor ("uniform" or "range", group.remote.assignor).
    "group_protocol": "classic",
    "group_remote_assignor": None,
    **SECURITY_DEFAULTS,  # who the consumer is: client/security.py
}


class KafkaConsumer:
    def __init__(self, cluster: ClientHost, *topics: str, **configs: Any) -> None:
        unknown = set(configs) - set(DEFAULTS)
        if unknown:
            raise KafkaConfigurationError(f"Unrecognized configs: {sorted(unknown)}")
        cfg = {**DEFAULTS, **configs}
        if cfg["auto_offset_reset"] not in ("earliest", "latest", "none"):
            raise KafkaConfigurationError(
                f"Invalid auto_offset_reset {cfg['auto_offset_reset']!r}: earliest, latest or none")
        if str(cfg["group_protocol"]).lower() not in ("classic", "consumer"):
            raise KafkaConfigurationError(
                f"Invalid group_protocol {cfg['group_protocol']!r}: classic or consumer")
        if cfg["isolation_level"] not in ("read_uncommitted", "read_committed"):
            raise KafkaConfigurationError(f"Invalid isolation_level {cfg['isolation_level']!r}")
        for name in ("fetch_min_bytes", "fetch_max_wait_ms"):
            if not isinstance(cfg[name], int) or cfg[name] < 0:
                raise KafkaConfigurationError(
                    f"Invalid value {cfg[name]!r} for configuration {name}: "
                    "Value must be at least 0")
        self.config = cfg
        self.cluster = cluster
        self.principal = authenticate(cluster, cfg)
        self.caller = caller(self.principal)
        self.client_id = cfg["client_id"] or cluster.new_client_id("consumer")
        self.read_committed = cfg["isolation_level"] == "read_committed"
        self._isolation = api.IsolationLevel.of(cfg["isolation_level"])
        self._assignment: list[TopicPartition] = []
        self._positions: dict[TopicPartition, int] = {}
        self._buffers: dict[TopicPartition, list] = {}
        # The high watermark each partition's last fetch answer carried: records-lag.
        self._highwater: dict[TopicPartition, int] = {}
        # (time, lag) each time a fetch answer arrives or records are handed out, as the
        # Java consumer records its records-lag sensor: records-lag-max is their max over
        # the metrics window.
        self._lag_samples: deque[tuple[int, int]] = deque()
        # Partition -> number of its fetch request in flight: a timeout or an answer
        # ends that request only, never a later one for the same offset.
        self._in_flight: dict[TopicPartition, int] = {}
        # KIP-219: a broker that answered with throttle_time_ms (a client quota) is sent
        # no fetch before this time.
        self._throttled_until: dict[int, int] = {}
        # Positions the broker no longer has, with auto_offset_reset='none': poll() raises.
        self._out_of_range: dict[TopicPartition, int] = {}
        # Topics a Fetch answered TOPIC_AUTHORIZATION_FAILED for: the next poll raises.
        self._unreadable: set[str] = set()
        self._fetch_seq = 0
        # A fetch was answered (or given up on) since the last fetch round: poll sends
        # the next round, but never two rounds in one simulated millisecond.
        self._refetch = False
        self._fetch_round_ms = -1
        self._paused: set[TopicPartition] = set()
        self._last_epochs: dict[TopicPartition, int] = {}  # committed with the offset
        self._subscription: set[str] = set()
        self._pattern: re.Pattern | None = None
        self._manual = False
        self._closed = False
        self._group = None
        if cfg["group_id"] is not None:
            # the group protocol client (consumer groups)
            from .consumer_member import attach_member
            self._group = attach_member(self)
        if topics:
            self.subscribe(topics)

    # -- assignment ----------------------------------------------------------------------
    def subscribe(self, topics=(), pattern: str | None = None, listener=None) -> None:
        if self._manual:
            raise IllegalStateError("Subscription to topics, partitions and pattern are "
                                    "mutually exclusive")
        if isinstance(topics, str):
            topics = [topics]
        if not topics and pattern is None:
            raise IllegalStateError("You must choose topic(s) or a pattern to subscribe to")
        self._subscription = set(topics)
        self._pattern = re.compile(pattern) if pattern else None
        if self._group is not None:
            self._group.subscribe(self.subscription(), listener)
        else:
            self._set_assignment([TopicPartition(t, p) for t in sorted(self.subscription())
                                  for p in range(self._partitions(t))])

    def subscription(self) -> set[str]:
        topics = set(self._subscription)
        if self._pattern is not None:
            topics |= {t for t in self.cluster.list_topics() if self._pattern.match(t)}
        return topics

    def unsubscribe(self) -> None:
        if self._group is not None:
            self._group.unsubscribe()
        self._subscription = set()
        self._pattern = None
        self._set_assignment([])

    def assign(self, partitions) -> None:
        if self._subscription or self._pattern:
            raise IllegalStateError("Subscription to topics, partitions and pattern are "
                                    "mutually exclusive")
        self._manual = True
        self._set_assignment([TopicPartition(*tp) for tp in partitions])

    def assignment(self) -> set[TopicPartition]:
        return set(self._assignment)

    def _set_assignment(self, tps: list[TopicPartition]) -> None:
        keep = set(tps)
        self._assignment = list(tps)
        for tp in list(self._positions):
            if tp not in keep:
                del self._positions[tp]
        for tp in list(self._buffers):
            if tp not in keep:
                del self._buffers[tp]
        self._paused &= keep

    def _partitions(self, topic: str) -> int:
        return self.cluster.partitions_for(topic)

    def partitions_for_topic(self, topic: str) -> set[int]:
        """The topic's partition ids; an empty set when it does not exist (kafka-python 3),
        or when the principal may not DESCRIBE it (Metadata does not tell)."""
        may_describe, _ = authz.metadata(self.cluster, self.caller)
        answer, = api.metadata(self.cluster, [topic], may_describe=may_describe).topics
        return {p.partition for p in answer.partitions}

    def topics(self) -> set[str]:
        """The topics Metadata lists to the principal, internal ones left out as
        kafka-python does."""
        may_describe, _ = authz.metadata(self.cluster, self.caller)
        return {t.name for t in api.metadata(self.cluster, None, may_describe=may_describe).topics
                if not t.is_internal}

    # -- positions -----------------------------------------------------------------------
    def _reset_position(self, tp: TopicPartition) -> int:
        strategy = self.config["auto_offset_reset"]
        if strategy == "none":
            raise NoOffsetForPartitionError(f"No committed offset for {tp} and "
                                            "auto_offset_reset='none'")
        offsets = self.beginning_offsets([tp]) if strategy == "earliest" else \
            self.end_offsets([tp])
        return offsets[tp]

    def position(self, partition: TopicPartition) -> int:
        tp = TopicPartition(*partition)
        if tp not in self._assignment:
            raise IllegalStateError(f"You can only check the position for partitions "
                                    f"assigned to this consumer: {tp}")
        if tp not in self._positions:
            self._positions[tp] = self._initial_position(tp)
        return self._positions[tp]

    def _initial_position(self, tp: TopicPartition) -> int:
        if self._group is not None:
            committed = self._group.committed_offset(tp)
            if committed is not None:
                return committed
        return self._reset_position(tp)

    def highwater(self, partition: TopicPartition) -> int | None:
        """The partition's high watermark as the last fetch answer gave it (None before
        one), as kafka-python's highwater()."""
        return self._highwater.get(TopicPartition(*partition))

    def metrics(self) -> dict[str, dict[str, Any]]:
        """The consumer's own metrics, grouped as kafka-python's metrics() returns them:
        records-lag-max is what kafka.consumer:type=consumer-fetch-manager-metrics
        publishes (see minikafka.core.metrics.consumer_lag)."""
        from ..core.metrics import consumer_lag

        lag = consumer_lag(self)
        per_partition = {f"{tp}-records-lag": v for tp, v in lag["records-lag"].items()}
        return {"consumer-fetch-manager-metrics": {"records-lag-max": lag["records-lag-max"],
                                                   **per_partition}}

    def _record_lag(self, tp: TopicPartition) -> None:
        hw = self._highwater.get(tp)
        if hw is not None and tp in self._positions:
            now, lag = self.cluster.now_ms, max(0, hw - self._positions[tp])
            samples = self._lag_samples
            if not samples or now - samples[-1][0] >= LAG_SAMPLE_WINDOW_MS:
                samples.append((now, lag))  # a new sample window starts with this record
                while len(samples) > LAG_SAMPLES:
                    samples.popleft()
            else:
                samples[-1] = (samples[-1][0], max(samples[-1][1], lag))

    def records_lag_max(self) -> int:
        """What records-lag-max reports: the Java client's sampled maximum over
        metrics.num.samples (2) windows of metrics.sample.window.ms (30 s). A sample is
        dropped once its window started 60 s ago, so an old maximum shows for 30-60 s."""
        now = self.cluster.now_ms
        return max((lag for start, lag in self._lag_samples
                    if now - start < LAG_SAMPLES * LAG_SAMPLE_WINDOW_MS), default=0)

    def seek(self, partition: TopicPartition, offset: int) -> None:
        tp = TopicPartition(*partition)
        if tp not in self._assignment:
            raise IllegalStateError(f"Unassigned partition {tp}")
        if offset < 0:
            raise ValueError("offset must be >= 0")
        self._positions[tp] = offset
        self._buffers.pop(tp, None)
        self._out_of_range.pop(tp, None)

    def seek_to_beginning(self, *partitions: TopicPartition) -> None:
        for tp, off in self.beginning_offsets(partitions or self._assignment).items():
            self.seek(tp, off)

    def seek_to_end(self, *partitions: TopicPartition) -> None:
        for tp, off in self.end_offsets(partitions or self._assignment).items():
            self.seek(tp, off)

    def _list_offsets(self, tp: TopicPartition, timestamp: int) -> api.ListOffsetsResult:
        """ListOffsets to the partition's leader, at this consumer's isolation level."""
        raise_refusals(authz.describe_topics(self.cluster, self.caller, [tp.topic]))
        result, = api.list_offsets_of(self.cluster, tp.topic, tp.partition, timestamp,
                                      isolation_level=self._isolation)
        if result.error_code:
            raise kerrors.for_code(result.error_code)
        return result

    def beginning_offsets(self, partitions) -> dict[TopicPartition, int]:
        return {tp: self._list_offsets(tp, api.EARLIEST).offset
                for tp in (TopicPartition(*p) for p in partitions)}

    def end_offsets(self, partitions) -> dict[TopicPartition, int]:
        """The high watermark (LSO for read_committed): where 'latest' starts."""
        return {tp: self._list_offsets(tp, api.LATEST).offset
                for tp in (TopicPartition(*p) for p in partitions)}

    def offsets_for_times(self, timestamps) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        """The first offset at or after each timestamp that this consumer may read (below
        the LSO for read_committed), None where there is none, as kafka-python answers."""
        out: dict[TopicPartition, OffsetAndTimestamp | None] = {}
        for tp, ts in timestamps.items():
            tp = TopicPartition(*tp)
            found = self._list_offsets(tp, int(ts))
            out[tp] = None if found.offset < 0 else \
                OffsetAndTimestamp(found.offset, found.timestamp, found.leader_epoch)
        return out

    def pause(self, *partitions: TopicPartition) -> None:
        self._paused |= {TopicPartition(*tp) for tp in partitions}

    def resume(self, *partitions: TopicPartition) -> None:
        self._paused -= {TopicPartition(*tp) for tp in partitions}

    def paused(self) -> set[TopicPartition]:
        return set(self._paused)

    # -- poll ------------------------------------------------------------------------------
    def poll(self, timeout_ms: int = 0, max_records: int | None = None,
             update_offsets: bool = True) -> dict[TopicPartition, list[ConsumerRecord]]:
        """Records for assigned partitions; waits up to timeout_ms (simulated) for some."""
        if self._closed:
            raise IllegalStateError("Consumer is closed")
        self._check_access()
        if self._group is not None:
            self._group.poll()
        if not self._assignment and self._group is None:
            raise IllegalStateError("You must subscribe to topics or assign partitions first")
        limit = max_records or int(self.config["max_poll_records"])
        result = self._drain(limit)
        if result:
            return result
        self._send_fetches()
        cluster = self.cluster
        group = self._group
        # Even poll(0) lets a millisecond pass: in a notebook loop nothing else moves the
        # simulated clock, and a real poll loop is never instantaneous either.
        deadline = cluster.now_ms + max(int(timeout_ms), 1)
        while True:
            self._wait(deadline)
            if group is None:
                return self._drain(limit)
            # The group needed this thread (a join answer, an auto-commit due): let it
            # move on, then keep waiting for records until the timeout, as poll() does.
            before = cluster.now_ms
            group.poll()
            result = self._drain(limit)
            if result or cluster.now_ms >= deadline or (
                    cluster.now_ms == before and group.needs_poll()):
                return result

    def _check_access(self) -> None:
        """With an authorizer, the rules this poll's requests meet (core.api.authz), else
        kafka-python's errors: FindCoordinator for the group, JoinGroup when subscribed
        (assigned partitions need no membership), then Metadata's DESCRIBE for every topic
        read. READ on a topic is Fetch's own check, answered by the leader
        (core.api.fetch_at_leader) and raised by the poll after it (_drain)."""
        cluster = self.cluster
        if cluster.authorizer is None:
            return
        group_id = self.config["group_id"]
        if group_id is not None:
            code = authz.find_coordinator(cluster, self.caller, authz.GROUP_KEY, group_id)
            if not code and not self._manual:
                code = authz.group(cluster, self.caller, group_id)
            raise_refused(code, group_id)
        topics = self.subscription() | {tp.topic for tp in self._assignment}
        raise_refusals(authz.describe_topics(cluster, self.caller, topics))

    def _wait(self, deadline: int) -> None:
        """Run the clock until records arrive, the group needs this thread, or deadline.
        Each fetch answered on the way is followed by the next fetch round, as the Java
        consumer's and kafka-python's fetchers do: an empty answer (the long poll ran out)
        does not end the wait for records. A round answered at the very instant it was
        sent (fetch_max_wait_ms=0 with no network latency) is re-sent a millisecond
        later, so the simulated clock always moves."""
        clock = self.cluster.clock

        def ready() -> bool:
            return self._has_records() or self._needs_poll()

        while not ready() and clock.now_ms < deadline:
            if not self._refetch:
                clock.run_while(lambda: not (ready() or self._refetch), deadline)
            elif clock.now_ms > self._fetch_round_ms:
                self._send_fetches()
            else:
                clock.run_while(lambda: not ready(), min(deadline, clock.now_ms + 1))

    def _wake_fetcher(self) -> None:
        self._refetch = True

    def _needs_poll(self) -> bool:
        return self._group is not None and self._group.needs_poll()

    def _has_records(self) -> bool:
        return bool(self._out_of_range or self._unreadable) or any(
            self._buffers.get(tp) for tp in self._assignment if tp not in self._paused)

    def _drain(self, limit: int) -> dict[TopicPartition, list[ConsumerRecord]]:
        if self._unreadable:
            refused, self._unreadable = self._unreadable, set()
            raise refused_error(errors.TOPIC_AUTHORIZATION_FAILED, refused)
        if self._out_of_range:
            failed, self._out_of_range = self._out_of_range, {}
            failed = {tp: o for tp, o in failed.items() if tp in self._assignment}
            if failed:
                raise OffsetOutOfRangeError(failed)
        result: dict[TopicPartition, list] = {}
        taken = 0
        buffers = self._buffers
        for tp in self._assignment:
            if taken >= limit:
                break
            buf = buffers.get(tp)
            if not buf or tp in self._paused:
                continue
            try:
                out = self._take(tp, buf, limit - taken)
            except Exception:
                if result:  # return what was read; the bad record raises at the next poll
                    break
                raise
            if not buf[0]:
                del buffers[tp]
            if out:
                taken += len(out)
                result[tp] = out
                self._positions[tp] = out[-1].offset + 1
                self._record_lag(tp)
                self._last_epochs[tp] = out[-1].leader_epoch
        if taken and self._group is not None:
            self._group.on_records_returned()
        # Prefetch the next round, as a real consumer's fetcher does.
        self._send_fetches()
        return result

    def _take(self, tp: TopicPartition, buf: list, n: int) -> list[ConsumerRecord]:
        """Build up to n ConsumerRecords from fetched batches. Records are built per poll,
        not per fetch: a fetch brings up to a megabyte, a poll returns max_poll_records."""
        chunks, = buf
        out: list[ConsumerRecord] = []
        topic, partition = tp.topic, tp.partition
        kd = self.config["key_deserializer"]
        vd = self.config["value_deserializer"]
        new = tuple.__new__
        CR = ConsumerRecord
        while chunks and len(out) < n:
            base, epoch, ts_type, log_ts, records, start = chunks[0]
            stop = start + n - len(out)
            part = records[start:stop]
            if stop >= len(records):
                chunks.pop(0)
            else:
                chunks[0] = (base, epoch, ts_type, log_ts, records, stop)
            if kd is None and vd is None and log_ts is None:
                out.extend([
                    new(CR, (topic, partition, epoch, base + d, ts, ts_type, k, v, h, None,
                             -1 if k is None else len(k), -1 if v is None else len(v), -1))
                    for d, ts, k, v, h in part])
                continue
            for i, (delta, ts, key, value, headers) in enumerate(part):
                ksize = -1 if key is None else len(key)
                vsize = -1 if value is None else len(value)
                try:
                    if kd is not None and key is not None:
                        key = kd(key)
                    if vd is not None and value is not None:
                        value = vd(value)
                except Exception:
                    # A deserializer failed: the record stays first in line and the
                    # position stays at it, so every poll raises again until the
                    # application seeks past it (the records before it are returned).
                    chunk = (base, epoch, ts_type, log_ts, records, start + i)
                    if chunks and chunks[0][4] is records:
                        chunks[0] = chunk
                    else:
                        chunks.insert(0, chunk)
                    if out:
                        return out
                    raise
                out.append(CR(topic, partition, epoch, base + delta,
                              ts if log_ts is None else log_ts, ts_type, key, value,
                              headers, None, ksize, vsize, -1))
        return out

    def _send_fetches(self) -> None:
        # One fetch per partition, so fetch_min_bytes counts per partition here; Kafka
        # counts a whole fetch (every partition a broker leads for this consumer). The
        # two agree while a consumer reads one partition per leader.
        cluster = self.cluster
        wait = int(self.config["fetch_max_wait_ms"])
        min_bytes = int(self.config["fetch_min_bytes"])
        max_bytes = int(self.config["fetch_max_bytes"])
        partition_max_bytes = int(self.config["max_partition_fetch_bytes"])
        isolation = api.READ_COMMITTED if self.read_committed else api.READ_UNCOMMITTED
        self._refetch = False
        for tp in self._assignment:
            if tp in self._paused or tp in self._in_flight or self._buffers.get(tp):
                continue
            topic = cluster.controller.topics.get(tp.topic)
            if topic is None or tp.partition >= len(topic.partitions):
                continue
            leader = topic.partitions[tp.partition].leader
            broker = cluster.brokers.get(leader)
            if broker is None:
                continue
            until = self._throttled_until.get(leader, 0)
            if until > cluster.now_ms:
                continue
            offset = self.position(tp)
            self._fetch_seq += 1
            seq = self._in_flight[tp] = self._fetch_seq
            self._fetch_round_ms = cluster.now_ms
            # current_leader_epoch is the metadata's, as kafka-python sends it (KIP-320).
            request = api.FetchRequest(
                (api.FetchPartition(tp.topic, tp.partition, offset, partition_max_bytes,
                                    isolation, topic.partitions[tp.partition].leader_epoch),),
                max_bytes, min_bytes, wait, self.principal, self.client_id)

            def respond(result, tp=tp, offset=offset, leader=leader, seq=seq):
                cluster.network.send(leader, self.client_id, self._on_fetch, tp, offset,
                                     leader, result, seq)

            sent = cluster.network.send(self.client_id, leader, api.fetch_at_leader, cluster,
                                        broker, self.caller, request, respond)
            if not sent:
                cluster.clock.call_later(int(self.config["request_timeout_ms"]),
                                         self._fetch_timeout, tp, seq)
            else:
                cluster.clock.call_later(int(self.config["request_timeout_ms"]) + wait,
                                         self._fetch_timeout, tp, seq)

    def _throttled(self, leader: int, throttle_ms: int) -> None:
        """KIP-219: the broker answered with throttle_time_ms (this client went over its
        fetch quota there), so the consumer waits that long before fetching there again."""
        if throttle_ms:
            cluster = self.cluster
            self._throttled_until[leader] = cluster.now_ms + throttle_ms
            cluster.clock.call_later(throttle_ms, self._wake_fetcher)

    def _fetch_timeout(self, tp: TopicPartition, seq: int) -> None:
        if self._in_flight.get(tp) == seq:
            del self._in_flight[tp]
            self._refetch = True

    def _on_fetch(self, tp: TopicPartition, offset: int, leader: int,
                  result: api.FetchResult, seq: int) -> None:
        self._throttled(leader, result.throttle_ms)
        resp = result.partitions[0]
        if self._in_flight.get(tp) != seq:
            return  # an answer to a request that timed out: a newer one is on its way
        del self._in_flight[tp]
        if tp not in self._assignment or self._positions.get(tp) != offset:
            self._refetch = True
            return  # a seek or rebalance made this answer stale
        if resp.error_code == errors.OFFSET_OUT_OF_RANGE:
            if self.config["auto_offset_reset"] == "none":
                self._out_of_range[tp] = offset  # raised by poll(), as kafka-python does
                return
            self._positions[tp] = self._reset_position(tp)
            self._refetch = True
            return
        if resp.error_code == errors.TOPIC_AUTHORIZATION_FAILED:
            self._unreadable.add(tp.topic)  # raised by poll(), as kafka-python's Fetcher does
            return
        if resp.error_code != errors.NONE:
            # Leader moved: fetch from the new one after retry.backoff.ms (the real
            # client first refreshes its metadata), or at the next poll.
            self.cluster.clock.call_later(int(self.config["retry_backoff_ms"]),
                                          self._wake_fetcher)
            return
        self._refetch = True
        self._highwater[tp] = resp.high_watermark
        self._record_lag(tp)
        chunks = self._to_chunks(tp, resp, offset)
        if chunks:
            self._buffers[tp] = [chunks]
        elif resp.batches and resp.batches[-1].next_offset > offset:
            # Only transaction markers, aborted or compacted-away records: Kafka moves
            # the position past them, or lag would never reach zero.
            self._positions[tp] = resp.batches[-1].next_offset

    def _to_chunks(self, tp: TopicPartition, resp, offset: int) -> list[tuple]:
        """(base, leader epoch, timestamp type, log-append time, records, start) per batch
        a reader may see: control batches, aborted transactions (read_committed, from the
        list the fetch answer carries) and records before the fetch offset are left out."""
        chunks = []
        for batch in committed_batches(resp.batches, resp.aborted_transactions):
            base = batch.base_offset
            records = batch.records
            if base < offset:
                records = [r for r in records if base + r[0] >= offset]
            if records:
                log_ts = batch.max_timestamp if batch.timestamp_type == LOG_APPEND_TIME else None
                chunks.append((base, batch.partition_leader_epoch, batch.timestamp_type, log_ts,
                               records, 0))
        return chunks

    # -- commits (consumer groups) ---------------------------------------------------------
    def _require_group(self):
        if self._group is None:
            raise IllegalStateError("Requires group_id")  # kafka-python's words
        return self._group

    def commit(self, offsets=None, timeout_ms: int | None = None) -> None:
        self._require_group().commit(offsets, timeout_ms)

    def commit_async(self, offsets=None, callback=None):
        return self._require_group().commit_async(offsets, callback)

    def committed(self, partition: TopicPartition, metadata: bool = False,
                  timeout_ms: int | None = None):
        if not isinstance(partition, TopicPartition):
            raise TypeError("partition must be a TopicPartition namedtuple")
        return self._require_group().committed(partition, metadata, timeout_ms)

    def group_metadata(self) -> ConsumerGroupMetadata:
        if self._group is None:
            return ConsumerGroupMetadata(group_id=None)
        return self._group.group_metadata()

    def crash(self) -> None:
        """minikafka only: the process dies (kill -9). No commit, no LeaveGroup, no more
        heartbeats; the group notices when session_timeout_ms passes."""
        if self._closed:
            return
        if self._group is not None:
            self._group.crash()
        self._closed = True

    # -- lifecycle ---------------------------------------------------------------------------
    def close(self, autocommit: bool = True) -> None:
        if self._closed:
            return
        if self._group is not None:
            self._group.close(autocommit)
        self._closed = True

    def __iter__(self):
        return self

    def __next__(self) -> ConsumerRecord:
        timeout = self.config["consumer_timeout_ms"]
        limit = 3_600_000 if timeout == float("inf") else int(timeout)
        batch = self.poll(timeout_ms=limit, max_records=1)
        for records in batch.values():
            return records[0]
        raise StopIteration

    def __enter__(self) -> KafkaConsumer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
