"""The labs: each notebook runs top to bottom, on minikafka and on real Apache Kafka, and reaches its results.

Every lab ends with a cell tagged ``check`` that asserts what the lab shows (counts per
partition add up to 12,434, each report archived once across a restart, no duplicates and
no gaps after a kill, ...) and prints those outcomes on one line
(``minikafka.course.checks.checked``). The tests run each notebook in a fresh kernel, scratch files
in a temporary directory and Spark's UI off, then read that line back and assert the
outcomes again from outside, so a check cell that stopped checking is caught. Each lab runs
on two targets:

- minikafka: KAFKA_BOOTSTRAP_SERVERS unset, so the lab starts minikafka's 3-broker server
  on loopback (what `minikafka serve` runs);
- real Kafka (marked real_kafka): the session's native Apache Kafka cluster
  (tests/conftest.py), lab 4 stopping, killing and starting its nodes.

The Spark labs read with Spark's own connector (`format("kafka")`, fetched from Maven: marked
real_kafka) on both targets, and with the Python source on minikafka (offline).
The structure tests read the notebooks without running them; the last tests cover the
lab helpers in ``minikafka.course``.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from kafka import KafkaProducer
from notebook_helpers import check_cells, execute_notebook, notebook_group, outcomes_of

from minikafka import Cluster
from minikafka.course import lab_brokers, lab_cluster
from minikafka.course.charts import bars, lines
from minikafka.course.checks import CHECK_MARK
from minikafka.course.customers import CUSTOMER_FIELDS, CUSTOMERS_ROWS, write_customers_csv
from minikafka.course.lab_admin import fresh_topic, live_brokers, partitions_table
from minikafka.course.lab_brokers import stop_broker
from minikafka.course.lab_cluster import (
    DATA_DIR_ENV,
    bootstrap_servers,
    embedded_cluster,
    embedded_server,
    native_cluster,
)
from minikafka.course.resend import resend_batch
from minikafka.course.shell import parse_table
from minikafka.course.trucks import SPARK_SCHEMA, truck_positions
from minikafka.course.waiting import wait_for
from minikafka.course.workdir import work_dir

LABS_DIR = Path(__file__).resolve().parent.parent / "labs"
LABS = sorted(LABS_DIR.glob("[0-9][0-9]-*.ipynb"))
NAMES = [p.stem for p in LABS]
SPARK_LABS = {"05-spark-streaming", "06-spark-batch-customers", "08-spark-windows-joins"}


SOURCE_FORMAT = {"jvm": "kafka", "python": "kafka-python"}  # MINIKAFKA_SPARK_SOURCE -> format


def run_and_check(path: Path, tmp_path: Path, monkeypatch, timeout: int, *, cluster=None,
                  spark_source: str | None = None) -> nbformat.NotebookNode:
    """Run the lab against a fresh embedded server, or against `cluster` (a NativeKafka),
    then check its charts and its outcomes."""
    if cluster is None:
        monkeypatch.delenv("KAFKA_BOOTSTRAP_SERVERS", raising=False)
        monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    else:
        monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", cluster.bootstrap_servers)
        monkeypatch.setenv(DATA_DIR_ENV, str(cluster.data_dir))
    if spark_source:
        monkeypatch.setenv("MINIKAFKA_SPARK_SOURCE", spark_source)
    else:
        monkeypatch.delenv("MINIKAFKA_SPARK_SOURCE", raising=False)
    monkeypatch.setenv("MINIKAFKA_LAB_DIR", str(tmp_path))
    monkeypatch.setenv("MINIKAFKA_SPARK_UI", "0")
    # Spark's JVM logs on stderr as it starts (log4j's profile, native-hadoop).
    nb = execute_notebook(path, timeout)
    assert_charts_drawn(nb)
    outcomes = outcomes_of(nb, CHECK_MARK)
    assert outcomes["notebook"] == path.stem[:2]
    EXPECT[path.stem[:2]](outcomes)
    if spark_source:
        assert outcomes["source"] == SOURCE_FORMAT[spark_source]
    return nb


def printed(nb: nbformat.NotebookNode) -> str:
    return "".join(out.get("text", "") for cell in nb.cells if cell.cell_type == "code"
                   for out in cell.get("outputs", []) if out.get("output_type") == "stream")


def assert_charts_drawn(nb: nbformat.NotebookNode) -> None:
    """Every cell that calls lines/bars shows a picture (matplotlib is a
    dependency, so no lab may fall back to text charts)."""
    for cell in nb.cells:
        if cell.cell_type != "code" or not re.search(r"\b(lines|bars)\(", cell.source):
            continue
        pictures = [out for out in cell.get("outputs", []) if "image/png" in out.get("data", {})]
        assert pictures, f"no chart drawn by cell:\n{cell.source[:300]}"
        assert not any("text chart" in out.get("text", "") for out in cell.get("outputs", []))


# -- what each lab must have shown --------------------------------------------------------------

def expect_01(o: dict) -> None:
    # 10 keys, each in one partition; 6 more records make a lag of 6; reset to earliest
    # makes it 16; shift-by -2 leaves 2 per partition.
    assert (o["keys"], o["lag_more"], o["lag_reset"], o["lag_shift"]) == (10, 6, 16, 6)


def expect_02(o: dict) -> None:
    # A retried batch without idempotence is written twice; gzip shrinks JSON > 3x.
    assert o["duplicates_plain"] == 2 and o["gzip_ratio"] > 3 and o["partitions_used"] >= 4


def expect_03(o: dict) -> None:
    assert o["orders"] == 3000 and o["lost"] == 0 and o["survivors"] == ["c1", "c3"]
    assert o["rebalance_under_30s"] is True


def expect_04(o: dict) -> None:
    # ISR 3 -> 2 (broker 2 stopped) -> 3 -> 2 (broker 3 crashed) -> 3.
    assert o["strict_refused"] is True and o["isr_sizes"] == [3, 2, 3, 2, 3]


def expect_05(o: dict) -> None:
    assert o["archived"] == o["distinct"] == 1200 and o["windows"] == 30


def expect_06(o: dict) -> None:
    assert o["total"] == 12_434 == sum(o["per_partition"].values())
    assert len(o["per_partition"]) == 3


def expect_07(o: dict) -> None:
    assert o["naive_duplicates"] > 0 and o["idempotent_rows"] == 5000 and o["missing"] == 0


def expect_08(o: dict) -> None:
    # 4 closed windows after a stop and a restart: 24, 24, 24 and 25 orders (one late order
    # counted, one dropped by the watermark); the 66 of 96 payments within 5 minutes of
    # their order joined, once each.
    assert o["windows"] == 4 and o["counted"] == 97 and o["dropped"] == 1 and o["paid"] == 66


EXPECT = {name[:2]: globals()[f"expect_{name[:2]}"] for name in NAMES}


# -- running them ------------------------------------------------------------------------------

PLAIN_LABS = [p for p in LABS if p.stem not in SPARK_LABS]
SPARK_PATHS = [p for p in LABS if p.stem in SPARK_LABS]


@pytest.mark.notebook
@pytest.mark.slow
@pytest.mark.timeout(400)
@pytest.mark.parametrize("path", [pytest.param(p, marks=notebook_group(p), id=p.stem)
                                  for p in PLAIN_LABS])
def test_lab_runs_and_reaches_its_results(path, tmp_path, monkeypatch):
    run_and_check(path, tmp_path, monkeypatch, timeout=240)


@pytest.mark.notebook
@pytest.mark.real_kafka
@pytest.mark.slow
@pytest.mark.timeout(500)
@pytest.mark.parametrize("path", PLAIN_LABS, ids=lambda p: p.stem)
def test_lab_runs_on_real_kafka(path, tmp_path, monkeypatch, real_kafka):
    nb = run_and_check(path, tmp_path, monkeypatch, timeout=300, cluster=real_kafka)
    if path.stem.startswith("04"):  # the nodes themselves were stopped, killed and started
        out = printed(nb)
        for action, done in (("stop 2", "broker 2 stopped"), ("kill 3", "broker 3 crashed"),
                             ("start 3", "broker 3 started")):
            assert f"$ minikafka kafka {action} --data-dir {real_kafka.data_dir}" in out
            assert f"{done} (Apache Kafka, native)" in out
        assert [s.running for s in real_kafka.status()] == [True] * 3


@pytest.mark.notebook
@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("source", ["python", pytest.param("jvm", marks=pytest.mark.real_kafka)])
@pytest.mark.parametrize("path", [pytest.param(p, marks=notebook_group(p), id=p.stem)
                                  for p in SPARK_PATHS])
def test_spark_lab_runs_and_reaches_its_results(path, source, tmp_path, monkeypatch):
    """On minikafka's server: Spark's JVM connector (its Java Kafka client against
    minikafka's wire protocol) and the Python source."""
    run_and_check(path, tmp_path, monkeypatch, timeout=480, spark_source=source)
    assert not list(LABS_DIR.glob("spark-warehouse")) and not list(LABS_DIR.glob("metastore_db"))


@pytest.mark.notebook
@pytest.mark.spark
@pytest.mark.real_kafka
@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("path", SPARK_PATHS, ids=lambda p: p.stem)
def test_spark_lab_runs_on_real_kafka(path, tmp_path, monkeypatch, real_kafka):
    run_and_check(path, tmp_path, monkeypatch, timeout=480, cluster=real_kafka,
                  spark_source="jvm")


# -- their structure ---------------------------------------------------------------------------

def test_there_are_eight_labs_with_readme():
    assert [n[:2] for n in NAMES] == ["01", "02", "03", "04", "05", "06", "07", "08"]
    readme = (LABS_DIR / "README.md").read_text()
    for name in NAMES:
        assert name in readme


@pytest.mark.parametrize("path", LABS, ids=lambda p: p.stem)
def test_lab_structure(path):
    nb = nbformat.read(path, as_version=4)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), \
        "commit labs without outputs"
    assert "bootstrap_servers()" in code[0].source  # one cluster lookup, first
    checks = check_cells(nb)
    assert len(checks) == 1 and checks[0] is nb.cells[-1]
    assert re.search(rf'checked\("{path.stem[:2]}"', checks[0].source)
    assert "assert " in checks[0].source
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith(
        f"# Lab {int(path.stem[:2])} ·")
    # Everything a lab builds goes through the package's helpers, not inline machinery.
    assert not any(re.search(r"^\s*class ", c.source, re.M) for c in code)


