"""A cluster with log dirs keeps everything across a restart: the metadata log it
replays, partitions recovered from their files, producer state, group offsets; and it
refuses directories that are not its own."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from minikafka.cluster import Cluster
from minikafka.core import errors
from minikafka.core.metadata_log import METADATA_DIR
from minikafka.core.records import RecordBatch
from minikafka.core.recovery import LogDirError, read_properties_file
from minikafka.core.storage import read_segment
from minikafka.core.transactions import TV_1, TV_2


def restart(tmp_path: Path, brokers: int = 1, seed: int = 3) -> Cluster:
    """A new cluster on the same directories: what `minikafka serve` does after a kill."""
    return Cluster(brokers=brokers, seed=seed, log_dir=tmp_path)


def tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*"))
            if p.is_file()}


def records(cluster: Cluster, topic: str, partition: int = 0) -> list[bytes]:
    replica = cluster.leader_replica(topic, partition)
    return [r.value for b in replica.log.batches() if not b.is_control
            for r in b.iter_records()]


def raw_produce(cluster: Cluster, topic: str, batch: RecordBatch) -> tuple[int, int]:
    """(error code, base offset) of one batch sent to the leader with acks=1."""
    batch.records = [(d, cluster.now_ms, k, v, h) for d, _, k, v, h in batch.records]
    batch.first_timestamp = batch.max_timestamp = cluster.now_ms  # not old enough for retention
    replica = cluster.leader_replica(topic, 0)
    out = {}
    cluster.brokers[replica.broker_id].handle_produce(
        {(topic, 0): batch}, 1, 30_000, lambda results: out.update(results))
    cluster.settle()
    return out[(topic, 0)][:2]


def idempotent_batch(pid: int, seq: int, value: bytes, transactional: bool = False) -> RecordBatch:
    return RecordBatch([(0, 0, None, value, ())], producer_id=pid, producer_epoch=0,
                       base_sequence=seq, is_transactional=transactional)


def test_topics_configs_partitions_and_epochs_survive_a_restart(tmp_path):
    cluster = Cluster(brokers=3, seed=3, log_dir=tmp_path)
    cluster.create_topic("orders", partitions=3, replication_factor=3,
                         config={"retention.ms": 60_000, "cleanup.policy": "compact"})
    cluster.create_topic("gone", partitions=1, replication_factor=2)
    cluster.delete_topic("gone")
    cluster.alter_topic_config("orders", {"min.insync.replicas": 2})
    cluster.stop_broker(2)
    cluster.advance(20_000)  # leadership moves away from broker 2
    before = cluster.describe_topic("orders")
    pid = cluster.allocate_producer_id()

    again = restart(tmp_path, brokers=3)
    after = again.describe_topic("orders")
    assert again.list_topics() == ["orders"]
    assert after.topic_id == before.topic_id
    assert after.config["retention.ms"] == 60_000 and after.config["cleanup.policy"] == "compact"
    assert after.config["min.insync.replicas"] == 2
    for b, a in zip(before.partitions, after.partitions):
        assert (a.replicas, a.leader, a.leader_epoch) == (b.replicas, b.leader, b.leader_epoch)
        assert set(b.isr) <= set(a.isr)
    assert again.allocate_producer_id() == pid + 1  # producer ids are never handed out twice
    assert again.controller.quorum.term > cluster.controller.quorum.term
    assert not (tmp_path / "broker-1" / "gone-0").exists()


def test_records_and_group_offsets_survive_a_restart(tmp_path):
    cluster = Cluster(brokers=1, seed=3, log_dir=tmp_path)
    cluster.create_topic("t", partitions=2)
    producer = cluster.producer(acks="all")
    sent = [producer.send("t", value=b"v%d" % i, partition=i % 2).get() for i in range(10)]
    consumer = cluster.consumer("t", group_id="g", auto_offset_reset="earliest")
    seen = 0
    while seen < 10:
        seen += sum(len(v) for v in consumer.poll(1_000).values())
    consumer.commit()
    committed = cluster.admin().list_consumer_group_offsets("g")

    again = restart(tmp_path)
    assert records(again, "t", 0) == [b"v%d" % i for i in range(0, 10, 2)]
    assert records(again, "t", 1) == [b"v%d" % i for i in range(1, 10, 2)]
    assert again.describe_topic("t").partitions[0].high_watermark == 5
    assert again.admin().list_consumer_group_offsets("g") == committed
    assert {tp.partition: o.offset for tp, o in committed.items()} == {0: 5, 1: 5}
    assert max(md.offset for md in sent) == 4


def test_an_idempotent_retry_after_a_restart_is_not_written_twice(tmp_path):
    cluster = Cluster(brokers=1, seed=3, log_dir=tmp_path)
    cluster.create_topic("t")
    pid = cluster.allocate_producer_id()
    assert raw_produce(cluster, "t", idempotent_batch(pid, 0, b"a")) == (errors.NONE, 0)
    assert raw_produce(cluster, "t", idempotent_batch(pid, 1, b"b")) == (errors.NONE, 1)

    again = restart(tmp_path)
    # The response to seq 1 was lost in the crash: the producer sends it again.
    assert raw_produce(again, "t", idempotent_batch(pid, 1, b"b")) == (errors.NONE, 1)
    assert raw_produce(again, "t", idempotent_batch(pid, 2, b"c")) == (errors.NONE, 2)
    code, _ = raw_produce(again, "t", idempotent_batch(pid, 5, b"x"))
    assert code == errors.OUT_OF_ORDER_SEQUENCE_NUMBER  # the sequence was recovered too
    assert records(again, "t") == [b"a", b"b", b"c"]


def test_an_open_transaction_is_aborted_after_a_restart(tmp_path):
    cluster = Cluster(brokers=1, seed=3, log_dir=tmp_path)
    cluster.create_topic("t")
    raw_produce(cluster, "t", RecordBatch([(0, 0, None, b"before", ())]))
    pid = cluster.allocate_producer_id()
    raw_produce(cluster, "t", idempotent_batch(pid, 0, b"open", transactional=True))
    raw_produce(cluster, "t", RecordBatch([(0, 0, None, b"after", ())]))
    assert cluster.leader_replica("t", 0).last_stable_offset == 1  # pinned by the open txn

    again = restart(tmp_path)
    replica = again.leader_replica("t", 0)
    assert replica.producers.ongoing == {}
    assert [(a.producer_id, a.first_offset) for a in replica.producers.aborted] == [(pid, 1)]
    assert replica.last_stable_offset == replica.high_watermark == 4  # 3 records + the marker
    [event] = again.journal.of_kind("txn.recovered.aborted")
    assert event.producer_id == pid and event.partitions == ["t-0"]
    assert any("aborted" in line for line in again.recovery_messages)
    # The producer that left it open is fenced by the bumped epoch.
    code, _ = raw_produce(again, "t", idempotent_batch(pid, 1, b"zombie", transactional=True))
    assert code in (errors.INVALID_PRODUCER_EPOCH, errors.PRODUCER_FENCED)


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_a_torn_active_segment_is_cut_at_its_first_bad_batch(tmp_path, damage):
    cluster = Cluster(brokers=1, seed=3, log_dir=tmp_path)
    cluster.create_topic("t", config={"internal.segment.bytes": 300})
    producer = cluster.producer(acks="all", linger_ms=0)
    for i in range(12):
        producer.send("t", value=b"value-%02d" % i).get()
    segments = sorted((tmp_path / "broker-1" / "t-0").glob("*.log"))
    assert len(segments) > 1
    active = segments[-1]
    data = bytearray(active.read_bytes())
    batches, _ = read_segment(bytes(data))
    last_offset = batches[-1][0].base_offset  # one record a batch (linger_ms=0)
    if damage == "truncate":
        data = data[:-3]
    else:
        data[-2] ^= 0x01
    active.write_bytes(bytes(data))

    again = restart(tmp_path)
    assert records(again, "t") == [b"value-%02d" % i for i in range(last_offset)]
    line = next(m for m in again.recovery_messages if "t-0" in m)
    assert "torn tail" in line and f"..{last_offset - 1}" in line
    assert again.leader_replica("t", 0).log_end_offset == last_offset
    # The index was rebuilt: a fetch from the middle of the active segment finds its batch.
    again.create_topic("other")
    consumer = again.consumer(auto_offset_reset="earliest")
    from kafka import TopicPartition
    consumer.assign([TopicPartition("t", 0)])
    consumer.seek(TopicPartition("t", 0), last_offset - 1)
    got = consumer.poll(2_000)
    assert [r.value for r in got[TopicPartition("t", 0)]] == [b"value-%02d" % (last_offset - 1)]


def test_a_torn_metadata_log_keeps_every_whole_record(tmp_path):
    cluster = Cluster(brokers=1, seed=3, log_dir=tmp_path)
    cluster.create_topic("a")
    cluster.create_topic("b")
    log = tmp_path / "broker-1" / METADATA_DIR / "00000000000000000000.log"
    log.write_bytes(log.read_bytes()[:-4])  # b's records (one batch) torn
    again = restart(tmp_path)
    assert again.list_topics() == ["a"]
    assert len(again.describe_topic("a").partitions) == 1
    assert any("torn" in line for line in again.recovery_messages)


def test_meta_properties_are_written_as_kafka_writes_them(tmp_path):
    cluster = Cluster(brokers=2, seed=3, log_dir=tmp_path)
    for b in (1, 2):
        props = read_properties_file(tmp_path / f"broker-{b}" / "meta.properties")
        assert props["node.id"] == str(b) and props["version"] == "1"
        assert props["cluster.id"] == cluster.cluster_id and len(cluster.cluster_id) == 22
    # a restart with another seed keeps the directories' cluster id
    assert Cluster(brokers=2, seed=99, log_dir=tmp_path).cluster_id == cluster.cluster_id


@pytest.mark.parametrize("tamper,message", [
    (lambda p: p.write_text(p.read_text().replace("cluster.id=", "cluster.id=X")),
     "different clusters"),
    (lambda p: p.write_text(p.read_text().replace("version=1", "version=2")), "newer format"),
    (lambda p: p.write_text(p.read_text().replace("node.id=2", "node.id=7")), "node.id 7"),
])
def test_a_directory_of_another_cluster_is_refused_and_left_untouched(tmp_path, tamper, message):
    cluster = Cluster(brokers=2, seed=3, log_dir=tmp_path)
    cluster.create_topic("t", replication_factor=2)
    cluster.producer(acks="all").send("t", value=b"keep me").get()
    tamper(tmp_path / "broker-2" / "meta.properties")
    before = tree(tmp_path)
    with pytest.raises(LogDirError, match=message):
        restart(tmp_path, brokers=2)
    assert tree(tmp_path) == before


def test_directories_the_metadata_does_not_know_are_kept(tmp_path):
    cluster = Cluster(brokers=1, seed=3, log_dir=tmp_path)
    cluster.create_topic("t")
    stranger = tmp_path / "broker-1" / "unknown-0"
    stranger.mkdir()
    (stranger / "00000000000000000000.log").write_bytes(b"not ours")
    cluster.create_topic("u")
    again = restart(tmp_path)
    again.create_topic("v")
    assert (stranger / "00000000000000000000.log").read_bytes() == b"not ours"


def test_a_partition_directory_of_another_topic_id_is_set_aside_not_deleted(tmp_path):
    cluster = Cluster(brokers=1, seed=3, log_dir=tmp_path)
    cluster.create_topic("t")
    cluster.producer().send("t", value=b"x").get()
    meta = tmp_path / "broker-1" / "t-0" / "partition.metadata"
    meta.write_text("version: 0\ntopic_id: 00000000-0000-0000-0000-000000000001\n")
    again = restart(tmp_path)
    [aside] = (tmp_path / "broker-1").glob("t-0.*-stray")
    assert (aside / "00000000000000000000.log").stat().st_size > 0
    assert records(again, "t") == []
    assert any("stray" in line for line in again.recovery_messages)


def test_a_clean_restart_of_more_brokers_than_the_metadata_knows_is_fine_fewer_refused(tmp_path):
    Cluster(brokers=2, seed=3, log_dir=tmp_path).create_topic("t", replication_factor=2)
    with pytest.raises(LogDirError, match="brokers"):
        restart(tmp_path, brokers=1)


@pytest.mark.parametrize("every,expect", [(None, 0), (1, 5), (2, 2)])
def test_flush_messages_fsyncs_as_log_flush_interval_messages_asks(tmp_path, monkeypatch,
                                                                    every, expect):
    config = {} if every is None else {"log.flush.interval.messages": every}
    cluster = Cluster(brokers=1, seed=3, log_dir=tmp_path, broker_config=config)
    cluster.create_topic("t")
    producer = cluster.producer(acks=1, linger_ms=0)
    calls = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real(fd)))
    for i in range(5):
        producer.send("t", value=b"%d" % i).get()
    assert len(calls) == expect


def test_flush_ms_zero_fsyncs_every_append(tmp_path, monkeypatch):
    cluster = Cluster(brokers=1, seed=3, log_dir=tmp_path)
    cluster.create_topic("t", config={"flush.ms": 0})
    calls = []
    monkeypatch.setattr(os, "fsync", lambda fd: calls.append(fd))
    producer = cluster.producer(acks=1, linger_ms=0)
    for i in range(3):
        producer.send("t", value=b"%d" % i).get()
    assert len(calls) == 3


def test_transaction_state_survives_and_an_open_one_is_aborted_at_its_timeout(tmp_path):
    cluster = Cluster(brokers=1, seed=3, log_dir=tmp_path)
    cluster.create_topic("t")
    done = cluster.producer(transactional_id="done")
    done.init_transactions()
    done.begin_transaction()
    done.send("t", value=b"committed").get()
    done.commit_transaction()
    left = cluster.producer(transactional_id="left", transaction_timeout_ms=20_000)
    left.init_transactions()
    left.begin_transaction()
    left.send("t", value=b"open").get()
    pid = cluster.transactions.transactions["left"].producer_id

    again = restart(tmp_path)
    states = {t: (m.producer_id, m.state) for t, m in again.transactions.transactions.items()}
    assert states == {"done": (cluster.transactions.transactions["done"].producer_id,
                               "CompleteCommit"), "left": (pid, "Ongoing")}
    replica = again.leader_replica("t", 0)
    assert replica.last_stable_offset == 2  # pinned by "open" until the coordinator acts
    again.advance(40_000)  # past transaction.timeout.ms and a cleanup interval
    assert again.transactions.transactions["left"].state == "CompleteAbort"
    assert replica.last_stable_offset == replica.high_watermark == 4
    assert [(a.producer_id, a.first_offset) for a in replica.producers.aborted] == [(pid, 2)]
    # The transactional id keeps its producer id; the new producer's epoch fences the old.
    fresh = again.producer(transactional_id="left")
    fresh.init_transactions()
    meta = again.transactions.transactions["left"]
    assert meta.producer_id == pid and meta.producer_epoch > 1


@pytest.mark.parametrize("level, value_version", [(2, 1), (1, 1), (0, 0)])
def test_the_transaction_log_keeps_transaction_version_2_fields_across_a_restart(
        tmp_path, level, value_version):
    """As Kafka's coordinator: value version 1 at transaction.version 1 and up, whose tagged
    fields keep the client's transaction version (2 only from a version-2 client)."""
    cluster = Cluster(brokers=1, seed=3, log_dir=tmp_path,
                      features={"transaction.version": level})
    cluster.create_topic("t")
    producer = cluster.producer(transactional_id="tx")
    producer.init_transactions()
    for _ in range(2):
        producer.begin_transaction()
        producer.send("t", value=b"v").get()
        producer.commit_transaction()
    before = cluster.transactions.transactions["tx"]
    logged = [value for batch in cluster.leader_replica(*_txn_partition(cluster)).log.batches()
              for _, _, _, value, _ in batch.records]
    assert {int.from_bytes(v[:2], "big") for v in logged} == {value_version}

    after = restart(tmp_path).transactions.transactions["tx"]
    assert after.client_version == before.client_version == (TV_2 if level == 2 else TV_1)
    assert (after.producer_id, after.producer_epoch, after.state) == (
        before.producer_id, before.producer_epoch, "CompleteCommit")


