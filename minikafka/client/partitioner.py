"""Which partition a record goes to: Kafka's default partitioner.

A keyed record goes to toPositive(murmur2(key)) % numPartitions, where toPositive is
`& 0x7fffffff` (not abs) and murmur2 is seeded 0x9747b28c: the same partition in the
Java client, kafka-python and here, so keys keep their order per partition. Records
without a key stick to one partition until its batch is sent (sticky partitioning,
Kafka 2.4+, KIP-480; uniform sticky since 3.3), which fills batches faster than the old
round robin. kafka-python's own default picks a random partition per keyless record.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from murmurhash2 import murmurhash2

__all__ = ["SEED", "DefaultPartitioner", "murmur2", "murmurhash2", "partition_for_key"]

SEED = 0x9747B28C


def murmur2(data: bytes) -> int:
    """Kafka's murmur2 hash of a key (unsigned 32-bit, as kafka-python returns it)."""
    return murmurhash2(data, SEED)


def partition_for_key(key: bytes, num_partitions: int) -> int:
    return (murmurhash2(key, SEED) & 0x7FFFFFFF) % num_partitions


class DefaultPartitioner:
    """Keyed: murmur2. Keyless: sticky to one available partition until it is switched."""

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng or random.Random(0)
        self.sticky: dict[str, int] = {}

    def __call__(self, key: bytes | None, all_partitions: Sequence[int],
                 available: Sequence[int], topic: str = "") -> int:
        if key is not None:
            return all_partitions[(murmurhash2(key, SEED) & 0x7FFFFFFF) % len(all_partitions)]
        current = self.sticky.get(topic)
        if current is None or current not in all_partitions:
            current = self.switch(topic, all_partitions, available)
        return current

    def switch(self, topic: str, all_partitions: Sequence[int], available: Sequence[int],
               previous: int | None = None) -> int:
        """A new sticky partition after the current batch was sent (not the same one if possible)."""
        pool = [p for p in (available or all_partitions) if p != previous] or list(all_partitions)
        choice = pool[self.rng.randrange(len(pool))]
        self.sticky[topic] = choice
        return choice
