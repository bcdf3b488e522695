"""A view of a partition log like `kafka-dump-log.sh --files X.log --print-data-log`.

Every batch is shown as it is read back from RecordBatch v2 bytes by kafka-python's
reader: base and last offset, count, producer id and epoch, sequences, the
transactional and control flags, compression codec, the CRC-32C and whether it
checks, byte position and size; with print_data_log, every record's offset,
timestamp, key, payload and headers. Each segment also lists its .index and
.timeindex entries. The bytes are those the on-disk mode writes
(minikafka.core.storage.encode_batch), so an in-memory log and its files dump alike.

    from minikafka.dump import dump_log, dump_files
    print(dump_log(cluster, "trucks", 0).render())
    print(dump_files(path_to_segment_log).render())
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka.record.default_records import DefaultRecordBatch

from .codecs import CODECS
from .core.log import PartitionLog, Segment
from .core.records import COMPRESSION_NAMES
from .core.storage import (
    INDEX_ENTRY,
    TIME_INDEX_ENTRY,
    batch_length,
    encode_batch,
    segment_name,
)

if TYPE_CHECKING:
    from .cluster import Cluster

DELETE_HORIZON_BIT = 0x40
MARKERS = {0: "ABORT", 1: "COMMIT"}


@dataclass(frozen=True)
class RecordDump:
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple
    sequence: int
    marker: str | None = None  # ABORT or COMMIT for a transaction marker
    coordinator_epoch: int | None = None


@dataclass(frozen=True)
class BatchDump:
    base_offset: int
    last_offset: int
    count: int
    base_sequence: int
    last_sequence: int
    producer_id: int
    producer_epoch: int
    partition_leader_epoch: int
    is_transactional: bool
    is_control: bool
    delete_horizon_ms: int | None
    position: int
    timestamp_type: str  # CreateTime or LogAppendTime
    max_timestamp: int
    size: int
    magic: int
    compresscodec: str
    crc: int
    is_valid: bool
    records: tuple[RecordDump, ...] = ()


@dataclass(frozen=True)
class SegmentDump:
    file: str
    base_offset: int
    batches: tuple[BatchDump, ...]
    offset_index: tuple[tuple[int, int], ...]  # (offset, position)
    time_index: tuple[tuple[int, int], ...]  # (timestamp, offset)
    torn_bytes: int = 0  # bytes after the last whole, valid batch

    def render(self, print_data_log: bool = True, indexes: bool = True) -> str:
        """The .log file's dump, then (with indexes) those of its .index and .timeindex."""
        lines = [f"Dumping {self.file}"] + self.log_lines(print_data_log)
        if indexes:
            stem = self.file.rsplit(".", 1)[0]
            lines += [f"Dumping {stem}.index"] + index_lines(f"{stem}.index", self.offset_index,
                                                             OFFSET_INDEX_LINE)
            lines += [f"Dumping {stem}.timeindex"] + index_lines(
                f"{stem}.timeindex", self.time_index, TIME_INDEX_LINE)
        return "\n".join(lines)

    def log_lines(self, print_data_log: bool = True) -> list[str]:
        lines = [f"Log starting offset: {self.base_offset}"]
        lines += [line for b in self.batches for line in _render_batch(b, print_data_log)]
        if self.torn_bytes:
            lines.append(f"Found {self.torn_bytes} invalid bytes at the end of {self.file}")
        return lines


# kafka-dump-log.sh's line for an entry of each index kind.
OFFSET_INDEX_LINE = "offset: {} position: {}"
TIME_INDEX_LINE = "timestamp: {} offset: {}"


def index_lines(name: str, entries: tuple[tuple[int, int], ...], line: str) -> list[str]:
    """An index file (named `name`) as kafka-dump-log.sh prints it, entry by entry."""
    return [line.format(*entry) for entry in entries] or [f"{name} is empty."]


