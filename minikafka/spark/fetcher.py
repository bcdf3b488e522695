"""Read one offset range of one partition as Arrow record batches (runs in Spark tasks).

kafka-python's network client (KafkaNetClient) bootstraps, keeps the metadata (who leads
which partition) and negotiates API versions; fetches to a PLAINTEXT broker then go
over a `connection.BrokerConnection` that reads each response into one buffer, and the
record bytes go straight to `records.decode_batches`: no ConsumerRecord is ever built.
Python workers outlive tasks (spark.python.worker.reuse), so each worker keeps its
clients and connections per cluster, as Spark keeps a cached consumer per executor.

Data loss follows Spark's KafkaDataConsumer: offsets below the log start (retention,
DeleteRecords) or beyond the log end (truncation) raise DataLossError unless
failOnDataLoss=false, which logs a warning and skips them. Gaps above the log start
(compaction, transaction markers, aborted transactions) are normal and skipped quietly.
"""
from __future__ import annotations

from ..extras import require

require("labs", "pyarrow", what="minikafka.spark (the Python Spark source)")

import logging
import threading
import time
from collections.abc import Iterator

import kafka.errors as Errors
import pyarrow as pa
from kafka import KafkaConsumer
from kafka.net.compat import KafkaNetClient
from kafka.protocol.consumer import FetchRequest, FetchResponse
from kafka.structs import TopicPartition

from .connection import BrokerConnection
from .options import SourceOptions
from .planning import DATA_LOSS_HINT, DataLossError, OffsetRange
from .records import decode_batches

__all__ = ["RangeReader", "read_range"]

log = logging.getLogger(__name__)

FETCH_MAX_VERSION = 12  # v13+ names topics by id
# One task reads one partition, so a fetch may take a partition's whole share; kafka-python's
# 1 MiB default costs a round trip per MiB. kafka.max.partition.fetch.bytes overrides it.
DEFAULT_PARTITION_FETCH_BYTES = 16 * 1024 * 1024
MAX_WAIT_MS = 100
RETRY_BACKOFF_S = 0.1

_clients: dict[tuple, KafkaNetClient] = {}
_connections: dict[tuple, dict[int, BrokerConnection]] = {}
_clients_lock = threading.Lock()


