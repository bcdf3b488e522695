"""dump-log: batches and records as kafka-dump-log.sh --print-data-log shows them."""

from __future__ import annotations

import struct

import crc32c
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from minikafka.cluster import Cluster
from minikafka.core.log import PartitionLog
from minikafka.core.records import RecordBatch
from minikafka.core.storage import encode_batch
from minikafka.dump import dump_log, dump_partition_log, read_batch


def builder_bytes(batch: RecordBatch) -> bytes:
    """The batch by kafka-python's own builder: an independent check of minikafka's codec."""
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=batch.compression, is_transactional=batch.is_transactional,
        producer_id=batch.producer_id, producer_epoch=batch.producer_epoch,
        base_sequence=batch.base_sequence, batch_size=1 << 62)
    for delta, ts, key, value, headers in batch.records:
        builder.append(delta, ts, key, value, list(headers))
    return bytes(builder.build())


def cluster_with_data() -> Cluster:
    cluster = Cluster(brokers=1, seed=4)
    cluster.create_topic("t", partitions=1, replication_factor=1,
                         config={"internal.segment.bytes": 600})
    producer = cluster.producer(linger_ms=0)
    producer.send("t", key=b"k0", value=b"hello", headers=[("trace", b"1")]).get()
    for i in range(1, 12):
        producer.send("t", key=b"k%d" % i, value=b"v" * 40).get()
    return cluster


def test_batches_show_their_header_fields_as_the_log_holds_them():
    cluster = cluster_with_data()
    dump = dump_log(cluster, "t", 0)
    log = cluster.leader_replica("t", 0).log
    assert [b.base_offset for b in dump.batches] == [b.base_offset for b in log.batches()]
    for shown, batch in zip(dump.batches, log.batches()):
        assert (shown.last_offset, shown.count, shown.producer_id, shown.producer_epoch,
                shown.base_sequence, shown.partition_leader_epoch) == (
            batch.last_offset, len(batch.records), batch.producer_id, batch.producer_epoch,
            batch.base_sequence, batch.partition_leader_epoch)
        assert shown.is_valid and shown.magic == 2 and shown.compresscodec == "none"
        assert (shown.is_transactional, shown.is_control) == (False, False)
        assert shown.max_timestamp == batch.max_timestamp
    first = dump.records[0]
    assert (first.offset, first.key, first.value, first.headers, first.sequence) == \
        (0, b"k0", b"hello", (("trace", b"1"),), 0)
    assert [s.file for s in dump.segments][:2] == \
        ["00000000000000000000.log", f"{log.segments[1].base_offset:020d}.log"]


def test_the_crc_is_crc32c_over_the_v2_bytes_from_kafka_pythons_builder():
    cluster = cluster_with_data()
    dump = dump_log(cluster, "t", 0)
    for shown, batch in zip(dump.batches, cluster.leader_replica("t", 0).log.batches()):
        # kafka-python's builder writes baseOffset and leader epoch 0; neither is under
        # the CRC, which covers the bytes from the attributes on.
        data = builder_bytes(batch)
        assert shown.crc == crc32c.crc32c(data[21:]) == struct.unpack_from(">I", data, 17)[0]
        assert shown.size == len(data)


def test_positions_run_through_each_segment_file_and_indexes_point_at_batches():
    log = PartitionLog(segment_bytes=20_000)
    for i in range(60):
        log.append(RecordBatch([(0, 1000 + i, b"k", b"x" * 200, ())], base_offset=i,
                               first_timestamp=1000 + i, max_timestamp=1000 + i), 0)
    [seg] = dump_partition_log(log).segments
    position = 0
    for b in seg.batches:
        assert b.position == position
        position += b.size
    starts = {b.last_offset: b.position for b in seg.batches}
    assert seg.offset_index and all(starts[o] == p for o, p in seg.offset_index)
    assert seg.offset_index == tuple((o, starts[o]) for o, _ in log.segments[0].offset_index)
    assert seg.time_index == tuple(log.segments[0].time_index)


