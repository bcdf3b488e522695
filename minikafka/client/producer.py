"""KafkaProducer for a minikafka Cluster, with kafka-python's keyword names and
Kafka 4.x's defaults (acks=all, idempotence on, linger.ms=5).

send() only appends to a batch in the record accumulator (keyless records go to the
topic's sticky partition, switched by bytes as in Kafka 3.3+: see partitioner.py); a
sender (events on the simulated clock) ships ready batches to partition leaders, at most
max_in_flight_requests_per_connection requests per broker, retries retriable errors
until delivery_timeout_ms, and completes each record's future with its offset.
"""

from __future__ import annotations

import math
import random
from bisect import bisect_left
from collections import deque
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from kafka.errors import (
    IllegalStateError,
    InvalidProducerEpochError,
    KafkaConfigurationError,
    KafkaTimeoutError,
    ProducerFencedError,
    TransactionAbortedError,
)
from kafka.producer.future import RecordMetadata
from kafka.structs import TopicPartition

from .. import errors as kerrors
from ..codecs import require_codec
from ..core import api, errors
from ..core.api import authz
from ..core.api import produce as api_produce
from ..core.api import txn_offset_commit as api_txn_offset_commit
from ..core.clock import Deadlines
from ..core.records import (
    BATCH_OVERHEAD,
    COMPRESSION_IDS,
    LOG_APPEND_TIME,
    RecordBatch,
    record_size,
    records_size,
)
from ..core.transactions import TV_1, TV_2, producer_transition
from ..core.transactions import ProducerTxnState as TxnState
from .codec import compressed_size
from .future import Future
from .partitioner import SEED, DefaultPartitioner, murmurhash2
from .security import SECURITY_DEFAULTS, authenticate, caller, raise_refusals, raise_refused

if TYPE_CHECKING:
    from .port import ClientHost

DEFAULTS: dict[str, Any] = {
    "bootstrap_servers": "minikafka",
    "client_id": None,
    "key_serializer": None,
    "value_serializer": None,
    "acks": "all",
    "enable_idempotence": None,   # None: on unless it conflicts (Kafka 3.0+ rule)
    "retries": 2147483647,
    "delivery_timeout_ms": 120_000,
    "request_timeout_ms": 30_000,
    "retry_backoff_ms": 100,
    "retry_backoff_max_ms": 1_000,  # Kafka 3.7 (KIP-580); kafka-python backs off a flat 100 ms
    "max_in_flight_requests_per_connection": 5,
    "linger_ms": 5,              # Kafka 4.0 (KIP-1030); kafka-python 3.0 still uses 0
    "batch_size": 16_384,
    "compression_type": None,
    "buffer_memory": 33_554_432,
    "max_block_ms": 60_000,
    "max_request_size": 1_048_576,
    "partitioner": None,
    # The built-in partitioner for keyless records (Kafka 3.3+, KIP-794); see partitioner.py.
    "partitioner_ignore_keys": False,
    "partitioner_adaptive_partitioning_enable": True,
    "partitioner_availability_timeout_ms": 0,
    "transactional_id": None,
    "transaction_timeout_ms": 60_000,
    "allow_auto_create_topics": True,
    "metadata_max_age_ms": 300_000,
    "api_version": None,
    **SECURITY_DEFAULTS,  # who the producer is: client/security.py
}


class ProducerBatch:
    """Records for one partition, sent and retried as one unit."""

    __slots__ = ("tp", "records", "size", "created_ms", "futures_done", "future",
                 "batch", "attempts", "first_send_ms", "ready", "results", "sequence",
                 "retry_at", "producer", "max_ts", "leader", "size_bytes", "wide")

    def __init__(self, tp: tuple[str, int], created_ms: int, future: Future,
                 producer: KafkaProducer) -> None:
        self.producer = producer
        self.max_ts = -1
        self.tp = tp
        self.records: list[tuple] = []
        self.size = 61
        self.size_bytes = 0            # its exact v2 bytes, once it is closed
        # What the records' 2-byte varints add to `size` (see exact_size), counted as they
        # are appended; below 0 when a record needs records_size to count it.
        self.wide = 0
        self.created_ms = created_ms
        self.future = future           # resolves to the base offset
        self.batch: RecordBatch | None = None
        self.attempts = 0
        self.first_send_ms = -1
        self.ready = False
        self.sequence = -1
        self.retry_at = 0
        self.leader = -1               # the broker its last attempt went to


class FutureRecordMetadata:
    """The future send() returns; get() gives RecordMetadata(topic, partition, offset, ...).

    The record's batch and its index there. send() is the hot loop of every producer:
    made without an __init__ and given its two slots, the future costs about half a
    tuple subclass made through tuple.__new__ (63 against 118 ns here).
    """

    __slots__ = ("_batch", "_index")

    @property
    def is_done(self) -> bool:
        return self._batch.future.is_done

    def succeeded(self) -> bool:
        return self._batch.future.succeeded()

    def failed(self) -> bool:
        return self._batch.future.failed()

    @property
    def exception(self):
        return self._batch.future.exception

    @property
    def value(self) -> RecordMetadata | None:
        return self._metadata() if self.succeeded() else None

    def _metadata(self) -> RecordMetadata:
        base = self._batch.future.value
        topic, partition = self._batch.tp
        _, ts, key, value, headers = self._batch.records[self._index]
        offset = base + self._index if base >= 0 else -1
        stored = self._batch.batch
        if stored is not None and stored.timestamp_type == LOG_APPEND_TIME and base >= 0:
            # A LogAppendTime topic: the broker stamped the batch, and the metadata says so
            # (kafka-python's RecordMetadata.timestamp is the log append time then).
            ts = stored.max_timestamp
        return RecordMetadata(topic, partition, TopicPartition(topic, partition), offset, ts,
                              None, len(key) if key is not None else -1,
                              len(value) if value is not None else -1, -1)

    def get(self, timeout: float | None = None) -> RecordMetadata:
        """Drive the simulation until this record is acknowledged (or fails)."""
        fut = self._batch.future
        if not fut.is_done:
            self._batch.producer._ready_now(self._batch)
        fut.get(timeout)
        return self._metadata()

    def add_callback(self, fn, *args, **kwargs):
        self._batch.future.add_callback(lambda _: fn(*args, self._metadata(), **kwargs))
        return self

    def add_errback(self, fn, *args, **kwargs):
        self._batch.future.add_errback(lambda e: fn(*args, e, **kwargs))
        return self


