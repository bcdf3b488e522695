"""Kafka record batches (magic 2) as Arrow columns, without a Python object per record.

A fetch response carries whole batches as bytes. kafka-python turns every record into
a ConsumerRecord (about 20k records/s per core here); Spark wants Arrow columns. So:

1. batch headers are read with `struct` and their CRC-32C checked (the Java consumer's
   check.crcs); compressed batches are inflated with kafka-python's codecs;
2. one tight Python loop hops from record to record by the length prefix only;
3. every other field is decoded for all records at once with numpy (varints too);
4. keys and values become Arrow binary arrays cut straight out of the response bytes.

Control batches (transaction markers) and, under read_committed, aborted transactions
are skipped the way kafka-python's Fetcher skips them. Headers (includeHeaders) take
the slow road through kafka-python's DefaultRecordBatch.
"""
from __future__ import annotations

from ..extras import require

require("labs", "numpy", "pyarrow", what="minikafka.spark (the Python Spark source)")

import heapq
import struct
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from kafka.codec import gzip_decode, lz4_decode, snappy_decode, zstd_decode
from kafka.errors import CorruptRecordError
from kafka.record.default_records import DefaultRecordBatch

from ..core.hashing import crc32c

__all__ = ["Decoded", "decode_batches", "empty_batch"]

HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = HEADER.size  # 61
LOG_OVERHEAD = 12  # baseOffset + batchLength
CRC_FROM = 21  # the CRC covers attributes to the end of the batch

COMPRESSION = 0x07
LOG_APPEND_TIME = 0x08
TRANSACTIONAL = 0x10
CONTROL = 0x20
ABORT_MARKER = 0

_CODECS = {1: gzip_decode, 2: snappy_decode, 3: lz4_decode, 4: zstd_decode}


@dataclass
class Decoded:
    """What one fetch response held for [start, until)."""

    batch: pa.RecordBatch | None  # None when no record of the range was in it
    next_offset: int  # where the next fetch starts
    first_offset: int | None  # offset of the first record returned (gap detection)


@dataclass
class _Chunk:
    """Records of consecutive batches that share one buffer."""

    buf: bytes
    starts: list[int]
    base_offsets: list[int]
    base_timestamps: list[int]
    counts: list[int]
    append_times: list[int]  # max_timestamp for LogAppendTime batches, else -1


def decode_batches(buf: bytes, *, topic: str, partition: int, start: int, until: int,
                   schema: pa.Schema, include_headers: bool = False,
                   aborted: Iterable[tuple[int, int]] | None = None) -> Decoded:
    """Records of `buf` (a fetch response's record set) with offsets in [start, until).

    `aborted` is the response's aborted transactions as (producer_id, first_offset);
    pass it (possibly empty) for read_committed, None for read_uncommitted."""
    view = memoryview(buf)
    end = len(buf)
    pos = 0
    next_offset = start
    chunks: list[_Chunk] = []
    current: _Chunk | None = None
    slow_batches: list[DefaultRecordBatch] = []
    read_committed = aborted is not None
    pending = [(first, pid) for pid, first in aborted or ()]  # by first offset
    heapq.heapify(pending)
    aborted_pids: set[int] = set()  # producers whose open transaction was aborted

    while pos + HEADER_SIZE <= end:
        (base_offset, length, _epoch, magic, crc, attributes, last_delta, first_ts, max_ts,
         producer_id, _pe, _seq, count) = HEADER.unpack_from(buf, pos)
        batch_end = pos + LOG_OVERHEAD + length
        if batch_end > end:
            break  # a partial batch at the end of a fetch: read it next time
        if magic != 2:
            raise CorruptRecordError(f"{topic}-{partition}: record batch magic {magic} at offset "
                                     f"{base_offset}; only magic 2 (Kafka 0.11+) is read")
        if crc32c(view[pos + CRC_FROM:batch_end]) != crc:
            raise CorruptRecordError(f"{topic}-{partition}: CRC mismatch in the batch at "
                                     f"offset {base_offset}")
        last_offset = base_offset + last_delta
        skip = last_offset < start or base_offset >= until
        if read_committed:
            while pending and pending[0][0] <= last_offset:
                aborted_pids.add(heapq.heappop(pending)[1])
            if attributes & CONTROL:
                if producer_id in aborted_pids and _is_abort_marker(buf[pos:batch_end]):
                    aborted_pids.discard(producer_id)
            elif attributes & TRANSACTIONAL and producer_id in aborted_pids:
                skip = True
        if attributes & CONTROL or count == 0:
            skip = True
        if not skip:
            if include_headers:
                slow_batches.append(DefaultRecordBatch(bytes(view[pos:batch_end])))
            else:
                codec = attributes & COMPRESSION
                if codec:
                    if codec not in _CODECS:
                        raise CorruptRecordError(f"{topic}-{partition}: unknown compression "
                                                 f"codec {codec}")
                    data = _CODECS[codec](bytes(view[pos + HEADER_SIZE:batch_end]))
                    chunk = _Chunk(bytes(data), [], [], [], [], [])
                    chunks.append(chunk)
                    current = None
                    records_at = 0
                else:
                    if current is None:
                        current = _Chunk(buf, [], [], [], [], [])
                        chunks.append(current)
                    chunk = current
                    records_at = pos + HEADER_SIZE
                chunk.starts.extend(_record_starts(chunk.buf, records_at, count))
                chunk.base_offsets.append(base_offset)
                chunk.base_timestamps.append(first_ts)
                chunk.counts.append(count)
                chunk.append_times.append(max_ts if attributes & LOG_APPEND_TIME else -1)
                if codec:
                    current = None
        next_offset = max(next_offset, min(last_offset + 1, until))
        pos = batch_end

    if slow_batches:
        columns = _columns_slow(slow_batches, schema)
    else:
        columns = [_columns(chunk, schema) for chunk in chunks]
    return _assemble(columns, topic, partition, start, until, schema, next_offset)


