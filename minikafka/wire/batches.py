"""Record batches as wire bytes (RecordBatch v2, magic 2) and back.

A batch a real client produced is kept as the bytes it sent: `parse_batch` reads
the 61-byte header (offsets, producer id/epoch/sequence, timestamps, count) and
checks the CRC, and nothing else. Its records are decoded only if an in-process
reader asks for them (a notebook consumer, the log cleaner).

Fetch serves those bytes back as they are, except baseOffset and
partitionLeaderEpoch, which the broker assigns: both sit before the CRC'd part
(the CRC covers attributes onward), so `write_batch` emits a fresh 16-byte prefix
and a view of the rest, without copying or re-encoding. A batch produced in-process
is encoded once, on its first fetch, and the bytes are kept on `batch.raw`.
"""
from __future__ import annotations

from struct import Struct

from ..codecs import CODECS
from ..core import errors
from ..core.hashing import crc32c
from ..core.records import LOG_APPEND_TIME, BaseBatch, RecordBatch
from ..core.storage import (
    CONTROL_BIT,
    CRC_START,
    HEADER,
    LENGTH_PREFIX,
    TIMESTAMP_TYPE_BIT,
    TRANSACTIONAL_BIT,
    decode_batch,
)
from ..core.storage import encode_batch as storage_encode

__all__ = [
    "HEADER",
    "InvalidBatch",
    "WireRecordBatch",
    "decode_records",
    "encode_batch",
    "parse_batch",
    "wire_bytes",
    "write_batch",
]

_PREFIX = Struct(">qii")  # the part before magic that the broker rewrites
_CRC_AT = 17
_TAIL = Struct(">hiqq")  # attributes, lastOffsetDelta, firstTimestamp, maxTimestamp
_CRC = Struct(">I")
# The smallest v2 record: length, attributes, timestamp delta, offset delta, key length,
# value length and header count, one byte each.
_MIN_RECORD_BYTES = 7

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_MASK = TIMESTAMP_TYPE_BIT
TRANSACTIONAL_MASK = TRANSACTIONAL_BIT
CONTROL_MASK = CONTROL_BIT


class InvalidBatch(Exception):
    """A produced batch Kafka would refuse, with the error code it answers."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


_LAST_OFFSET_DELTA = Struct(">i")  # at 23
_TIMESTAMPS = Struct(">qq")  # firstTimestamp, maxTimestamp at 27
_PRODUCER = Struct(">qhi")  # producerId, producerEpoch, baseSequence at 43
_COUNT = Struct(">i")  # at 57


class WireRecordBatch(BaseBatch):
    """A batch kept as the producer's bytes alone, as a Kafka segment keeps it: the header
    fields are read from them when asked, and `records` decodes them on first use. Only
    what the broker assigns (base offset, leader epoch) and its append time are fields."""

    __slots__ = ("raw", "base_offset", "partition_leader_epoch", "append_time_ms", "_records")

    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        self.base_offset = 0
        self.partition_leader_epoch = -1
        self.append_time_ms = 0

    @property
    def records(self) -> list[tuple]:
        try:
            return _records_slot.__get__(self)
        except AttributeError:
            records = decode_records(self.raw)
            _records_slot.__set__(self, records)
            return records

    @records.setter
    def records(self, value: list[tuple]) -> None:
        _records_slot.__set__(self, value)

    @property
    def size_bytes(self) -> int:
        return len(self.raw)

    @property
    def record_count(self) -> int:
        return _COUNT.unpack_from(self.raw, 57)[0]

    @property
    def last_offset_delta(self) -> int:
        return _LAST_OFFSET_DELTA.unpack_from(self.raw, 23)[0]

    @property
    def _attributes(self) -> int:
        return self.raw[22]  # the low byte of the int16 holds every flag

    @property
    def is_transactional(self) -> bool:
        return bool(self._attributes & TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self._attributes & CONTROL_MASK)

    @property
    def compression(self) -> int:
        return self._attributes & COMPRESSION_MASK

    @property
    def timestamp_type(self) -> int:
        return LOG_APPEND_TIME if self._attributes & TIMESTAMP_TYPE_MASK else 0

    @property
    def first_timestamp(self) -> int:
        return _TIMESTAMPS.unpack_from(self.raw, 27)[0]

    @property
    def max_timestamp(self) -> int:
        return _TIMESTAMPS.unpack_from(self.raw, 27)[1]

    @property
    def producer_id(self) -> int:
        return _PRODUCER.unpack_from(self.raw, 43)[0]

    @property
    def producer_epoch(self) -> int:
        return _PRODUCER.unpack_from(self.raw, 43)[1]

    @property
    def base_sequence(self) -> int:
        return _PRODUCER.unpack_from(self.raw, 43)[2]

    def stamp_log_append_time(self, now_ms: int) -> None:
        """The leader's time goes into the bytes, once (attributes and maxTimestamp are
        CRC'd, so the CRC is recomputed)."""
        _restamp(self, LOG_APPEND_TIME, now_ms)

    def __repr__(self) -> str:
        return (f"WireRecordBatch(base_offset={self.base_offset}, last_offset={self.last_offset}, "
                f"count={self.record_count}, epoch={self.partition_leader_epoch}, "
                f"producer_id={self.producer_id}, base_sequence={self.base_sequence}, "
                f"transactional={self.is_transactional}, compression={self.compression})")