_UNCOUNTED = -(1 << 62)  # a record records_size must count


def _wide(n_key: int, n_value: int) -> int:
    """What a record of bytes key and value, no headers, adds to exact_size beyond its
    8 + key + value bytes, from its lengths (n_key + n_value >= 54): one byte each for a
    key or value length of 64 or more and for a record body of 64 or more, whose length
    is then a 2-byte varint. Between 54 and 57 bytes the body's length depends on the
    deltas too, and from 8000 a varint may take 3 bytes: those go to records_size."""
    total = n_key + n_value
    if total < 58 or total >= 8000:
        return _UNCOUNTED
    return 1 + (n_key >= 64) + (n_value >= 64)


def exact_size(batch: ProducerBatch) -> int:
    """The closed batch's exact v2 bytes, as records_size counts them, from what send()
    counted per record: `size` holds 61 + 8 + key + value bytes a record, which is exact
    for a record whose varints all take one byte but for the body's length, one less
    (7 bytes of framing: length, attributes, timestamp and offset deltas, key and value
    lengths, header count). The 2-byte varints are added back: lengths (`wide`), offset
    deltas from 64 on, and timestamp deltas of 64 ms or more (appends stamp the clock, so
    timestamps only grow: a bisection finds the first late one)."""
    records = batch.records
    n = len(records)
    first = records[0][1]
    if batch.wide < 0 or n >= 8192 or not 0 <= records[-1][1] - first < 8192:
        return BATCH_OVERHEAD + records_size(records, first)
    late = n - bisect_left(records, first + 64, key=itemgetter(1))
    return batch.size + batch.wide + max(0, n - 64) + late - n


def _is_ready(batch: ProducerBatch) -> bool:
    return batch.ready


class _InFlight:
    """One ProduceRequest waiting for its answer, done once answered or timed out. The
    broker calls it with its results, which it sends back over the network: one object
    per request where a closure and a dict took seven, each tracked by the collector."""

    __slots__ = ("producer", "leader", "group", "done")

    def __init__(self, producer: KafkaProducer, leader: int, group: dict) -> None:
        self.producer = producer
        self.leader = leader
        self.group = group
        self.done = False

    def __call__(self, results: dict) -> None:
        producer = self.producer
        producer.cluster.network.send(self.leader, producer.client_id, producer._on_response,
                                      self.leader, self.group, results, self)


class _MetadataView:
    """The slice of kafka-python's ClusterMetadata a Partitioner.partition() reads."""

    def __init__(self, topic: str, parts: list[int], available: list[int]) -> None:
        self._topic, self._parts, self._available = topic, parts, available

    def topics(self) -> set[str]:
        return {self._topic}

    def partitions_for_topic(self, topic: str) -> set[int]:
        return set(self._parts)

    def available_partitions_for_topic(self, topic: str) -> set[int]:
        return set(self._available)


