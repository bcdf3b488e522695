"""Several log directories per broker behind `minikafka serve` (log.dirs=/a,/b): kafka-python's
describe_log_dirs and alter_replica_log_dirs, confluent-kafka's records spread over both
directories, `minikafka serve server.properties` taking log.dirs from the file, and a
served cluster killed and started again on both directories."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from kafka import KafkaAdminClient, KafkaProducer
from kafka import errors as Errors
from kafka.admin import NewTopic
from kafka.structs import TopicPartitionReplica

from minikafka.cluster import Cluster

from .conftest import wait_for
from .test_durable_serve import Server, read_all
from .test_serve import free_port_run

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def served_dirs(tmp_path):
    """Two brokers, each with two log directories: tmp/a/broker-N and tmp/b/broker-N."""
    cluster = Cluster(brokers=2, seed=11, log_dir=[tmp_path / "a", tmp_path / "b"])
    with cluster.serve(port=0) as server:
        yield cluster, server, tmp_path


def dirs_of(admin: KafkaAdminClient, broker: int, topic: str) -> dict[str, list]:
    """{log dir: [(partition, is future)]} of one broker, from DescribeLogDirs."""
    [described] = admin.describe_log_dirs({topic: [0, 1, 2, 3]}, brokers=[broker])
    return {d["log_dir"]: sorted((p["partition_index"], p["is_future_key"])
                                 for t in d["topics"] for p in t["partitions"])
            for d in described["log_dirs"]}


def test_kafka_python_describes_and_moves_replicas_between_dirs(served_dirs):
    cluster, server, tmp = served_dirs
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap_servers)
    try:
        admin.create_topics([NewTopic("jbod", 2, 2)])
        a, b = str(tmp / "a" / "broker-1"), str(tmp / "b" / "broker-1")
        wait_for(lambda: dirs_of(admin, 1, "jbod") == {a: [(0, False)], b: [(1, False)]},
                 what="a partition in each directory")
        [described] = admin.describe_log_dirs(brokers=[1])
        for d in described["log_dirs"]:
            assert d["error_code"] == 0 and 0 < d["usable_bytes"] <= d["total_bytes"]

        replica = TopicPartitionReplica("jbod", 0, 1)
        assert admin.alter_replica_log_dirs({replica: b}) == {replica: Errors.NoError}
        wait_for(lambda: dirs_of(admin, 1, "jbod") == {a: [], b: [(0, False), (1, False)]},
                 what="the move to finish")
        assert (tmp / "b" / "broker-1" / "jbod-0" / "partition.metadata").is_file()
        assert not (tmp / "a" / "broker-1" / "jbod-0").exists()

        nowhere = TopicPartitionReplica("jbod", 1, 2)
        absent = TopicPartitionReplica("other", 0, 2)
        assert admin.alter_replica_log_dirs({
            nowhere: str(tmp / "c" / "broker-2"), absent: str(tmp / "a" / "broker-2")}) == {
            nowhere: Errors.LogDirNotFoundError, absent: Errors.ReplicaNotAvailableError}
    finally:
        admin.close()


def test_confluent_kafka_records_land_in_both_dirs_and_come_back(served_dirs):
    cluster, server, tmp = served_dirs
    with cluster.lock:
        cluster.create_topic("spread", partitions=4, replication_factor=1)
    producer = Producer({"bootstrap.servers": server.bootstrap_servers, "acks": "all"})
    for i in range(40):
        producer.produce("spread", value=b"v%d" % i, partition=i % 4)
    assert producer.flush(30) == 0
    logs = sorted(tmp.glob("*/broker-*/spread-*/00000000000000000000.log"))
    assert {p.parents[2].name for p in logs} == {"a", "b"}
    assert len(logs) == 4 and all(p.stat().st_size > 0 for p in logs)

    consumer = Consumer({"bootstrap.servers": server.bootstrap_servers, "group.id": "jbod",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe(["spread"])
    got = []
    try:
        wait_for(lambda: got.extend(m.value() for m in consumer.consume(40, 0.2)
                                    if m.error() is None) or len(got) >= 40,
                 timeout=30, what="every record back")
    finally:
        consumer.close()
    assert sorted(got) == sorted(b"v%d" % i for i in range(40))


def test_serve_takes_log_dirs_from_server_properties(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    properties = tmp_path / "server.properties"
    properties.write_text(f"node.id=1\nlog.dirs={a},{b}\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "minikafka.cli", "serve", str(properties),
                             "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env)
    try:
        banner = []
        for line in proc.stdout:
            banner.append(line)
            if line.startswith("bootstrap servers: ") or len(banner) > 50:
                break
        assert banner[0].startswith(f"log dirs: {a}/broker-N, {b}/broker-N (cluster.id "), banner
        for root in (a, b):
            assert (root / "broker-1" / "meta.properties").is_file()
    finally:
        proc.terminate()
        proc.wait(30)


def test_serve_with_two_dirs_recovers_every_partition_after_kill_9(tmp_path):
    """`minikafka serve --log-dir A,B` killed and started again: the partitions in either
    directory come back, records and the directory each was in alike."""
    a, b = tmp_path / "a", tmp_path / "b"
    port = free_port_run(2)
    server = Server(f"{a},{b}", port, brokers=2)
    try:
        admin = KafkaAdminClient(bootstrap_servers=server.bootstrap, request_timeout_ms=10_000)
        admin.create_topics([NewTopic("kept", 4, 2)])
        producer = KafkaProducer(bootstrap_servers=server.bootstrap, acks="all")
        for i in range(20):
            producer.send("kept", value=b"v%02d" % i, partition=i % 4)
        producer.flush(30)
        producer.close()
        before = {broker: dirs_of(admin, broker, "kept") for broker in (1, 2)}
        admin.close()
        assert before[1] == {str(a / "broker-1"): [(0, False), (2, False)],
                             str(b / "broker-1"): [(1, False), (3, False)]}

        server.stop("kill")
        server = Server(f"{a},{b}", port, brokers=2)
        recovery = [line for line in server.banner if line.startswith("recovery:")]
        for broker in (1, 2):
            for p in range(4):
                assert any(f"broker {broker}: kept-{p}: recovered offsets 0..4" in line
                           for line in recovery), recovery
        admin = KafkaAdminClient(bootstrap_servers=server.bootstrap, request_timeout_ms=10_000)
        try:
            assert {broker: dirs_of(admin, broker, "kept") for broker in (1, 2)} == before
        finally:
            admin.close()
        got = read_all(server.bootstrap, "kept", 4)
        assert {tp: [v for _, v in recs] for tp, recs in got.items()} == {
            ("kept", p): [b"v%02d" % i for i in range(p, 20, 4)] for p in range(4)}
    finally:
        server.kill_if_running()
