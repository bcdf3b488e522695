"""`minikafka kafka`: real Apache Kafka's three native nodes, started, broken and mended.

The first tests need no JVM: the native cluster's settings are docker/compose.yaml's, and one
release is named everywhere. The rest (marked real_kafka) run against the session's real
cluster (tests/conftest.py starts it once) and through the `minikafka kafka` command.
"""
from __future__ import annotations

import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import yaml

from minikafka.java import find_java
from minikafka.realkafka import KAFKA_VERSION, jars
from minikafka.realkafka.class_data import archive_path
from minikafka.realkafka.nodes import BROKER_SETTINGS, CLUSTER_ID, NativeKafka


def compose(repo_root) -> dict:
    return yaml.safe_load((repo_root / "docker" / "compose.yaml").read_text())


def test_compose_runs_the_release_the_course_targets(repo_root):
    images = {name: svc["image"] for name, svc in compose(repo_root)["services"].items()
              if name.startswith("kafka-") and name != "kafka-ui"}
    assert images and set(images.values()) == {f"apache/kafka:{KAFKA_VERSION}"}


def test_native_nodes_have_the_compose_files_settings(repo_root):
    services = compose(repo_root)["services"]
    for node in (1, 2, 3):
        env = services[f"kafka-{node}"]["environment"]
        props = NativeKafka("/nonexistent", port=9092).properties(node)
        assert env["CLUSTER_ID"] == CLUSTER_ID
        assert str(env["KAFKA_NODE_ID"]) == props["node.id"]
        for key, value in env.items():
            name = key.removeprefix("KAFKA_").lower().replace("_", ".")
            if name in BROKER_SETTINGS:
                assert str(value) == props[name], name
        settings = {k.removeprefix("KAFKA_").lower().replace("_", ".") for k in env}
        assert set(BROKER_SETTINGS) <= settings
        # The same listener names, each node's client port where compose publishes it.
        names = [part.split("://")[0] for part in env["KAFKA_LISTENERS"].split(",")]
        assert names == [part.split("://")[0] for part in props["listeners"].split(",")]
        assert f"EXTERNAL://localhost:{9091 + node}" in props["advertised.listeners"]


def test_a_second_fetch_fetches_nothing(monkeypatch, tmp_path):
    libs = tmp_path / "kafka-9.9.9" / "libs"
    libs.mkdir(parents=True)
    (libs / "kafka_2.13-9.9.9.jar").write_bytes(b"")
    (libs.parent / jars.STAMP).write_text("kafka_2.13-9.9.9.jar\n")
    monkeypatch.setenv("MINIKAFKA_CACHE", str(tmp_path))
    monkeypatch.setattr(jars.shutil, "which", lambda name: pytest.fail("Maven was called"))
    assert jars.fetch_kafka("9.9.9") == libs


def test_without_maven_the_error_says_how_to_get_real_kafka(monkeypatch, tmp_path):
    monkeypatch.setenv("MINIKAFKA_CACHE", str(tmp_path))
    monkeypatch.setattr(jars.shutil, "which", lambda name: None)
    with pytest.raises(jars.FetchError, match=r"setup.sh --real-kafka.*docker compose"):
        jars.fetch_kafka("9.9.9")


def test_fetched_jars_have_exactly_one_slf4j_binding():
    libs = jars.fetch_kafka()
    names = [p.name for p in libs.glob("*.jar")]
    bindings = [n for n in names if n.startswith((jars.SLF4J_BINDING.split(":")[1],
                                                  *jars.OTHER_BINDINGS))]
    assert len(bindings) == 1, bindings
    assert f"kafka_2.13-{KAFKA_VERSION}.jar" in names
    assert f"kafka-tools-{KAFKA_VERSION}.jar" in names


# -- against the real cluster -------------------------------------------------------------------

def kafka_cli(cluster: NativeKafka, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from minikafka.cli import main; "
                           "raise SystemExit(main())", "kafka", *args,
                           "--data-dir", str(cluster.data_dir)],
                          capture_output=True, text=True, timeout=180)


def produce_and_read(bootstrap: str, topic: str, values: list[bytes]) -> list[bytes]:
    from kafka import KafkaConsumer, KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for value in values:
        producer.send(topic, value, key=b"k").get(timeout=60)
    producer.close()
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                             consumer_timeout_ms=10_000)
    seen = [record.value for record in consumer]
    consumer.close()
    return seen


@pytest.mark.real_kafka
@pytest.mark.timeout(600)
def test_status_lists_three_running_nodes_and_the_controller(real_kafka):
    done = kafka_cli(real_kafka, "status")
    assert done.returncode == 0, done.stderr
    assert f"Apache Kafka {KAFKA_VERSION}" in done.stdout
    rows = [line for line in done.stdout.splitlines() if re.match(r"[123]\s", line)]
    assert len(rows) == 3 and all("running" in row for row in rows)
    assert sum("(active controller)" in row for row in rows) == 1
    assert real_kafka.controller() in (1, 2, 3)