def _flag(name: str, value: Any) -> bool:
    """A boolean config: True/False, or Kafka's "true"/"false"."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise KafkaConfigurationError(f"Invalid {name} {value!r}: use True or False")


def _acks(value: Any) -> int:
    if value in ("all", -1, "-1"):
        return -1
    if value in (0, 1, "0", "1"):
        return int(value)
    raise KafkaConfigurationError(f"Invalid acks {value!r}: use 0, 1 or 'all'")


class KafkaProducer:
    def __init__(self, cluster: ClientHost, **configs: Any) -> None:
        unknown = set(configs) - set(DEFAULTS)
        if unknown:
            raise KafkaConfigurationError(f"Unrecognized configs: {sorted(unknown)}")
        cfg = {**DEFAULTS, **configs}
        self.config = cfg
        self.cluster = cluster
        self.principal = authenticate(cluster, cfg)
        self.caller = caller(self.principal)
        self.acks = _acks(cfg["acks"])
        self.client_id = cfg["client_id"] or cluster.new_client_id("producer")
        # Backoff jitter from a generator of its own (seeded by the cluster's seed and the
        # client id), so retries do not shift the random draws of the rest of the cluster.
        self._jitter = random.Random(f"{cluster.seed}:{self.client_id}")
        comp = cfg["compression_type"]
        if comp not in COMPRESSION_IDS:
            raise KafkaConfigurationError(f"Not supported codec: {comp}")
        self.compression = COMPRESSION_IDS[comp]
        require_codec(self.compression)
        max_in_flight = int(cfg["max_in_flight_requests_per_connection"])
        idem = cfg["enable_idempotence"]
        txn = cfg["transactional_id"]
        conflicts = []
        if self.acks != -1:
            conflicts.append("acks must be 'all'")
        if int(cfg["retries"]) == 0:
            conflicts.append("retries must be > 0")
        if idem is not False and max_in_flight > 5:
            # Kafka 4.0: an error whenever idempotence is on, by default too (3.x only
            # warned and turned it off). Idempotence is still on at this point even with
            # acks=1, as in ProducerConfig, so that combination is refused as well.
            raise KafkaConfigurationError(
                "To use the idempotent producer, max_in_flight_requests_per_connection must be "
                f"set to at most 5. Current value is {max_in_flight}.")
        if idem is None:
            # Kafka 3.0+: on by default, silently off when acks or retries conflict.
            idem = not conflicts
        elif idem and conflicts:
            raise KafkaConfigurationError(
                "enable_idempotence=True requires " + "; ".join(conflicts))
        if txn and not idem:
            raise KafkaConfigurationError("transactional_id requires enable_idempotence")
        self.idempotent = bool(idem)
        self.transactional_id = txn
        self.max_in_flight = max_in_flight
        self.batch_size = int(cfg["batch_size"])
        self.linger_ms = int(cfg["linger_ms"])
        self.buffer_memory = int(cfg["buffer_memory"])
        ignore_keys = _flag("partitioner_ignore_keys", cfg["partitioner_ignore_keys"])
        self.adaptive_partitioning = _flag("partitioner_adaptive_partitioning_enable",
                                           cfg["partitioner_adaptive_partitioning_enable"])
        timeout = cfg["partitioner_availability_timeout_ms"]
        if isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 0:
            raise KafkaConfigurationError(
                f"Invalid partitioner_availability_timeout_ms {timeout!r}: must be an int >= 0")
        self.availability_timeout_ms = timeout
        self.partitioner = cfg["partitioner"] or DefaultPartitioner(
            cluster.random, max(1, self.batch_size), ignore_keys)  # batch.size 0 counts as 1
        self.key_serializer = cfg["key_serializer"]
        self.value_serializer = cfg["value_serializer"]
        self.producer_id = -1
        self.producer_epoch = -1
        self._sequences: dict[tuple[str, int], int] = {}
        self._open: dict[tuple[str, int], ProducerBatch] = {}
        self._queues: dict[tuple[str, int], deque[ProducerBatch]] = {}
        self._in_flight: dict[int, int] = {}
        # KIP-219: a broker that answered with throttle_time_ms (a client quota) gets no
        # request before this time.
        self._throttled_until: dict[int, int] = {}
        self._pending_sent: dict[tuple[str, int], list[ProducerBatch]] = {}
        self._leaders: dict[tuple[str, int], int] = {}
        self._partitions: dict[str, list[int]] = {}
        # Per leader: when the sender last had a batch ready for it, and last sent it one
        # (for partitioner_availability_timeout_ms).
        self._node_ready_ms: dict[int, int] = {}
        self._node_drain_ms: dict[int, int] = {}
        self._buffered = 0
        self._sender_armed = False
        self._closed = False
        self._txn_state: TxnState | None = TxnState.UNINITIALIZED if txn else None
        self._txn_partitions: set[tuple[str, int]] = set()
        # Whether the cluster finalizes transaction.version 2 (KIP-890 part 2), read as the
        # Java client reads it, at init_transactions() and begin_transaction(); a group's
        # offsets sent to the open transaction.
        self._txn_v2 = False
        self._txn_groups: set[str] = set()
        self._txn_error: BaseException | None = None
        self._flushing = False
        self.pending = 0  # batches not yet completed
        # topic -> (key -> partition cache, open batch per partition) for send()'s fast path
        self._fast_topics: dict[str, tuple[dict, list]] = {}
        self._clock = cluster.clock
        self._metadata_at = cluster.clock.now_ms
        # A batch closed before its linger.ms (full, flushed) needs no timer: dropped.
        self._lingers = Deadlines(cluster.clock, self._linger_expired, _is_ready)
        self._request_timeouts = Deadlines(cluster.clock, self._request_timed_out,
                                           lambda state: state.done)
        self._fast = (self.key_serializer is None and self.value_serializer is None
                      and cfg["partitioner"] is None and not ignore_keys and not txn)

    # -- metadata ------------------------------------------------------------------------
    def partitions_for(self, topic: str) -> set[int]:
        """The topic's partitions, from Metadata: TopicAuthorizationFailedError when the
        principal may not DESCRIBE it."""
        raise_refusals(authz.describe_topics(self.cluster, self.caller, [topic]))
        return set(self._topic_partitions(topic))

    def _topic_partitions(self, topic: str) -> list[int]:
        parts = self._partitions.get(topic)
        if parts is None:
            cluster = self.cluster
            if topic not in cluster.controller.topics:
                # Metadata, which auto-creates the topic as the broker's
                # auto.create.topics.enable allows (not an internal one); the topic it
                # created is there for the next Metadata, the one a client retries with
                answer, = api.metadata(
                    cluster, [topic], self.config["allow_auto_create_topics"]).topics
                if answer.error_code == errors.INVALID_TOPIC_EXCEPTION:
                    raise errors.KafkaCoreError(answer.error_code, f"Invalid topic: {topic}")
                if topic not in cluster.controller.topics:
                    raise KafkaTimeoutError(
                        f"Failed to update metadata after {self.config['max_block_ms']} ms.")
            parts = list(range(cluster.partitions_for(topic)))
            self._partitions[topic] = parts
            if self._fast:
                open_batches = [self._open.get((topic, p)) for p in parts]
                self._fast_topics[topic] = ({}, open_batches)
        return parts

    def _leader(self, tp: tuple[str, int]) -> int:
        leader = self._leaders.get(tp)
        if leader is None:
            topic = self.cluster.controller.topics.get(tp[0])
            leader = topic.partitions[tp[1]].leader if topic else -1
            if leader >= 0:
                self._leaders[tp] = leader
        return leader

    def _refresh_metadata(self) -> None:
        self._metadata_at = self._clock.now_ms
        self._leaders.clear()
        self._partitions.clear()
        self._fast_topics.clear()

    # -- send ---------------------------------------------------------------------------
    def send(self, topic: str, value: Any = None, key: Any = None, headers=None,
             partition: int | None = None, timestamp_ms: int | None = None) -> FutureRecordMetadata:
        """Append a record to its partition's batch; the future resolves when acknowledged."""
        # Fast path (keyed bytes, default partitioner): the hot loop of every producer.
        # (With an authorizer every send is checked, on the slow path.)
        fast = self._fast_topics.get(topic) if self.cluster.authorizer is None else None
        if fast is not None and key is not None and value is not None and not headers \
                and partition is None and timestamp_ms is None:
            cache, batches = fast
            p = cache.get(key)
            if p is None:
                p = self._cache_partition(cache, key, len(batches))
            batch = batches[p]
            if batch is not None:
                n_key = len(key)
                n_value = len(value)
                size = batch.size + 8 + n_key + n_value
                if size <= self.batch_size:
                    records = batch.records
                    index = len(records)
                    records.append((index, self._clock.now_ms, key, value, ()))
                    batch.size = size
                    # _wide, inline: a call per record cost 3% of a producer's loop.
                    if 58 <= n_key + n_value < 8000 and type(key) is bytes \
                            and type(value) is bytes:
                        batch.wide += 1 + (n_key >= 64) + (n_value >= 64)
                    elif n_key + n_value >= 54 or type(key) is not bytes \
                            or type(value) is not bytes:
                        batch.wide = _UNCOUNTED
                    future = FutureRecordMetadata()
                    future._batch = batch
                    future._index = index
                    return future
        return self._send(topic, value, key, headers, partition, timestamp_ms)

    def _partition(self, topic: str, key: bytes | None, value: bytes | None,
                   parts: list[int]) -> int:
        """The default partitioner, or a custom one in either of kafka-python's shapes:
        a callable (key_bytes, all_partitions, available_partitions), or an object with
        partition(topic, key, serialized_key, value, serialized_value, cluster_metadata)."""
        partitioner = self.partitioner
        if isinstance(partitioner, DefaultPartitioner):
            return partitioner(key, parts, parts, topic)
        available = [p for p in parts if self._leader((topic, p)) >= 0]
        if hasattr(partitioner, "partition"):
            chosen = partitioner.partition(topic, key, key, value, value,
                                           _MetadataView(topic, parts, available))
        else:
            chosen = partitioner(key, parts, available)
        if chosen not in parts:
            raise AssertionError(f"Partitioner returned {chosen!r}, not a partition of {topic}")
        return chosen

    @staticmethod
    def _cache_partition(cache: dict, key: bytes, num_partitions: int) -> int:
        """murmur2 costs more than a dict lookup, and keys (truck ids, user ids) repeat."""
        if len(cache) >= 65_536:
            cache.clear()
        p = cache[key] = (murmurhash2(key, SEED) & 0x7FFFFFFF) % num_partitions
        return p

    def _send(self, topic: str, value: Any, key: Any, headers, partition: int | None,
              timestamp_ms: int | None) -> FutureRecordMetadata:
        # Every new batch passes here: refresh metadata once it is metadata.max.age.ms old,
        # which is how a running producer notices partitions added to a topic.
        if self._clock.now_ms - self._metadata_at >= int(self.config["metadata_max_age_ms"]):
            self._refresh_metadata()
        if self._closed:
            raise IllegalStateError("Cannot send after the producer has been closed.")
        if self._txn_state is not None and self._txn_state is not TxnState.IN_TRANSACTION:
            raise IllegalStateError(
                "Cannot call send in state " + self._txn_state + ": begin_transaction() first")
        if value is None and key is None:
            raise AssertionError("Need at least one: key or value")
        self._authorize_send(topic)
        if self.key_serializer is not None and key is not None:
            key = self.key_serializer(key)
        if self.value_serializer is not None and value is not None:
            value = self.value_serializer(value)
        if headers:
            headers = tuple((str(k), v) for k, v in headers)
        else:
            headers = ()
        parts = self._partitions.get(topic) or self._topic_partitions(topic)
        partitioner = self.partitioner
        sticky = partition is None and isinstance(partitioner, DefaultPartitioner) and (
            key is None or partitioner.ignore_keys)
        if sticky:
            partition = partitioner.sticky.get(topic)
            if partition is None or partition not in parts:
                partition = self._next_sticky(topic, parts)
        elif partition is None:
            partition = self._partition(topic, key, value, parts)
        elif partition not in parts:
            raise AssertionError(f"Unrecognized partition {partition} for topic {topic}")
        size = record_size(key, value, headers)
        if size + 61 > self.config["max_request_size"]:
            raise kerrors.MessageSizeTooLargeError(
                f"The message is {size} bytes when serialized which is larger than "
                f"max_request_size {self.config['max_request_size']}")
        now = self.cluster.clock.now_ms
        ts = now if timestamp_ms is None else int(timestamp_ms)
        tp = (topic, partition)
        batch = self._open.get(tp)
        if sticky and (batch is None or batch.size + size > self.batch_size) \
                and partitioner.switch_due(topic):
            # Every batch queued for the sticky partition is full (or this record does not
            # fit the open one) and batch.size bytes went there: a switch that waited for
            # the last batch to fill or be sent happens now.
            if batch is not None:
                self._close_batch(batch)
            partition = self._next_sticky(topic, parts)
            tp = (topic, partition)
            batch = self._open.get(tp)
        appended = size
        if batch is None or (batch.size + size > self.batch_size and batch.records):
            if batch is not None:
                self._close_batch(batch)
            if self._buffered + self.batch_size > self.buffer_memory:
                self._wait_for_memory()
            batch = self._new_batch(tp, now)
            appended += batch.size  # a new batch counts with its header, as in Java
        index = len(batch.records)
        batch.records.append((index, ts, key, value, headers))
        if ts > batch.max_ts:
            batch.max_ts = ts
        batch.size += size
        if headers or timestamp_ms is not None or type(key) is not bytes \
                or type(value) is not bytes:
            batch.wide = _UNCOUNTED
        elif len(key) + len(value) >= 54:
            batch.wide += _wide(len(key), len(value))
        # Past batch.size bytes the switch waits until the open batch is full (or sent).
        if sticky and partitioner.appended(topic, appended, batch.size >= self.batch_size):
            self._next_sticky(topic, parts)
        future = FutureRecordMetadata()
        future._batch = batch
        future._index = index
        return future

    def _authorize_send(self, topic: str) -> None:
        """The rules a send meets on its way (core.api.authz), in kafka-python's order:
        Metadata (DESCRIBE on the topic), InitProducerId for an idempotent producer's
        first batch, then Produce (WRITE on the topic and the transactional id)."""
        cluster, who = self.cluster, self.caller
        if cluster.authorizer is None:
            return
        raise_refusals(authz.describe_topics(cluster, who, [topic]))
        if self.idempotent and not self.transactional_id and self.producer_id < 0:
            raise_refused(authz.init_producer_id(cluster, who, None))
        raise_refusals(authz.produce(cluster, who, self.transactional_id, [topic]),
                       self.transactional_id)

    def _next_sticky(self, topic: str, parts: list[int]) -> int:
        """A new sticky partition among those with a leader, weighted by queue sizes."""
        available = [p for p in parts if self._leader((topic, p)) >= 0]
        sizes = self._queue_sizes(topic, parts, available) if self.adaptive_partitioning \
            else None
        return self.partitioner.next_partition(topic, parts, available, sizes)

    def _queue_sizes(self, topic: str, parts: list[int],
                     available: list[int]) -> dict[int, int] | None:
        """Batches waiting to be sent per partition, for adaptive partitioning; None
        (a uniform draw) as in the Java client: until every partition has had a batch,
        for fewer than 2 partitions, when every partition is left out, and when all
        queues are equal and none is left out. partitioner_availability_timeout_ms
        leaves out partitions whose leader had batches ready but took none for longer."""
        queues = self._queues
        if len(parts) < 2 or any((topic, p) not in queues for p in parts):
            return None
        timeout = self.availability_timeout_ms
        sizes = {}
        for p in available:
            if timeout:
                leader = self._leaders.get((topic, p), -1)
                ready = self._node_ready_ms.get(leader)
                if ready is not None and ready - self._node_drain_ms[leader] > timeout:
                    continue
            sizes[p] = len(queues[(topic, p)])
        if not sizes or (len(sizes) == len(parts) and len(set(sizes.values())) == 1):
            return None
        return sizes

    def _new_batch(self, tp: tuple[str, int], now: int) -> ProducerBatch:
        batch = ProducerBatch(tp, now, Future(self.cluster), self)
        self._open[tp] = batch
        fast = self._fast_topics.get(tp[0])
        if fast is not None and tp[1] < len(fast[1]):
            fast[1][tp[1]] = batch
        self._queues.setdefault(tp, deque()).append(batch)
        self._buffered += self.batch_size
        self.pending += 1
        if self.transactional_id and tp not in self._txn_partitions:
            self._txn_partitions.add(tp)
            if not self._txn_v2:  # under version 2 the Produce adds the partition itself
                self._add_partitions_to_txn({tp})
        self._lingers.add(now + self.linger_ms, batch)
        return batch

    def _close_batch(self, batch: ProducerBatch) -> None:
        if self._open.get(batch.tp) is batch:
            del self._open[batch.tp]
            self._unlist(batch)
        if not batch.ready and batch.records:
            # Counted now, as Kafka's MemoryRecordsBuilder.close() writes the batch length,
            # while the records just appended are still in the CPU's cache: at send time
            # a flush of many batches reads each record back from main memory.
            batch.size_bytes = exact_size(batch)
            # Closed, the records become a tuple: a tuple of untracked tuples is untracked
            # too, so the garbage collector no longer visits every record of the batches
            # waiting to be sent (a list of them it traversed in each older-generation pass).
            batch.records = tuple(batch.records)
        batch.ready = True
        self._arm_sender()

    def _unlist(self, batch: ProducerBatch) -> None:
        fast = self._fast_topics.get(batch.tp[0])
        if fast is not None and batch.tp[1] < len(fast[1]) and fast[1][batch.tp[1]] is batch:
            fast[1][batch.tp[1]] = None

    def _linger_expired(self, batch: ProducerBatch) -> None:
        if not batch.ready:
            self._close_batch(batch)

    def _ready_now(self, batch: ProducerBatch) -> None:
        if not batch.ready:
            self._close_batch(batch)

    def _wait_for_memory(self) -> None:
        """buffer.memory is full: send() blocks up to max_block_ms while the sender drains."""
        # Send the open batches only when nothing else is in the pipeline to free memory;
        # otherwise each wait would ship the open batches after a record or two.
        if self.pending == len(self._open):
            for b in list(self._open.values()):
                self._close_batch(b)
        ok = self.cluster.run_until(
            lambda: self._buffered + self.batch_size <= self.buffer_memory,
            int(self.config["max_block_ms"]))
        if not ok:
            raise KafkaTimeoutError(
                f"Failed to allocate memory within the configured max blocking time "
                f"{self.config['max_block_ms']} ms.")

    # -- sender ------------------------------------------------------------------------
    def _arm_sender(self) -> None:
        if not self._sender_armed:
            self._sender_armed = True
            self.cluster.clock.call_later(0, self._run_sender)

    def _run_sender(self) -> None:
        self._sender_armed = False
        now = self.cluster.clock.now_ms
        if self.idempotent and self.producer_id < 0:
            try:
                self._init_producer_id()
            except kerrors.ClusterAuthorizationFailedError as exc:
                # Refused an idempotent producer id: fatal, as in kafka-python (no
                # IDEMPOTENT_WRITE on the cluster nor WRITE on any topic).
                self._fail_unsent(exc)
                return
            except kerrors.KafkaError:
                # InitProducerId needs the controller; retry after retry_backoff_ms.
                self.cluster.clock.call_later(int(self.config["retry_backoff_ms"]),
                                              self._arm_sender)
                return
        retry_wait = None
        # Each round builds at most one request per broker holding at most one batch per
        # partition (as a ProduceRequest does), until brokers hit max.in.flight.
        cursor = {tp: 0 for tp, q in self._queues.items() if q}
        # Leaders with a batch ready to send, and those sent a request (availability stats).
        track = self.availability_timeout_ms > 0
        ready_nodes: set[int] = set()
        drained: set[int] = set()
        while cursor:
            by_broker: dict[int, dict[tuple[str, int], ProducerBatch]] = {}
            sizes: dict[int, int] = {}
            for tp in list(cursor):
                queue = self._queues[tp]
                i = cursor[tp]
                if i >= len(queue) or not queue[i].ready:
                    del cursor[tp]
                    continue
                pb = queue[i]
                # A retry waits out its backoff unless the partition has a new leader
                # since its last attempt: then it goes at once (Kafka 3.7+).
                if pb.retry_at > now and self._leader(tp) == pb.leader:
                    retry_wait = pb.retry_at if retry_wait is None else min(retry_wait, pb.retry_at)
                    del cursor[tp]
                    continue
                if self._expired(pb, now):
                    continue  # removed from the queue; the cursor now points at the next one
                leader = self._leader(tp)
                if leader < 0:
                    self._refresh_metadata()
                    pb.retry_at = now + int(self.config["retry_backoff_ms"])
                    retry_wait = pb.retry_at if retry_wait is None else min(retry_wait, pb.retry_at)
                    del cursor[tp]
                    continue
                if track:
                    ready_nodes.add(leader)
                until = self._throttled_until.get(leader, 0)
                if until > now:
                    retry_wait = until if retry_wait is None else min(retry_wait, until)
                    del cursor[tp]
                    continue
                if self._in_flight.get(leader, 0) >= self.max_in_flight or (
                        sizes.get(leader, 0) + pb.size > self.config["max_request_size"]
                        and leader in by_broker):
                    del cursor[tp]
                    continue
                sizes[leader] = sizes.get(leader, 0) + pb.size
                by_broker.setdefault(leader, {})[tp] = pb
                cursor[tp] = i + 1
            if not by_broker:
                break
            for leader, group in by_broker.items():
                for tp in group:
                    cursor[tp] = cursor.get(tp, 1) - 1
                if self._send_request(leader, group, now):
                    drained.add(leader)
        if track:
            for leader in ready_nodes:
                self._node_ready_ms[leader] = now
                self._node_drain_ms.setdefault(leader, now)
            for leader in drained:
                self._node_drain_ms[leader] = now
        if retry_wait is not None:
            self.cluster.clock.call_at(retry_wait, self._arm_sender)

    def _expired(self, batch: ProducerBatch, now: int) -> bool:
        if now - batch.created_ms >= int(self.config["delivery_timeout_ms"]):
            self._fail(batch, KafkaTimeoutError(
                f"Expiring {len(batch.records)} record(s) for {batch.tp[0]}-{batch.tp[1]}: "
                f"{now - batch.created_ms} ms has passed since batch creation "
                "(delivery_timeout_ms)"))
            return True
        return False

    def _build(self, pb: ProducerBatch) -> RecordBatch:
        if pb.batch is None:
            records = pb.records = tuple(pb.records)  # a tuple already once closed
            seq = -1
            if self.idempotent:
                seq = self._sequences.get(pb.tp, 0)
                self._sequences[pb.tp] = (seq + len(records)) & 0x7FFFFFFF
            first_ts = records[0][1]
            # Appends stamp the (monotonic) clock, so the last record is the latest unless
            # a caller passed timestamp_ms (tracked in max_ts).
            max_ts = max(pb.max_ts, records[-1][1])
            rb = RecordBatch(records, producer_id=self.producer_id,
                             producer_epoch=self.producer_epoch, base_sequence=seq,
                             is_transactional=bool(self.transactional_id),
                             first_timestamp=first_ts, max_timestamp=max_ts,
                             compression=self.compression, size_bytes=pb.size_bytes)
            if self.compression:  # uncompressed, the batch counts its bytes exactly
                rb.size_bytes = compressed_size(rb)
            pb.batch = rb
        return pb.batch

    def _send_request(self, leader: int, group: dict, now: int) -> bool:
        """Send one ProduceRequest; False if the leader is unreachable (it will time out)."""
        cluster = self.cluster
        broker = cluster.brokers[leader]
        request = {}
        for tp, pb in group.items():
            self._queues[tp].remove(pb)
            sent = self._pending_sent.setdefault(tp, [])
            if pb not in sent:
                sent.append(pb)
            pb.attempts += 1
            pb.leader = leader
            if pb.first_send_ms < 0:
                pb.first_send_ms = now
            built = self._build(pb)
            if pb.attempts == 1:
                request[tp] = built
                continue
            # A retry carries the same producer id and sequence in a fresh copy: the first
            # attempt may have been appended (its answer lost), and the log owns that object.
            request[tp] = RecordBatch(
                built.records, producer_id=built.producer_id, producer_epoch=built.producer_epoch,
                base_sequence=built.base_sequence, is_transactional=built.is_transactional,
                first_timestamp=built.first_timestamp, max_timestamp=built.max_timestamp,
                compression=built.compression, size_bytes=built.size_bytes)
        self._in_flight[leader] = self._in_flight.get(leader, 0) + 1
        # The broker measures the request against this client's produce quota.
        throttle_ms = api_produce.produce_throttle_ms(
            cluster, broker, self.principal, self.client_id,
            sum(b.size_bytes for b in request.values()), now)
        if throttle_ms:
            self._throttled_until[leader] = now + throttle_ms
        state = _InFlight(self, leader, group)  # the broker answers through it
        timeout = int(self.config["request_timeout_ms"])
        if self.acks == 0:
            sent = cluster.network.send(self.client_id, leader, api_produce.produce, cluster, broker,
                                        self.caller, self.transactional_id, 0, timeout,
                                        request, state, self._produce_version)
            self._on_response(leader, group, dict.fromkeys(group, (errors.NONE, -1)), state)
            return sent
        sent = cluster.network.send(self.client_id, leader, api_produce.produce, cluster, broker,
                                    self.caller, self.transactional_id, self.acks, timeout,
                                    request, state, self._produce_version)
        if not sent:
            cluster.clock.call_later(min(timeout, 1000), self._on_response, leader, group,
                                     dict.fromkeys(group, (errors.NETWORK_EXCEPTION, -1)), state)
        else:
            self._request_timeouts.add(cluster.clock.now_ms + timeout + 1, state)
        return sent

    def _request_timed_out(self, state: _InFlight) -> None:
        if not state.done:
            self._on_response(state.leader, state.group,
                              dict.fromkeys(state.group, (errors.REQUEST_TIMED_OUT, -1)), state)

    def _on_response(self, leader: int, group: dict, results: dict, state: _InFlight) -> None:
        if state.done:
            return
        state.done = True
        self._in_flight[leader] -= 1
        now = self.cluster.clock.now_ms
        journal = self.cluster.journal
        for tp, pb in group.items():
            code, base = results.get(tp, (errors.REQUEST_TIMED_OUT, -1))
            if code == errors.NONE:
                if self.acks != 0:
                    api.record_acked(journal, now, client=self.client_id, topic=tp[0],
                                     partition=tp[1], base_offset=base, records=pb.records,
                                     acks=self.acks, broker=leader,
                                     producer_id=self.producer_id,
                                     sequence=pb.batch.base_sequence)
                self._complete(pb, base)
                continue
            retriable = code in errors.RETRIABLE or (
                code == errors.OUT_OF_ORDER_SEQUENCE_NUMBER and self._earlier_unacked(pb))
            journal.record(now, "produce.error", client=self.client_id, topic=tp[0],
                           partition=tp[1], error=kerrors.for_code(code).__class__.__name__,
                           attempt=pb.attempts, broker=leader)
            if code in (errors.NOT_LEADER_OR_FOLLOWER, errors.UNKNOWN_TOPIC_OR_PARTITION,
                        errors.NETWORK_EXCEPTION, errors.REQUEST_TIMED_OUT,
                        errors.LEADER_NOT_AVAILABLE, errors.FENCED_LEADER_EPOCH):
                self._refresh_metadata()
            if retriable and pb.attempts <= int(self.config["retries"]) and \
                    now - pb.created_ms < int(self.config["delivery_timeout_ms"]):
                pb.retry_at = now + self._retry_backoff_ms(pb.attempts)
                self._requeue(pb)
            else:
                self._fail(pb, kerrors.for_code(code))
        self._arm_sender()

    def _fail_unsent(self, exc: BaseException) -> None:
        """Fail every batch not sent yet (open or queued) with `exc`."""
        for _tp, batch in list(self._open.items()):
            if batch.attempts == 0:
                self._fail(batch, exc)
        for queue in self._queues.values():
            for batch in list(queue):
                if batch.attempts == 0:
                    self._fail(batch, exc)

    def _retry_backoff_ms(self, attempts: int) -> int:
        """How long a batch waits before attempt attempts + 1 (KIP-580, Kafka 3.7):
        retry.backoff.ms doubled after every failed attempt, up to retry.backoff.max.ms,
        times a random factor of 0.8-1.2 so that clients do not retry in step. With
        retry.backoff.ms at or above the maximum, a flat retry.backoff.ms."""
        base = int(self.config["retry_backoff_ms"])
        cap = int(self.config["retry_backoff_max_ms"])
        if cap <= base:
            return base
        exponent = min(attempts - 1, math.log2(cap / max(base, 1)))
        return min(cap, int(base * 2 ** exponent * self._jitter.uniform(0.8, 1.2)))

    def _requeue(self, pb: ProducerBatch) -> None:
        """Back to the front of its partition's queue. An idempotent producer keeps
        sequence order, so the broker sees the batches in order again; without
        idempotence a retried batch can land after a later one (reordering)."""
        queue = self._queues[pb.tp]
        if self.idempotent:
            i = 0
            while i < len(queue) and queue[i].batch is not None and \
                    queue[i].batch.base_sequence < pb.batch.base_sequence:
                i += 1
            queue.insert(i, pb)
        else:
            queue.appendleft(pb)

    def _earlier_unacked(self, pb: ProducerBatch) -> bool:
        """An out-of-order sequence is retriable while an earlier batch is still pending."""
        seq = pb.batch.base_sequence
        return any(other.batch is not None and other.batch.base_sequence < seq
                   and not other.future.is_done
                   for other in self._pending_sent.get(pb.tp, ()))

    def _forget(self, pb: ProducerBatch) -> None:
        sent = self._pending_sent.get(pb.tp)
        if sent and pb in sent:
            sent.remove(pb)

    def _complete(self, pb: ProducerBatch, base: int) -> None:
        self._forget(pb)
        self._buffered -= self.batch_size
        self.pending -= 1
        pb.future.success(base)

    def _fail(self, pb: ProducerBatch, exc: BaseException) -> None:
        queue = self._queues.get(pb.tp)
        if queue and pb in queue:
            queue.remove(pb)
        if self._open.get(pb.tp) is pb:
            del self._open[pb.tp]
            self._unlist(pb)
        self._forget(pb)
        self._buffered -= self.batch_size
        self.pending -= 1
        if self.transactional_id:
            self._txn_error = exc
        pb.future.failure(exc)

    # -- flush / close --------------------------------------------------------------------
    def flush(self, timeout: float | None = None) -> None:
        """Send everything buffered now and wait until every batch is acknowledged or failed."""
        for batch in list(self._open.values()):
            self._close_batch(batch)
        limit = int(timeout * 1000) if timeout is not None else \
            int(self.config["delivery_timeout_ms"]) + 60_000
        if not self.cluster.run_until(lambda: self.pending == 0, limit):
            raise KafkaTimeoutError(f"Timeout after waiting for {limit} ms.")

    def close(self, timeout: float | None = None) -> None:
        if not self._closed:
            self.flush(timeout)
            self._closed = True
            self._fast = False
            self._fast_topics.clear()

    def __enter__(self) -> KafkaProducer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- idempotence and transactions ------------------------------------------------------
    def _init_producer_id(self) -> None:
        cluster = self.cluster
        if self.transactional_id:
            return  # init_transactions() did it
        raise_refused(authz.init_producer_id(cluster, self.caller, None))
        result = api.init_producer_id(cluster, api.InitProducerIdRequest(self.client_id))
        if result.error_code:
            raise kerrors.for_code(result.error_code, result.error_message)
        self.producer_id, self.producer_epoch = result.producer_id, result.producer_epoch

    def _coordinator(self):
        return self.cluster.transaction_coordinator

    def _call(self, fn, *args):
        try:
            return fn(*args)
        except errors.KafkaCoreError as exc:
            raise kerrors.translate(exc) from None

    def _move(self, target: TxnState) -> None:
        """Change the transaction state through the table (core.transactions)."""
        try:
            self._txn_state = producer_transition(self._txn_state, target)
        except errors.KafkaCoreError as exc:
            raise IllegalStateError(exc.message) from None

    @property
    def _produce_version(self) -> int:
        return api_produce.FIRST_ADD_PARTITION_VERSION if self._txn_v2 \
            else api_produce.IN_PROCESS_VERSION

    def _read_txn_version(self) -> None:
        self._txn_v2 = self.cluster.features.get("transaction.version", 0) >= TV_2

    def _end_txn(self, commit: bool) -> None:
        """EndTxn at the coordinator. A fenced producer can do nothing more (FATAL_ERROR);
        other errors leave the commit or abort to be retried. Under transaction version 2
        a transaction that touched nothing sends none, and one that did goes on with the
        producer id and bumped epoch EndTxn returns, its sequences from 0."""
        raise_refused(authz.transaction(self.cluster, self.caller, self.transactional_id),
                      self.transactional_id)
        if self._txn_v2 and not (self._txn_partitions or self._txn_groups):
            self._move(TxnState.READY)
            return
        try:
            pid, epoch = self._call(self._coordinator().end_txn, self.transactional_id,
                                    self.producer_id, self.producer_epoch, commit,
                                    TV_2 if self._txn_v2 else TV_1)
        except (ProducerFencedError, InvalidProducerEpochError):
            self._move(TxnState.FATAL_ERROR)
            raise
        if self._txn_v2:
            self.producer_id, self.producer_epoch = pid, epoch
            self._sequences.clear()
        self._move(TxnState.READY)

    def init_transactions(self) -> None:
        if not self.transactional_id:
            raise IllegalStateError("init_transactions needs a transactional_id")
        raise_refused(authz.init_producer_id(self.cluster, self.caller, self.transactional_id),
                      self.transactional_id)
        self._move(TxnState.INITIALIZING)
        result = api.init_producer_id(self.cluster, api.InitProducerIdRequest(
            self.client_id, self.transactional_id, int(self.config["transaction_timeout_ms"])))
        if result.error_code:
            self._move(TxnState.ABORTABLE_ERROR)
            raise kerrors.for_code(result.error_code, result.error_message)
        self.producer_id, self.producer_epoch = result.producer_id, result.producer_epoch
        self._sequences.clear()
        self._read_txn_version()
        self._move(TxnState.READY)
        self.cluster.advance(2 * self.cluster.network.latency_ms)

    def begin_transaction(self) -> None:
        if self._txn_state is not TxnState.READY:
            raise IllegalStateError(f"begin_transaction in state {self._txn_state}")
        self._move(TxnState.IN_TRANSACTION)
        self._txn_partitions = set()
        self._txn_groups = set()
        self._txn_error = None
        self._read_txn_version()

    def _add_partitions_to_txn(self, tps: set) -> None:
        raise_refusals(authz.add_partitions_to_txn(self.cluster, self.caller,
                                                   self.transactional_id, {t for t, _ in tps}),
                       self.transactional_id)
        self._call(self._coordinator().add_partitions, self.transactional_id, self.producer_id,
                   self.producer_epoch, tps, self.cluster.now_ms)

    def send_offsets_to_transaction(self, offsets, consumer_group_metadata) -> None:
        """Commit a consumer's offsets as part of this transaction (exactly-once
        consume-transform-produce): they become visible only if the transaction commits."""
        if self._txn_state is not TxnState.IN_TRANSACTION:
            raise IllegalStateError("send_offsets_to_transaction outside a transaction")
        group_id = getattr(consumer_group_metadata, "group_id", consumer_group_metadata)
        coord = self._coordinator()
        if not self._txn_v2:  # AddOffsetsToTxn; under version 2 TxnOffsetCommit v5 adds it
            refused = authz.add_offsets_to_txn(self.cluster, self.caller,
                                               self.transactional_id, group_id)
            raise_refused(refused, group_id if refused == errors.GROUP_AUTHORIZATION_FAILED
                          else self.transactional_id)
            self._call(coord.add_offsets, self.transactional_id, self.producer_id,
                       self.producer_epoch, group_id, self.cluster.now_ms)
        # Then TxnOffsetCommit: READ on the topics, and the consumer's generation (KIP-447).
        raise_refusals(authz.txn_offset_commit(self.cluster, self.caller, self.transactional_id,
                                               group_id, {tp[0] for tp in offsets}))
        # The group coordinator verifies the transaction holds the group's partition (KIP-890).
        broker = self.cluster.brokers[self._call(self.cluster.groups.find_coordinator, group_id)]
        code = api_txn_offset_commit.unverified(
            self.cluster, broker, self.transactional_id, group_id, self.producer_id,
            self.producer_epoch, api_txn_offset_commit.FIRST_ADD_PARTITION_VERSION
            if self._txn_v2 else api_txn_offset_commit.IN_PROCESS_VERSION)
        if code != errors.NONE:
            raise kerrors.for_code(code, f"TxnOffsetCommit for group {group_id}")
        code = self.cluster.groups.validate_txn_offset_commit(
            group_id, getattr(consumer_group_metadata, "generation_id", -1),
            getattr(consumer_group_metadata, "member_id", ""),
            getattr(consumer_group_metadata, "group_instance_id", None))
        if code != errors.NONE:
            raise kerrors.for_code(code, f"TxnOffsetCommit for group {group_id}")
        coord.stage_offsets(self.producer_id, group_id, offsets)
        self._txn_groups.add(group_id)

    def commit_transaction(self) -> None:
        if self._txn_state not in (TxnState.IN_TRANSACTION, TxnState.COMMITTING_TRANSACTION):
            raise IllegalStateError(f"commit_transaction in state {self._txn_state}")
        if self._txn_state is TxnState.IN_TRANSACTION:
            self._move(TxnState.COMMITTING_TRANSACTION)
        self.flush()
        if self._txn_error is not None:
            self._move(TxnState.ABORTABLE_ERROR)
            raise self._txn_error
        self._end_txn(commit=True)

    def abort_transaction(self) -> None:
        if self._txn_state not in (TxnState.IN_TRANSACTION, TxnState.ABORTABLE_ERROR,
                                   TxnState.ABORTING_TRANSACTION):
            raise IllegalStateError(f"abort_transaction in state {self._txn_state}")
        if self._txn_state is not TxnState.ABORTING_TRANSACTION:
            self._move(TxnState.ABORTING_TRANSACTION)
        self._fail_unsent(TransactionAbortedError("transaction aborted"))
        self.cluster.run_until(lambda: self.pending == 0, int(self.config["request_timeout_ms"]))
        self._end_txn(commit=False)