@dataclass(frozen=True)
class LogDump:
    topic: str
    partition: int
    broker: int
    log_start_offset: int
    log_end_offset: int
    segments: tuple[SegmentDump, ...] = field(default_factory=tuple)

    @property
    def batches(self) -> list[BatchDump]:
        return [b for s in self.segments for b in s.batches]

    @property
    def records(self) -> list[RecordDump]:
        return [r for b in self.batches for r in b.records]

    def render(self, print_data_log: bool = True) -> str:
        head = (f"# {self.topic}-{self.partition} on broker {self.broker}: "
                f"log start offset {self.log_start_offset}, log end offset {self.log_end_offset}")
        return "\n".join([head] + [s.render(print_data_log) for s in self.segments])

    def __str__(self) -> str:
        return self.render()


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _render_batch(b: BatchDump, print_data_log: bool) -> list[str]:
    horizon = f"OptionalLong[{b.delete_horizon_ms}]" if b.delete_horizon_ms is not None \
        else "OptionalLong.empty"
    lines = [
        f"baseOffset: {b.base_offset} lastOffset: {b.last_offset} count: {b.count} "
        f"baseSequence: {b.base_sequence} lastSequence: {b.last_sequence} "
        f"producerId: {b.producer_id} producerEpoch: {b.producer_epoch} "
        f"partitionLeaderEpoch: {b.partition_leader_epoch} "
        f"isTransactional: {str(b.is_transactional).lower()} "
        f"isControl: {str(b.is_control).lower()} deleteHorizonMs: {horizon} "
        f"position: {b.position} {b.timestamp_type}: {b.max_timestamp} size: {b.size} "
        f"magic: {b.magic} compresscodec: {b.compresscodec} crc: {b.crc} "
        f"isvalid: {str(b.is_valid).lower()}"]
    if not print_data_log:
        return lines
    for r in b.records:
        line = (f"| offset: {r.offset} {b.timestamp_type}: {r.timestamp} "
                f"keySize: {-1 if r.key is None else len(r.key)} "
                f"valueSize: {-1 if r.value is None else len(r.value)} "
                f"sequence: {r.sequence} headerKeys: [{','.join(k for k, _ in r.headers)}]")
        if r.marker is not None:
            line += f" endTxnMarker: {r.marker} coordinatorEpoch: {r.coordinator_epoch}"
        else:
            if r.key is not None:
                line += f" key: {_text(r.key)}"
            if r.value is not None:
                line += f" payload: {_text(r.value)}"
        lines.append(line)
    return lines


def read_batch(data: bytes, position: int = 0) -> BatchDump:
    """One batch of v2 bytes as kafka-python reads it (its CRC checked, not trusted)."""
    size = batch_length(data, position)
    raw = bytes(data[position:position + size])
    kb = DefaultRecordBatch(raw)
    is_valid = kb.validate_crc()
    attributes = kb.attributes
    horizon = kb.first_timestamp if attributes & DELETE_HORIZON_BIT else None
    base_seq = kb.base_sequence
    records = []
    for rec in (kb if is_valid else ()):
        seq = -1 if base_seq < 0 else (base_seq + rec.offset - kb.base_offset) & 0x7FFFFFFF
        headers = tuple(rec.headers)
        if kb.is_control_batch:
            key, value = rec.key, rec.value
            marker = MARKERS.get(struct.unpack(">hh", key)[1]) if key and len(key) >= 4 else None
            epoch = struct.unpack(">hi", value)[1] if value and len(value) >= 6 else None
            records.append(RecordDump(rec.offset, rec.timestamp, key, value, headers, seq,
                                      marker, epoch))
        else:
            records.append(RecordDump(rec.offset, rec.timestamp, rec.key, rec.value, headers,
                                      seq))
    return BatchDump(
        base_offset=kb.base_offset, last_offset=kb.last_offset, count=kb.records_count,
        base_sequence=base_seq,
        last_sequence=-1 if base_seq < 0 else (base_seq + kb.last_offset_delta) & 0x7FFFFFFF,
        producer_id=kb.producer_id, producer_epoch=kb.producer_epoch,
        partition_leader_epoch=kb.leader_epoch, is_transactional=kb.is_transactional,
        is_control=kb.is_control_batch, delete_horizon_ms=horizon, position=position,
        timestamp_type="LogAppendTime" if kb.timestamp_type == 1 else "CreateTime",
        max_timestamp=kb.max_timestamp, size=size, magic=kb.magic,
        compresscodec=COMPRESSION_NAMES.get(kb.compression_type, str(kb.compression_type)),
        crc=kb.crc, is_valid=is_valid, records=tuple(records))


