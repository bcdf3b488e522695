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
from kafka.errors import UnsupportedCodecError

NAMES = {1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}

# Which codecs this Python has: in a browser (Pyodide) only gzip, from the standard library;
# python-snappy, lz4 and zstandard are C or Rust extensions with no Pyodide build.
AVAILABLE = {1: True, 2: codec.has_snappy(), 3: codec.has_lz4(), 4: codec.has_zstd()}


def _unavailable(codec_id: int) -> Callable[[bytes], bytes]:
    def refuse(data: bytes) -> bytes:
        require_codec(codec_id)
        return data
    return refuse


def require_codec(codec_id: int) -> None:
    """Raise kafka-python's UnsupportedCodecError, with the reason, for a codec this Python
    lacks (as KafkaProducer does when its compression library is missing)."""
    if codec_id and not AVAILABLE.get(codec_id, False):
        name = NAMES.get(codec_id, str(codec_id))
        raise UnsupportedCodecError(
            f"{name} compression is not available here (its library has no build for this "
            f"Python, e.g. in the browser edition); use compression_type='gzip' or None")


# codec id -> (compress, decompress). gzip with mtime=0, as Java's GZIPOutputStream
# writes it, so the same batch always gives the same bytes (and CRC).
CODECS: dict[int, tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]] = {
    1: (lambda data: gzip.compress(data, mtime=0), codec.gzip_decode),
    2: (codec.snappy_encode, codec.snappy_decode),
    3: (codec.lz4_encode, codec.lz4_decode),
    4: (codec.zstd_encode, codec.zstd_decode),
}
for _id, _ok in AVAILABLE.items():
    if not _ok:
        CODECS[_id] = (_unavailable(_id), _unavailable(_id))