def read_range(options: SourceOptions, r: OffsetRange, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """The records of offsets [r.from_offset, r.until_offset) of r's partition."""
    client = _client(options)
    key = (options.bootstrap_servers, options.consumer_config)
    direct = dict(options.consumer_config).get("security_protocol", "PLAINTEXT") == "PLAINTEXT"
    with _clients_lock:
        connections = _connections.setdefault(key, {}) if direct else None
    return RangeReader(options, client, connections).read(r, schema)


def _client(options: SourceOptions) -> KafkaNetClient:
    key = (options.bootstrap_servers, options.consumer_config)
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            config = options.client_config()
            fetch_bytes = max(config.get("fetch_max_bytes", 50 * 1024 * 1024),
                              config.get("max_partition_fetch_bytes",
                                         DEFAULT_PARTITION_FETCH_BYTES))
            config["receive_message_max_bytes"] = fetch_bytes + 1024 * 1024
            config.pop("isolation_level", None)
            client = KafkaNetClient(**config)
            client.cluster.config["allow_auto_create_topics"] = False
            _clients[key] = client
        return client


class RangeReader:
    def __init__(self, options: SourceOptions, client: KafkaNetClient,
                 connections: dict[int, BrokerConnection] | None = None) -> None:
        self.options = options
        self.client = client
        self.connections = connections  # node id -> connection; None: use the client
        config = dict(options.consumer_config)
        self.partition_bytes = config.get("max_partition_fetch_bytes",
                                          DEFAULT_PARTITION_FETCH_BYTES)
        self.max_bytes = max(config.get("fetch_max_bytes", 50 * 1024 * 1024),
                             self.partition_bytes)
        self.timeout_ms = config.get("request_timeout_ms", 30_000)

    def read(self, r: OffsetRange, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
        tp = r.topic_partition
        offset, until = r.from_offset, r.until_offset
        deadline = time.monotonic() + self.options.poll_timeout_ms / 1000
        while offset < until:
            data = self._fetch(tp, offset, deadline)
            error = Errors.for_code(data.error_code)
            if error is Errors.OffsetOutOfRangeError:
                offset = self._out_of_range(tp, offset, until)
                continue
            if error is not Errors.NoError:
                raise error(f"fetching {tp.topic}-{tp.partition} at offset {offset}")
            aborted = None
            if self.options.read_committed:
                aborted = [(a.producer_id, a.first_offset)
                           for a in data.aborted_transactions or ()]
            decoded = decode_batches(data.records or b"", topic=tp.topic, partition=tp.partition,
                                     start=offset, until=until, schema=schema,
                                     include_headers=self.options.include_headers,
                                     aborted=aborted)
            if decoded.first_offset is not None and decoded.first_offset > offset \
                    and data.log_start_offset > offset:
                self._data_loss(f"Cannot fetch records in [{offset}, "
                                f"{min(data.log_start_offset, decoded.first_offset)}) of "
                                f"{tp.topic}-{tp.partition}.")
            if decoded.batch is not None:
                yield decoded.batch
            if decoded.next_offset > offset:
                offset = decoded.next_offset
                deadline = time.monotonic() + self.options.poll_timeout_ms / 1000
                continue
            # Nothing at `offset` yet, though it was below the end offset when the batch was
            # planned: a new leader whose high watermark has not caught up. Wait for it.
            if time.monotonic() > deadline:
                raise TimeoutError(f"Cannot fetch record for offset {offset} of "
                                   f"{tp.topic}-{tp.partition} in "
                                   f"{self.options.poll_timeout_ms} milliseconds")
            time.sleep(RETRY_BACKOFF_S)

    # -- one fetch, with leader lookup and retries --------------------------------------
    def _fetch(self, tp: TopicPartition, offset: int, deadline: float):
        last_error: Exception | None = None
        while True:
            leader = self.client.cluster.leader_for_partition(tp)
            if leader is None or leader == -1:
                self._refresh(tp)
                leader = self.client.cluster.leader_for_partition(tp)
            if leader is not None and leader != -1:
                try:
                    response = self._send(leader, self._request(tp, offset))
                    data = response.responses[0].partitions[0]
                    error = Errors.for_code(data.error_code)
                    if not (issubclass(error, Errors.InvalidMetadataError)
                            or error is Errors.NotLeaderForPartitionError):
                        return data
                    last_error = error()
                except (Errors.KafkaConnectionError, Errors.KafkaTimeoutError,
                        Errors.NodeNotReadyError, Errors.RequestTimedOutError, OSError) as exc:
                    last_error = exc
            if time.monotonic() > deadline:
                raise Errors.KafkaTimeoutError(
                    f"no leader answered a fetch of {tp.topic}-{tp.partition} at offset "
                    f"{offset} within {self.options.poll_timeout_ms} ms: {last_error!r}")
            time.sleep(RETRY_BACKOFF_S)
            self._refresh(tp)

    def _send(self, leader: int, request: FetchRequest):
        if self.connections is None:
            return self.client.send_and_receive(leader, request, timeout_ms=self.timeout_ms)
        connection = self.connections.get(leader)
        broker = self.client.cluster.broker_metadata(leader)
        if broker is None:
            raise Errors.NodeNotReadyError(f"no address for broker {leader} in the metadata")
        if connection is None or connection.address != (broker.host, broker.port):
            if connection is not None:
                connection.close()
            connection = BrokerConnection(broker.host, broker.port, client_id="minikafka-spark",
                                          timeout_s=self.timeout_ms / 1000)
            self.connections[leader] = connection
        if self.client.check_version() is None:
            raise Errors.NodeNotReadyError("no broker answered ApiVersions")
        version = self.client.api_version(FetchRequest, max_version=FETCH_MAX_VERSION)
        return connection.request(request, version, FetchResponse)

    def _request(self, tp: TopicPartition, offset: int) -> FetchRequest:
        partition = FetchRequest.FetchTopic.FetchPartition(
            partition=tp.partition, current_leader_epoch=-1, fetch_offset=offset,
            last_fetched_epoch=-1, log_start_offset=-1, partition_max_bytes=self.partition_bytes)
        return FetchRequest(
            replica_id=-1, max_wait_ms=MAX_WAIT_MS, min_bytes=1, max_bytes=self.max_bytes,
            isolation_level=1 if self.options.read_committed else 0,
            session_id=0, session_epoch=-1,  # no fetch session: every fetch is a full one
            topics=[FetchRequest.FetchTopic(topic=tp.topic, partitions=[partition])],
            forgotten_topics_data=[], rack_id="", max_version=FETCH_MAX_VERSION)

    def _refresh(self, tp: TopicPartition) -> None:
        cluster = self.client.cluster
        future = cluster.add_topic(tp.topic) if tp.topic not in cluster.topics() \
            else cluster.request_update()
        self.client.poll(timeout_ms=self.timeout_ms, future=future)

    # -- data loss ------------------------------------------------------------------------
    def _out_of_range(self, tp: TopicPartition, offset: int, until: int) -> int:
        """Where to carry on after OFFSET_OUT_OF_RANGE (or raise, with failOnDataLoss)."""
        consumer = KafkaConsumer(**self.options.client_config(), enable_auto_commit=False,
                                 group_id=None)
        try:
            earliest = consumer.beginning_offsets([tp])[tp]
            latest = consumer.end_offsets([tp])[tp]
        finally:
            consumer.close()
        if offset < earliest:
            self._data_loss(f"Cannot fetch offset {offset} of {tp.topic}-{tp.partition}: the "
                            f"earliest offset is now {earliest}.")
            return min(earliest, until)
        self._data_loss(f"Cannot fetch offset {offset} of {tp.topic}-{tp.partition}: the log "
                        f"ends at {latest}.")
        return until

    def _data_loss(self, message: str) -> None:
        if self.options.fail_on_data_loss:
            raise DataLossError(f"{message} {DATA_LOSS_HINT}")
        log.warning("%s Some data may have been lost because they are not available in Kafka "
                    "any more; failOnDataLoss=false, so the query goes on.", message)