def test_transaction_markers_and_compression_are_shown():
    cluster = Cluster(brokers=1, seed=4)
    cluster.create_topic("t", partitions=1, replication_factor=1)
    producer = cluster.producer(transactional_id="tx", compression_type="gzip", linger_ms=0)
    producer.init_transactions()
    producer.begin_transaction()
    producer.send("t", key=b"a", value=b"x" * 300)
    producer.send("t", key=b"b", value=b"y" * 300)
    producer.commit_transaction()
    dump = dump_log(cluster, "t", 0)
    data, marker = dump.batches
    assert (data.count, data.compresscodec, data.is_transactional, data.is_control) == \
        (2, "gzip", True, False)
    assert [r.value for r in data.records] == [b"x" * 300, b"y" * 300]
    assert data.size < 300  # really compressed
    assert (marker.is_control, marker.is_transactional, marker.base_offset) == (True, True, 2)
    assert marker.records[0].marker == "COMMIT" and marker.records[0].coordinator_epoch == 0
    text = dump.render()
    assert "isTransactional: true isControl: true" in text
    assert "endTxnMarker: COMMIT coordinatorEpoch: 0" in text


def test_the_text_looks_like_kafka_dump_log():
    cluster = cluster_with_data()
    text = dump_log(cluster, "t", 0).render()
    lines = text.splitlines()
    assert lines[1] == "Dumping 00000000000000000000.log"
    assert lines[2] == "Log starting offset: 0"
    assert lines[3].startswith(
        "baseOffset: 0 lastOffset: 0 count: 1 baseSequence: 0 lastSequence: 0 producerId: 0 "
        "producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: false isControl: false "
        "deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: ")
    crc = dump_log(cluster, "t", 0).batches[0].crc
    assert lines[3].endswith(f"magic: 2 compresscodec: none crc: {crc} isvalid: true")
    assert lines[4].startswith("| offset: 0 CreateTime: ")
    assert lines[4].endswith("keySize: 2 valueSize: 5 sequence: 0 headerKeys: [trace] "
                             "key: k0 payload: hello")
    short = dump_log(cluster, "t", 0).render(print_data_log=False)
    assert "| offset:" not in short and "baseOffset: 0" in short


def test_a_corrupt_batch_is_reported_invalid():
    batch = RecordBatch([(0, 5, b"k", b"value", ())], first_timestamp=5, max_timestamp=5)
    data = bytearray(encode_batch(batch))
    assert read_batch(bytes(data)).is_valid
    data[-3] ^= 0xFF
    shown = read_batch(bytes(data))
    assert not shown.is_valid and shown.records == ()
    assert DefaultRecordBatch(bytes(data)).validate_crc() is False


def test_compacted_batches_keep_their_header_and_show_the_delete_horizon():
    from minikafka.core.cleaner import compact
    from minikafka.core.config import TopicConfig

    log = PartitionLog()
    log.append(RecordBatch([(0, 7, b"a", b"1", ()), (1, 8, b"b", b"1", ()),
                            (2, 9, b"a", None, ())], producer_id=3, producer_epoch=0,
                           base_sequence=0, first_timestamp=7, max_timestamp=9), 0)
    log.roll(0)
    compact(log, TopicConfig({"cleanup.policy": "compact"}), 1000, 3, force=True)
    [b] = dump_partition_log(log).batches
    assert (b.base_offset, b.last_offset, b.count, b.base_sequence, b.last_sequence) == \
        (0, 2, 2, 0, 2)
    assert b.delete_horizon_ms == 1000 + 24 * 3600 * 1000 and b.is_valid
    assert [(r.offset, r.timestamp, r.key, r.value) for r in b.records] == \
        [(1, 8, b"b", b"1"), (2, 9, b"a", None)]
