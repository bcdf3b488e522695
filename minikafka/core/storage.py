"""On-disk logs: one broker's log directory in Kafka's layout.

    <log_dir>/broker-<id>/
        <topic>-<partition>/00000000000000000000.log        RecordBatch v2 bytes, real CRC-32C
                            00000000000000000000.index      (relative offset, position) int32s
                            00000000000000000000.timeindex  (timestamp int64, relative offset)
                            leader-epoch-checkpoint
                            partition.metadata      the topic id the directory belongs to
        log-start-offset-checkpoint, replication-offset-checkpoint, cleaner-offset-checkpoint

(A broker with several log.dirs has one such directory in each: minikafka.core.log_dirs.)

A PartitionFiles object hangs on a PartitionLog (log.store) and mirrors each change:
one write per appended batch, whole-file rewrites after truncation or cleaning, file
deletion after retention. Loading a partition reads the segments back and checks every
batch; the first torn one (too short, bad magic or CRC mismatch) and everything after
it is cut off, as Kafka's log recovery does after a crash; nothing before it is lost.

The batch codec is here rather than kafka-python's because core is pure standard
library; gzip comes from the standard library, and other codecs are passed in
(minikafka.codecs) as {codec id: (compress, decompress)}.
"""

from __future__ import annotations

import gzip
import os
import struct
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from .hashing import crc32c
from .log import PartitionLog, Segment
from .records import CREATE_TIME, LOG_APPEND_TIME, RecordBatch

Codecs = Mapping[int, tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]]

# baseOffset, batchLength, partitionLeaderEpoch, magic, crc, attributes, lastOffsetDelta,
# baseTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, recordsCount
HEADER = struct.Struct(">qiibIhiqqqhii")
LENGTH_PREFIX = 12  # baseOffset and batchLength: what must be read to know a batch's size
CRC_START = 21  # the CRC covers attributes onwards, so the leader epoch can be set in place
MAGIC = 2
TIMESTAMP_TYPE_BIT = 0x08
TRANSACTIONAL_BIT = 0x10
CONTROL_BIT = 0x20
DELETE_HORIZON_BIT = 0x40  # KIP-534: baseTimestamp holds the delete horizon
INDEX_ENTRY = struct.Struct(">ii")
TIME_INDEX_ENTRY = struct.Struct(">qi")
NEVER = 2**63 - 1  # Long.MAX_VALUE: flush.messages / flush.ms unset

STDLIB_CODECS: dict[int, tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]] = {
    # mtime=0, as Java's GZIPOutputStream writes: the same batch gives the same bytes.
    1: (lambda data: gzip.compress(data, mtime=0), gzip.decompress),
}


class CorruptBatch(ValueError):
    """A batch that cannot be trusted: cut short, wrong magic or a CRC mismatch."""


# -- varints (zigzag, as in Kafka's ByteUtils) --------------------------------------------


def _put_varint(out: bytearray, value: int) -> None:
    value = (value << 1) ^ (value >> 63)
    while value & ~0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _get_varint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if pos >= len(buf):
            raise CorruptBatch("varint runs past the end of the batch")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (result >> 1) ^ -(result & 1), pos
        shift += 7
        if shift > 63:
            raise CorruptBatch("varint too long")


def _put_bytes(out: bytearray, data: bytes | None) -> None:
    if data is None:
        _put_varint(out, -1)
    else:
        _put_varint(out, len(data))
        out += data


def _get_bytes(buf: bytes, pos: int) -> tuple[bytes | None, int]:
    size, pos = _get_varint(buf, pos)
    if size < 0:
        return None, pos
    if pos + size > len(buf):
        raise CorruptBatch("field runs past the end of the batch")
    return bytes(buf[pos:pos + size]), pos + size


# -- batches ------------------------------------------------------------------------------


def _codec(codecs: Codecs | None, codec_id: int, which: int) -> Callable[[bytes], bytes]:
    for table in (codecs or {}, STDLIB_CODECS):
        if codec_id in table:
            return table[codec_id][which]
    raise CorruptBatch(f"no codec for compression type {codec_id}")


def _attributes(batch: RecordBatch) -> int:
    attributes = batch.compression
    if batch.timestamp_type == LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_BIT
    if batch.is_transactional:
        attributes |= TRANSACTIONAL_BIT
    if batch.is_control:
        attributes |= CONTROL_BIT
    return attributes


