"""Kafka's record compression codecs by batch attribute id, via kafka-python's kafka.codec.

The on-disk log (minikafka.core.storage) and dump-log use these to write and read
compressed batches; core itself only knows the standard library's gzip.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable

from kafka import codec

# codec id -> (compress, decompress). gzip with mtime=0, as Java's GZIPOutputStream
# writes it, so the same batch always gives the same bytes (and CRC).
CODECS: dict[int, tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]] = {
    1: (lambda data: gzip.compress(data, mtime=0), codec.gzip_decode),
    2: (codec.snappy_encode, codec.snappy_decode),
    3: (codec.lz4_encode, codec.lz4_decode),
    4: (codec.zstd_encode, codec.zstd_decode),
}
