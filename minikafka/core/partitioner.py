"""Kafka's default partitioner hash: murmur2 with seed 0x9747b28c (the Java client's and
kafka-python's), and the partition a key goes to: toPositive(murmur2(key)) % partitions,
where toPositive is `& 0x7fffffff` (not abs)."""
from __future__ import annotations

from .hashing import murmurhash2

__all__ = ["SEED", "murmur2", "partition_for_key"]

SEED = 0x9747B28C


def murmur2(data: bytes) -> int:
    """Kafka's murmur2 hash of a key (unsigned 32-bit, as kafka-python returns it)."""
    return murmurhash2(data, SEED)


def partition_for_key(key: bytes, num_partitions: int) -> int:
    return (murmurhash2(key, SEED) & 0x7FFFFFFF) % num_partitions
