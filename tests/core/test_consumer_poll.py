"""poll(timeout_ms) keeps fetching until its timeout, as Kafka's consumers do.

A fetch that comes back empty (the broker's long poll, fetch.max.wait.ms, ran out) is
followed by the next fetch at once, so a record produced later in the same poll window
is returned by that poll, not the next one. A fetch answered at the same simulated
instant (fetch_max_wait_ms=0 on a zero-latency network) is re-sent a millisecond later,
so the clock always moves.
"""

from __future__ import annotations

import pytest
from kafka.errors import KafkaConfigurationError, OffsetOutOfRangeError
from kafka.structs import TopicPartition

from minikafka.cluster import Cluster

TOPIC = "events"
TP = TopicPartition(TOPIC, 0)


def _cluster(**kw) -> Cluster:
    cluster = Cluster(brokers=1, **kw)
    cluster.create_topic(TOPIC, partitions=1)
    return cluster


def _produce_later(cluster: Cluster, delay_ms: int, value: bytes = b"late") -> None:
    producer = cluster.producer(linger_ms=0)
    cluster.clock.call_later(delay_ms, producer.send, TOPIC, value)


def _count_fetches(cluster: Cluster) -> list[int]:
    """The simulated times at which broker 1 is asked for records, from now on."""
    fetches: list[int] = []
    broker = cluster.brokers[1]
    handle = broker.handle_fetch

    def counting(*args):
        fetches.append(cluster.now_ms)
        return handle(*args)

    broker.handle_fetch = counting
    return fetches


def _values(batch) -> list[bytes]:
    return [r.value for records in batch.values() for r in records]


def test_poll_returns_a_record_produced_after_the_first_fetch_came_back_empty():
    cluster = _cluster()
    consumer = cluster.consumer(TOPIC, auto_offset_reset="earliest")
    start = cluster.now_ms
    _produce_later(cluster, 900)  # the first long poll (500 ms) ends empty before this
    batch = consumer.poll(timeout_ms=2_000)
    assert _values(batch) == [b"late"]
    # Returned as soon as the record arrived, not at the timeout.
    assert start + 900 <= cluster.now_ms < start + 950


def test_poll_with_fetch_max_wait_zero_times_out_without_spinning():
    for latency in (0, 1):
        cluster = _cluster(latency_ms=latency)
        consumer = cluster.consumer(TOPIC, auto_offset_reset="earliest", fetch_max_wait_ms=0)
        start = cluster.now_ms
        fetches = _count_fetches(cluster)
        assert consumer.poll(timeout_ms=50) == {}
        assert cluster.now_ms == start + 50
        # Fetched again and again, but never twice in one simulated millisecond.
        assert 10 <= len(fetches) <= 51
        assert len(set(fetches)) == len(fetches)


def test_poll_with_fetch_max_wait_zero_returns_a_later_record():
    cluster = _cluster(latency_ms=0)
    consumer = cluster.consumer(TOPIC, auto_offset_reset="earliest", fetch_max_wait_ms=0)
    _produce_later(cluster, 30)
    assert _values(consumer.poll(timeout_ms=100)) == [b"late"]


def test_poll_zero_still_lets_a_millisecond_pass():
    cluster = _cluster(latency_ms=0)
    consumer = cluster.consumer(TOPIC, auto_offset_reset="earliest", fetch_max_wait_ms=0)
    start = cluster.now_ms
    assert consumer.poll(0) == {}
    assert cluster.now_ms == start + 1


def test_a_group_member_gets_a_record_produced_mid_poll():
    cluster = _cluster()
    consumer = cluster.consumer(TOPIC, group_id="g", auto_offset_reset="earliest",
                                enable_auto_commit=False)
    # Join the group and reach the log's end first.
    for _ in range(20):
        consumer.poll(timeout_ms=200)
        if consumer.assignment():
            break
    assert consumer.assignment() == {TP}
    consumer.poll(timeout_ms=600)
    start = cluster.now_ms
    _produce_later(cluster, 900)
    batch = consumer.poll(timeout_ms=2_000)
    assert _values(batch) == [b"late"]
    assert start + 900 <= cluster.now_ms < start + 950