def test_spark_labs_pick_their_source_with_kafka_format():
    for name in SPARK_LABS:
        source = "\n".join(c.source for c in nbformat.read(LABS_DIR / f"{name}.ipynb",
                                                           as_version=4).cells)
        assert "kafka_format(spark)" in source and '.format("kafka")' not in source
        assert "spark-sql-kafka-0-10" in source  # the text says which connector it is
    lab6 = nbformat.read(LABS_DIR / "06-spark-batch-customers.ipynb", as_version=4)
    assert any('get("spark.jars"' in c.source for c in lab6.cells if c.cell_type == "code")


# -- the helpers -------------------------------------------------------------------------------

def test_customers_csv_is_12434_rows_and_the_same_everywhere(tmp_path):
    path = write_customers_csv(tmp_path / "sub" / "customers.csv")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 + CUSTOMERS_ROWS == 12_435
    assert lines[0] == ",".join(CUSTOMER_FIELDS)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == (
        "5207f0569a7c31dd01976b8ec6a59a19515eaf06d9039ae048e776661bbe26f8")
    ids = [line.split(",")[0] for line in lines[1:]]
    assert len(set(ids)) == len(ids) and ids[0] == "C00001"
    other = write_customers_csv(tmp_path / "other.csv", rows=10, seed=1).read_text()
    assert len(other.splitlines()) == 11 and other.splitlines()[1] != lines[1]


