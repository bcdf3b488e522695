"""RecordBatch v2 bytes for a minikafka batch, through kafka-python's record builder.

Used where real bytes matter: compressed sizes (so compression ratios are real),
dump-log CRCs, and the wire protocol.
"""

from __future__ import annotations

from kafka.record.default_records import DefaultRecordBatchBuilder

from ..core.records import RecordBatch


def encode_batch(batch: RecordBatch, compression: int | None = None) -> bytes:
    codec = batch.compression if compression is None else compression
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=codec, is_transactional=batch.is_transactional,
        producer_id=batch.producer_id, producer_epoch=batch.producer_epoch,
        base_sequence=batch.base_sequence, batch_size=1 << 62)
    for delta, ts, key, value, headers in batch.records:
        builder.append(delta, ts, key, value, list(headers))
    return bytes(builder.build())


def compressed_size(batch: RecordBatch) -> int:
    return len(encode_batch(batch))