def _as_received(batch: RecordBatch) -> bytes | None:
    """The producer's own bytes with the offset and leader epoch the log gave the batch,
    as Kafka writes a v2 batch it did not have to rewrite (both fields lie before the
    CRC's range); None if the batch has no bytes of its own or the broker changed what
    the CRC covers (LogAppendTime, a delete horizon)."""
    raw = getattr(batch, "raw", None)  # a batch parsed from a Produce request keeps them
    if raw is None:
        return None
    (_, _, _, _, _, attributes, last_delta, first_ts, max_ts, producer_id, producer_epoch,
     base_sequence, count) = HEADER.unpack_from(raw)
    if (attributes & ~DELETE_HORIZON_BIT != _attributes(batch) or first_ts != batch.first_timestamp
            or max_ts != batch.max_timestamp or last_delta != batch.last_offset_delta
            or producer_id != batch.producer_id or producer_epoch != batch.producer_epoch
            or base_sequence != batch.base_sequence or attributes & DELETE_HORIZON_BIT):
        return None
    out = bytearray(raw)
    struct.pack_into(">q", out, 0, batch.base_offset)
    struct.pack_into(">i", out, 12, batch.partition_leader_epoch)
    return bytes(out)


def encode_batch(batch: RecordBatch, delete_horizon_ms: int | None = None,
                 codecs: Codecs | None = None) -> bytes:
    """The batch as Kafka stores it: RecordBatch v2 with a CRC-32C over attributes onwards."""
    if delete_horizon_ms is None:
        stored = _as_received(batch)
        if stored is not None:
            return stored
    records = batch.records
    if delete_horizon_ms is not None:
        base_ts = delete_horizon_ms
    else:
        base_ts = records[0][1] if records else batch.first_timestamp
    body = bytearray()
    for delta, ts, key, value, headers in records:
        rec = bytearray(b"\x00")  # record attributes: unused
        _put_varint(rec, ts - base_ts)
        _put_varint(rec, delta)
        _put_bytes(rec, key)
        _put_bytes(rec, value)
        _put_varint(rec, len(headers))
        for hkey, hvalue in headers:
            _put_bytes(rec, hkey.encode() if isinstance(hkey, str) else hkey)
            _put_bytes(rec, hvalue)
        _put_varint(body, len(rec))
        body += rec
    if batch.compression:
        body = bytearray(_codec(codecs, batch.compression, 0)(bytes(body)))
    attributes = _attributes(batch)
    if delete_horizon_ms is not None:
        attributes |= DELETE_HORIZON_BIT
    out = bytearray(HEADER.size)
    out += body
    HEADER.pack_into(out, 0, batch.base_offset, len(out) - LENGTH_PREFIX,
                     batch.partition_leader_epoch, MAGIC, 0, attributes,
                     batch.last_offset_delta, base_ts, batch.max_timestamp, batch.producer_id,
                     batch.producer_epoch, batch.base_sequence, len(records))
    struct.pack_into(">I", out, 17, crc32c(memoryview(out)[CRC_START:]))
    return bytes(out)


class BatchEncoder:
    """encode_batch with a short memory: a leader and its followers append the same
    batch object, so its bytes are built once rather than once per replica. The memory
    holds at most `size` batches and `max_bytes` of their encodings (batches from a
    big-batching producer such as librdkafka are hundreds of KiB each)."""

    def __init__(self, codecs: Codecs | None = None, size: int = 256,
                 max_bytes: int = 8 << 20) -> None:
        self.codecs = codecs
        self.size = size
        self.max_bytes = max_bytes
        self._bytes = 0
        self._recent: OrderedDict[int, tuple[RecordBatch, int | None, bytes]] = OrderedDict()

    def __call__(self, batch: RecordBatch, delete_horizon_ms: int | None = None) -> bytes:
        hit = self._recent.get(id(batch))
        if hit is not None and hit[0] is batch and hit[1] == delete_horizon_ms:
            return hit[2]
        data = encode_batch(batch, delete_horizon_ms, self.codecs)
        replaced = self._recent.pop(id(batch), None)
        if replaced is not None:
            self._bytes -= len(replaced[2])
        self._recent[id(batch)] = (batch, delete_horizon_ms, data)  # holds the batch: ids stay unique
        self._bytes += len(data)
        while len(self._recent) > 1 and (len(self._recent) > self.size
                                         or self._bytes > self.max_bytes):
            self._bytes -= len(self._recent.popitem(last=False)[1][2])
        return data


