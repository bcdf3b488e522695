"""`minikafka doctor`, with and without a broker to talk to.

Brokers are minikafka servers on free loopback ports; "no broker" is a port that was
free a moment ago. Java and the Spark connector are faked through PATH/JAVA_HOME and a
jar file in a temporary directory.
"""
from __future__ import annotations

import socket
import stat
import sys

import pytest

from minikafka import doctor as doc
from minikafka.cli import main
from minikafka.cluster import Cluster
from minikafka.realkafka import jars as maven_jars
from minikafka.spark import connector
from minikafka.wire.listeners import advertise

pytestmark = pytest.mark.timeout(120)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    with Cluster(brokers=3, seed=5).serve(port=0) as served:
        yield served


def lines(out: str) -> dict[str, str]:
    """check name -> its status word, from the doctor's report."""
    found = {}
    for line in out.splitlines():
        for name in ("broker reachable", "advertised listeners", "versions", "Java", "PySpark",
                     "Spark Kafka source", "real Kafka"):
            parts = line.split()
            if parts and parts[0] in ("ok", "WARN", "FAIL", "skip") and \
                    line[8:].startswith(name) and name not in found:
                found[name] = parts[0]
    return found


def test_with_a_running_server_every_check_passes(server, capsys, monkeypatch):
    monkeypatch.delenv("KAFKA_BOOTSTRAP_SERVERS", raising=False)
    monkeypatch.delenv("SPARK_HOME", raising=False)
    monkeypatch.setattr(connector, "fetched_connector", lambda: None)  # no JVM connector
    assert main(["doctor", "--bootstrap-server", server.bootstrap_servers]) == 0
    out = capsys.readouterr().out
    found = lines(out)
    assert found.pop("real Kafka") in ("ok", "WARN")  # optional: the labs run without it
    assert found == {"broker reachable": "ok", "advertised listeners": "ok",
                     "versions": "ok", "Java": "ok", "PySpark": "ok",
                     "Spark Kafka source": "ok"}
    ports = sorted(server.ports.values())
    assert all(f"127.0.0.1:{p}" in out for p in ports)  # every broker was dialled
    assert "kafka-python 3.0.12" in out and "JoinGroup v" in out and "Fetch v18" in out
    assert 'format("kafka-python")' in out
    assert out.rstrip().endswith("all set for the labs")


def test_the_environment_variable_names_the_cluster(server, capsys, monkeypatch):
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", server.bootstrap_servers)
    assert main(["doctor"]) == 0
    assert "answers (KAFKA_BOOTSTRAP_SERVERS)" in capsys.readouterr().out


def test_without_a_server_an_explicit_bootstrap_fails_with_a_fix(capsys, monkeypatch):
    monkeypatch.delenv("KAFKA_BOOTSTRAP_SERVERS", raising=False)
    port = free_port()
    assert main(["doctor", "--bootstrap-server", f"127.0.0.1:{port}", "--timeout", "1"]) == 1
    out = capsys.readouterr().out
    found = lines(out)
    assert found["broker reachable"] == "FAIL"
    assert found["advertised listeners"] == found["versions"] == "skip"
    assert f"nothing answers on 127.0.0.1:{port}" in out
    assert "fix: start one: `minikafka serve`" in out
    assert out.rstrip().endswith("1 problem: see the fix lines above")


def test_without_a_server_or_settings_the_labs_use_the_embedded_server(capsys, monkeypatch):
    monkeypatch.delenv("KAFKA_BOOTSTRAP_SERVERS", raising=False)
    monkeypatch.setattr(doc, "DEFAULT_BOOTSTRAP", f"127.0.0.1:{free_port()}")
    assert main(["doctor", "--timeout", "1"]) == 0  # nothing is wrong: the notebook starts one
    out = capsys.readouterr().out
    assert lines(out)["broker reachable"] == "WARN"
    assert "start minikafka's embedded 3-broker server inside the notebook" in out


def test_unreachable_advertised_listeners_are_named(capsys, monkeypatch):
    monkeypatch.delenv("KAFKA_BOOTSTRAP_SERVERS", raising=False)
    cluster = Cluster(brokers=2, seed=6)
    with cluster.serve(port=0) as served:
        bootstrap = served.bootstrap_servers
        closed = free_port()
        # Like Docker's internal listener seen from the host: the bootstrap answers, the
        # addresses in the metadata do not.
        advertise(cluster, "127.0.0.1", dict.fromkeys(served.ports, closed), "PLAINTEXT")
        assert main(["doctor", "--bootstrap-server", bootstrap, "--timeout", "2"]) == 1
    out = capsys.readouterr().out
    assert lines(out)["advertised listeners"] == "FAIL"
    assert f"broker 1 at 127.0.0.1:{closed}" in out and f"broker 2 at 127.0.0.1:{closed}" in out
    assert "localhost:9092,localhost:9093,localhost:9094" in out  # the fix names both ways
    assert "kafka-1:19092" in out