def dump_segment(log: PartitionLog, segment: Segment) -> SegmentDump:
    """A segment of an in-memory log, through the bytes it would have on disk."""
    batches = []
    positions = {}
    position = 0
    for batch in segment.batches:
        data = encode_batch(batch, log.delete_horizons.get(batch.base_offset), CODECS)
        batches.append(replace(read_batch(data), position=position))
        positions[batch.last_offset] = position
        position += len(data)
    return SegmentDump(
        file=segment_name(segment.base_offset) + ".log", base_offset=segment.base_offset,
        batches=tuple(batches),
        # Index entries point at a batch's start in the file; the model counts estimated
        # sizes, the file real ones, so positions are taken from the bytes.
        offset_index=tuple((o, positions[o]) for o, _ in segment.offset_index),
        time_index=tuple(segment.time_index))


def dump_partition_log(log: PartitionLog, topic: str = "", partition: int = 0,
                       broker: int = -1) -> LogDump:
    return LogDump(topic, partition, broker, log.log_start_offset, log.log_end_offset,
                   tuple(dump_segment(log, s) for s in log.segments))


def dump_log(cluster: Cluster, topic: str, partition: int = 0, broker: int | None = None) -> LogDump:
    """The log of one partition replica: the leader's, or the given broker's."""
    if broker is None:
        replica = cluster.leader_replica(topic, partition)
        if replica is None:
            raise ValueError(f"{topic}-{partition} has no leader; name a broker")
    else:
        replica = cluster.brokers[broker].replicas.get((topic, partition))
        if replica is None:
            raise ValueError(f"broker {broker} hosts no replica of {topic}-{partition}")
    return dump_partition_log(replica.log, topic, partition, replica.broker_id)


def dump_files(log_file: str | os.PathLike) -> SegmentDump:
    """A segment on disk: its .log file and the .index and .timeindex beside it."""
    path = Path(log_file)
    data = path.read_bytes()
    batches = []
    position = 0
    while position < len(data):
        size = batch_length(data, position)
        if size < DefaultRecordBatch.HEADER_STRUCT.size or position + size > len(data):
            break
        batches.append(read_batch(data, position))
        position += size
    return SegmentDump(
        file=path.name, base_offset=int(path.stem), batches=tuple(batches),
        offset_index=read_offset_index(path.with_suffix(".index")),
        time_index=read_time_index(path.with_suffix(".timeindex")),
        torn_bytes=len(data) - position)


def _index_entries(path: str | os.PathLike, entry: struct.Struct) -> tuple[int, Any]:
    """(the segment's base offset, the whole entries of its index file at `path`; none
    if the file is missing)."""
    path = Path(path)
    data = path.read_bytes() if path.exists() else b""
    return int(path.stem), entry.iter_unpack(data[:len(data) // entry.size * entry.size])


def read_offset_index(path: str | os.PathLike) -> tuple[tuple[int, int], ...]:
    """(offset, position) entries of a segment's .index file."""
    base, entries = _index_entries(path, INDEX_ENTRY)
    return tuple((base + rel, pos) for rel, pos in entries)


def read_time_index(path: str | os.PathLike) -> tuple[tuple[int, int], ...]:
    """(timestamp, offset) entries of a segment's .timeindex file."""
    base, entries = _index_entries(path, TIME_INDEX_ENTRY)
    return tuple((ts, base + rel) for ts, rel in entries)