def batch_length(buf: bytes, pos: int = 0) -> int:
    """Total bytes of the batch at pos, from its length field (-1 if cut short)."""
    if pos + LENGTH_PREFIX > len(buf):
        return -1
    return LENGTH_PREFIX + struct.unpack_from(">i", buf, pos + 8)[0]


def decode_batch(buf: bytes, pos: int = 0,
                 codecs: Codecs | None = None) -> tuple[RecordBatch, int | None, int]:
    """(batch, delete horizon or None, end position) of the batch at pos; checks the CRC."""
    size = batch_length(buf, pos)
    if size < HEADER.size or pos + size > len(buf):
        raise CorruptBatch(f"batch at position {pos} is cut short")
    (base_offset, _, leader_epoch, magic, crc, attributes, last_delta, base_ts, max_ts,
     producer_id, producer_epoch, base_sequence, count) = HEADER.unpack_from(buf, pos)
    if magic != MAGIC:
        raise CorruptBatch(f"batch at position {pos} has magic {magic}")
    end = pos + size
    if crc32c(memoryview(buf)[pos + CRC_START:end]) != crc:
        raise CorruptBatch(f"batch at position {pos} fails its CRC check")
    body = bytes(buf[pos + HEADER.size:end])
    compression = attributes & 0x07
    if compression:
        body = _codec(codecs, compression, 1)(body)
    records = []
    p = 0
    for _ in range(count):
        length, p = _get_varint(body, p)
        stop = p + length
        p += 1  # record attributes
        ts_delta, p = _get_varint(body, p)
        delta, p = _get_varint(body, p)
        key, p = _get_bytes(body, p)
        value, p = _get_bytes(body, p)
        nheaders, p = _get_varint(body, p)
        headers = []
        for _ in range(nheaders):
            hkey, p = _get_bytes(body, p)
            hvalue, p = _get_bytes(body, p)
            headers.append(((hkey or b"").decode(), hvalue))
        if p != stop:
            raise CorruptBatch(f"record length mismatch in batch at position {pos}")
        records.append((delta, base_ts + ts_delta, key, value, tuple(headers)))
    horizon = base_ts if attributes & DELETE_HORIZON_BIT else None
    batch = RecordBatch(
        records, base_offset=base_offset, producer_id=producer_id,
        producer_epoch=producer_epoch, base_sequence=base_sequence,
        is_transactional=bool(attributes & TRANSACTIONAL_BIT),
        is_control=bool(attributes & CONTROL_BIT),
        first_timestamp=records[0][1] if records else base_ts, max_timestamp=max_ts,
        timestamp_type=LOG_APPEND_TIME if attributes & TIMESTAMP_TYPE_BIT else CREATE_TIME,
        compression=compression, size_bytes=size, last_offset_delta=last_delta)
    batch.partition_leader_epoch = leader_epoch
    return batch, horizon, end


def read_segment(data: bytes, codecs: Codecs | None = None,
                 next_offset: int = 0) -> tuple[list[tuple[RecordBatch, int | None]], int]:
    """Batches of a .log file up to the first torn one, and the bytes that were valid."""
    out = []
    pos = 0
    while pos < len(data):
        try:
            batch, horizon, end = decode_batch(data, pos, codecs)
        except CorruptBatch:
            break
        if batch.base_offset < next_offset:
            break  # offsets must only grow
        out.append((batch, horizon))
        next_offset = batch.next_offset
        pos = end
    return out, pos


# -- checkpoint files ---------------------------------------------------------------------


def write_checkpoint(path: Path, entries: Iterable[tuple]) -> None:
    """Kafka's checkpoint format: version 0, a count, then one entry a line."""
    lines = [" ".join(str(f) for f in e) for e in entries]
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(f"{line}\n" for line in ["0", str(len(lines)), *lines]))
    os.replace(tmp, path)


def read_checkpoint(path: Path) -> list[list[str]]:
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        return []
    if len(lines) < 2 or lines[0] != "0":
        return []
    return [line.split() for line in lines[2:2 + int(lines[1])]]


