"""Several log directories per broker (log.dirs=/a,/b, JBOD), in process: where partitions
go, what DescribeLogDirs lists, AlterReplicaLogDirs moving a replica, and a restart
finding each partition in whichever directory holds it."""
from __future__ import annotations

from pathlib import Path

import pytest
from kafka import errors as Errors
from kafka.structs import TopicPartitionReplica

from minikafka.cluster import Cluster
from minikafka.core.api.log_dirs import REPLICA_MOVE_MS
from minikafka.core.recovery import LogDirError, read_properties_file


def two_dirs(tmp_path: Path) -> list[Path]:
    return [tmp_path / "a", tmp_path / "b"]


def placed(cluster: Cluster, broker: int, topic: str | None = None) -> dict[str, list[int]]:
    """{log dir: [partitions of `topic` (or every topic's)]} of one broker, current replicas."""
    [described] = cluster.admin().describe_log_dirs(brokers=[broker])
    out = {}
    for d in described["log_dirs"]:
        out[d["log_dir"]] = sorted(
            p["partition_index"] for t in d["topics"] if topic in (None, t["name"])
            for p in t["partitions"] if not p["is_future_key"])
    return out


def values(cluster: Cluster, topic: str, partition: int) -> list[bytes]:
    replica = cluster.leader_replica(topic, partition)
    return [r.value for b in replica.log.batches() for r in b.iter_records()]


def test_each_dir_has_its_own_meta_properties_and_partitions_spread_over_them(tmp_path):
    a, b = two_dirs(tmp_path)
    cluster = Cluster(brokers=2, log_dir=[a, b])
    ids = set()
    for root in (a, b):
        for broker in (1, 2):
            props = read_properties_file(root / f"broker-{broker}" / "meta.properties")
            assert props["node.id"] == str(broker)
            assert props["cluster.id"] == cluster.cluster_id
            ids.add(props["directory.id"])
    assert len(ids) == 4  # a directory.id per directory
    assert (a / "broker-1" / "__cluster_metadata-0").is_dir()
    assert not (b / "broker-1" / "__cluster_metadata-0").exists()  # metadata: first dir only

    cluster.create_topic("t", partitions=4, replication_factor=2)
    for broker in (1, 2):
        layout = placed(cluster, broker, "t")
        assert layout == {str(a / f"broker-{broker}"): [0, 2], str(b / f"broker-{broker}"): [1, 3]}
        for root, partitions in zip((a, b), ([0, 2], [1, 3])):
            assert sorted(p.name for p in (root / f"broker-{broker}").glob("t-*")) == [
                f"t-{p}" for p in partitions]
    # the fewest partitions wins: a 1-partition topic goes to a, the next to b
    cluster.create_topic("u", partitions=1, replication_factor=1)
    cluster.create_topic("v", partitions=1, replication_factor=1)
    [u_broker] = cluster.describe_topic("u").partitions[0].replicas
    [v_broker] = cluster.describe_topic("v").partitions[0].replicas
    assert placed(cluster, u_broker, "u")[str(a / f"broker-{u_broker}")] == [0]
    where_v = placed(cluster, v_broker, "v")
    assert where_v[str(b / f"broker-{v_broker}") if u_broker == v_broker
                   else str(a / f"broker-{v_broker}")] == [0]


def test_describe_log_dirs_reports_sizes_and_file_system_bytes(tmp_path):
    cluster = Cluster(brokers=1, log_dir=two_dirs(tmp_path))
    cluster.create_topic("t", partitions=2)
    producer = cluster.producer(acks="all")
    for _ in range(6):
        producer.send("t", value=b"x" * 100, partition=0).get()
    [described] = cluster.admin().describe_log_dirs()
    assert described["broker"] == 1 and len(described["log_dirs"]) == 2
    first, second = described["log_dirs"]
    [t0] = first["topics"][0]["partitions"]
    [t1] = second["topics"][0]["partitions"]
    assert t0["partition_index"] == 0 and t0["partition_size"] > 600
    assert t1["partition_index"] == 1 and t1["partition_size"] == 0
    for d in (first, second):
        assert d["error_code"] == 0 and 0 < d["usable_bytes"] <= d["total_bytes"]
    narrowed = cluster.admin().describe_log_dirs({"t": [1]})[0]["log_dirs"]
    assert [[p["partition_index"] for t in d["topics"] for p in t["partitions"]]
            for d in narrowed] == [[], [1]]


