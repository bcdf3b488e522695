"""Keyless records: the built-in uniform sticky partitioner of Kafka 3.3+ (KIP-794)."""

import random
from collections import Counter

import pytest
from kafka.errors import KafkaConfigurationError

from minikafka import Cluster, partition_for_key
from minikafka.client.partitioner import DefaultPartitioner, cumulative_weights

VALUE = b"x" * 92  # a keyless record of 100 bytes as minikafka counts them; a batch header is 61


def cluster_with(partitions=3, rf=1, seed=11):
    cluster = Cluster(brokers=3, seed=seed)
    cluster.create_topic("t", partitions=partitions, replication_factor=rf)
    return cluster


def spy_on_draws(producer) -> list[int]:
    """The number of records sent before each new sticky partition was drawn."""
    draws: list[int] = []
    partitioner = producer.partitioner
    draw = partitioner.next_partition

    def spy(*args, **kwargs):
        draws.append(producer.sent)
        return draw(*args, **kwargs)

    partitioner.next_partition = spy
    producer.sent = 0
    return draws


def send(producer, **kwargs):
    future = producer.send("t", **kwargs)
    producer.sent += 1
    return future


def test_half_full_batches_sent_by_linger_do_not_switch_before_batch_size_bytes():
    cluster = cluster_with()
    producer = cluster.producer(batch_size=1000, linger_ms=5)
    draws = spy_on_draws(producer)
    futures = []
    for _ in range(4):
        futures += [send(producer, value=VALUE) for _ in range(3)]
        cluster.advance(10)  # linger.ms sends the 361-byte batch
    producer.flush()
    # 3 batches (1083 bytes) went to the first partition before it moved on: KIP-480
    # would have drawn a new one for each of them. The switch waited for the third batch
    # to be sent, and came with the 10th record.
    assert draws == [0, 9]
    first = futures[0].get().partition
    assert [f.get().partition for f in futures[:9]] == [first] * 9
    assert [len(b.records) for b in cluster.leader_replica("t", first).log.batches()][:3] == \
        [3, 3, 3]


def test_full_batches_switch_once_batch_size_bytes_went_to_the_partition():
    cluster = cluster_with()
    producer = cluster.producer(batch_size=1000, linger_ms=10_000)
    draws = spy_on_draws(producer)
    futures = [send(producer, value=VALUE) for _ in range(40)]
    producer.flush()
    # A batch takes 9 records (961 bytes, just short of 1000), so the first full batch
    # is not enough; the second one's overflow is: a draw every 18 records.
    assert draws == [0, 18, 36]
    parts = [f.get().partition for f in futures]
    assert len(set(parts[:18])) == 1 and len(set(parts[18:36])) == 1


def test_switches_after_twice_batch_size_even_while_its_batch_is_not_full():
    cluster = cluster_with()
    producer = cluster.producer(batch_size=1000, linger_ms=5)
    draws = spy_on_draws(producer)
    sticky = send(producer, value=VALUE).get().partition  # 161 bytes
    key = next(b"k%d" % i for i in range(1000) if partition_for_key(b"k%d" % i, 3) == sticky)
    for _ in range(5):
        cluster.advance(10)
        # A keyed record opens the partition's next batch, so the keyless ones never find
        # it full or sent: only the 2 x batch.size cap moves them on.
        send(producer, key=key, value=b"keyed")
        for _ in range(4):
            send(producer, value=VALUE)
    producer.flush()
    # 161 + 8 x 100 = 961; 1000 bytes came with the 10th keyless record, but its batch
    # was open and not full; 2000 came with the 20th (send 24), which drew a new one.
    assert draws == [0, 24]
    assert producer.partitioner.produced["t"] < 400


