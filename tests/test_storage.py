"""Segments, indexes and retention: what Kafka's log does with time and size."""

from __future__ import annotations

import pytest
from kafka.errors import OffsetOutOfRangeError
from kafka.structs import TopicPartition

from minikafka.cluster import Cluster
from minikafka.core.cleaner import delete_old_segments
from minikafka.core.config import TopicConfig
from minikafka.core.log import INDEX_INTERVAL_BYTES, PartitionLog
from minikafka.core.log_manager import apply_retention
from minikafka.core.records import BATCH_OVERHEAD, RecordBatch

DAY = 24 * 3600 * 1000


def batch(offset: int, ts: int, size: int = 200, count: int = 1, key: bytes = b"k") -> RecordBatch:
    value = b"v" * (size // count - 8 - len(key))
    records = [(i, ts, key, value, ()) for i in range(count)]
    return RecordBatch(records, base_offset=offset, first_timestamp=ts, max_timestamp=ts,
                       size_bytes=size)


def fill(log: PartitionLog, n: int, ts: int = 0, size: int = 200, step_ms: int = 0) -> None:
    for i in range(n):
        log.append(batch(log.log_end_offset, ts + i * step_ms, size), ts + i * step_ms)


# -- segments and indexes -------------------------------------------------------------


def test_segments_roll_when_the_next_batch_would_pass_segment_bytes():
    log = PartitionLog(segment_bytes=1000)
    fill(log, 12, size=200)
    # 5 batches of 200 bytes fill 1000 exactly; the 6th starts a new segment.
    assert [s.base_offset for s in log.segments] == [0, 5, 10]
    assert [s.size_bytes for s in log.segments] == [1000, 1000, 400]
    assert all(s.next_offset == n.base_offset for s, n in zip(log.segments, log.segments[1:]))
    # A batch bigger than segment.bytes still goes in (alone) rather than being refused.
    log.append(batch(log.log_end_offset, 0, size=5000), 0)
    assert log.segments[-1].size_bytes == 5000 and log.segments[-1].base_offset == 12


def test_segment_ms_counts_from_the_first_batch_timestamp_not_the_segment_creation():
    log = PartitionLog(segment_ms=1000, now_ms=0)
    t = 10 * DAY  # the log was created long before its first record
    for offset, ts in enumerate([t, t + 400, t + 1000]):
        log.append(batch(offset, ts), ts)
    assert len(log.segments) == 1  # 1000 ms since the first batch: not yet past segment.ms
    log.append(batch(3, t + 1001), t + 1001)
    assert [s.base_offset for s in log.segments] == [0, 3]
    assert log.segments[1].rolling_timestamp == t + 1001


def test_offset_and_time_indexes_are_sparse_every_index_interval_bytes():
    log = PartitionLog()
    sizes = [300 + (i * 37) % 500 for i in range(200)]
    for i, size in enumerate(sizes):
        log.append(batch(i, 1000 + i, size=size), 1000 + i)
    seg = log.segments[0]
    # Kafka's rule, replayed: an entry for a batch once more than index.interval.bytes
    # were written since the last entry (none for the first batch of a segment).
    expected, since, position = [], 0, 0
    for i, size in enumerate(sizes):
        if since > INDEX_INTERVAL_BYTES:
            expected.append((i, position))
            since = 0
        since += size
        position += size
    assert seg.offset_index == expected
    positions = [0] + [p for _, p in expected]
    assert all(b - a > INDEX_INTERVAL_BYTES for a, b in zip(positions, positions[1:]))
    # The time index gets an entry with each offset index entry (timestamps only grow).
    assert seg.time_index == [(1000 + o, o) for o, _ in expected]


def test_a_closing_segment_gets_its_largest_timestamp_in_the_time_index():
    log = PartitionLog(segment_bytes=1000)
    for i, ts in enumerate([5, 50, 20, 40, 10]):
        log.append(batch(i, ts, size=200), ts)
    assert log.segments[0].time_index == []  # under index.interval.bytes: no entry yet
    log.append(batch(5, 60, size=200), 60)  # rolls
    assert log.segments[0].time_index == [(50, 1)]
    assert log.offset_for_timestamp(30) == (1, 50)


# -- retention, as functions over a log ------------------------------------------------


def retention(**overrides) -> TopicConfig:
    return TopicConfig({"retention.ms": -1, **overrides})


def test_retention_ms_is_judged_by_a_segments_largest_timestamp():
    log = PartitionLog(segment_bytes=1000)
    fill(log, 5, ts=0, step_ms=10)           # segment 0: largest timestamp 40
    fill(log, 5, ts=1000, step_ms=10)        # segment 5: largest 1040
    log.append(batch(10, 99_000), 99_000)    # segment 10 (active): 99000
    config = retention(**{"retention.ms": 60_000})
    assert delete_old_segments(log, config, 60_040, high_watermark=11) == []
    [res] = delete_old_segments(log, config, 60_041, high_watermark=11)
    assert (res.reason, res.deleted, res.log_start_offset) == ("retention.ms", (0,), 5)
    assert [s.base_offset for s in log.segments] == [5, 10]
    [res] = delete_old_segments(log, config, 61_100, high_watermark=11)
    assert res.deleted == (5,) and log.log_start_offset == 10


def test_retention_stops_at_the_first_segment_that_must_stay():
    log = PartitionLog(segment_bytes=1000)
    fill(log, 5, ts=0)
    log.append(batch(5, 50_000), 50_000)      # a late record keeps segment 5 young
    fill(log, 4, ts=10)
    fill(log, 5, ts=20)                        # segment 10: old again
    log.append(batch(15, 90_000), 90_000)
    config = retention(**{"retention.ms": 30_000})
    [res] = delete_old_segments(log, config, 60_000, high_watermark=16)
    assert res.deleted == (0,)  # segment 10 is expired too, but deletion is a prefix
    assert [s.base_offset for s in log.segments] == [5, 10, 15]


def test_retention_bytes_deletes_oldest_segments_while_the_log_stays_over_the_limit():
    log = PartitionLog(segment_bytes=1000)
    fill(log, 23, size=200)                    # 4 full segments and 600 bytes active
    assert log.size_bytes == 4600
    config = retention(**{"retention.bytes": 2500})
    [res] = delete_old_segments(log, config, 0, high_watermark=23)
    # 4600 - 2500 = 2100 over: two 1000-byte segments go; a third would leave 1600 < 2500.
    assert res.reason == "retention.bytes" and res.deleted == (0, 5)
    assert log.size_bytes == 2600 and log.log_start_offset == 10
    assert delete_old_segments(log, config, 0, high_watermark=23) == []


def test_nothing_at_or_above_the_high_watermark_is_deleted():
    log = PartitionLog(segment_bytes=1000)
    fill(log, 12, size=200)
    config = retention(**{"retention.ms": 0})
    [res] = delete_old_segments(log, config, 10, high_watermark=7)
    assert res.deleted == (0,) and log.log_start_offset == 5  # segment 5 holds offset 7


def test_an_expired_active_segment_is_rolled_first_then_deleted():
    log = PartitionLog(segment_bytes=1000)
    fill(log, 3, size=200)                     # only the active segment
    config = retention(**{"retention.ms": 100})
    assert delete_old_segments(log, config, 1000, high_watermark=2) == []  # HW < LEO
    assert len(log.segments) == 1 and log.log_start_offset == 0
    [res] = delete_old_segments(log, config, 1000, high_watermark=3)
    assert res.deleted == (0,)
    # Kafka keeps one segment: a new empty active one starting at the log end.
    assert [(s.base_offset, s.batches) for s in log.segments] == [(3, [])]
    assert log.log_start_offset == log.log_end_offset == 3
    assert delete_old_segments(log, config, 10_000, high_watermark=3) == []
    log.append(batch(3, 10_000), 10_000)
    assert log.log_end_offset == 4 and log.read(3, 4)[0].base_offset == 3


def test_compact_only_logs_keep_expired_segments():
    log = PartitionLog(segment_bytes=1000)
    fill(log, 12, size=200)
    config = TopicConfig({"cleanup.policy": "compact", "retention.ms": 0, "retention.bytes": 0})
    assert delete_old_segments(log, config, 10**9, high_watermark=12) == []
    both = TopicConfig({"cleanup.policy": "compact,delete", "retention.ms": 0})
    assert [r.deleted for r in delete_old_segments(log, both, 10**9, 12)] == [(0, 5, 10)]


def test_leader_epochs_before_the_new_log_start_are_folded_into_it():
    log = PartitionLog(segment_bytes=1000)
    for epoch, n in ((0, 4), (1, 4), (3, 4)):
        for _ in range(n):
            b = batch(log.log_end_offset, 0)
            b.partition_leader_epoch = epoch
            log.append(b, 0)
    assert log.epochs == [(0, 0), (1, 4), (3, 8)]
    delete_old_segments(log, retention(**{"retention.bytes": 0}), 0, high_watermark=5)
    assert log.log_start_offset == 5
    assert log.epochs == [(1, 5), (3, 8)]


# -- retention in a cluster -------------------------------------------------------------


def cluster_with(config: dict, brokers: int = 3, **kw) -> Cluster:
    cluster = Cluster(brokers=brokers, seed=11, **kw)
    cluster.create_topic("t", partitions=1, replication_factor=brokers,
                         config={"internal.segment.bytes": 1000, **config})
    return cluster


def produce(cluster: Cluster, n: int, size: int = 100, **kw) -> None:
    producer = cluster.producer(linger_ms=0, **kw)
    for i in range(n):
        producer.send("t", key=b"k%d" % i, value=b"x" * size).get()
    cluster.settle()


def replicas(cluster: Cluster):
    return [cluster.brokers[b].replicas[("t", 0)] for b in sorted(cluster.brokers)]


def test_retention_runs_on_every_replica_on_the_check_interval():
    cluster = cluster_with({"retention.ms": 60_000})
    produce(cluster, 30)
    start = cluster.now_ms
    assert all(len(r.log.segments) > 3 for r in replicas(cluster))
    cluster.advance(60_000)
    assert all(r.log_start_offset == 0 for r in replicas(cluster))  # expired, not yet checked
    cluster.advance(300_000 - (cluster.now_ms - cluster.log_manager.origin_ms) % 300_000)
    events = cluster.journal.of_kind("log.retention")
    assert sorted(e.broker for e in events) == [1, 2, 3]
    assert all(e.time_ms > start + 60_000 and (e.time_ms - cluster.log_manager.origin_ms)
               % 300_000 == 0 for e in events)
    for r in replicas(cluster):
        assert r.log_start_offset == r.log_end_offset == 30
        assert [s.batches for s in r.log.segments] == [[]]
    assert cluster.describe_topic("t").partitions[0].log_start_offset == 30


def test_consumers_below_the_log_start_reset_per_auto_offset_reset():
    cluster = cluster_with({"retention.bytes": 2000}, brokers=1)
    produce(cluster, 40)
    tp = TopicPartition("t", 0)
    early = cluster.consumer(auto_offset_reset="earliest")
    early.assign([tp])
    early.seek(tp, 0)
    late = cluster.consumer(auto_offset_reset="latest")
    late.assign([tp])
    late.seek(tp, 0)
    strict = cluster.consumer(auto_offset_reset="none")
    strict.assign([tp])
    strict.seek(tp, 0)
    cluster.run_log_cleaner()
    start = cluster.describe_topic("t").partitions[0].log_start_offset
    assert 0 < start < 40
    got = early.poll(timeout_ms=1000)
    got = got or early.poll(timeout_ms=1000)  # the first answer is OFFSET_OUT_OF_RANGE
    assert got[tp][0].offset == start
    late.poll(timeout_ms=1000)
    assert late.position(tp) == 40
    with pytest.raises(OffsetOutOfRangeError) as raised:  # kafka-python's fetcher's error
        for _ in range(3):
            strict.poll(timeout_ms=1000)
    assert raised.value.args[0] == {tp: 0}


def test_a_follower_behind_the_leaders_log_start_restarts_there():
    cluster = cluster_with({"retention.ms": 60_000})
    leader_id = cluster.describe_topic("t").partitions[0].leader
    follower_id = next(b for b in cluster.brokers if b != leader_id)
    produce(cluster, 10)
    cluster.pause_follower(follower_id)
    produce(cluster, 30, acks=1)
    cluster.advance(400_000)  # the ISR shrinks, then retention empties the leader's log
    leader = cluster.brokers[leader_id].replicas[("t", 0)]
    follower = cluster.brokers[follower_id].replicas[("t", 0)]
    assert leader.log_start_offset == 40 and follower.log_end_offset == 10
    cluster.resume_follower(follower_id)
    produce(cluster, 5)
    cluster.advance(60_000)
    [event] = cluster.journal.of_kind("truncated.fully")
    assert (event.broker, event.from_leo, event.log_start_offset) == (follower_id, 10, 40)
    assert follower.log_start_offset == 40 and follower.log_end_offset == 45
    assert [b.base_offset for b in follower.log.batches()] == \
        [b.base_offset for b in leader.log.batches()]
    assert follower_id in cluster.describe_topic("t").partitions[0].isr


def test_followers_take_the_leaders_log_start_offset_from_fetches():
    cluster = cluster_with({"retention.bytes": 2000})
    produce(cluster, 40)
    leader_id = cluster.describe_topic("t").partitions[0].leader
    leader = cluster.brokers[leader_id].replicas[("t", 0)]
    # Only the leader's retention runs; its followers learn the new start by fetching.
    assert apply_retention(leader, cluster.now_ms)
    produce(cluster, 1)
    for r in replicas(cluster):
        assert r.log_start_offset == leader.log_start_offset > 0
    followers = [r for r in replicas(cluster) if r is not leader]
    assert all(r.log.segments[0].base_offset < r.log_start_offset for r in followers)
    cluster.run_log_cleaner()  # their next retention pass deletes what lies below it
    assert all(r.log.segments[0].base_offset == r.log_start_offset for r in followers)


def test_an_idle_week_costs_a_handful_of_passes():
    cluster = cluster_with({})  # retention.ms is 7 days
    produce(cluster, 20)
    passes = []
    run = cluster.log_manager.run_pass
    cluster.log_manager.run_pass = lambda task, force=False: passes.append(task) or run(task, force)
    cluster.advance(6 * DAY)
    assert passes == ["retention"]  # the one armed by the appends: nothing due before day 7
    cluster.advance(2 * DAY)
    # Day 7: everything expires; one more pass follows a deletion, for followers that
    # learn the new log start offset only from their next fetch.
    assert passes == ["retention"] * 3
    assert replicas(cluster)[0].log_start_offset == 20
    cluster.advance(30 * DAY)
    assert len(passes) == 3 and cluster.log_manager.scheduled()["retention"] is None


def test_altering_retention_takes_effect_at_the_next_check():
    cluster = cluster_with({}, brokers=1)
    produce(cluster, 30)
    cluster.advance(DAY)
    assert replicas(cluster)[0].log_start_offset == 0
    cluster.alter_topic_config("t", {"retention.ms": 3_600_000})
    cluster.advance(300_000)
    assert replicas(cluster)[0].log_start_offset == 30


def test_altered_segment_bytes_reaches_existing_logs():
    cluster = cluster_with({"internal.segment.bytes": 1 << 20}, brokers=1)
    produce(cluster, 5)
    assert len(replicas(cluster)[0].log.segments) == 1
    cluster.alter_topic_config("t", {"internal.segment.bytes": 2 * (BATCH_OVERHEAD + 120)})
    produce(cluster, 10)
    assert len(replicas(cluster)[0].log.segments) >= 5