def test_buffered_records_come_first_and_the_next_fetch_is_prefetched():
    cluster = _cluster()
    producer = cluster.producer(linger_ms=0)
    for i in range(5):
        producer.send(TOPIC, b"%d" % i)
    producer.flush()
    consumer = cluster.consumer(TOPIC, auto_offset_reset="earliest")
    first = consumer.poll(timeout_ms=1_000, max_records=2)
    assert _values(first) == [b"0", b"1"]
    now = cluster.now_ms
    assert _values(consumer.poll(timeout_ms=1_000, max_records=3)) == [b"2", b"3", b"4"]
    assert cluster.now_ms == now  # from the buffer: no waiting
    assert TP in consumer._in_flight  # drained to empty: the next fetch is on its way


def test_the_same_seed_gives_the_same_journal():
    def run():
        cluster = _cluster(seed=3)
        consumer = cluster.consumer(TOPIC, group_id="g", auto_offset_reset="earliest")
        for delay in (100, 700, 1_300, 2_900):
            _produce_later(cluster, delay, b"%d" % delay)
        got = []
        for _ in range(10):
            got.extend(_values(consumer.poll(timeout_ms=700)))
        return got, [(e.time_ms, e.kind, e.fields) for e in cluster.journal]

    first = run()
    assert first[0] == [b"100", b"700", b"1300", b"2900"]
    assert run() == first


def test_one_fetch_per_partition_at_a_time_over_long_idle_polls():
    """A request's timeout (request_timeout_ms) ends that request only: it must not cut
    short a later fetch of the same partition at the same offset."""
    cluster = _cluster()
    consumer = cluster.consumer(TOPIC, auto_offset_reset="earliest")
    fetches = _count_fetches(cluster)
    start = cluster.now_ms
    for _ in range(4):
        assert consumer.poll(timeout_ms=60_000) == {}
    # One long poll (500 ms) plus a round trip at a time, and no more.
    assert len(fetches) <= 240_000 // 502 + 1
    assert all(b - a >= 500 for a, b in zip(fetches, fetches[1:]))
    assert cluster.now_ms == start + 240_000


# -- fetch.min.bytes: the broker holds a fetch until enough bytes are ready ---------------


def _produce_every(cluster: Cluster, every_ms: int, count: int, size: int = 100) -> None:
    producer = cluster.producer(linger_ms=0)
    for i in range(1, count + 1):
        cluster.clock.call_later(i * every_ms, producer.send, TOPIC, b"v" * size)


def _batch_bytes(cluster: Cluster) -> int:
    """The stored size of one of _produce_every's batches (one record each)."""
    log = cluster.brokers[1].replicas[(TOPIC, 0)].log
    sizes = {b.size_bytes for b in log.batches()}
    assert len(sizes) == 1
    return sizes.pop()