@pytest.mark.real_kafka
@pytest.mark.timeout(600)
def test_kill_and_start_a_node_keeps_acks_all_writes(real_kafka):
    from kafka.admin import KafkaAdminClient, NewTopic

    topic = f"native-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=real_kafka.bootstrap_servers)
    admin.create_topics([NewTopic(topic, 1, 3)])
    admin.close()
    assert produce_and_read(real_kafka.bootstrap_servers, topic, [b"a"]) == [b"a"]

    done = kafka_cli(real_kafka, "kill", "3")
    assert done.returncode == 0 and "killed" in done.stdout, done.stderr
    assert [s.running for s in real_kafka.status()] == [True, True, False]
    # min.insync.replicas=2 of 3: one node down still takes acks=all writes.
    bootstrap = f"localhost:{real_kafka.client_port(1)},localhost:{real_kafka.client_port(2)}"
    assert produce_and_read(bootstrap, topic, [b"b"]) == [b"a", b"b"]

    done = kafka_cli(real_kafka, "start", "3")
    assert done.returncode == 0, done.stderr
    assert all(s.running for s in real_kafka.status())
    done = kafka_cli(real_kafka, "logs", "3", "-n", "400")
    assert "Kafka Server started" in done.stdout


@pytest.mark.real_kafka
@pytest.mark.timeout(600)
def test_nodes_map_the_class_data_archive_the_first_up_made(real_kafka):
    """Every node maps the archive of Kafka's classes (a JVM maps an archive only when it
    accepts it: made by the same Java build for the same jars)."""
    archive = archive_path(find_java(), jars.fetch_kafka())
    assert archive.exists()
    for node in real_kafka.status():
        assert str(archive.resolve()) in Path(f"/proc/{node.pid}/maps").read_text(), node


@pytest.mark.real_kafka
@pytest.mark.timeout(600)
def test_stopping_the_active_controller_moves_it(real_kafka):
    before = real_kafka.controller()
    done = kafka_cli(real_kafka, "stop", str(before))
    assert done.returncode == 0, done.stderr
    after = real_kafka.controller()
    assert after in (1, 2, 3) and after != before
    assert "shut down completed" in real_kafka.log_path(before).read_text().lower()


def test_node_commands_name_the_node(tmp_path):
    done = subprocess.run([sys.executable, "-c", "from minikafka.cli import main; "
                           "raise SystemExit(main())", "kafka", "kill", "--data-dir",
                           str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "needs a node id" in done.stderr
    done = subprocess.run([sys.executable, "-c", "from minikafka.cli import main; "
                           "raise SystemExit(main())", "kafka", "kill", "7", "--data-dir",
                           str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "no node 7" in done.stderr


def test_a_course_server_properties_gives_the_three_nodes_its_broker_settings(repo_root, tmp_path):
    """The file `minikafka serve` takes works for the real cluster too: its broker settings
    reach every node (and stay for a later `start N`); node ids and listeners stay the
    launcher's."""
    from minikafka.core.server_config import read_properties
    from minikafka.realkafka.nodes import broker_overrides

    settings = read_properties((repo_root / "docker" / "server.properties").read_text())
    settings["log.retention.hours"] = "24"
    shared, left_out = broker_overrides(settings)
    assert {"node.id", "listeners", "advertised.listeners"} <= set(left_out)
    NativeKafka(tmp_path, port=9092, overrides=shared)._write_configs()
    again = NativeKafka(tmp_path)  # a later command: the saved settings come back
    for node in (1, 2, 3):
        props = again.properties(node)
        assert props["log.retention.hours"] == "24" and props["min.insync.replicas"] == "2"
        assert props["node.id"] == str(node)
        assert f"EXTERNAL://localhost:{9091 + node}" in props["advertised.listeners"]
    text = (tmp_path / "node-3" / "server.properties").read_text()
    assert "log.retention.hours=24\n" in text


def test_config_is_for_up_only(tmp_path):
    done = subprocess.run([sys.executable, "-c", "from minikafka.cli import main; "
                           "raise SystemExit(main())", "kafka", "start", "2", "--config",
                           "docker/server.properties", "--data-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--config and --override are for" in done.stderr


def test_a_file_with_two_secured_listeners_gives_the_nodes_both(tmp_path):
    """The first client listener becomes EXTERNAL; a further one (SASL_SSL beside SSL)
    keeps its name, protocol and listener.name.* keys, on three ports after EXTERNAL's."""
    from minikafka.realkafka.nodes import broker_overrides

    shared, _ = broker_overrides({
        "listeners": "SSL://127.0.0.1:9093,SASL_SSL://127.0.0.1:9094",
        "listener.name.ssl.ssl.client.auth": "required",
        "listener.name.sasl_ssl.plain.sasl.jaas.config": "x required;"})
    assert shared["listener.security.protocol.map"] == \
        "INTERNAL:PLAINTEXT,EXTERNAL:SSL,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL"
    assert shared["listener.name.external.ssl.client.auth"] == "required"
    assert shared["listener.name.sasl_ssl.plain.sasl.jaas.config"] == "x required;"
    kafka = NativeKafka(tmp_path, port=9092, overrides=shared)
    assert kafka.listener_bootstrap("SASL_SSL") == "localhost:9095,localhost:9096,localhost:9097"
    props = kafka.properties(2)
    assert props["listeners"].endswith(",SASL_SSL://127.0.0.1:9096")
    assert props["advertised.listeners"].endswith(",SASL_SSL://localhost:9096")
