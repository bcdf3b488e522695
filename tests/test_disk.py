"""On-disk mode: Kafka's segment files, restarts that reload them, torn-tail recovery."""

from __future__ import annotations

from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatch

from minikafka.cluster import Cluster
from minikafka.core.records import RecordBatch
from minikafka.core.storage import (
    INDEX_ENTRY,
    CorruptBatch,
    batch_length,
    decode_batch,
    encode_batch,
    read_checkpoint,
)
from minikafka.dump import dump_files, dump_partition_log


def disk_cluster(tmp_path: Path, **config) -> Cluster:
    cluster = Cluster(brokers=3, seed=9, log_dir=tmp_path)
    cluster.create_topic("t", partitions=1, replication_factor=3,
                         config={"internal.segment.bytes": 600, **config})
    return cluster


def produce(cluster: Cluster, start: int, n: int, **kw) -> None:
    producer = cluster.producer(linger_ms=0, **kw)
    for i in range(start, start + n):
        producer.send("t", key=b"k%d" % (i % 7), value=b"value-%d" % i,
                      headers=[("n", b"%d" % i)]).get()
    cluster.settle()


def files_of(tmp_path: Path, broker: int) -> Path:
    return tmp_path / f"broker-{broker}" / "t-0"


def parse(path: Path) -> list[DefaultRecordBatch]:
    data = path.read_bytes()
    out, pos = [], 0
    while pos < len(data):
        size = batch_length(data, pos)
        out.append(DefaultRecordBatch(data[pos:pos + size]))
        pos += size
    return out


def values(replica) -> list[tuple[int, bytes]]:
    return [(r.offset, r.value) for b in replica.log.batches() for r in b.iter_records()]


def test_each_broker_writes_kafka_named_segment_files_with_real_crcs(tmp_path):
    cluster = disk_cluster(tmp_path)
    produce(cluster, 0, 20)
    for b in cluster.brokers:
        replica = cluster.brokers[b].replicas[("t", 0)]
        bases = [s.base_offset for s in replica.log.segments]
        d = files_of(tmp_path, b)
        assert sorted(p.name for p in d.glob("*.log")) == [f"{x:020d}.log" for x in bases]
        assert all((d / f"{x:020d}{s}").exists() for x in bases for s in (".index", ".timeindex"))
        on_disk = [(r.offset, r.value) for p in sorted(d.glob("*.log"))
                   for kb in parse(p) if kb.validate_crc() for r in kb]
        assert on_disk == values(replica)
        assert all(kb.validate_crc() for p in d.glob("*.log") for kb in parse(p))


def test_the_default_in_memory_mode_writes_nothing(tmp_path):
    cluster = Cluster(brokers=1, seed=1)
    cluster.create_topic("t")
    cluster.producer().send("t", value=b"x").get()
    assert cluster.leader_replica("t", 0).log.store is None and cluster.log_dirs == {}


def test_a_restarted_broker_reloads_its_logs_from_its_files(tmp_path):
    cluster = disk_cluster(tmp_path)
    produce(cluster, 0, 20)
    broker = cluster.describe_topic("t").partitions[0].leader
    replica = cluster.brokers[broker].replicas[("t", 0)]
    before, old_log = values(replica), replica.log
    cluster.stop_broker(broker)
    checkpoint = read_checkpoint(tmp_path / f"broker-{broker}" / "replication-offset-checkpoint")
    assert checkpoint == [["t", "0", "20"]]
    cluster.start_broker(broker)
    assert replica.log is not old_log  # read back from disk, not kept in memory
    assert values(replica) == before and replica.high_watermark == 20
    [event] = cluster.journal.of_kind("log.recovered")
    assert (event.log_end_offset, event.truncated_bytes) == (20, 0)
    produce(cluster, 20, 5)
    cluster.advance(10_000)
    assert values(replica)[-1] == (24, b"value-24")


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_a_torn_tail_batch_is_cut_on_recovery_and_nothing_before_it_is_lost(tmp_path, damage):
    cluster = disk_cluster(tmp_path)
    produce(cluster, 0, 20)
    leader = cluster.describe_topic("t").partitions[0].leader
    broker = next(b for b in cluster.brokers if b != leader)
    replica = cluster.brokers[broker].replicas[("t", 0)]
    before = values(replica)
    cluster.stop_broker(broker, clean=False)
    last = sorted(files_of(tmp_path, broker).glob("*.log"))[-1]
    data = bytearray(last.read_bytes())
    last_batch = parse(last)[-1]
    if damage == "truncate":  # the write of the last batch was cut short
        data = data[:-5]
    else:  # a flipped bit in the last batch's payload
        data[-4] ^= 0x10
    last.write_bytes(bytes(data))
    cluster.start_broker(broker)
    [event] = cluster.journal.of_kind("log.recovered")
    assert event.log_end_offset == last_batch.base_offset == 19
    assert values(replica) == before[:-1]
    assert len(last.read_bytes()) == len(data) - (last_batch.size_in_bytes - (
        5 if damage == "truncate" else 0))
    cluster.advance(10_000)  # the follower fetches the lost batch again from the leader
    assert values(replica) == before
    assert broker in cluster.describe_topic("t").partitions[0].isr