def test_truck_positions_are_seeded_and_arrive_a_little_out_of_order():
    positions = truck_positions()
    assert len(positions) == 10 * 20 * 6
    assert hashlib.sha256(b"".join(p.value() for p in positions)).hexdigest() == (
        "d1ed8364ff9de8dd33a684638f1738009b64154675e0f7597c947a7bcc779be5")
    assert positions == truck_positions()
    times = [p.event_time_ms for p in positions]
    assert times != sorted(times)  # some reports arrive late...
    latest = 0
    for t in times:  # ...but never more than max_delay_s behind the newest one
        assert t > latest - 20_000 - 1000
        latest = max(latest, t)
    value = json.loads(positions[0].value())
    assert set(value) == {"truck_id", "event_time", "latitude", "longitude", "speed_kmh"}
    assert [field.split()[0] for field in SPARK_SCHEMA.split(", ")] == list(value)
    assert value["event_time"].endswith("Z") and positions[0].key() == value["truck_id"].encode()


def test_bootstrap_servers_prefers_the_environment(monkeypatch):
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "kafka-1:19092,kafka-2:19092")
    assert bootstrap_servers() == "kafka-1:19092,kafka-2:19092"
    assert embedded_cluster() is None


@pytest.mark.timeout(60)
def test_embedded_server_falls_back_to_free_ports_when_9092_is_taken(monkeypatch):
    monkeypatch.delenv("KAFKA_BOOTSTRAP_SERVERS", raising=False)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        monkeypatch.setattr(lab_cluster, "EMBEDDED_PORT", taken.getsockname()[1])
        monkeypatch.setattr(lab_cluster, "_server", None)
        try:
            servers = bootstrap_servers()
            hosts = servers.split(",")
            assert len(hosts) == 3 and all(h.startswith("127.0.0.1:") for h in hosts)
            assert f"127.0.0.1:{taken.getsockname()[1]}" not in hosts
            cluster = embedded_cluster()
            assert sorted(cluster.brokers) == [1, 2, 3]
            assert bootstrap_servers() == servers  # started once
            fresh_topic("helpers", partitions=2, replication_factor=3)
            assert [p["isr"] for p in partitions_table("helpers")] == [[1, 2, 3]] * 2
            assert live_brokers() == [1, 2, 3]
            offsets = resend_batch("helpers", 0, [b"x"], idempotent=True)
            assert offsets[0] == offsets[1] == 0
        finally:
            embedded_server().stop()