def empty_batch(schema: pa.Schema) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array([], f.type) for f in schema], schema=schema)


# -- the record hop -------------------------------------------------------------------

def _record_starts(buf: bytes, pos: int, count: int) -> list[int]:
    """Where each record's body (after its length varint) begins; the only per-record
    Python loop. Lengths of 64-8191 bytes take two varint bytes, the common case."""
    starts = [0] * count
    for i in range(count):
        b = buf[pos]
        if b < 0x80:
            n = b
            pos += 1
        else:
            b1 = buf[pos + 1]
            if b1 < 0x80:
                n = (b & 0x7F) | (b1 << 7)
                pos += 2
            else:
                n = b & 0x7F
                shift = 7
                pos += 1
                while True:
                    b = buf[pos]
                    pos += 1
                    n |= (b & 0x7F) << shift
                    shift += 7
                    if b < 0x80:
                        break
        starts[i] = pos
        pos += (n >> 1) ^ -(n & 1)
    return starts


def _varints(data: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Zigzag varints starting at positions `at`, all at once: (values, positions after)."""
    byte = data[at].astype(np.uint64)
    value = byte & np.uint64(0x7F)
    more = np.nonzero(byte >= 0x80)[0]
    after = at + 1
    shift = np.uint64(7)
    while more.size:
        byte = data[after[more]].astype(np.uint64)
        value[more] |= (byte & np.uint64(0x7F)) << shift
        after[more] += 1
        more = more[byte >= 0x80]
        shift += np.uint64(7)
    signed = (value >> np.uint64(1)).astype(np.int64) ^ -(value & np.uint64(1)).astype(np.int64)
    return signed, after


def _binary(buf: bytes, begin: np.ndarray, length: np.ndarray) -> pa.Array:
    """Binary array of buf[begin:begin+length], or null where length is -1, copied in C."""
    n = len(begin)
    if n == 0:
        return pa.array([], pa.binary())
    null = length < 0
    length = np.where(null, 0, length)
    # Element 2i is the field, element 2i+1 the bytes up to the next field; take the even ones.
    bounds = np.empty(2 * n, dtype=np.int32)
    bounds[0::2] = begin
    bounds[1::2] = begin + length
    spread = pa.Array.from_buffers(pa.binary(), 2 * n - 1,
                                   [None, pa.py_buffer(bounds), pa.py_buffer(buf)])
    fields = spread.take(pa.array(np.arange(0, 2 * n, 2, dtype=np.int64)))
    if null.any():
        validity = pa.py_buffer(np.packbits(~null, bitorder="little"))
        fields = pa.Array.from_buffers(pa.binary(), n, [validity, *fields.buffers()[1:]],
                                       null_count=int(null.sum()))
    return fields


def _columns(chunk: _Chunk, schema: pa.Schema) -> tuple:
    data = np.frombuffer(chunk.buf, dtype=np.uint8)
    at = np.asarray(chunk.starts, dtype=np.int64) + 1  # skip the attributes byte
    ts_delta, at = _varints(data, at)
    offset_delta, at = _varints(data, at)
    key_length, at = _varints(data, at)
    key_at = at
    at = at + np.maximum(key_length, 0)
    value_length, at = _varints(data, at)
    counts = np.asarray(chunk.counts, dtype=np.int64)
    offsets = np.repeat(np.asarray(chunk.base_offsets, dtype=np.int64), counts) + offset_delta
    timestamps = np.repeat(np.asarray(chunk.base_timestamps, dtype=np.int64), counts) + ts_delta
    append_times = np.repeat(np.asarray(chunk.append_times, dtype=np.int64), counts)
    log_append = append_times >= 0
    if log_append.any():
        timestamps = np.where(log_append, append_times, timestamps)
    return (_binary(chunk.buf, key_at, key_length), _binary(chunk.buf, at, value_length),
            offsets, timestamps, log_append.astype(np.int32))


def _columns_slow(batches: list[DefaultRecordBatch], schema: pa.Schema) -> list[tuple]:
    keys, values, offsets, timestamps, types, headers = [], [], [], [], [], []
    for batch in batches:
        for record in batch:
            keys.append(record.key)
            values.append(record.value)
            offsets.append(record.offset)
            timestamps.append(record.timestamp)
            types.append(record.timestamp_type)
            headers.append([(k, v) for k, v in record.headers])
    header_type = schema.field("headers").type
    return [(pa.array(keys, pa.binary()), pa.array(values, pa.binary()),
             np.asarray(offsets, dtype=np.int64), np.asarray(timestamps, dtype=np.int64),
             np.asarray(types, dtype=np.int32),
             pa.array([[{"key": k, "value": v} for k, v in h] for h in headers], header_type))]


def _assemble(columns: list[tuple], topic: str, partition: int, start: int, until: int,
              schema: pa.Schema, next_offset: int) -> Decoded:
    if not columns:
        return Decoded(None, next_offset, None)
    if len(columns) == 1:
        keys, values, offsets, timestamps, types, *rest = columns[0]
    else:
        keys = pa.concat_arrays([c[0] for c in columns])
        values = pa.concat_arrays([c[1] for c in columns])
        offsets = np.concatenate([c[2] for c in columns])
        timestamps = np.concatenate([c[3] for c in columns])
        types = np.concatenate([c[4] for c in columns])
        rest = []
    # Batches may begin before `start` (a compressed batch is fetched whole) and end
    # after `until`; offsets only grow within a partition, so two binary searches cut them.
    lo = int(np.searchsorted(offsets, start, side="left"))
    hi = int(np.searchsorted(offsets, until, side="left"))
    if lo >= hi:
        return Decoded(None, next_offset, None)
    n = hi - lo
    arrays = [keys.slice(lo, n), values.slice(lo, n), _repeat_string(topic, n),
              pa.array(np.full(n, partition, dtype=np.int32)),
              pa.array(offsets[lo:hi]),
              pa.array(timestamps[lo:hi] * 1000, schema.field("timestamp").type),
              pa.array(types[lo:hi])]
    if rest:
        arrays.append(rest[0].slice(lo, n))
    batch = pa.RecordBatch.from_arrays(arrays, schema=schema)
    return Decoded(batch, max(next_offset, int(offsets[hi - 1]) + 1), int(offsets[lo]))


def _repeat_string(text: str, n: int) -> pa.Array:
    data = text.encode("utf-8")
    bounds = np.arange(0, (n + 1) * len(data), len(data), dtype=np.int32) if data \
        else np.zeros(n + 1, dtype=np.int32)
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(bounds[: n + 1]),
                                                  pa.py_buffer(data * n)])


def _is_abort_marker(batch: bytes) -> bool:
    for record in DefaultRecordBatch(batch):
        key = record.key
        return key is not None and len(key) >= 4 and struct.unpack_from(">hh", key)[1] == ABORT_MARKER
    return False