def test_segments_after_a_torn_batch_are_dropped(tmp_path):
    cluster = disk_cluster(tmp_path)
    produce(cluster, 0, 20)
    broker = cluster.describe_topic("t").partitions[0].leader
    cluster.stop_broker(broker)
    logs = sorted(files_of(tmp_path, broker).glob("*.log"))
    assert len(logs) >= 3
    middle = logs[1]
    middle.write_bytes(middle.read_bytes()[:-1])
    cluster.start_broker(broker)
    replica = cluster.brokers[broker].replicas[("t", 0)]
    bases = [s.base_offset for s in replica.log.segments]
    assert bases == [int(logs[0].stem), int(middle.stem)]
    assert sorted(files_of(tmp_path, broker).glob("*.log")) == logs[:2]


def test_retention_and_compaction_reach_the_files(tmp_path):
    cluster = disk_cluster(tmp_path, **{"cleanup.policy": "compact,delete",
                                        "retention.bytes": 1500})
    produce(cluster, 0, 40)
    cluster.run_log_cleaner(force=True)
    for b in cluster.brokers:
        replica = cluster.brokers[b].replicas[("t", 0)]
        assert replica.log_start_offset > 0
        d = files_of(tmp_path, b)
        assert sorted(int(p.stem) for p in d.glob("*.log")) == \
            [s.base_offset for s in replica.log.segments]
        on_disk = [(r.offset, r.value) for p in sorted(d.glob("*.log")) for kb in parse(p)
                   for r in kb]
        assert on_disk == values(replica)
    # Restart: the log start offset and the cleaner's progress come back from checkpoints.
    replica = cluster.brokers[1].replicas[("t", 0)]
    start, cleaned, before = replica.log_start_offset, replica.log.cleaner_offset, values(replica)
    cluster.stop_broker(1)
    cluster.start_broker(1)
    assert (replica.log_start_offset, replica.log.cleaner_offset) == (start, cleaned)
    assert values(replica) == before


def test_index_files_point_at_batch_positions_in_the_log_file(tmp_path):
    cluster = disk_cluster(tmp_path, **{"internal.segment.bytes": 100_000})
    produce(cluster, 0, 120)
    d = files_of(tmp_path, 1)
    log_file = d / f"{0:020d}.log"
    entries = list(INDEX_ENTRY.iter_unpack((d / f"{0:020d}.index").read_bytes()))
    assert entries
    starts = {kb.last_offset: pos for kb, pos in _positions(log_file)}
    assert all(starts[rel] == pos for rel, pos in entries)
    # dump-log reads the same files, and an in-memory dump of the log agrees with them.
    replica = cluster.brokers[1].replicas[("t", 0)]
    shown = dump_files(log_file)
    assert shown.offset_index == dump_partition_log(replica.log).segments[0].offset_index
    assert [b.crc for b in shown.batches] == \
        [b.crc for b in dump_partition_log(replica.log).segments[0].batches]
    assert shown.time_index and shown.torn_bytes == 0


def _positions(path: Path):
    data = path.read_bytes()
    pos = 0
    while pos < len(data):
        size = batch_length(data, pos)
        yield DefaultRecordBatch(data[pos:pos + size]), pos
        pos += size


def test_the_batch_codec_round_trips_and_checks_its_crc():
    batch = RecordBatch([(0, 100, b"k", b"v", (("h", b"1"),)), (2, 90, None, None, ())],
                        base_offset=40, producer_id=2, producer_epoch=1, base_sequence=5,
                        is_transactional=True, first_timestamp=100, max_timestamp=100,
                        compression=1, last_offset_delta=3)
    batch.partition_leader_epoch = 4
    data = encode_batch(batch, delete_horizon_ms=5000)
    back, horizon, end = decode_batch(data)
    assert end == len(data) and horizon == 5000
    assert back.records == batch.records
    assert (back.base_offset, back.last_offset, back.producer_id, back.base_sequence,
            back.is_transactional, back.compression, back.partition_leader_epoch) == \
        (40, 43, 2, 5, True, 1, 4)
    kb = DefaultRecordBatch(data)
    assert kb.validate_crc() and [r.value for r in kb] == [b"v", None]
    broken = bytearray(data)
    broken[30] ^= 1
    with pytest.raises(CorruptBatch):
        decode_batch(bytes(broken))
    with pytest.raises(CorruptBatch):
        decode_batch(data[:-1])


def test_a_produced_batch_is_stored_as_the_producer_sent_it():
    """As Kafka does for a v2 batch it need not rewrite: the producer's bytes, with the
    log's offset and leader epoch (both outside the CRC), and no record decoded."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    from minikafka.wire.batches import _records_slot, parse_batch

    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False,
                                        producer_id=7, producer_epoch=0, base_sequence=0,
                                        batch_size=1 << 20)
    for i in range(3):
        builder.append(i, timestamp=1_000 + i, key=b"k", value=b"v%d" % i, headers=[])
    raw = bytes(builder.build())
    batch = parse_batch(raw)
    batch.base_offset, batch.partition_leader_epoch = 42, 3
    data = encode_batch(batch)
    assert data[16:] == raw[16:] and len(data) == len(raw)
    back, _, _ = decode_batch(data)
    assert (back.base_offset, back.partition_leader_epoch) == (42, 3)
    assert [r[3] for r in back.records] == [b"v0", b"v1", b"v2"]
    with pytest.raises(AttributeError):
        _records_slot.__get__(batch)  # nothing was decoded to store it


def test_deleting_a_topic_removes_its_partition_directories(tmp_path):
    cluster = disk_cluster(tmp_path)
    produce(cluster, 0, 3)
    assert all(files_of(tmp_path, b).is_dir() for b in cluster.brokers)
    cluster.delete_topic("t")
    assert not any(files_of(tmp_path, b).exists() for b in cluster.brokers)