def write_atomically(path: Path, data: bytes) -> None:
    """Replace a file's contents so that a crash leaves the old or the new, never half."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def segment_name(base_offset: int) -> str:
    return f"{base_offset:020d}"


# -- one partition's files ------------------------------------------------------------------


class PartitionFiles:
    """The files of one partition directory, kept in step with its PartitionLog."""

    def __init__(self, path: Path, codecs: Codecs | None = None,
                 encoder: BatchEncoder | None = None) -> None:
        self.path = path
        self.codecs = codecs
        self.encode = encoder or BatchEncoder(codecs)
        # base offset -> [.log size, offset index entries written, time index entries written]
        self.written: dict[int, list[int]] = {}
        # The topic's config (flush.messages, flush.ms), set by whoever opens the files.
        self.config: Mapping[str, object] | None = None
        self.unflushed = 0
        self.last_flush_ms: int | None = None  # simulated ms (a served cluster's is real time)
        self._epochs_written: list[tuple] | None = None
        path.mkdir(parents=True, exist_ok=True)

    def _file(self, base: int, suffix: str) -> Path:
        return self.path / (segment_name(base) + suffix)

    def _write_new_index_entries(self, seg: Segment, position: int | None) -> None:
        state = self.written[seg.base_offset]
        base = seg.base_offset
        if position is not None and len(seg.offset_index) > state[1]:
            offset, _ = seg.offset_index[-1]
            with open(self._file(base, ".index"), "ab") as f:
                f.write(INDEX_ENTRY.pack(offset - base, position))
            state[1] = len(seg.offset_index)
        if len(seg.time_index) > state[2]:
            with open(self._file(base, ".timeindex"), "ab") as f:
                for ts, offset in seg.time_index[state[2]:]:
                    f.write(TIME_INDEX_ENTRY.pack(ts, offset - base))
            state[2] = len(seg.time_index)

    def _start(self, base: int) -> None:
        for suffix in (".log", ".index", ".timeindex"):
            self._file(base, suffix).write_bytes(b"")
        self.written[base] = [0, 0, 0]

    def append(self, log: PartitionLog, seg: Segment, batch: RecordBatch) -> None:
        if seg.base_offset not in self.written:
            self._forget_missing(log)
            self._start(seg.base_offset)
        state = self.written[seg.base_offset]
        data = self.encode(batch, log.delete_horizons.get(batch.base_offset))
        with open(self._file(seg.base_offset, ".log"), "ab") as f:
            f.write(data)
            self._maybe_flush(f, batch.last_offset_delta + 1, batch.append_time_ms)
        position = state[0]
        state[0] += len(data)
        self._write_new_index_entries(seg, position)

    def _maybe_flush(self, f, records: int, now_ms: int) -> None:
        """fsync once flush.messages records or flush.ms have gone by since the last
        one, as Kafka's log.flush.interval.* ask; by default never (the page cache
        keeps what a killed process wrote)."""
        if self.config is None:
            return
        every, ms = int(self.config["flush.messages"]), int(self.config["flush.ms"])
        if every >= NEVER and ms >= NEVER:
            return
        self.unflushed += records
        if self.last_flush_ms is None:
            self.last_flush_ms = now_ms
        if self.unflushed >= every or now_ms - self.last_flush_ms >= ms:
            f.flush()
            os.fsync(f.fileno())
            self.unflushed, self.last_flush_ms = 0, now_ms

    def rolled(self, log: PartitionLog, closed: Segment) -> None:
        if closed.base_offset in self.written:
            self._write_new_index_entries(closed, None)  # the closing time index entry
        self._start(log.segments[-1].base_offset)

    def rewritten(self, log: PartitionLog, changed: Iterable[Segment]) -> None:
        """Segments were replaced, truncated or deleted: rewrite or remove their files."""
        self._forget_missing(log)
        for seg in changed:
            self._rewrite(log, seg)

    def _rewrite(self, log: PartitionLog, seg: Segment) -> None:
        base = seg.base_offset
        chunks, positions = [], {}
        size = 0
        for batch in seg.batches:
            data = self.encode(batch, log.delete_horizons.get(batch.base_offset))
            positions[batch.last_offset] = size
            chunks.append(data)
            size += len(data)
        write_atomically(self._file(base, ".log"), b"".join(chunks))
        self._write_indexes(seg, positions)
        self.written[base] = [size, len(seg.offset_index), len(seg.time_index)]

    def _write_indexes(self, seg: Segment, positions: Mapping[int, int]) -> None:
        """Both index files of a segment, from its in-memory indexes and the byte
        position of each batch's last offset."""
        base = seg.base_offset
        write_atomically(self._file(base, ".index"), b"".join(
            INDEX_ENTRY.pack(offset - base, positions[offset]) for offset, _ in seg.offset_index))
        write_atomically(self._file(base, ".timeindex"), b"".join(
            TIME_INDEX_ENTRY.pack(ts, offset - base) for ts, offset in seg.time_index))

    def _recovered(self, seg: Segment, valid: int) -> None:
        """After loading: the .log keeps its bytes, cut in place at the first bad
        batch (Kafka's truncateTo); the indexes are rebuilt."""
        path = self._file(seg.base_offset, ".log")
        if path.stat().st_size > valid:
            os.truncate(path, valid)
        positions, size = {}, 0
        for batch in seg.batches:
            positions[batch.last_offset] = size
            size += batch.size_bytes
        self._write_indexes(seg, positions)
        self.written[seg.base_offset] = [valid, len(seg.offset_index), len(seg.time_index)]

    def _forget_missing(self, log: PartitionLog) -> None:
        live = {s.base_offset for s in log.segments}
        for base in [b for b in self.written if b not in live]:
            for suffix in (".log", ".index", ".timeindex"):
                self._file(base, suffix).unlink(missing_ok=True)
            del self.written[base]

    def write_epochs(self, log: PartitionLog) -> None:
        epochs = [tuple(e) for e in log.epochs]
        if epochs != self._epochs_written:  # checkpoints come every 5 s: skip unchanged ones
            write_checkpoint(self.path / "leader-epoch-checkpoint", epochs)
            self._epochs_written = epochs

    def load(self, segment_bytes: int, segment_ms: int, now_ms: int,
             log_start_offset: int = 0, cleaner_offset: int = 0) -> tuple[PartitionLog, int]:
        """Recover the log from its files; returns it and the bytes cut off a torn tail."""
        log = PartitionLog(segment_bytes, segment_ms, now_ms)
        bases = sorted(int(p.stem) for p in self.path.glob("*.log"))
        cut = 0
        segments: list[Segment] = []
        valid_bytes: dict[int, int] = {}
        next_offset = 0
        torn = False
        for base in bases:
            path = self._file(base, ".log")
            if torn:  # everything after a torn batch goes, as in Kafka's recovery
                cut += path.stat().st_size
                for suffix in (".log", ".index", ".timeindex"):
                    self._file(base, suffix).unlink(missing_ok=True)
                continue
            data = path.read_bytes()
            batches, valid = read_segment(data, self.codecs, next_offset)
            valid_bytes[base] = valid
            if valid < len(data):
                torn = True
                cut += len(data) - valid
            seg = Segment(base, now_ms)
            for batch, horizon in batches:
                seg.append(batch)
                if horizon is not None:
                    log.delete_horizons[batch.base_offset] = horizon
                next_offset = batch.next_offset
            if seg.batches or not segments:
                segments.append(seg)
        if segments:
            for seg in segments[:-1]:
                seg.close()
            log.segments = segments
            last = next((s for s in reversed(segments) if s.batches), None)
            log.log_end_offset = last.next_offset if last else segments[-1].base_offset
            if not segments[-1].batches:
                segments[-1].base_offset = max(segments[-1].base_offset, log.log_end_offset)
        log.log_start_offset = segments[0].base_offset if segments else 0
        log.maybe_increment_log_start_offset(log_start_offset)
        log.cleaner_offset = min(max(cleaner_offset, log.log_start_offset), log.log_end_offset)
        epochs = [(int(e), int(o)) for e, o in read_checkpoint(self.path / "leader-epoch-checkpoint")]
        # Epochs the checkpoint missed (a crash before it was written) come from the
        # batches' partition leader epochs.
        for batch in log.batches():
            e = batch.partition_leader_epoch
            if e >= 0 and (not epochs or e > epochs[-1][0]):
                epochs.append((e, batch.base_offset))
        # Epochs starting at or past the recovered end are forgotten (truncateFromEnd).
        log.epochs = [(e, o) for e, o in epochs if o < log.log_end_offset]
        self.written = {}
        kept = {s.base_offset for s in log.segments}
        for base in bases:
            if base not in kept:
                self._drop(base)
        for seg in log.segments:
            if seg.base_offset in valid_bytes and seg.batches:
                self._recovered(seg, valid_bytes[seg.base_offset])
            else:  # an empty active segment (named after the log end offset)
                self._rewrite(log, seg)
        log.store = self
        return log, cut

    def _drop(self, base: int) -> None:
        for suffix in (".log", ".index", ".timeindex"):
            self._file(base, suffix).unlink(missing_ok=True)


