"""Which partition a record goes to: Kafka's default partitioning.

A keyed record goes to toPositive(murmur2(key)) % numPartitions, where toPositive is
`& 0x7fffffff` (not abs) and murmur2 is seeded 0x9747b28c: the same partition in the
Java client, kafka-python and here, so keys keep their order per partition.

A record without a key (and any record when partitioner.ignore.keys=true) goes to its
topic's current *sticky* partition, as the Java client's built-in "uniform sticky"
partitioner does (Kafka 3.3+, KIP-794):

- The producer counts the bytes it appends to the sticky partition (a new batch counts
  with its header). Once at least batch.size bytes went there, the next record switches
  to a new partition, but only when every batch queued for the current one is full: a
  batch that linger.ms sent half full is followed by one more batch on the same
  partition, not by a small remainder. Once 2 x batch.size bytes went there, it switches
  regardless. So what moves the partition is bytes, not linger.ms.
- The new partition is drawn at random (the cluster's seeded RNG) among the partitions
  that have a leader; it can be the same one again. With
  partitioner.adaptive.partitioning.enable=true (the default) the draw is weighted by
  the producer's own queues: a partition with q batches waiting to be sent gets weight
  max(q) + 1 - q, so partitions on slow brokers get fewer new records. With
  partitioner.availability.timeout.ms > 0 (default 0: off) a partition whose leader has
  had batches ready to send but taken none for longer than that is left out.

Version note: Kafka 2.4 to 3.2 (KIP-480's sticky partitioner) switched to a new random
partition whenever a new batch was created, so linger.ms sending half-full batches gave
many small batches, and slow brokers, whose batches fill up while waiting, got more
records, not fewer. Before 2.4 keyless records went round robin, one per partition in
turn. kafka-python's default partitioner picks a random partition for every keyless
record (its StickyPartitioner is KIP-480's).
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections.abc import Mapping, Sequence

from ..core.hashing import murmurhash2
from ..core.partitioner import SEED, murmur2, partition_for_key

__all__ = ["SEED", "DefaultPartitioner", "cumulative_weights", "murmur2", "murmurhash2",
           "partition_for_key"]

def cumulative_weights(queue_sizes: Sequence[int]) -> list[int]:
    """The Java client's cumulative frequency table over queue sizes: each partition
    weighs max + 1 - its queue size, summed as it goes. Queues [0, 3, 1] weigh [4, 1, 3]
    and give [4, 5, 8]: a draw r in [0, 8) picks the first entry above r, so 0-3 pick
    the first partition, 4 the second and 5-7 the third."""
    top = max(queue_sizes) + 1
    table, total = [], 0
    for size in queue_sizes:
        total += top - size
        table.append(total)
    return table


class DefaultPartitioner:
    """Keyed: murmur2. Keyless (or ignore_keys): the topic's sticky partition, switched
    by bytes as KIP-794 says (see the module docstring). The producer tells it how many
    bytes it appended (`appended`) and, when that says switch, asks for the next
    partition with its queue sizes (`next_partition`)."""

    def __init__(self, rng: random.Random | None = None, batch_size: int = 16_384,
                 ignore_keys: bool = False) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, not {batch_size}")
        self.rng = rng or random.Random(0)
        self.batch_size = batch_size
        self.ignore_keys = ignore_keys
        self.sticky: dict[str, int] = {}      # topic -> its sticky partition
        self.produced: dict[str, int] = {}    # topic -> bytes appended there since chosen

    def __call__(self, key: bytes | None, all_partitions: Sequence[int],
                 available: Sequence[int], topic: str = "") -> int:
        if key is not None and not self.ignore_keys:
            return all_partitions[(murmurhash2(key, SEED) & 0x7FFFFFFF) % len(all_partitions)]
        current = self.sticky.get(topic)
        if current is None or current not in all_partitions:
            current = self.next_partition(topic, all_partitions, available)
        return current

    def next_partition(self, topic: str, all_partitions: Sequence[int],
                       available: Sequence[int],
                       queue_sizes: Mapping[int, int] | None = None) -> int:
        """Draw a new sticky partition for topic and count its bytes from zero.

        With queue_sizes (partition -> batches queued, for the partitions that may be
        chosen) the draw is weighted by cumulative_weights; without, it is uniform over
        the available partitions, or over all of them if none is available."""
        if queue_sizes:
            ids = list(queue_sizes)
            table = cumulative_weights([queue_sizes[p] for p in ids])
            choice = ids[bisect_right(table, self.rng.randrange(table[-1]))]
        else:
            pool = available or all_partitions
            choice = pool[self.rng.randrange(len(pool))]
        self.sticky[topic] = choice
        self.produced[topic] = 0
        return choice

    def appended(self, topic: str, nbytes: int, enable_switch: bool = True) -> bool:
        """Count nbytes appended to topic's sticky partition; then `switch_due`."""
        self.produced[topic] = self.produced.get(topic, 0) + nbytes
        return self.switch_due(topic, enable_switch)

    def switch_due(self, topic: str, enable_switch: bool = True) -> bool:
        """True when it is time to leave topic's sticky partition: at least batch_size
        bytes went there and enable_switch (every batch queued for it is full), or at
        least 2 x batch_size bytes went there."""
        produced = self.produced.get(topic, 0)
        return produced >= 2 * self.batch_size or (enable_switch and produced >= self.batch_size)