def test_alter_replica_log_dirs_moves_a_replica_through_a_future_one(tmp_path):
    a, b = two_dirs(tmp_path)
    cluster = Cluster(brokers=1, log_dir=[a, b])
    cluster.create_topic("t", partitions=2)
    producer = cluster.producer(acks="all")
    for i in range(5):
        producer.send("t", value=b"v%d" % i, partition=0).get()
    admin = cluster.admin()
    replica = TopicPartitionReplica("t", 0, 1)
    target = str(b / "broker-1")
    assert admin.alter_replica_log_dirs({replica: target}) == {replica: Errors.NoError}

    # while the copy runs, the destination lists a future replica
    [described] = admin.describe_log_dirs(brokers=[1])
    future = [(d["log_dir"], p["partition_index"]) for d in described["log_dirs"]
              for t in d["topics"] for p in t["partitions"] if p["is_future_key"]]
    assert future == [(target, 0)]
    assert placed(cluster, 1, "t") == {str(a / "broker-1"): [0], target: [1]}

    cluster.advance(REPLICA_MOVE_MS)
    assert placed(cluster, 1, "t") == {str(a / "broker-1"): [], target: [0, 1]}
    assert not (a / "broker-1" / "t-0").exists()
    assert sorted(p.name for p in (b / "broker-1" / "t-0").iterdir()) == [
        "00000000000000000000.index", "00000000000000000000.log",
        "00000000000000000000.timeindex", "leader-epoch-checkpoint", "partition.metadata"]
    assert not list((b / "broker-1").glob("*-future"))
    # the moved replica keeps taking writes, in its new directory
    producer.send("t", value=b"after", partition=0).get()
    assert b"after" in (b / "broker-1" / "t-0" / "00000000000000000000.log").read_bytes()
    assert values(cluster, "t", 0) == [b"v0", b"v1", b"v2", b"v3", b"v4", b"after"]
    assert [e.kind for e in cluster.journal.events if e.kind.startswith("log_dir.move")] == [
        "log_dir.move.started", "log_dir.move.completed"]


def test_alter_replica_log_dirs_errors_as_kafka_answers_them(tmp_path):
    a, b = two_dirs(tmp_path)
    cluster = Cluster(brokers=2, log_dir=[a, b])
    cluster.create_topic("t", partitions=1, replication_factor=1)
    [host] = cluster.describe_topic("t").partitions[0].replicas
    other = 3 - host
    admin = cluster.admin()
    unknown = TopicPartitionReplica("t", 0, host)
    absent = TopicPartitionReplica("t", 0, other)
    assert admin.alter_replica_log_dirs({
        unknown: str(tmp_path / "c" / f"broker-{host}"),
        absent: str(b / f"broker-{other}"),
    }) == {unknown: Errors.LogDirNotFoundError, absent: Errors.ReplicaNotAvailableError}
    # naming the directory it is in moves nothing
    here = str(a / f"broker-{host}")
    assert admin.alter_replica_log_dirs({unknown: here}) == {unknown: Errors.NoError}
    cluster.advance(REPLICA_MOVE_MS)
    assert placed(cluster, host, "t")[here] == [0]


def test_a_replica_named_before_it_arrives_is_created_in_that_directory(tmp_path):
    """kafka-reassign-partitions sends AlterReplicaLogDirs first: REPLICA_NOT_AVAILABLE,
    and the broker creates the replica in that directory when the reassignment adds it."""
    a, b = two_dirs(tmp_path)
    cluster = Cluster(brokers=2, log_dir=[a, b])
    cluster.create_topic("t", partitions=1, replication_factor=1)
    [host] = cluster.describe_topic("t").partitions[0].replicas
    other = 3 - host
    replica = TopicPartitionReplica("t", 0, other)
    wanted = str(b / f"broker-{other}")  # not the emptier-first choice (a)
    assert cluster.admin().alter_replica_log_dirs({replica: wanted}) == {
        replica: Errors.ReplicaNotAvailableError}
    cluster.reassign_partition("t", 0, [host, other])
    cluster.advance(5_000)
    assert other in cluster.describe_topic("t").partitions[0].isr
    assert placed(cluster, other, "t") == {str(a / f"broker-{other}"): [], wanted: [0]}