# -- one broker's log directory ---------------------------------------------------------------


class LogDir:
    """A broker's log directory: partition directories and the broker-wide checkpoints."""

    def __init__(self, path: str | os.PathLike, codecs: Codecs | None = None,
                 encoder: BatchEncoder | None = None) -> None:
        self.path = Path(path)
        self.codecs = codecs
        self.encoder = encoder or BatchEncoder(codecs)
        self.path.mkdir(parents=True, exist_ok=True)

    def partition_path(self, topic: str, partition: int) -> Path:
        return self.path / f"{topic}-{partition}"

    def attach(self, topic: str, partition: int, log: PartitionLog) -> PartitionFiles:
        """Start mirroring a new (or emptied) log into its directory."""
        files = PartitionFiles(self.partition_path(topic, partition), self.codecs, self.encoder)
        for stale in files.path.glob("*"):
            if stale.suffix in (".log", ".index", ".timeindex"):
                stale.unlink()
        files.written = {}
        for seg in log.segments:
            files._rewrite(log, seg)
        log.store = files
        return files

    def drop(self, topic: str, partition: int) -> None:
        path = self.partition_path(topic, partition)
        if path.is_dir():
            for child in path.iterdir():
                child.unlink()
            path.rmdir()

    def hosted(self) -> list[tuple[str, int]]:
        out = []
        for child in sorted(self.path.iterdir()):
            topic, _, p = child.name.rpartition("-")
            if child.is_dir() and topic and p.isdigit() and topic != "__cluster_metadata":
                out.append((topic, int(p)))
        return out

    def write_checkpoints(self, replicas: Iterable) -> None:
        """log-start-offset, replication-offset (high watermarks) and cleaner-offset
        checkpoints, plus each partition's leader-epoch-checkpoint."""
        replicas = sorted(replicas, key=lambda r: (r.topic, r.partition))
        write_checkpoint(self.path / "log-start-offset-checkpoint",
                         [(r.topic, r.partition, r.log_start_offset) for r in replicas])
        write_checkpoint(self.path / "replication-offset-checkpoint",
                         [(r.topic, r.partition, r.high_watermark) for r in replicas])
        write_checkpoint(self.path / "cleaner-offset-checkpoint",
                         [(r.topic, r.partition, r.log.cleaner_offset) for r in replicas])
        for r in replicas:
            if isinstance(r.log.store, PartitionFiles):
                r.log.store.write_epochs(r.log)

    def read_checkpoints(self) -> dict[str, dict[tuple[str, int], int]]:
        out = {}
        for name in ("log-start-offset", "replication-offset", "cleaner-offset"):
            out[name] = {(t, int(p)): int(o)
                         for t, p, o in read_checkpoint(self.path / f"{name}-checkpoint")}
        return out

    def load(self, topic: str, partition: int, segment_bytes: int, segment_ms: int,
             now_ms: int) -> tuple[PartitionLog, int, int]:
        """Recover one partition: (log, high watermark from the checkpoint, bytes cut)."""
        cps = self.read_checkpoints()
        tp = (topic, partition)
        files = PartitionFiles(self.partition_path(topic, partition), self.codecs, self.encoder)
        log, cut = files.load(segment_bytes, segment_ms, now_ms,
                              cps["log-start-offset"].get(tp, 0),
                              cps["cleaner-offset"].get(tp, 0))
        hw = min(cps["replication-offset"].get(tp, 0), log.log_end_offset)
        return log, max(hw, log.log_start_offset), cut
