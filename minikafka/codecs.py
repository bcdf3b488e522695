"""Kafka's record compression codecs by batch attribute id, via kafka-python's kafka.codec.

The one RecordBatch v2 codec (minikafka.core.storage.encode_batch / decode_batch) takes
them as a table: core itself only knows the standard library's gzip. The on-disk log,
the wire (batches made in-process, served to real clients), the producer's compressed
sizes and dump-log all pass this one.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable

import kafka.codec as codec

# codec id -> (compress, decompress). gzip with mtime=0, as Java's GZIPOutputStream
# writes it, so the same batch always gives the same bytes (and CRC).
CODECS: dict[int, tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]] = {
    1: (lambda data: gzip.compress(data, mtime=0), codec.gzip_decode),
    2: (codec.snappy_encode, codec.snappy_decode),
    3: (codec.lz4_encode, codec.lz4_decode),
    4: (codec.zstd_encode, codec.zstd_decode),
}