def _txn_partition(cluster: Cluster) -> tuple[str, int]:
    topic = cluster.describe_topic("__transaction_state")
    return next(("__transaction_state", p.partition) for p in topic.partitions
                if cluster.leader_replica("__transaction_state", p.partition).log_end_offset)


def test_the_transaction_state_log_is_an_internal_compacted_topic(tmp_path):
    cluster = Cluster(brokers=1, seed=3, log_dir=tmp_path,
                      broker_config={"transaction.state.log.num.partitions": 5})
    cluster.create_topic("t")
    producer = cluster.producer(transactional_id="tx")
    producer.init_transactions()
    topic = cluster.describe_topic("__transaction_state")
    assert topic.internal and len(topic.partitions) == 5
    assert topic.config["cleanup.policy"] == "compact"
    assert "__transaction_state" not in cluster.list_topics()


def test_recovery_cuts_segments_in_place_and_never_rewrites_them(tmp_path):
    cluster = Cluster(brokers=1, seed=3, log_dir=tmp_path)
    cluster.create_topic("t", config={"internal.segment.bytes": 300})
    producer = cluster.producer(acks="all", linger_ms=0, compression_type="gzip")
    for i in range(12):
        producer.send("t", value=b"value-%02d" % i).get()
    logs = sorted((tmp_path / "broker-1" / "t-0").glob("*.log"))
    before = {p.name: (p.stat().st_ino, p.read_bytes()) for p in logs}
    with open(logs[-1], "ab") as f:
        f.write(b"\x00" * 7)  # half a batch header: a write the kill cut short

    mtimes = [p.stat().st_mtime_ns for p in logs[:-1]]
    time.sleep(0.01)

    restart(tmp_path)
    after = {p.name: (p.stat().st_ino, p.read_bytes()) for p in logs}
    assert after == before  # the same files (inodes), the bytes as written, the tail cut
    assert [p.stat().st_mtime_ns for p in logs[:-1]] == mtimes  # closed segments untouched


