"""The two hashes Kafka's formats need, computed here and nowhere else: CRC-32C (a record
batch's checksum) and murmur2 (the default partitioner's key hash).

The C packages (`crc32c`, `murmurhash2`) are used when they import; in a browser (Pyodide)
they have no build, so the pure-Python versions below take over, with the same results.
They are slow (about 1 MB/s for CRC-32C), which lessons' small batches do not notice.
"""
from __future__ import annotations

__all__ = ["NATIVE", "crc32c", "murmurhash2", "py_crc32c", "py_murmurhash2"]


def _crc32c_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1  # Castagnoli, reflected
        table.append(c)
    return table


_TABLE = _crc32c_table()


def py_crc32c(data: bytes | bytearray | memoryview, value: int = 0) -> int:
    """CRC-32C of data (continuing from value), as `crc32c.crc32c` computes it."""
    crc = value ^ 0xFFFFFFFF
    table = _TABLE
    for byte in bytes(data):
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def py_murmurhash2(data: bytes, seed: int) -> int:
    """MurmurHash2 (32-bit), as the Java client's Utils.murmur2 and `murmurhash2` compute it,
    returned unsigned."""
    m, r, mask = 0x5BD1E995, 24, 0xFFFFFFFF
    length = len(data)
    h = (seed ^ length) & mask
    tail = length & ~3
    for i in range(0, tail, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = (k * m) & mask
        k ^= k >> r
        k = (k * m) & mask
        h = ((h * m) & mask) ^ k
    left = length & 3
    if left == 3:
        h ^= data[tail + 2] << 16
    if left >= 2:
        h ^= data[tail + 1] << 8
    if left >= 1:
        h ^= data[tail]
        h = (h * m) & mask
    h ^= h >> 13
    h = (h * m) & mask
    h ^= h >> 15
    return h


try:
    from crc32c import crc32c
    from murmurhash2 import murmurhash2
    NATIVE = True
except ImportError:  # Pyodide: no C builds of either package
    crc32c = py_crc32c
    murmurhash2 = py_murmurhash2
    NATIVE = False
