"""Record batches as a partition log holds them (Kafka's RecordBatch v2, magic 2).

A batch is immutable once a leader has appended it, so followers share the same
object instead of copying it, as they would copy the same bytes in Kafka.
Records inside a batch are tuples (offset_delta, timestamp, key, value, headers):
cheap to build on the producer's hot path, and offset deltas survive compaction.
"""

from __future__ import annotations

from typing import NamedTuple

# Compression codec ids of the batch attributes field.
COMPRESSION_IDS = {"none": 0, None: 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
COMPRESSION_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}

CREATE_TIME = 0
LOG_APPEND_TIME = 1

# RecordBatch v2 header: baseOffset..recordsCount.
BATCH_OVERHEAD = 61

# Control record types (the key of a transaction marker).
ABORT_MARKER = 0
COMMIT_MARKER = 1


class Record(NamedTuple):
    """One record as a reader sees it."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple


def _varint_size(n: int) -> int:
    """Bytes of n as a zigzag varint (Kafka's ByteUtils.sizeOfVarint / sizeOfVarlong)."""
    z = (n << 1) ^ (n >> 63)
    size = 1
    while z >= 0x80:
        z >>= 7
        size += 1
    return size


def _bytes_size(data: bytes | str | None) -> int:
    if data is None:
        return 1  # length -1
    n = len(data.encode() if isinstance(data, str) else data)
    return _varint_size(n) + n


def encoded_record_size(offset_delta: int, timestamp_delta: int, key: bytes | None,
                        value: bytes | None, headers=()) -> int:
    """Bytes one record takes in a v2 batch, its length prefix included, exactly as
    Kafka's DefaultRecord.sizeInBytes counts them.

    >>> encoded_record_size(0, 0, None, b"v0")
    9
    """
    body = 1 + _varint_size(timestamp_delta) + _varint_size(offset_delta)
    body += _bytes_size(key) + _bytes_size(value) + _varint_size(len(headers))
    for hkey, hvalue in headers:
        body += _bytes_size(hkey) + _bytes_size(hvalue)
    return _varint_size(body) + body


def records_size(records: list[tuple], first_timestamp: int) -> int:
    """Bytes the records take in a v2 batch: the sum of their encoded_record_size. The
    common record (bytes key and value, no headers, every varint of 1-2 bytes) is counted
    inline: this runs for every batch a producer closes, over every record in it."""
    total = 0
    for offset_delta, timestamp, key, value, headers in records:
        delta = timestamp - first_timestamp
        if not headers and type(key) is bytes and type(value) is bytes:
            n_key = len(key)
            n_value = len(value)
            if 0 <= delta < 8192 and 0 <= offset_delta < 8192 and n_key < 8192 \
                    and n_value < 8192:
                # A zigzag varint of n >= 0 takes 1 byte below 64, 2 below 8192.
                body = (2 + n_key + n_value  # attributes and header count: 1 byte each
                        + (1 if delta < 64 else 2) + (1 if offset_delta < 64 else 2)
                        + (1 if n_key < 64 else 2) + (1 if n_value < 64 else 2))
                total += body + (1 if body < 64 else 2 if body < 8192 else 3)
                continue
        total += encoded_record_size(offset_delta, delta, key, value, headers)
    return total


def record_size(key: bytes | None, value: bytes | None, headers=()) -> int:
    """Bytes one record takes in a v2 batch, near enough for batch.size and segment.bytes.

    Length, attributes, timestamp and offset deltas, key and value lengths and the
    header count are varints of 1-2 bytes for ordinary records.
    """
    size = 8
    if key is not None:
        size += len(key)
    if value is not None:
        size += len(value)
    for hkey, hvalue in headers:
        size += 2 + len(hkey) + (len(hvalue) if hvalue is not None else 0)
    return size


class BaseBatch:
    """What every stored batch answers, however it keeps its header: offsets, sequences,
    records with absolute offsets. RecordBatch keeps the header as fields (batches made
    in-process); minikafka.wire.batches keeps a client's batch as its bytes alone."""

    __slots__ = ()

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def last_sequence(self) -> int:
        if self.base_sequence < 0:
            return -1
        return (self.base_sequence + self.last_offset_delta) & 0x7FFFFFFF

    def stamp_log_append_time(self, now_ms: int) -> None:
        """message.timestamp.type=LogAppendTime: the leader's time is the batch's."""
        self.timestamp_type = LOG_APPEND_TIME
        self.max_timestamp = now_ms

    def iter_records(self):
        """Records with absolute offsets; a LogAppendTime batch stamps every record."""
        base = self.base_offset
        if self.timestamp_type == LOG_APPEND_TIME:
            ts = self.max_timestamp
            for delta, _, key, value, headers in self.records:
                yield Record(base + delta, ts, key, value, headers)
        else:
            for delta, ts, key, value, headers in self.records:
                yield Record(base + delta, ts, key, value, headers)

    def with_records(self, records: list[tuple]) -> RecordBatch:
        """A copy holding only some records (compaction keeps offsets and the batch header).
        Its max timestamp is that of the records kept, as Kafka's cleaner rebuilds it, so
        time retention of a compact,delete log counts from what is left."""
        max_timestamp = self.max_timestamp
        if records and self.timestamp_type != LOG_APPEND_TIME:
            max_timestamp = max(r[1] for r in records)
        copy = RecordBatch(
            records,
            base_offset=self.base_offset,
            producer_id=self.producer_id,
            producer_epoch=self.producer_epoch,
            base_sequence=self.base_sequence,
            is_transactional=self.is_transactional,
            is_control=self.is_control,
            first_timestamp=self.first_timestamp,
            max_timestamp=max_timestamp,
            timestamp_type=self.timestamp_type,
            compression=self.compression,
            last_offset_delta=self.last_offset_delta,
        )
        copy.partition_leader_epoch = self.partition_leader_epoch
        copy.append_time_ms = self.append_time_ms
        return copy


class RecordBatch(BaseBatch):
    """A producer batch: the unit of append, replication, fetch, retention and truncation."""

    __slots__ = (
        "base_offset", "last_offset_delta", "records", "producer_id", "producer_epoch",
        "base_sequence", "is_transactional", "is_control", "partition_leader_epoch",
        "first_timestamp", "max_timestamp", "timestamp_type", "compression", "size_bytes",
        "raw", "append_time_ms",
    )

    def __init__(
        self,
        records: list[tuple],
        *,
        base_offset: int = 0,
        producer_id: int = -1,
        producer_epoch: int = -1,
        base_sequence: int = -1,
        is_transactional: bool = False,
        is_control: bool = False,
        first_timestamp: int = 0,
        max_timestamp: int = 0,
        timestamp_type: int = CREATE_TIME,
        compression: int = 0,
        size_bytes: int = 0,
        last_offset_delta: int | None = None,
        raw: bytes | None = None,
    ) -> None:
        self.records = records
        self.base_offset = base_offset
        self.last_offset_delta = (
            len(records) - 1 if last_offset_delta is None else last_offset_delta
        )
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.base_sequence = base_sequence
        self.is_transactional = is_transactional
        self.is_control = is_control
        self.partition_leader_epoch = -1
        self.first_timestamp = first_timestamp
        self.max_timestamp = max_timestamp
        self.timestamp_type = timestamp_type
        self.compression = compression
        self.size_bytes = size_bytes or BATCH_OVERHEAD + records_size(records, first_timestamp)
        # Wire bytes when the batch came from (or was served to) a real client.
        self.raw = raw
        self.append_time_ms = 0

    @property
    def record_count(self) -> int:
        return len(self.records)

    def __repr__(self) -> str:
        return (
            f"RecordBatch(base_offset={self.base_offset}, last_offset={self.last_offset}, "
            f"count={len(self.records)}, epoch={self.partition_leader_epoch}, "
            f"producer_id={self.producer_id}, base_sequence={self.base_sequence}, "
            f"transactional={self.is_transactional}, control={self.is_control})"
        )


def control_batch(marker: int, producer_id: int, producer_epoch: int, now_ms: int) -> RecordBatch:
    """A transaction marker: one control record whose key says commit or abort."""
    key = bytes([0, 0, 0, marker])  # version 0, type
    value = bytes([0, 0, 0, 0, 0, 0])  # version 0, coordinator epoch 0
    return RecordBatch(
        [(0, now_ms, key, value, ())],
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        is_transactional=True,
        is_control=True,
        first_timestamp=now_ms,
        max_timestamp=now_ms,
    )


def control_marker_type(batch: RecordBatch) -> int:
    return batch.records[0][2][3]