def test_fetch_min_bytes_holds_the_fetch_until_enough_bytes_are_ready():
    cluster = _cluster()
    consumer = cluster.consumer(TOPIC, auto_offset_reset="earliest", fetch_min_bytes=1_000)
    start = cluster.now_ms
    _produce_every(cluster, 10, 40)
    batch = consumer.poll(timeout_ms=2_000)
    size = _batch_bytes(cluster)
    needed = -(-1_000 // size)  # the fewest one-record batches that make 1,000 bytes
    assert needed > 1
    assert len(_values(batch)) == needed
    assert start + needed * 10 <= cluster.now_ms < start + needed * 10 + 5


def test_fetch_min_bytes_one_answers_with_the_first_record():
    cluster = _cluster()
    consumer = cluster.consumer(TOPIC, auto_offset_reset="earliest")
    start = cluster.now_ms
    _produce_every(cluster, 10, 40)
    assert len(_values(consumer.poll(timeout_ms=2_000))) == 1
    assert start + 10 <= cluster.now_ms < start + 15


def test_fetch_max_wait_ms_bounds_the_wait_for_fetch_min_bytes():
    cluster = _cluster()
    consumer = cluster.consumer(TOPIC, auto_offset_reset="earliest",
                                fetch_min_bytes=1_000_000, fetch_max_wait_ms=300)
    start = cluster.now_ms
    _produce_every(cluster, 7, 100)
    values = _values(consumer.poll(timeout_ms=2_000))
    # Answered when the long poll ran out, with what had arrived by then (one record
    # every 7 ms: 42 of them by 294 ms, the next at 301 ms).
    assert start + 300 <= cluster.now_ms < start + 305
    assert len(values) == 42


def test_a_partition_counts_at_most_max_partition_fetch_bytes_towards_fetch_min_bytes():
    cluster = _cluster()
    _produce_every(cluster, 1, 50)
    cluster.clock.run_until(cluster.now_ms + 100)
    size = _batch_bytes(cluster)
    # Far more than min_bytes is ready, but one fetch may carry only max bytes of it.
    consumer = cluster.consumer(TOPIC, auto_offset_reset="earliest", fetch_min_bytes=10 * size,
                                max_partition_fetch_bytes=5 * size, fetch_max_wait_ms=200)
    start = cluster.now_ms
    assert len(_values(consumer.poll(timeout_ms=1_000))) == 5
    assert cluster.now_ms >= start + 200


def test_a_first_batch_larger_than_fetch_min_bytes_is_answered_at_once():
    cluster = _cluster()
    _produce_every(cluster, 1, 1, size=5_000)
    cluster.clock.run_until(cluster.now_ms + 10)
    consumer = cluster.consumer(TOPIC, auto_offset_reset="earliest", fetch_min_bytes=4_000,
                                max_partition_fetch_bytes=1_000)
    start = cluster.now_ms
    assert len(_values(consumer.poll(timeout_ms=1_000))) == 1
    assert cluster.now_ms < start + 5


def test_fetch_min_bytes_zero_answers_at_once_even_with_nothing_to_return():
    cluster = _cluster()
    consumer = cluster.consumer(TOPIC, auto_offset_reset="earliest", fetch_min_bytes=0)
    fetches = _count_fetches(cluster)
    assert consumer.poll(timeout_ms=20) == {}
    assert len(fetches) > 2  # each empty answer came back at once, so it fetched again


def test_negative_fetch_settings_are_rejected():
    cluster = _cluster()
    for name in ("fetch_min_bytes", "fetch_max_wait_ms"):
        with pytest.raises(KafkaConfigurationError, match=f"{name}: Value must be at least 0"):
            cluster.consumer(TOPIC, **{name: -1})


def test_an_offset_the_log_no_longer_has_raises_with_auto_offset_reset_none():
    cluster = Cluster(brokers=1, seed=5)
    cluster.create_topic("t", partitions=1, replication_factor=1)
    producer = cluster.producer()
    for i in range(3):
        producer.send("t", value=b"%d" % i)
    producer.flush()
    tp = TopicPartition("t", 0)
    reader = cluster.consumer(auto_offset_reset="none")
    reader.assign([tp])
    reader.seek(tp, 10)  # past the log end
    with pytest.raises(OffsetOutOfRangeError) as raised:
        reader.poll(timeout_ms=1_000)
    assert raised.value.args[0] == {tp: 10}  # kafka-python's shape: {partition: offset}
    reader.seek(tp, 1)
    assert [r.value for r in reader.poll(timeout_ms=1_000)[tp]] == [b"1", b"2"]


def test_a_deserializer_error_keeps_the_position_at_the_bad_record() -> None:
    # As the Java consumer does: records before the bad one are returned, then every
    # poll raises until the application seeks past it.
    import json

    cluster = Cluster(brokers=1, seed=3)
    cluster.create_topic("orders", partitions=1)
    producer = cluster.producer()
    for value in (b'{"n": 0}', b'{"n": 1}', b"not json", b'{"n": 3}'):
        producer.send("orders", value=value)
    producer.flush()
    consumer = cluster.consumer(value_deserializer=json.loads)
    tp = TopicPartition("orders", 0)
    consumer.assign([tp])
    consumer.seek(tp, 0)
    assert [r.value for r in consumer.poll(timeout_ms=1_000)[tp]] == [{"n": 0}, {"n": 1}]
    for _ in range(2):
        with pytest.raises(json.JSONDecodeError):
            consumer.poll(timeout_ms=1_000)
        assert consumer.position(tp) == 2
    consumer.seek(tp, 3)
    assert [r.value for r in consumer.poll(timeout_ms=1_000)[tp]] == [{"n": 3}]