def test_parse_table_reads_kafka_tool_output():
    out = """
GROUP   TOPIC  PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  CONSUMER-ID  HOST  CLIENT-ID
g       t      0          3               5               2    -            -     -

Consumer group 'g' has no active members.
"""
    assert parse_table(out) == [{"GROUP": "g", "TOPIC": "t", "PARTITION": "0",
                                      "CURRENT-OFFSET": "3", "LOG-END-OFFSET": "5", "LAG": "2",
                                      "CONSUMER-ID": "-", "HOST": "-", "CLIENT-ID": "-"}]


def test_charts_fall_back_to_text_without_matplotlib(capsys, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    bars({"a": 2, "bb": 4}, title="T")
    lines({"s": [(0, 0), (1, 8)]}, title="L", xlabel="x", ylabel="y")
    out = capsys.readouterr().out
    assert "T   (text chart" in out and " a | " + "█" * 20 in out and "bb | " + "█" * 40 in out
    assert "s | █|" in out and "x 0 .. 1; top = 8 y" in out


def test_work_dir_is_fresh_and_under_the_chosen_root(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIKAFKA_LAB_DIR", str(tmp_path))
    first = work_dir("lab9")
    (first / "old").write_text("x")
    assert work_dir("lab9", fresh=False) == first and (first / "old").exists()
    assert work_dir("lab9") == tmp_path / "lab9" and not (first / "old").exists()


def test_native_cluster_is_found_by_its_client_ports(tmp_path, monkeypatch):
    from minikafka.realkafka.nodes import NativeKafka

    NativeKafka(tmp_path, port=9392)._write_configs()  # what `minikafka kafka up` leaves
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    monkeypatch.delenv("KAFKA_BOOTSTRAP_SERVERS", raising=False)
    assert native_cluster() is None  # the embedded server
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "localhost:9392,127.0.0.1:9394")
    found = native_cluster()
    assert found is not None and found.data_dir == tmp_path and found.port == 9392
    for elsewhere in ("localhost:9092,localhost:9093", "kafka-1:19092,kafka-2:19092",
                      "localhost:9392,otherhost:9393"):
        monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", elsewhere)
        assert native_cluster() is None, elsewhere
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "localhost:9392")
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "nothing-here"))
    assert native_cluster() is None


def test_broker_changes_on_docker_print_the_compose_command(monkeypatch, capsys):
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "kafka-1:19092,kafka-2:19092")
    monkeypatch.setattr(lab_brokers, "live_brokers", lambda: [1, 3])
    stop_broker(2, timeout_s=5)
    assert "docker compose -f docker/compose.yaml stop kafka-2" in capsys.readouterr().out