def test_dynamic_broker_configs_survive_a_restart(tmp_path):
    cluster = Cluster(brokers=2, seed=3, log_dir=tmp_path,
                      broker_config={"log.retention.ms": 1_000_000})
    cluster.create_topic("t", 1, 2)
    cluster.alter_broker_config({"log.retention.ms": 60_000})
    cluster.alter_broker_config({"min.insync.replicas": 2}, broker_id=2)
    cluster.alter_broker_config({"min.insync.replicas": None}, broker_id=2)
    cluster.alter_broker_config({"log.segment.bytes": 2097152}, broker_id=1)

    again = Cluster(brokers=2, seed=3, log_dir=tmp_path,
                    broker_config={"log.retention.ms": 1_000_000})
    assert again.dynamic_broker_config == {None: {"log.retention.ms": 60_000},
                                           1: {"log.segment.bytes": 2097152}}
    assert again.broker_config["min.insync.replicas"] == 1
    assert again.brokers[2].config["min.insync.replicas"] == 1
    assert again.topic_config("t")["retention.ms"] == 60_000
    # log.segment.bytes was set on broker 1 only: its replica rolls at 2097152 bytes
    assert again.topic_config("t")["segment.bytes"] == 1 << 30
    replicas = {b: again.brokers[b].replicas[("t", 0)] for b in (1, 2)}
    assert {b: (r.config["segment.bytes"], r.log.segment_bytes) for b, r in replicas.items()} \
        == {1: (2097152, 2097152), 2: (1 << 30, 1 << 30)}


