"""minikafka.core.api on its own: the rules the parity suite relies on, case by case."""
from __future__ import annotations

from minikafka.cluster import Cluster
from minikafka.core import api, errors
from minikafka.core.api.fetch import committed_batches
from minikafka.core.records import ABORT_MARKER, COMMIT_MARKER, RecordBatch, control_batch


def _batch(offset: int, pid: int, value: bytes, transactional: bool = True) -> RecordBatch:
    b = RecordBatch([(0, 1, None, value, ())], producer_id=pid, producer_epoch=0,
                    base_sequence=0, is_transactional=transactional)
    b.base_offset = offset
    return b


def _marker(offset: int, pid: int, kind: int) -> RecordBatch:
    b = control_batch(kind, pid, 0, 1)
    b.base_offset = offset
    return b


def test_committed_batches_drop_only_the_aborted_producer_and_markers():
    """Producers 1 (aborts) and 2 (commits) interleave; producer 1 then commits a second
    transaction. Only producer 1's first transaction is listed as aborted."""
    log = [_batch(0, 1, b"a1"), _batch(1, 2, b"b1"), _batch(2, 1, b"a2"),
           _marker(3, 1, ABORT_MARKER), _batch(4, 2, b"b2"), _marker(5, 2, COMMIT_MARKER),
           _batch(6, 1, b"c1"), _marker(7, 1, COMMIT_MARKER), _batch(8, 9, b"p", False)]
    kept = [b.records[0][3] for b in committed_batches(log, [(1, 0)])]
    assert kept == [b"b1", b"b2", b"c1", b"p"]
    everything = [b.records[0][3] for b in committed_batches(log, None)]
    assert everything == [b"a1", b"b1", b"a2", b"b2", b"c1", b"p"]


def test_max_timestamp_takes_the_first_of_equal_timestamps():
    cluster = Cluster(brokers=1)
    cluster.create_topic("t")
    producer = cluster.producer(linger_ms=0)
    for ts in (100, 300, 300, 200):
        producer.send("t", b"v", timestamp_ms=ts).get()
    found, = api.list_offsets_of(cluster, "t", 0, api.MAX_TIMESTAMP)
    assert (found.error_code, found.offset, found.timestamp) == (errors.NONE, 1, 300)


def test_list_offsets_names_missing_partitions_and_offline_leaders():
    cluster = Cluster(brokers=1)
    cluster.create_topic("t")
    missing, = api.list_offsets_of(cluster, "t", 5, api.LATEST)
    assert missing.error_code == errors.UNKNOWN_TOPIC_OR_PARTITION
    cluster.stop_broker(1)
    offline, = api.list_offsets_of(cluster, "t", 0, api.LATEST)
    assert offline.error_code == errors.LEADER_NOT_AVAILABLE


def test_isolation_level_reads_names_numbers_and_kafka_python_enums():
    from kafka.protocol.consumer import IsolationLevel as KafkaPythonLevel

    assert api.IsolationLevel.of("read_committed") is api.READ_COMMITTED
    assert api.IsolationLevel.of(0) is api.READ_UNCOMMITTED
    assert api.IsolationLevel.of(None) is api.READ_UNCOMMITTED
    assert api.IsolationLevel.of(KafkaPythonLevel.READ_COMMITTED) is api.READ_COMMITTED