def test_adaptive_partitioning_favours_partitions_with_shorter_queues():
    # The Java client's table: queues 0, 3, 1 weigh 4, 1, 3.
    assert cumulative_weights([0, 3, 1]) == [4, 5, 8]
    partitioner = DefaultPartitioner(random.Random(1))
    counts = Counter(partitioner.next_partition("t", [0, 1, 2], [0, 1, 2], {0: 0, 1: 3, 2: 1})
                     for _ in range(8000))
    assert 3800 < counts[0] < 4200 and 850 < counts[1] < 1150 and 2800 < counts[2] < 3200


def sticky_draws_after_a_crash(**config):
    """Keyless records every ms to 6 partitions, one broker crashed: which partitions
    the new sticky draws picked, and the partitions the dead broker leads."""
    cluster = cluster_with(partitions=6, seed=5)
    producer = cluster.producer(batch_size=500, **config)
    for _ in range(60):
        producer.send("t", value=VALUE)
        cluster.advance(1)
    leaders = {p.partition: p.leader for p in cluster.describe_topic("t").partitions}
    dead = leaders[0]
    cluster.crash_broker(dead)  # its partitions' batches queue up in the producer
    chosen = []
    draw = producer.partitioner.next_partition

    def spy(*args, **kwargs):
        chosen.append(draw(*args, **kwargs))
        return chosen[-1]

    producer.partitioner.next_partition = spy
    for _ in range(5000):
        producer.send("t", value=VALUE)
        cluster.advance(1)
    return chosen, {p for p, leader in leaders.items() if leader == dead}


def test_adaptive_partitioning_steers_away_from_a_broker_that_does_not_drain():
    uniform, dead = sticky_draws_after_a_crash(partitioner_adaptive_partitioning_enable=False)
    adaptive, dead_too = sticky_draws_after_a_crash()
    assert dead == dead_too and len(dead) == 2
    on_dead = {name: sum(p in dead for p in chosen) / len(chosen)
               for name, chosen in (("uniform", uniform), ("adaptive", adaptive))}
    assert 0.25 < on_dead["uniform"] < 0.4  # 2 partitions of 6
    assert on_dead["adaptive"] < 0.1


def test_availability_timeout_leaves_out_partitions_whose_leader_takes_nothing():
    chosen, dead = sticky_draws_after_a_crash(partitioner_availability_timeout_ms=300)
    # 8 records a draw, one a ms: after the first 300 ms (about 40 draws) none picks them.
    assert not any(p in dead for p in chosen[40:])
    assert len(chosen) > 500


def test_ignore_keys_sends_keyed_records_to_the_sticky_partition():
    cluster = cluster_with(partitions=6)
    keyed = cluster.producer()
    sticky = cluster.producer(partitioner_ignore_keys=True)
    keys = [b"truck-%d" % i for i in range(30)]
    assert len({keyed.send("t", key=k, value=b"gps").get().partition for k in keys}) > 3
    assert len({sticky.send("t", key=k, value=b"gps").get().partition for k in keys}) == 1


def test_the_same_seed_gives_the_same_partitions():
    def partitions(seed):
        cluster = cluster_with(partitions=6, seed=seed)
        producer = cluster.producer(batch_size=500, linger_ms=3)
        futures = []
        for i in range(600):
            futures.append(producer.send("t", value=VALUE))
            cluster.advance(i % 3)
        producer.flush()
        return [f.get().partition for f in futures]

    assert partitions(7) == partitions(7)
    assert partitions(7) != partitions(8)
    assert len(set(partitions(7))) == 6


def test_partitioner_configs_are_checked():
    cluster = cluster_with()
    producer = cluster.producer()
    assert producer.adaptive_partitioning and producer.availability_timeout_ms == 0
    assert not producer.partitioner.ignore_keys
    assert cluster.producer(partitioner_ignore_keys="true").partitioner.ignore_keys
    for bad in ({"partitioner_ignore_keys": "yes"},
                {"partitioner_adaptive_partitioning_enable": 1},
                {"partitioner_availability_timeout_ms": -1},
                {"partitioner_availability_timeout_ms": 1.5}):
        with pytest.raises(KafkaConfigurationError):
            cluster.producer(**bad)