def test_a_real_kafka_log_directory_is_not_used(tmp_path):
    (tmp_path / "meta.properties").write_text("#\ncluster.id=MkU3OEVBNTcwNTJENDM2Qg\nnode.id=1\n"
                                              "version=1\n")
    (tmp_path / "orders-0").mkdir()
    before = tree(tmp_path)
    with pytest.raises(LogDirError, match="Kafka log directory itself"):
        restart(tmp_path)
    assert tree(tmp_path) == before and sorted(p.name for p in tmp_path.iterdir()) == [
        "meta.properties", "orders-0"]


def test_flush_ms_counts_on_the_cluster_clock(tmp_path, monkeypatch):
    cluster = Cluster(brokers=1, seed=3, log_dir=tmp_path,
                      broker_config={"log.flush.interval.ms": 1_000})
    cluster.create_topic("t")
    calls = []
    monkeypatch.setattr(os, "fsync", lambda fd: calls.append(cluster.now_ms))
    producer = cluster.producer(acks=1, linger_ms=0)
    start = cluster.now_ms
    for wait in (0, 600, 600, 100):
        cluster.advance(wait)
        producer.send("t", value=b"x").get()
    # only the append 1.2 s after the first one (a send takes a few simulated ms)
    assert len(calls) == 1 and 1_200 <= calls[0] - start < 1_300


