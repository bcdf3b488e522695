"""PartitionLog and SimClock units: offsets, reads, truncation, epochs, time."""

from hypothesis import example, given
from hypothesis import strategies as st

from minikafka.core.clock import SimClock
from minikafka.core.log import PartitionLog
from minikafka.core.records import RecordBatch


def batch(n, ts=0, epoch=0, value=b"v"):
    b = RecordBatch([(i, ts + i, None, value, ()) for i in range(n)],
                    first_timestamp=ts, max_timestamp=ts + n - 1)
    b.partition_leader_epoch = epoch
    return b


def filled(sizes, epochs=None, segment_bytes=1 << 30):
    log = PartitionLog(segment_bytes=segment_bytes)
    for i, n in enumerate(sizes):
        b = batch(n, ts=100 * i, epoch=(epochs or [0] * len(sizes))[i])
        b.base_offset = log.log_end_offset
        log.append(b, 100 * i)
    return log


def test_append_assigns_dense_offsets_and_read_respects_bounds():
    log = filled([3, 2, 4])
    assert log.log_end_offset == 9
    got = log.read(4, 9)
    assert [b.base_offset for b in got] == [3, 5]  # the batch holding offset 4 comes whole
    assert log.read(0, 5) and all(b.last_offset < 5 for b in log.read(0, 5))
    assert log.read(9, 9) == []
    # max_bytes: at least one batch, then stop
    assert len(log.read(0, 9, max_bytes=1)) == 1


def test_segments_roll_by_bytes_and_indexes_are_sparse():
    log = filled([10] * 200, segment_bytes=10_000)
    assert len(log.segments) > 2
    bases = [s.base_offset for s in log.segments]
    assert bases == sorted(bases) and bases[0] == 0
    full = log.segments[:-1]
    assert all(0 < len(s.offset_index) < len(s.batches) for s in full)  # ~1 per 4 KiB
    assert [b.base_offset for b in log.read(555, 2000)][0] == 550


def test_bytes_ready_counts_whole_batches_below_the_limit_across_segments():
    log = filled([10] * 200, segment_bytes=10_000)
    assert len(log.segments) > 2
    sizes = [b.size_bytes for b in log.batches()]
    everything = sum(sizes)
    assert log.bytes_ready(0, log.log_end_offset, everything + 1) == everything
    # From inside a batch: that batch counts whole, as the fetch would return it.
    assert log.bytes_ready(15, 40, everything) == sum(sizes[1:4])
    # It stops counting once `enough` is reached.
    assert log.bytes_ready(0, log.log_end_offset, 1) == sizes[0]
    assert log.bytes_ready(40, 40, 1) == 0 and log.bytes_ready(0, 5, 1) == 0


def test_truncate_drops_whole_batches_and_later_epochs():
    log = filled([3, 3, 3], epochs=[0, 1, 2])
    assert log.epochs == [(0, 0), (1, 3), (2, 6)]
    log.truncate_to(4)
    assert log.log_end_offset == 3 and log.epochs == [(0, 0)]
    log.truncate_to(3)  # nothing to drop
    assert log.log_end_offset == 3


def test_end_offset_for_epoch_is_the_next_epochs_start():
    log = filled([3, 3, 3], epochs=[0, 2, 5])
    assert log.end_offset_for_epoch(0) == (0, 3)
    assert log.end_offset_for_epoch(1) == (0, 3)  # never led in epoch 1: end of epoch 0
    assert log.end_offset_for_epoch(2) == (2, 6)
    assert log.end_offset_for_epoch(5) == (5, 9)
    assert log.end_offset_for_epoch(9) == (5, 9)


def test_offset_for_timestamp():
    log = filled([3, 3])
    assert log.offset_for_timestamp(101) == (4, 101)
    assert log.offset_for_timestamp(0) == (0, 0)
    assert log.offset_for_timestamp(10_000) is None


def test_clock_runs_events_in_order_and_cancels():
    clock = SimClock(seed=1, start_ms=0)
    seen = []
    clock.call_later(5, seen.append, "b")
    clock.call_later(1, seen.append, "a")
    clock.call_later(5, seen.append, "c")  # same time: scheduling order
    cancelled = clock.call_later(3, seen.append, "x")
    cancelled.cancel()
    clock.run_until(4)
    assert seen == ["a"] and clock.now_ms == 4
    clock.run_until(10)
    assert seen == ["a", "b", "c"] and clock.now_ms == 10
    assert clock.run_while(lambda: True, 20) is False and clock.now_ms == 20


def test_same_seed_same_history():
    from minikafka import Cluster

    def history(seed):
        c = Cluster(brokers=3, seed=seed)
        c.create_topic("t", partitions=3, replication_factor=3)
        p = c.producer()
        for i in range(50):
            p.send("t", value=b"%d" % i)
        c.crash_broker(2)
        p.flush()
        c.advance(20_000)
        return [(e.time_ms, e.kind, sorted((k, str(v)) for k, v in e.fields.items()))
                for e in c.journal]

    assert history(5) == history(5)
    assert history(5) != history(6)


