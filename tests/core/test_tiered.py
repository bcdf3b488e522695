"""Tiered storage (KIP-405, minikafka.core.tiered): copies after a roll, local and total
retention, the remote log metadata, fetches below the local log, a remote store that is down."""

import pytest

from minikafka import Cluster, TopicPartition
from minikafka.core import errors
from minikafka.core.api.fetch import FetchPartition, fetch_partition
from minikafka.core.api.offsets import list_offsets_of
from minikafka.errors import InvalidConfigurationError

TOPIC = "trucks"
TIERED = {"remote.storage.enable": "true", "segment.ms": "60000",
          "local.retention.ms": "120000", "retention.ms": "600000"}


def cluster_with(topic_config=None, seed=20, brokers=3):
    cluster = Cluster(brokers=brokers, seed=seed,
                      broker_config={"remote.log.storage.system.enable": True})
    cluster.create_topic(TOPIC, partitions=1, replication_factor=min(3, brokers),
                         config=topic_config or TIERED)
    return cluster


def produce(cluster, seconds, every_ms=10_000):
    """One 100-byte report every 10 s: segment.ms=60000 rolls a segment of six a minute."""
    producer = cluster.producer(linger_ms=0)
    for _ in range(seconds * 1000 // every_ms):
        producer.send(TOPIC, key=b"truck-01", value=b"x" * 100).get()
        cluster.advance(every_ms)


def tier(cluster):
    return cluster.remote_log_manager.partition(TOPIC, 0)


def read_from(cluster, offset):
    leader = cluster.leader_replica(TOPIC, 0)
    return fetch_partition(leader, FetchPartition(TOPIC, 0, offset))


def test_closed_segments_are_copied_and_listed_in_the_remote_metadata():
    cluster = cluster_with()
    produce(cluster, 130)
    cluster.advance(30_000)  # one more remote log manager pass (every 30 s)
    t = tier(cluster)
    # Two closed segments, 0-5 and 6-11; the active one (from 12) is never copied.
    assert [(r.base_offset, r.end_offset, r.state) for r in t.metadata] == [
        (0, 5, "COPY_SEGMENT_FINISHED"), (6, 11, "COPY_SEGMENT_FINISHED")]
    assert t.highest_offset_in_remote == 11
    assert t.copy_lag() == (0, 0)
    # Each pass that copied something is in the journal, with the offsets it moved.
    events = [e for e in cluster.journal.since(0) if e.kind == "log.tiered"]
    assert [e.copied for e in events] == [[0], [6]]
    # The remote store holds copies of the records themselves.
    stored = cluster.remote_log_manager.store.segments[(TOPIC, 0)]
    assert [b.base_offset for b in stored[1].batches] == list(range(6, 12))


def test_local_retention_deletes_only_copied_segments_and_total_retention_the_remote():
    cluster = cluster_with()
    produce(cluster, 400)
    t = tier(cluster)
    # local.retention.ms (2 min) removed old local segments; the whole log still starts at 0.
    assert t.log_start_offset == 0
    assert t.local_log_start_offset > 0
    assert all(s.base_offset <= t.highest_offset_in_remote + 1 for s in t.log.segments[:1])
    # Followers follow the leader's local log start offset (they too keep only local data).
    starts = {r.log.log_start_offset for _, r in cluster._running_replicas()}
    assert starts == {t.local_log_start_offset}
    produce(cluster, 600)
    # retention.ms (10 min) now expires remote segments: the log start offset moves.
    assert t.log_start_offset > 0
    assert t.metadata[0].base_offset == t.log_start_offset
    oldest = t.metadata[0]
    assert cluster.now_ms - oldest.max_timestamp <= 600_000 + 30_000


def test_total_retention_by_bytes_counts_remote_and_local_bytes():
    config = {**TIERED, "retention.ms": "-1", "local.retention.ms": "-2",
              "retention.bytes": "5000", "local.retention.bytes": "2000"}
    cluster = cluster_with(config)
    produce(cluster, 900)
    t = tier(cluster)
    remote = sum(r.size_bytes for r in t.metadata)
    local_only = sum(s.size_bytes for s in t.log.segments
                     if s.base_offset > t.highest_offset_in_remote)
    assert t.log_start_offset > 0
    assert remote + local_only <= 5000 + t.metadata[0].size_bytes
    assert t.log.size_bytes <= 2000 + t.log.segments[0].size_bytes + t.log.segments[-1].size_bytes


def test_a_fetch_below_the_local_log_start_is_served_from_the_remote_tier():
    cluster = cluster_with()
    produce(cluster, 400)
    t = tier(cluster)
    assert t.local_log_start_offset >= 12
    answer = read_from(cluster, 0)
    assert answer.error_code == errors.NONE
    assert answer.batches[0].base_offset == 0
    assert answer.log_start_offset == 0  # the whole log's start, not the local one
    # ListOffsets: earliest, earliest local, latest tiered, latest.
    answers = list_offsets_of(cluster, TOPIC, 0, -2, -4, -5, -1)
    assert [a.offset for a in answers] == [0, t.local_log_start_offset,
                                           t.highest_offset_in_remote, 40]
    # A consumer from the earliest offset reads every record, remote ones first.
    consumer = cluster.consumer(TOPIC, auto_offset_reset="earliest", group_id="replay")
    offsets = []
    for _ in range(20):
        for records in consumer.poll(timeout_ms=1000).values():
            offsets += [r.offset for r in records]
    assert offsets == list(range(40))


def test_without_tiered_storage_the_same_fetch_is_out_of_range():
    config = {k: v for k, v in TIERED.items() if k != "remote.storage.enable"}
    config["retention.ms"] = "120000"
    cluster = cluster_with(config)
    produce(cluster, 400)
    assert cluster.remote_log_manager.partitions == {}
    assert cluster.leader_replica(TOPIC, 0).log.log_start_offset > 0
    assert read_from(cluster, 0).error_code == errors.OFFSET_OUT_OF_RANGE
    assert list_offsets_of(cluster, TOPIC, 0, -5)[0].offset == -1


def test_a_remote_store_that_is_down_lags_keeps_local_data_and_fails_remote_reads():
    cluster = cluster_with()
    produce(cluster, 200)
    t = tier(cluster)
    store = cluster.remote_log_manager.store
    copied = t.highest_offset_in_remote
    assert t.local_log_start_offset > 0
    store.available = False
    produce(cluster, 300)
    # Copies fail: the lag grows and no segment that is not remote goes, whatever
    # local.retention.ms (2 min) says: the local log now holds 5 minutes and more.
    segments, lag_bytes = t.copy_lag()
    assert segments >= 4 and lag_bytes > 0
    assert t.failed_copies > 0
    assert t.highest_offset_in_remote == copied
    assert t.local_log_start_offset == copied + 1
    local_start = t.local_log_start_offset
    # Local offsets still read; remote-only ones fail with UNKNOWN_SERVER_ERROR.
    assert read_from(cluster, local_start).error_code == errors.NONE
    assert read_from(cluster, 0).error_code == errors.UNKNOWN_SERVER_ERROR
    # Back up: the next pass copies the backlog and local retention catches up.
    store.available = True
    cluster.advance(60_000)
    assert t.copy_lag() == (0, 0)
    assert t.local_log_start_offset > local_start
    assert read_from(cluster, 0).error_code == errors.NONE


def test_a_consumer_behind_a_down_store_gets_nothing_and_no_exception():
    cluster = cluster_with()
    produce(cluster, 300)
    cluster.remote_log_manager.store.available = False
    consumer = cluster.consumer(auto_offset_reset="earliest")
    consumer.assign([TopicPartition(TOPIC, 0)])
    seen = [r for _ in range(3) for rs in consumer.poll(timeout_ms=500).values() for r in rs]
    assert seen == []
    assert consumer.position(TopicPartition(TOPIC, 0)) == 0  # it retries from the same offset


@pytest.mark.parametrize("broker_on, config, message", [
    (False, {"remote.storage.enable": "true"}, "Tiered Storage functionality is disabled"),
    (True, {"remote.storage.enable": "true", "cleanup.policy": "compact"},
     "unsupported for the compacted topics"),
    (True, {"remote.storage.enable": "true", "local.retention.ms": "700000000"},
     "Value must not be more than retention.ms property value: 604800000"),
    (True, {"remote.storage.enable": "true", "retention.bytes": "1000",
            "local.retention.bytes": "-1"},
     "Value must not be -1 as retention.bytes value is set as 1000."),
])
def test_tiered_topic_configs_kafka_refuses(broker_on, config, message):
    cluster = Cluster(brokers=1, broker_config={"remote.log.storage.system.enable": broker_on})
    with pytest.raises(InvalidConfigurationError, match=message):
        cluster.create_topic(TOPIC, config=config)


def test_the_same_seed_gives_the_same_tiers():
    def run():
        cluster = cluster_with(seed=5)
        produce(cluster, 500)
        return tier(cluster).tiers(), [(ms, tp, r.copied, r.local_deleted)
                                       for ms, tp, r in cluster.remote_log_manager.history]
    assert run() == run()


def test_altering_a_topic_into_a_refused_tiered_config_is_refused_too():
    from kafka.admin import ConfigResource, ConfigResourceType

    def alter(cluster, topic, configs):
        resource = ConfigResource(ConfigResourceType.TOPIC, topic, configs=configs)
        return str(cluster.admin().alter_configs([resource]))

    cluster = cluster_with()
    answer = alter(cluster, TOPIC, {"local.retention.ms": "900000"})
    assert "InvalidConfigurationError: Value must not be more than retention.ms" in answer
    assert int(cluster.leader_replica(TOPIC, 0).config["local.retention.ms"]) == 120_000
    plain = Cluster(brokers=1, seed=1)
    plain.create_topic("t")
    answer = alter(plain, "t", {"remote.storage.enable": "true"})
    assert "Tiered Storage functionality is disabled" in answer
    # An allowed change applies; the remote log manager reads it on its next pass.
    assert "Error" not in alter(cluster, TOPIC, {"local.retention.ms": "60000"})
    assert int(cluster.leader_replica(TOPIC, 0).config["local.retention.ms"]) == 60000


def test_an_idle_partition_rolls_its_expired_active_segment_and_ends_all_remote():
    """Kafka's deletableSegments rolls a non-empty active segment that breaches local
    retention, so the next copy takes it and local retention then deletes it (seen on
    Kafka 4.4.0 with LocalTieredStorage, tests/realkafka/test_tiered_storage_fidelity.py)."""
    cluster = cluster_with()
    produce(cluster, 130)  # offsets 0-12; the active segment holds 12
    cluster.advance(240_000)  # no new data: report 12 passes local.retention.ms
    t = tier(cluster)
    assert t.highest_offset_in_remote == 12
    assert [a.offset for a in list_offsets_of(cluster, TOPIC, 0, -2, -4, -5, -1)] == [0, 13, 12, 13]
    assert cluster.leader_replica(TOPIC, 0).log.size_bytes == 0
    # Every offset is still readable, now all from the remote tier.
    assert read_from(cluster, 12).error_code == errors.NONE


def test_the_remote_log_manager_does_not_tick_while_nothing_is_tiered():
    """A served cluster jumps its clock to the wall clock's time: with no tiered partition
    there are no remote log manager passes to replay on the way (a year is a few events)."""
    cluster = Cluster(brokers=3, seed=20, broker_config={"remote.log.storage.system.enable": True})
    rlm = cluster.remote_log_manager
    passes = []
    run_pass = rlm.run_pass
    rlm.run_pass = lambda: passes.append(cluster.now_ms) or run_pass()
    cluster.advance(365 * 24 * 3600 * 1000)
    assert len(passes) <= 1  # at most the first, which finds nothing and stops
    cluster.create_topic(TOPIC, partitions=1, replication_factor=3, config=TIERED)
    produce(cluster, 120)
    # data arrived: a pass every remote.log.manager.task.interval.ms again
    assert len(passes) >= 4 and len(rlm.history) >= 4
