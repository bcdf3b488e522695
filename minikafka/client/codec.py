"""A batch's size on the wire and on disk, through the one RecordBatch v2 codec
(minikafka.core.storage.encode_batch): compression ratios are real."""

from __future__ import annotations

from ..codecs import CODECS
from ..core.records import RecordBatch
from ..core.storage import encode_batch


def compressed_size(batch: RecordBatch) -> int:
    return len(encode_batch(batch, codecs=CODECS))