# Around every varint boundary (1, 2 and 3 bytes): deltas, key and value lengths, headers.
_SIZES = st.sampled_from([0, 1, 63, 64, 65, 8191, 8192, 8193])


def kafka_python_batch_bytes(records: list[tuple]) -> int:
    from kafka.record.default_records import DefaultRecordBatchBuilder

    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=0, is_transactional=0, producer_id=-1, producer_epoch=-1,
        base_sequence=-1, batch_size=10**8)
    for offset, timestamp, key, value, headers in records:
        builder.append(offset, timestamp, key, value, list(headers))
    return len(builder.build())


@given(st.lists(st.tuples(_SIZES, _SIZES, st.one_of(st.none(), _SIZES), _SIZES,
                          st.booleans()), min_size=1, max_size=6))
def test_a_batch_size_is_the_bytes_kafka_encodes(shapes) -> None:
    """records_size (its inline path and its fallback) counts the bytes of the v2 batch
    kafka-python's DefaultRecordBatchBuilder writes for the same records."""
    from minikafka.core.records import BATCH_OVERHEAD, records_size

    records, offset = [], 0
    for offset_step, timestamp_delta, key_len, value_len, header in shapes:
        offset += offset_step
        key = None if key_len is None else b"k" * key_len
        headers = (("h", b"x"),) if header else ()
        records.append((offset, 1_000 + timestamp_delta, key, b"v" * value_len, headers))
    assert BATCH_OVERHEAD + records_size(records, records[0][1]) == \
        kafka_python_batch_bytes(records)


_LENGTHS = st.one_of(st.integers(0, 70), _SIZES)  # record lengths around 64 too


@given(st.integers(1, 200), st.lists(_LENGTHS, min_size=1, max_size=4),
       st.lists(_LENGTHS, min_size=1, max_size=4), st.lists(_SIZES, min_size=1, max_size=3))
@example(65, [7], [50], [0])  # records 0-63 of 63 bytes; offset delta 64's takes 64
def test_a_producer_batch_size_is_the_bytes_kafka_encodes(n, key_lens, value_lens,
                                                          timestamp_deltas) -> None:
    """A batch as producers build it (offsets 0..n-1, keyed bytes, no headers), counted by
    records_size's C-level path, is the size kafka-python encodes, across varint sizes."""
    from minikafka.core.records import BATCH_OVERHEAD, records_size

    records = [(i, 1_000 + timestamp_deltas[i % len(timestamp_deltas)],
                b"k" * key_lens[i % len(key_lens)], b"v" * value_lens[i % len(value_lens)], ())
               for i in range(n)]
    first = records[0][1]
    assert BATCH_OVERHEAD + records_size(records, first) == kafka_python_batch_bytes(records)


def test_deadlines_drop_settled_items_and_still_expire_the_rest() -> None:
    """Request timeouts answered early are purged once the entries double (so 30 s of
    answered requests are not kept alive), and an unanswered one still times out."""
    from minikafka.core.clock import Deadlines, SimClock

    clock = SimClock()
    expired = []
    timeouts = Deadlines(clock, lambda item: item["done"] or expired.append(item),
                         lambda item: item["done"])
    items = [{"done": False, "n": n} for n in range(1_000)]
    for item in items:
        timeouts.add(clock.now_ms + 30_000, item)
        item["done"] = item["n"] != 500  # every request but one is answered
    assert len(timeouts._items) < 200
    clock.run_until(clock.now_ms + 30_000)
    assert [item["n"] for item in expired] == [500]


def test_deadlines_expire_in_deadline_order_and_equal_ones_as_added() -> None:
    from minikafka.core.clock import Deadlines, SimClock

    clock = SimClock()
    expired = []

    def expire(item: str) -> None:
        expired.append(item)
        if item == "b1":  # an expiry that adds a later deadline
            timeouts.add(clock.now_ms + 5, "late")

    timeouts = Deadlines(clock, expire)
    start = clock.now_ms
    for offset, item in [(30, "c"), (10, "a1"), (20, "b1"), (10, "a2"), (20, "b2"), (40, "d")]:
        timeouts.add(start + offset, item)
    clock.run_until(start + 10)
    assert expired == ["a1", "a2"]
    clock.run_until(start + 100)
    assert expired == ["a1", "a2", "b1", "b2", "late", "c", "d"]


def test_no_quota_set_records_no_quota_sample() -> None:
    from minikafka.core.api.client_quotas import record_and_get_throttle_ms

    samples: dict = {}
    assert record_and_get_throttle_ms(samples, {}, "producer_byte_rate", "User:alice",
                                      "producer-1", 10**9, 0) == 0
    assert samples == {}
    quotas = {(("user", "alice"),): {"producer_byte_rate": 1_000.0}}
    assert record_and_get_throttle_ms(samples, quotas, "producer_byte_rate", "User:alice",
                                      "producer-1", 10**9, 0) > 0
    assert samples