_records_slot = WireRecordBatch._records  # the decode cache, unset until a reader asks


def _restamp(batch: WireRecordBatch, timestamp_type: int, max_timestamp: int) -> None:
    """Write a new timestamp type and max timestamp into the bytes (both are CRC'd, so
    the CRC is recomputed): the broker's LogAppendTime."""
    buf = bytearray(batch.raw)
    attributes = HEADER.unpack_from(buf)[5] & ~TIMESTAMP_TYPE_MASK
    if timestamp_type == LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_MASK
    _, lod, first_ts, _ = _TAIL.unpack_from(buf, CRC_START)
    _TAIL.pack_into(buf, CRC_START, attributes, lod, first_ts, max_timestamp)
    _CRC.pack_into(buf, _CRC_AT, crc32c(memoryview(buf)[CRC_START:]))
    batch.raw = bytes(buf)


def parse_batch(data: bytes) -> WireRecordBatch:
    """The one v2 batch of a Produce partition, checked as Kafka's LogValidator does
    for the header; raises InvalidBatch with Kafka's error code otherwise."""
    size = len(data)
    if size < HEADER.size:
        raise InvalidBatch(errors.CORRUPT_MESSAGE,
                           f"record batch of {size} bytes is shorter than its header")
    header = HEADER.unpack_from(data)
    length, magic, crc, attributes = header[1], header[3], header[4], header[5]
    if magic != 2:
        raise InvalidBatch(errors.INVALID_RECORD,
                           f"Produce requests v3+ carry magic v2 batches, not v{magic}")
    if length + LENGTH_PREFIX != size:
        if length >= 0 and length + LENGTH_PREFIX < size:
            raise InvalidBatch(errors.INVALID_RECORD,
                               "a Produce partition must hold exactly one record batch")
        raise InvalidBatch(errors.CORRUPT_MESSAGE,
                           f"batch length {length} does not match its {size} bytes")
    if crc32c(memoryview(data)[CRC_START:]) != crc:
        raise InvalidBatch(errors.CORRUPT_MESSAGE, "record batch CRC mismatch")
    count, last_offset_delta = header[12], header[6]
    if count <= 0 or last_offset_delta != count - 1:
        raise InvalidBatch(errors.INVALID_RECORD,
                           f"{count} records but lastOffsetDelta {last_offset_delta}")
    if not attributes & COMPRESSION_MASK and count * _MIN_RECORD_BYTES > size - HEADER.size:
        # Kafka reads every record of an uncompressed batch and refuses one that holds
        # fewer than it declares; a size check bounds the claim without decoding (else
        # one small batch could move the log end offset by 2**31).
        raise InvalidBatch(errors.INVALID_RECORD,
                           f"{count} records cannot fit in {size - HEADER.size} bytes")
    if attributes & CONTROL_MASK:
        raise InvalidBatch(errors.INVALID_RECORD, "clients may not write control batches")
    if attributes & COMPRESSION_MASK > 4:
        raise InvalidBatch(errors.CORRUPT_MESSAGE,
                           f"unknown compression codec {attributes & COMPRESSION_MASK}")
    if not isinstance(data, bytes):
        data = bytes(data)
    return WireRecordBatch(data)


def decode_records(raw: bytes) -> list[tuple]:
    """(offset_delta, timestamp, key, value, headers) per record, decompressing if needed."""
    return decode_batch(raw, 0, CODECS)[0].records


def encode_batch(batch: RecordBatch) -> bytes:
    """v2 bytes for a batch made in-process, by the one codec (minikafka.core.storage);
    its base offset and leader epoch are patched on fetch (write_batch)."""
    return storage_encode(batch, codecs=CODECS)


def wire_bytes(batch: RecordBatch) -> bytes:
    """The batch's v2 bytes (encoded once and kept for batches made in-process)."""
    raw = batch.raw
    if raw is None:
        raw = batch.raw = encode_batch(batch)
    return raw


def write_batch(out: list, batch: RecordBatch) -> int:
    """Append the batch as served at its offset and epoch to `out`; returns its size."""
    raw = batch.raw
    if raw is None:
        raw = batch.raw = encode_batch(batch)
    size = len(raw)
    out.append(_PREFIX.pack(batch.base_offset, size - LENGTH_PREFIX,
                            batch.partition_leader_epoch))
    out.append(memoryview(raw)[16:])
    return size