def test_broker_changes_run_the_compose_command_when_one_is_named(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "localhost:9092,localhost:9093")
    log = tmp_path / "ran"
    monkeypatch.setenv("MINIKAFKA_COMPOSE", f"sh -c 'echo \"$@\" > {log}' compose -f x.yaml")
    monkeypatch.setattr(lab_brokers, "live_brokers", lambda: [1, 2])
    lab_brokers.crash_broker(3, timeout_s=5)
    assert log.read_text() == "-f x.yaml kill kafka-3\n"
    out = capsys.readouterr().out
    assert "-f x.yaml kill kafka-3" in out and "broker 3 crashed (container kafka-3)" in out
    assert "In a terminal" not in out


@pytest.mark.real_kafka
@pytest.mark.timeout(300)
def test_resend_batch_on_real_kafka_is_deduplicated_by_every_leader(real_kafka, monkeypatch):
    """Each broker's first InitProducerId on a new cluster may answer
    COORDINATOR_LOAD_IN_PROGRESS (its block of producer ids is on the way): retried."""
    import uuid

    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", real_kafka.bootstrap_servers)
    topic = f"resend-{uuid.uuid4().hex[:8]}"
    fresh_topic(topic, partitions=3, replication_factor=3)
    assert {p["leader"] for p in partitions_table(topic)} == {1, 2, 3}
    for partition in range(3):
        twice = resend_batch(topic, partition, [b"a", b"b"], idempotent=True)
        assert twice[0] == twice[1] == 0
        assert resend_batch(topic, partition, [b"c"], idempotent=False) == [2, 3]


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_lab3_consumer_stalled_past_its_session_rejoins_instead_of_dying(tmp_path):
    """A member that stalls longer than session.timeout.ms (a long pause, a loaded machine) is
    removed from the group while it processes a poll's records, so its commit fails. Lab 3's
    consumer logs the failure and rejoins at its next poll; had it died, the group would
    settle without it and the lab would wait for a balance that never comes."""
    cluster = Cluster(brokers=1, seed=3, broker_config={"group.initial.rebalance.delay.ms": 0})
    cluster.create_topic("orders", partitions=2, replication_factor=1)
    log = tmp_path / "c1.jsonl"

    def events() -> list[dict]:
        lines = log.read_text().split("\n")[:-1] if log.exists() else []
        return [json.loads(line) for line in lines]

    with cluster.serve(port=0) as server:
        producer = KafkaProducer(bootstrap_servers=server.bootstrap_servers)
        for i in range(60):
            producer.send("orders", b"order %d" % i)
        producer.close()
        # 25 records at 200 ms each: a poll's records take 5 s to process.
        proc = subprocess.Popen([sys.executable, str(LABS_DIR / "lab3_consumer.py"),
                                 "--bootstrap", server.bootstrap_servers, "--topic", "orders",
                                 "--group", "stalls", "--name", "c1", "--log", str(log),
                                 "--work-ms", "200"], stderr=subprocess.PIPE)
        try:
            wait_for(events, lambda seen: any(e["event"] == "committed" for e in seen),
                     what="c1's first commit", timeout_s=30)
            time.sleep(1)  # inside the next poll's 5 s of processing
            os.kill(proc.pid, signal.SIGSTOP)
            time.sleep(8)  # session.timeout.ms is 6 s: the coordinator removes c1
            os.kill(proc.pid, signal.SIGCONT)
            def rejoined(seen: list[dict]) -> bool:
                kinds = [e["event"] for e in seen]
                return "commit-failed" in kinds and "assigned" in kinds[kinds.index("commit-failed"):]

            wait_for(events, rejoined, what="c1's commit to fail and c1 to rejoin",
                     timeout_s=40)
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            # ...and goes on: every record gets processed, and those whose commit failed twice.
            def processed(seen: list[dict]) -> list[tuple[int, int]]:
                return [tuple(r) for e in seen if e["event"] == "records" for r in e["records"]]

            seen = wait_for(events, lambda seen: len(set(processed(seen))) == 60,
                            what="c1 to process all 60 records", timeout_s=60)
            kinds = [e["event"] for e in seen]
            uncommitted = seen[kinds.index("commit-failed") - 1]["records"]
            assert all(processed(seen).count(tuple(r)) == 2 for r in uncommitted)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