def test_a_restart_finds_partitions_in_whichever_directory_holds_them(tmp_path):
    dirs = two_dirs(tmp_path)
    cluster = Cluster(brokers=1, seed=3, log_dir=dirs)
    cluster.create_topic("t", partitions=3)
    producer = cluster.producer(acks="all")
    for i in range(9):
        producer.send("t", value=b"v%d" % i, partition=i % 3).get()
    replica = TopicPartitionReplica("t", 0, 1)
    cluster.admin().alter_replica_log_dirs({replica: str(dirs[1] / "broker-1")})
    cluster.advance(REPLICA_MOVE_MS)
    before = placed(cluster, 1, "t")
    assert before == {str(dirs[0] / "broker-1"): [2], str(dirs[1] / "broker-1"): [0, 1]}
    cluster.stop_broker(1)

    again = Cluster(brokers=1, seed=3, log_dir=dirs)
    assert placed(again, 1, "t") == before
    for p in range(3):
        assert values(again, "t", p) == [b"v%d" % i for i in range(p, 9, 3)]
        assert again.describe_topic("t").partitions[p].high_watermark == 3
    # a new partition still goes to the directory with the fewest
    again.create_topic("u", partitions=1)
    assert placed(again, 1, "u")[str(dirs[0] / "broker-1")] == [0]


def test_a_broker_restart_mid_move_keeps_the_replica_where_it_was(tmp_path):
    a, b = two_dirs(tmp_path)
    cluster = Cluster(brokers=1, log_dir=[a, b])
    cluster.create_topic("t", partitions=1)
    cluster.producer(acks="all").send("t", value=b"kept").get()
    cluster.admin().alter_replica_log_dirs({("t", 0, 1): str(b / "broker-1")})
    cluster.stop_broker(1)
    cluster.advance(REPLICA_MOVE_MS)
    cluster.start_broker(1)
    cluster.advance(5_000)
    assert placed(cluster, 1, "t") == {str(a / "broker-1"): [0], str(b / "broker-1"): []}
    assert values(cluster, "t", 0) == [b"kept"]


def test_log_dirs_must_be_distinct(tmp_path):
    with pytest.raises(LogDirError, match="distinct"):
        Cluster(brokers=1, log_dir=[tmp_path / "a", tmp_path / "a"])


def test_in_memory_a_broker_has_one_virtual_directory():
    cluster = Cluster(brokers=1)
    cluster.create_topic("t", partitions=1)
    admin = cluster.admin()
    [described] = admin.describe_log_dirs()
    [only] = described["log_dirs"]
    assert only["log_dir"] == "/minikafka/broker-1"
    assert (only["total_bytes"], only["usable_bytes"]) == (-1, -1)
    assert [t["name"] for t in only["topics"]] == ["t"]
    replica = TopicPartitionReplica("t", 0, 1)
    assert admin.alter_replica_log_dirs({replica: "/minikafka/broker-1"}) == {
        replica: Errors.NoError}
    assert admin.alter_replica_log_dirs({replica: "/elsewhere"}) == {
        replica: Errors.LogDirNotFoundError}


def test_a_deleted_topic_leaves_neither_directory_even_mid_move(tmp_path):
    a, b = two_dirs(tmp_path)
    cluster = Cluster(brokers=1, log_dir=[a, b])
    cluster.create_topic("gone", partitions=2)
    cluster.producer(acks="all").send("gone", value=b"x", partition=0).get()
    cluster.admin().alter_replica_log_dirs({("gone", 0, 1): str(b / "broker-1")})
    cluster.delete_topic("gone")
    cluster.advance(REPLICA_MOVE_MS)
    assert not list(a.glob("broker-1/gone-*")) and not list(b.glob("broker-1/gone-*"))
    assert placed(cluster, 1) == {str(a / "broker-1"): [], str(b / "broker-1"): []}