def test_a_long_metadata_log_is_snapshotted_on_start_and_replays_the_same(tmp_path, monkeypatch):
    from minikafka.core.metadata_log import MetadataLogFiles

    monkeypatch.setattr(MetadataLogFiles, "snapshot_after", 15)
    cluster = Cluster(brokers=3, seed=3, log_dir=tmp_path)
    cluster.create_topic("t", partitions=4, replication_factor=3, config={"retention.ms": 9_000})
    cluster.create_topic("gone")
    cluster.delete_topic("gone")
    cluster.alter_broker_config({"log.retention.ms": 60_000})
    cluster.stop_broker(2)
    cluster.advance(20_000)
    pid = cluster.allocate_producer_id()
    before = cluster.describe_topic("t")
    assert len(cluster.controller.log) > 15

    again = restart(tmp_path, brokers=3)
    meta = tmp_path / "broker-1" / METADATA_DIR
    [snapshot] = meta.glob("*.checkpoint")
    end = int(snapshot.name.split("-")[0])
    assert end == len(cluster.controller.log)  # the snapshot stands for every record before
    assert sorted(p.name for p in meta.glob("*.log")) == [f"{end:020d}.log"]
    after = again.describe_topic("t")
    assert [(p.replicas, p.isr, p.leader, p.leader_epoch, p.elr) for p in after.partitions] == \
        [(p.replicas, p.isr, p.leader, p.leader_epoch, p.elr) for p in before.partitions]
    assert after.topic_id == before.topic_id and after.config["retention.ms"] == 9_000
    assert again.list_topics() == ["t"] and again.allocate_producer_id() == pid + 1
    assert any("snapshot" in line for line in again.recovery_messages)
    again.create_topic("more")  # appended after the snapshot, at offsets from its end

    third = restart(tmp_path, brokers=3)
    assert third.list_topics() == ["more", "t"]
    assert third.dynamic_broker_config == {None: {"log.retention.ms": 60_000}}
    assert third.describe_topic("t").topic_id == before.topic_id
    assert list(meta.glob("*.checkpoint")) == [snapshot]  # few records since: no new one
