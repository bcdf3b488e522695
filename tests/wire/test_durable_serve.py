"""`minikafka serve --log-dir` as a new user meets it: stop it (Ctrl-C or kill -9), start
it again on the same directory, and everything a client was told is committed is there."""
from __future__ import annotations

import os
import random
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType, NewTopic
from kafka.structs import OffsetAndMetadata

from minikafka.core.checkers import Write, check_duplicates, check_lost

from .test_serve import free_port_run

# A few __consumer_offsets partitions: quick to create and to recover.
OVERRIDES = ["--override", "offsets.topic.num.partitions=3",
             "--override", "transaction.state.log.num.partitions=3",
             "--override", "transaction.abort.timed.out.transaction.cleanup.interval.ms=500"]


class Server:
    """`python -m minikafka.cli serve` on `log_dir`; its banner lines are kept."""

    def __init__(self, log_dir: Path, port: int, brokers: int, wait: bool = True) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "minikafka.cli", "serve", "--log-dir", str(log_dir),
             "--brokers", str(brokers), "--port", str(port), *OVERRIDES],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
            bufsize=0)  # unbuffered: select() sees every line not yet read
        self.bootstrap = f"127.0.0.1:{port}"
        self.banner: list[str] = []
        if not wait:
            return
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if not select.select([self.proc.stdout], [], [], deadline - time.monotonic())[0]:
                break  # a server that hangs is reported, not waited for
            line = self.proc.stdout.readline().decode()
            self.banner.append(line)
            if line.startswith("bootstrap servers") or not line:
                break
        if not self.banner or not self.banner[-1].startswith("bootstrap servers"):
            self.kill_if_running()  # the caller never gets this object: leave no server
            raise AssertionError(f"minikafka serve did not start: {self.banner}")

    def stop(self, how: str) -> None:
        self.proc.send_signal(signal.SIGINT if how == "clean" else signal.SIGKILL)
        self.proc.wait(30)
        self.proc.stdout.close()

    def kill_if_running(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if not self.proc.stdout.closed:
            self.proc.stdout.close()


def read_all(bootstrap: str, topic: str, partitions: int,
             isolation: str = "read_uncommitted") -> dict[tuple[str, int], list]:
    """Every record of the topic, (offset, value) per partition, up to the end offsets."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation,
                             enable_auto_commit=False, request_timeout_ms=10_000)
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        consumer.seek_to_beginning()
        ends = consumer.end_offsets(tps)
        out: dict[tuple[str, int], list] = {(topic, p): [] for p in range(partitions)}
        deadline = time.monotonic() + 30
        while any(consumer.position(tp) < ends[tp] for tp in tps):
            assert time.monotonic() < deadline, "could not read up to the end offsets"
            for tp, recs in consumer.poll(500).items():
                out[(tp.topic, tp.partition)] += [(r.offset, r.value) for r in recs]
        return out
    finally:
        consumer.close()


@pytest.mark.parametrize("how", ["clean", "kill"])
def test_a_restart_keeps_topics_records_offsets_and_producer_state(tmp_path, how):
    port = free_port_run(1)
    server = Server(tmp_path, port, brokers=1)
    producer = txn = None
    try:
        admin = KafkaAdminClient(bootstrap_servers=server.bootstrap, request_timeout_ms=10_000)
        admin.create_topics([NewTopic("orders", 2, 1, topic_configs={"retention.ms": "3600000"})])
        admin.close()
        producer = KafkaProducer(bootstrap_servers=server.bootstrap, acks="all",
                                 enable_idempotence=True, retry_backoff_ms=100,
                                 reconnect_backoff_max_ms=500, delivery_timeout_ms=60_000,
                                 request_timeout_ms=5_000)
        for i in range(20):
            producer.send("orders", value=b"v%02d" % i, partition=i % 2)
        producer.flush(30)
        group = KafkaConsumer("orders", bootstrap_servers=server.bootstrap, group_id="g",
                              auto_offset_reset="earliest", enable_auto_commit=False)
        seen = 0
        while seen < 20:
            seen += sum(len(r) for r in group.poll(500).values())
        group.commit()
        group.close()
        txn = KafkaProducer(bootstrap_servers=server.bootstrap, transactional_id="tx-1",
                            transaction_timeout_ms=2_000)
        txn.init_transactions()
        txn.begin_transaction()
        txn.send("orders", value=b"uncommitted", partition=0)
        txn.flush(30)  # written, never committed: open when the server goes

        server.stop(how)
        # Sent while the server is down: the idempotent producer retries after the restart.
        late = [producer.send("orders", value=b"late%d" % i, partition=i % 2) for i in range(4)]
        server = Server(tmp_path, port, brokers=1)
        recovery = [line for line in server.banner if line.startswith("recovery:")]
        assert any("orders-0: recovered offsets 0..10" in line for line in recovery), recovery
        assert any("transaction tx-1" in line and "open" in line for line in recovery), recovery

        producer.flush(60)
        assert all(f.succeeded() for f in late)
        admin = KafkaAdminClient(bootstrap_servers=server.bootstrap, request_timeout_ms=10_000)
        try:
            assert "orders" in admin.list_topics()
            described = admin.describe_configs(
                [ConfigResource(ConfigResourceType.TOPIC, "orders")])["topic"]["orders"]
            assert described["retention.ms"]["value"] == "3600000"
            offsets = admin.list_group_offsets("g")["g"]
            assert {tp.partition: o.offset for tp, o in offsets.items()} == {0: 10, 1: 10}
        finally:
            admin.close()
        # read_committed reads past the open transaction once the coordinator aborts it
        # at its timeout (2 s): until then the last stable offset stays at its start.
        expected = sorted([b"v%02d" % i for i in range(20)] + [b"late%d" % i for i in range(4)])
        deadline = time.monotonic() + 30
        while True:
            committed = read_all(server.bootstrap, "orders", 2, "read_committed")
            values = sorted(v for recs in committed.values() for _, v in recs)
            if values == expected or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert values == expected
        assert check_duplicates(committed) == []
        assert b"uncommitted" in [v for recs in read_all(server.bootstrap, "orders", 2).values()
                                  for _, v in recs]  # written, and skipped as aborted
    finally:
        for client in (producer, txn):
            if client is not None:
                client.close(1)
        server.kill_if_running()


class Workload:
    """An idempotent acks=all producer of unique values and a committer of increasing
    group offsets, each keeping what the server acknowledged."""

    def __init__(self, bootstrap: str, topic: str, partitions: int) -> None:
        self.bootstrap, self.topic, self.partitions = bootstrap, topic, partitions
        self.acked: list[Write] = []
        self.commits: dict[int, int] = {}  # partition -> last acknowledged committed offset
        self.producing = threading.Event()
        self.committing = threading.Event()
        self.threads = [threading.Thread(target=self._produce, daemon=True),
                        threading.Thread(target=self._commit, daemon=True)]
        self.errors: list[BaseException] = []

    def start(self) -> None:
        self.producing.set()
        self.committing.set()
        for t in self.threads:
            t.start()

    def _produce(self) -> None:
        producer = KafkaProducer(bootstrap_servers=self.bootstrap, acks="all",
                                 enable_idempotence=True, linger_ms=2, retry_backoff_ms=50,
                                 reconnect_backoff_ms=50, reconnect_backoff_max_ms=300,
                                 request_timeout_ms=5_000, delivery_timeout_ms=60_000)
        i = 0
        try:
            while self.producing.is_set():
                value = b"w-%06d" % i
                future = producer.send(self.topic, value=value, partition=i % self.partitions)
                future.add_callback(lambda md, v=value: self.acked.append(
                    Write(md.topic, md.partition, md.offset, v)))
                i += 1
                time.sleep(0.002)
            producer.flush(60)
        except BaseException as exc:  # reported by the test
            self.errors.append(exc)
        finally:
            producer.close(5)

    def _commit(self) -> None:
        consumer = KafkaConsumer(bootstrap_servers=self.bootstrap, group_id="committer",
                                 enable_auto_commit=False, request_timeout_ms=5_000,
                                 retry_backoff_ms=50)
        n = 0
        try:
            while self.committing.is_set():
                n += 1
                p = n % self.partitions
                try:
                    consumer.commit({TopicPartition(self.topic, p): OffsetAndMetadata(n, "", -1)})
                except Exception:  # the server is down: not acknowledged
                    time.sleep(0.05)
                    continue
                self.commits[p] = n
        finally:
            consumer.close()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kill_9_during_produce_and_commit_loses_nothing_acknowledged(tmp_path, seed):
    rng = random.Random(seed)
    port = free_port_run(3)
    server = Server(tmp_path, port, brokers=3)
    workload = None
    try:
        admin = KafkaAdminClient(bootstrap_servers=server.bootstrap, request_timeout_ms=10_000)
        admin.create_topics([NewTopic("w", 3, 3, topic_configs={"min.insync.replicas": "2"})])
        admin.close()
        workload = Workload(server.bootstrap, "w", 3)
        workload.start()
        time.sleep(rng.uniform(1.0, 3.0))
        server.stop("kill")
        workload.committing.clear()  # what was acknowledged so far must survive
        commits_before = dict(workload.commits)
        if seed % 2:  # killed again while it recovers
            server = Server(tmp_path, port, brokers=3, wait=False)
            time.sleep(rng.uniform(0.1, 1.0))
            server.stop("kill")
        server = Server(tmp_path, port, brokers=3)
        time.sleep(rng.uniform(0.2, 1.0))  # the producer retries and carries on
        workload.producing.clear()
        for t in workload.threads:
            t.join(90)
        assert workload.errors == []
        assert len(workload.acked) > 0 and commits_before

        observed = read_all(server.bootstrap, "w", 3)
        assert check_lost(workload.acked, observed) == []
        assert check_duplicates(observed) == []
        admin = KafkaAdminClient(bootstrap_servers=server.bootstrap, request_timeout_ms=10_000)
        try:
            offsets = admin.list_group_offsets("committer")["committer"]
        finally:
            admin.close()
        for p, n in commits_before.items():
            assert offsets[TopicPartition("w", p)].offset >= n
    finally:
        if workload is not None:
            workload.producing.clear()
            workload.committing.clear()
        server.kill_if_running()


def test_serve_refuses_a_directory_of_another_cluster_and_leaves_it_as_it_is(tmp_path):
    from minikafka.cluster import Cluster

    Cluster(brokers=3, seed=1, log_dir=tmp_path).create_topic("t", replication_factor=3)
    props = tmp_path / "broker-2" / "meta.properties"
    props.write_text(props.read_text().replace("cluster.id=", "cluster.id=other"))
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    done = subprocess.run([sys.executable, "-m", "minikafka.cli", "serve", "--log-dir",
                           str(tmp_path), "--port", str(free_port_run(3))],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("minikafka serve: the log directories belong to different "
                                  "clusters") and str(props) in done.stderr
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_a_restart_keeps_a_kip848_consumer_group(tmp_path):
    """A consumer group of type consumer (group.protocol=consumer) is records in
    __consumer_offsets too: after kill -9 and a restart it is still there, with its member,
    epochs, assignment and committed offsets, until the member's session expires."""
    from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, ConsumerGroupType
    from confluent_kafka import TopicPartition as CTP
    from confluent_kafka.admin import AdminClient

    port = free_port_run(1)
    server = Server(tmp_path, port, brokers=1)
    try:
        admin = KafkaAdminClient(bootstrap_servers=server.bootstrap)
        admin.create_topics([NewTopic("orders", 2, 1)])
        admin.close()
        consumer = Consumer({"bootstrap.servers": server.bootstrap, "group.id": "kip848",
                             "group.protocol": "consumer", "enable.auto.commit": False})
        consumer.subscribe(["orders"])
        deadline = time.monotonic() + 60
        while len(consumer.assignment()) < 2:
            assert time.monotonic() < deadline, "no assignment"
            consumer.poll(0.1)
        consumer.commit(offsets=[CTP("orders", 0, 3), CTP("orders", 1, 4)], asynchronous=False)
        server.stop("kill")  # the consumer never leaves
        server = Server(tmp_path, port, brokers=1)
        ck = AdminClient({"bootstrap.servers": server.bootstrap})
        described = ck.describe_consumer_groups(["kip848"])["kip848"].result(timeout=30)
        assert described.type == ConsumerGroupType.CONSUMER
        assert str(described.state).endswith("STABLE")
        [member] = described.members
        assert sorted(tp.partition for tp in member.assignment.topic_partitions) == [0, 1]
        committed = ck.list_consumer_group_offsets([ConsumerGroupTopicPartitions("kip848")])
        offsets = committed["kip848"].result(timeout=30).topic_partitions
        assert sorted((tp.partition, tp.offset) for tp in offsets) == [(0, 3), (1, 4)]
        consumer.close()
    finally:
        server.kill_if_running()


def _retention(admin: KafkaAdminClient, broker: str) -> tuple:
    found = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, broker,
                                                   ["log.retention.ms"])], config_filter="all")
    entry = found["broker"][broker]["log.retention.ms"]
    return entry["value"], entry["config_source"]


def test_a_kill_9_keeps_one_broker_s_dynamic_config(tmp_path):
    port = free_port_run(2)
    server = Server(tmp_path, port, brokers=2)
    try:
        admin = KafkaAdminClient(bootstrap_servers=server.bootstrap, request_timeout_ms=10_000)
        result = admin.alter_configs([ConfigResource(
            ConfigResourceType.BROKER, "2", {"log.retention.ms": (AlterConfigOp.SET, "60000")})],
            raise_on_unknown=False, incremental=True)
        assert result == {"broker": {"2": "OK"}}, result
        admin.close()
        server.stop("kill")
        server = Server(tmp_path, port, brokers=2)
        admin = KafkaAdminClient(bootstrap_servers=server.bootstrap, request_timeout_ms=10_000)
        try:
            assert _retention(admin, "2") == ("60000", "DYNAMIC_BROKER_CONFIG")
            assert _retention(admin, "1") == (None, "DEFAULT_CONFIG")  # broker 2's only
        finally:
            admin.close()
    finally:
        server.kill_if_running()