def test_missing_or_old_java_is_reported(tmp_path, monkeypatch):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    check = doc.check_java()
    assert check.status == "fail" and "no `java` on PATH" in check.detail
    assert "openjdk-17" in check.fix
    fake = tmp_path / "bin" / "java"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\necho \'java version "1.8.0_392"\' >&2\n')
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    check = doc.check_java()
    assert check.status == "fail" and "Java 8" in check.detail


def test_spark_source_jvm_connector_matching_or_not(tmp_path, monkeypatch):
    from importlib import metadata

    version = metadata.version("pyspark")
    monkeypatch.delenv("MINIKAFKA_SPARK_SOURCE", raising=False)
    monkeypatch.setattr(connector, "fetched_connector", lambda: None)  # none fetched
    jars = tmp_path / "jars"
    jars.mkdir()
    monkeypatch.setenv("SPARK_HOME", str(tmp_path))
    (jars / "spark-sql-kafka-0-10_2.13-3.5.1.jar").write_bytes(b"")
    check = doc.check_spark_source()
    assert check.status == "fail" and "does not match pyspark" in check.detail
    (jars / "spark-sql-kafka-0-10_2.13-3.5.1.jar").unlink()
    (jars / f"spark-sql-kafka-0-10_2.13-{version}.jar").write_bytes(b"")
    check = doc.check_spark_source()
    assert check.status == "ok" and 'format("kafka")' in check.detail
    monkeypatch.setenv("MINIKAFKA_SPARK_SOURCE", "python")
    assert 'format("kafka-python")' in doc.check_spark_source().detail


def test_spark_workers_that_cannot_import_minikafka_are_caught(tmp_path, monkeypatch):
    monkeypatch.delenv("SPARK_HOME", raising=False)
    monkeypatch.setattr(connector, "fetched_connector", lambda: None)  # none fetched
    monkeypatch.delenv("MINIKAFKA_SPARK_SOURCE", raising=False)
    other = tmp_path / "python"
    other.write_text("#!/bin/sh\nexit 1\n")  # an interpreter without the course
    other.chmod(other.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PYSPARK_PYTHON", str(other))
    check = doc.check_spark_source()
    assert check.status == "fail" and "cannot import minikafka" in check.detail
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)
    assert doc.check_spark_source().status == "ok"


def test_spark_source_fetched_from_maven_or_missing(tmp_path, monkeypatch):
    from importlib import metadata

    version = metadata.version("pyspark")
    monkeypatch.delenv("SPARK_HOME", raising=False)
    monkeypatch.setenv("MINIKAFKA_CACHE", str(tmp_path))
    monkeypatch.setenv("MINIKAFKA_SPARK_SOURCE", "jvm")
    check = doc.check_spark_source()
    assert check.status == "fail" and "minikafka kafka fetch" in check.fix
    assert "./setup.sh --real-kafka" in check.fix
    monkeypatch.setenv("MINIKAFKA_SPARK_SOURCE", "auto")
    check = doc.check_spark_source()
    assert check.status == "ok" and 'format("kafka-python")' in check.detail
    assert "minikafka kafka fetch" in check.detail
    libs = maven_jars.spark_libs()  # what fetch_spark leaves: the jars and a stamp
    libs.mkdir(parents=True)
    (libs / f"spark-sql-kafka-0-10_2.13-{version}.jar").write_bytes(b"")
    (libs.parent / maven_jars.STAMP).write_text("")
    check = doc.check_spark_source()
    assert check.status == "ok" and 'format("kafka")' in check.detail
    assert "fetched from Maven" in check.detail and "spark.jars" in check.detail


def test_real_kafka_missing_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIKAFKA_CACHE", str(tmp_path))
    monkeypatch.setenv("MINIKAFKA_KAFKA_DATA_DIR", str(tmp_path / "cluster"))
    check = doc.check_real_kafka()
    assert check.status == "warn" and "is not fetched" in check.detail
    assert "./setup.sh --real-kafka" in check.fix and "minikafka kafka up" in check.fix
    assert "docker compose -f docker/compose.yaml up -d" in check.fix
    assert "localhost:9092,localhost:9093,localhost:9094" in check.fix
    libs = maven_jars.kafka_libs()
    libs.mkdir(parents=True)
    (libs.parent / maven_jars.STAMP).write_text("")
    check = doc.check_real_kafka()
    assert check.status == "ok" and "`minikafka kafka up`" in check.detail
