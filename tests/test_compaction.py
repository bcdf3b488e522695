"""Log compaction: the latest value per key, offsets kept, tombstones and markers later."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.structs import TopicPartition

from minikafka.cluster import Cluster
from minikafka.core.cleaner import cleanable, compact, needs_cleaning
from minikafka.core.config import TopicConfig
from minikafka.core.log import PartitionLog
from minikafka.core.producer_state import ProducerStateManager
from minikafka.core.records import LOG_APPEND_TIME, RecordBatch

DAY = 24 * 3600 * 1000
COMPACT = TopicConfig({"cleanup.policy": "compact"})


def keyed(log: PartitionLog, pairs, ts: int = 0, per_batch: int = 1, **batch_kw) -> None:
    """Append (key, value) pairs, per_batch records a batch."""
    for i in range(0, len(pairs), per_batch):
        chunk = pairs[i:i + per_batch]
        records = [(d, ts, k, v, (("h", b"%d" % d),)) for d, (k, v) in enumerate(chunk)]
        b = RecordBatch(records, base_offset=log.log_end_offset, first_timestamp=ts,
                        max_timestamp=ts, **batch_kw)
        log.append(b, ts)


def nudge(log: PartitionLog, ts: int = 0) -> None:
    """New data in a closed segment: the cleaner only runs when something is dirty."""
    keyed(log, [(b"nudge", b"%d" % log.log_end_offset)], ts=ts)
    log.roll(ts)


def contents(log: PartitionLog) -> list[tuple[int, bytes | None, bytes | None]]:
    return [(r.offset, r.key, r.value) for b in log.batches() for r in b.iter_records()]


def latest_per_key(pairs) -> dict:
    out = {}
    for offset, (k, v) in enumerate(pairs):
        out[k] = (offset, v)
    return out


def test_compaction_keeps_the_latest_value_per_key_and_its_offset():
    log = PartitionLog(segment_bytes=400)
    pairs = [(b"a", b"1"), (b"b", b"1"), (b"a", b"2"), (b"c", b"1"), (b"b", b"2"),
             (b"a", b"3"), (b"d", b"1"), (b"c", b"2")]
    keyed(log, pairs, per_batch=2)
    log.roll(0)
    end = log.log_end_offset
    result = compact(log, COMPACT, 0, last_stable_offset=end, force=True)
    assert result is not None and result.end_offset == end
    assert contents(log) == [(4, b"b", b"2"), (5, b"a", b"3"), (6, b"d", b"1"),
                             (7, b"c", b"2")]
    assert log.log_end_offset == end and log.cleaner_offset == end
    # Kept batches keep their base offset, last offset and header; headers of records too.
    assert [(b.base_offset, b.last_offset) for b in log.batches()] == [(4, 5), (6, 7)]
    assert all(r.headers for b in log.batches() for r in b.iter_records())


def test_the_active_segment_is_never_cleaned():
    log = PartitionLog(segment_bytes=10**6)
    keyed(log, [(b"a", b"%d" % i) for i in range(10)])
    before = contents(log)
    assert compact(log, COMPACT, 0, last_stable_offset=10, force=True) is None
    assert contents(log) == before
    log.roll(0)
    keyed(log, [(b"a", b"late")])
    compact(log, COMPACT, 0, last_stable_offset=11, force=True)
    assert contents(log) == [(9, b"a", b"9"), (10, b"a", b"late")]


def test_nothing_at_or_past_the_last_stable_offset_is_cleaned():
    log = PartitionLog(segment_bytes=200)
    keyed(log, [(b"a", b"%d" % i) for i in range(12)])
    boundary = log.segments[2].base_offset
    compact(log, COMPACT, 0, last_stable_offset=boundary + 1, force=True)
    # Cleaning stops at the segment holding the LSO; later records all stay.
    assert log.cleaner_offset == boundary
    assert [o for o, _, _ in contents(log)] == [boundary - 1] + list(range(boundary, 12))


def test_min_cleanable_dirty_ratio_decides_when_the_cleaner_takes_a_log():
    log = PartitionLog(segment_bytes=10**6)
    keyed(log, [(b"k%d" % i, b"x" * 92) for i in range(10)])  # 10 batches of 161 bytes
    log.roll(0)
    assert compact(log, COMPACT, 0, 10) is not None  # all dirty: ratio 1.0
    clean = log.segments[0].size_bytes
    keyed(log, [(b"k%d" % i, b"x" * 92) for i in range(10)])
    log.roll(0)
    c = cleanable(log, COMPACT, 0, 20)
    assert c.clean_bytes == clean and c.cleanable_bytes == clean
    assert c.dirty_ratio == 0.5 and not needs_cleaning(c, COMPACT)  # must pass 0.5
    assert compact(log, COMPACT, 0, 20) is None
    keyed(log, [(b"k0", b"y" * 92)])
    log.roll(0)
    assert cleanable(log, COMPACT, 0, 21).dirty_ratio > 0.5
    assert compact(log, COMPACT, 0, 21) is not None
    assert sorted(k for _, k, _ in contents(log)) == [b"k%d" % i for i in range(10)]
    lenient = TopicConfig({"cleanup.policy": "compact", "min.cleanable.dirty.ratio": 0.01})
    keyed(log, [(b"k1", b"z")])
    log.roll(0)
    assert compact(log, COMPACT, 0, 22) is None
    assert compact(log, lenient, 0, 22) is not None


def test_min_compaction_lag_keeps_young_segments_dirty():
    config = TopicConfig({"cleanup.policy": "compact", "min.compaction.lag.ms": 60_000})
    log = PartitionLog(segment_bytes=10**6)
    keyed(log, [(b"a", b"old")], ts=0)
    log.roll(0)
    keyed(log, [(b"a", b"new")], ts=50_000)
    log.roll(50_000)
    compact(log, config, 70_000, last_stable_offset=2, force=True)
    assert contents(log) == [(0, b"a", b"old"), (1, b"a", b"new")]  # 2nd segment too young
    compact(log, config, 110_000, last_stable_offset=2, force=True)
    assert contents(log) == [(1, b"a", b"new")]


def test_tombstones_go_delete_retention_ms_after_the_cleaning_that_saw_them():
    log = PartitionLog(segment_bytes=10**6)
    keyed(log, [(b"a", b"1"), (b"b", b"1"), (b"a", None), (b"c", b"1")])
    log.roll(0)
    t0 = 1_000_000
    compact(log, COMPACT, t0, 4, force=True)
    assert contents(log) == [(1, b"b", b"1"), (2, b"a", None), (3, b"c", b"1")]
    assert log.delete_horizons == {2: t0 + DAY}
    nudge(log)
    compact(log, COMPACT, t0 + DAY - 1, 5, force=True)
    assert (2, b"a", None) in contents(log)
    nudge(log)
    compact(log, COMPACT, t0 + DAY, 6, force=True)
    assert contents(log) == [(1, b"b", b"1"), (3, b"c", b"1"), (5, b"nudge", b"5")]
    assert log.log_end_offset == 6 and log.delete_horizons == {}


def test_aborted_records_are_dropped_and_markers_outlive_them():
    from minikafka.core.records import ABORT_MARKER, COMMIT_MARKER, control_batch

    log = PartitionLog(segment_bytes=10**6)
    producers = ProducerStateManager()

    def append(b):
        b.base_offset = log.log_end_offset
        log.append(b, 0)
        producers.update(b)

    def data(seq, key, value):
        return RecordBatch([(0, 0, key, value, ())], base_sequence=seq, producer_id=7,
                           producer_epoch=0, is_transactional=True)

    append(data(0, b"a", b"aborted"))                 # 0
    append(control_batch(ABORT_MARKER, 7, 0, 0))      # 1
    append(data(1, b"b", b"committed"))               # 2
    append(control_batch(COMMIT_MARKER, 7, 0, 0))     # 3
    append(RecordBatch([(0, 0, b"b", b"plain", ())]))  # 4: supersedes 2
    append(data(2, b"c", b"c1"))                      # 5
    append(control_batch(COMMIT_MARKER, 7, 0, 0))     # 6
    log.roll(0)

    def layout():
        return [(b.base_offset, b.is_control, len(b.records)) for b in log.batches()
                if not (b.records and b.records[0][2] == b"nudge")]

    t0 = 10 * DAY
    compact(log, COMPACT, t0, 7, producers, force=True)
    # The aborted record is gone; the markers stay: the abort marker guards what this
    # cleaning removed, the first commit marker the batch it emptied.
    assert layout() == [(1, True, 1), (3, True, 1), (4, False, 1), (5, False, 1), (6, True, 1)]
    nudge(log)
    compact(log, COMPACT, t0 + 1, 8, producers, force=True)
    # Nothing of those two transactions is left: their markers get a delete horizon.
    assert log.delete_horizons == {1: t0 + 1 + DAY, 3: t0 + 1 + DAY}
    nudge(log)
    compact(log, COMPACT, t0 + DAY, 9, producers, force=True)
    assert layout()[:2] == [(1, True, 1), (3, True, 1)]
    nudge(log)
    compact(log, COMPACT, t0 + 1 + DAY, 10, producers, force=True)
    # The last transaction's marker stays: its data is the producer's last batch.
    assert layout() == [(4, False, 1), (5, False, 1), (6, True, 1)]
    assert log.log_end_offset == 10


def test_an_active_producers_last_batch_stays_even_when_emptied():
    log = PartitionLog(segment_bytes=10**6)
    producers = ProducerStateManager()
    for seq, (k, v) in enumerate([(b"a", b"1"), (b"a", b"2"), (b"a", b"3")]):
        b = RecordBatch([(0, 0, k, v, ())], base_offset=log.log_end_offset, producer_id=3,
                        producer_epoch=0, base_sequence=seq)
        log.append(b, 0)
        producers.update(b)
    log.append(RecordBatch([(0, 0, b"a", b"4", ())], base_offset=3), 0)  # another writer
    log.append(RecordBatch([(0, 0, b"q", b"q", ())], base_offset=4), 0)
    log.roll(0)
    compact(log, COMPACT, 0, 5, producers, force=True)
    kept = [(b.base_offset, b.producer_id, b.base_sequence, len(b.records))
            for b in log.batches()]
    assert kept == [(2, 3, 2, 0), (3, -1, -1, 1), (4, -1, -1, 1)]


def test_keyless_records_are_dropped_but_the_rounds_last_batch_stays():
    log = PartitionLog(segment_bytes=10**6)
    keyed(log, [(b"a", b"1"), (None, b"no key"), (None, b"no key either")])
    log.roll(0)
    compact(log, COMPACT, 0, 3, force=True)
    # Kafka rejects keyless records on compacted topics and its cleaner drops any it
    # finds; the last batch of a cleaning stays, empty, so the last offset is kept.
    assert [(b.base_offset, b.last_offset, len(b.records)) for b in log.batches()] == \
        [(0, 0, 1), (2, 2, 0)]


def test_cleaned_small_segments_are_merged_up_to_segment_bytes():
    log = PartitionLog(segment_bytes=300)
    keyed(log, [(b"a", b"%d" % i) for i in range(30)])
    log.roll(0)
    before = len(log.segments)
    compact(log, COMPACT, 0, 30, force=True)
    assert len(log.segments) == before  # each segment was already full: no merging
    nudge(log)
    compact(log, COMPACT, 0, 31, force=True)
    assert len(log.segments) <= 3  # the emptied segments now fit in one
    assert contents(log) == [(29, b"a", b"29"), (30, b"nudge", b"30")]


# -- the property ------------------------------------------------------------------------

keys = st.sampled_from([b"a", b"b", b"c", b"d", b"e"])
values = st.one_of(st.none(), st.binary(min_size=1, max_size=30))


@settings(max_examples=60, deadline=None)
@given(pairs=st.lists(st.tuples(keys, values), min_size=1, max_size=80),
       per_batch=st.integers(1, 5), segment_bytes=st.integers(100, 2000),
       tail=st.lists(st.tuples(keys, values), min_size=1, max_size=10))
def test_compaction_property(pairs, per_batch, segment_bytes, tail):
    log = PartitionLog(segment_bytes=segment_bytes)
    keyed(log, pairs, per_batch=per_batch)
    log.roll(0)
    log.segment_bytes = 10**9
    keyed(log, tail)  # the active segment, never cleaned
    history = pairs + tail
    original = {o: (k, v) for o, k, v in contents(log)}
    end = log.log_end_offset

    def check(cleaned_to: int, tombstones_from: int) -> None:
        """Below cleaned_to: the latest record of each key, tombstones only from
        tombstones_from on (older ones passed delete.retention.ms); above: all records."""
        got = contents(log)
        offsets = [o for o, _, _ in got]
        assert offsets == sorted(set(offsets))  # strictly increasing
        assert all(original[o] == (k, v) for o, k, v in got)  # records never change
        assert log.log_end_offset == end
        cleaned = {k: (o, v) for o, k, v in got if o < cleaned_to}
        assert len(cleaned) == len([o for o in offsets if o < cleaned_to])
        expected = {k: (o, v) for k, (o, v) in latest_per_key(history[:cleaned_to]).items()
                    if v is not None or o >= tombstones_from}
        assert cleaned == expected
        assert [(o, k, v) for o, k, v in got if o >= cleaned_to] == \
            [(o, *history[o]) for o in range(cleaned_to, end)]

    compact(log, COMPACT, 0, end, force=True)
    check(cleaned_to=len(pairs), tombstones_from=0)
    log.roll(DAY)  # the tail becomes cleanable
    compact(log, COMPACT, DAY, end, force=True)  # delete.retention.ms after the first
    check(cleaned_to=end, tombstones_from=len(pairs))


# -- in a cluster --------------------------------------------------------------------------


def test_the_cleaner_compacts_a_topic_by_itself_and_consumers_see_latest_values():
    cluster = Cluster(brokers=3, seed=5)
    cluster.create_topic("prices", partitions=1, replication_factor=3,
                         config={"cleanup.policy": "compact", "internal.segment.bytes": 500})
    producer = cluster.producer(linger_ms=0)
    for i in range(60):
        producer.send("prices", key=b"sku-%d" % (i % 4), value=b"%d" % i).get()
    cluster.advance(15_000)  # a log.cleaner.backoff.ms tick
    cleaned = cluster.journal.of_kind("log.cleaned")
    assert sorted(e.broker for e in cleaned) == [1, 2, 3]
    consumer = cluster.consumer(auto_offset_reset="earliest")
    tp = TopicPartition("prices", 0)
    consumer.assign([tp])
    seen = {}
    for _ in range(5):
        for rec in consumer.poll(timeout_ms=500).get(tp, []):
            seen[rec.key] = rec.value
    assert seen == {b"sku-%d" % k: b"%d" % (56 + k) for k in range(4)}
    leader = cluster.leader_replica("prices", 0)
    closed = sum(len(b.records) for s in leader.log.segments[:-1] for b in s.batches)
    assert closed <= 4 + 1  # the latest per key, and the round's last batch
    assert leader.log_end_offset == 60


def test_read_committed_stays_right_after_compaction():
    cluster = Cluster(brokers=1, seed=3)
    cluster.create_topic("t", partitions=1, replication_factor=1,
                         config={"cleanup.policy": "compact", "internal.segment.bytes": 300})
    producer = cluster.producer(transactional_id="tx", linger_ms=0)
    producer.init_transactions()
    for i in range(6):
        producer.begin_transaction()
        producer.send("t", key=b"k%d" % (i % 2), value=b"v%d" % i)
        producer.flush()
        if i % 3 == 2:
            producer.abort_transaction()
        else:
            producer.commit_transaction()
    plain = cluster.producer(linger_ms=0)
    plain.send("t", key=b"z", value=b"end").get()
    cluster.run_log_cleaner(force=True)

    def read(isolation):
        consumer = cluster.consumer(auto_offset_reset="earliest", isolation_level=isolation)
        consumer.assign([TopicPartition("t", 0)])
        out = []
        for _ in range(5):
            for recs in consumer.poll(timeout_ms=300).values():
                out += [(r.key, r.value) for r in recs]
        return out

    # v2 and v5 were aborted and are gone; the latest committed value per key remains.
    assert read("read_committed") == [(b"k1", b"v3"), (b"k0", b"v4"), (b"z", b"end")]
    assert read("read_uncommitted") == [(b"k1", b"v3"), (b"k0", b"v4"), (b"z", b"end")]


@pytest.mark.parametrize("policy", ["compact", "compact,delete"])
def test_compacted_topics_retain_by_time_only_with_delete_in_the_policy(policy):
    cluster = Cluster(brokers=1, seed=2)
    cluster.create_topic("t", partitions=1, replication_factor=1,
                         config={"cleanup.policy": policy, "internal.segment.bytes": 300,
                                 "retention.ms": 60_000})
    producer = cluster.producer(linger_ms=0)
    for i in range(20):
        producer.send("t", key=b"k%d" % i, value=b"v").get()
    cluster.advance(120_000)
    start = cluster.leader_replica("t", 0).log_start_offset
    assert (start == 20) == (policy == "compact,delete") and start in (0, 20)


def test_a_cleaned_batch_takes_the_max_timestamp_of_the_records_it_keeps():
    """Kafka's cleaner rebuilds a batch it thins out, so retention.ms on a compact,delete
    log counts from the records left, not from the ones removed."""
    records = [(0, 1_000, b"a", b"1", ()), (1, 5_000, b"b", b"2", ())]
    batch = RecordBatch(records, first_timestamp=1_000, max_timestamp=5_000)
    assert batch.with_records(records[:1]).max_timestamp == 1_000
    appended = RecordBatch(records, first_timestamp=9_000, max_timestamp=9_000,
                           timestamp_type=LOG_APPEND_TIME)
    assert appended.with_records(records[:1]).max_timestamp == 9_000  # the broker's time
