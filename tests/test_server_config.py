"""`minikafka serve [server.properties] [--override key=value]`: Kafka's broker keys,
parsed, checked and reported by DescribeConfigs with their sources; dynamic broker
configs through IncrementalAlterConfigs."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType, KafkaAdminClient

from minikafka.cli import _listener
from minikafka.cluster import Cluster
from minikafka.core.server_config import (
    ServerConfigError,
    parse_overrides,
    parse_server_config,
    read_properties,
    topic_defaults,
)

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "docker" / "server.properties"
DEFAULT_CONFIG, STATIC, DYNAMIC_DEFAULT, DYNAMIC_BROKER = (
    "DEFAULT_CONFIG", "STATIC_BROKER_CONFIG", "DYNAMIC_DEFAULT_BROKER_CONFIG",
    "DYNAMIC_BROKER_CONFIG")


# -- the file --------------------------------------------------------------------------


def test_java_properties_syntax():
    text = ("# a comment\n! another\n  num.partitions = 3\nlog.retention.hours:24\n"
            "message.max.bytes 2000000\nlisteners=PLAINTEXT://:9092,\\\n"
            "    CONTROLLER://:9093\nkey\\=with\\:escapes=a\\tb\nnum.partitions=4\n")
    assert read_properties(text) == {
        "num.partitions": "4",  # the last one wins
        "log.retention.hours": "24", "message.max.bytes": "2000000",
        "listeners": "PLAINTEXT://:9092,CONTROLLER://:9093", "key=with:escapes": "a\tb"}


def test_keys_sorted_into_modelled_ignored_and_unknown():
    config = parse_server_config({"num.partitions": "3", "auto.create.topics.enable": "false",
                                  "log.cleaner.min.cleanable.ratio": "0.25",
                                  "num.network.threads": "3", "process.roles": "broker",
                                  "node.id": "4", "colour.of.broker": "blue"})
    assert config.values == {"num.partitions": 3, "auto.create.topics.enable": False,
                             "log.cleaner.min.cleanable.ratio": 0.25}
    assert sorted(config.ignored) == ["num.network.threads", "process.roles"]
    assert config.unknown == ["colour.of.broker"]
    assert config.server == {"node.id": "4"}


def test_every_kafka_key_is_either_modelled_or_known():
    from minikafka.core.config import BROKER_DEFAULTS
    from minikafka.core.server_config import IGNORED_KEYS, SERVER_KEYS

    assert not IGNORED_KEYS & (set(BROKER_DEFAULTS) | set(SERVER_KEYS))
    assert {"process.roles", "controller.quorum.voters", "num.io.threads", "ssl.keystore.location",
            "log.flush.scheduler.interval.ms", "transaction.state.log.min.isr"} <= IGNORED_KEYS
    assert len(IGNORED_KEYS) > 250  # Kafka 4.4 has 379 broker keys, most not modelled


@pytest.mark.parametrize("key,value", [
    ("num.partitions", "three"), ("num.partitions", "0"), ("auto.create.topics.enable", "yes"),
    ("min.insync.replicas", "0"), ("log.cleanup.policy", "shred"), ("node.id", "-1"),
    ("log.cleaner.min.cleanable.ratio", "2"), ("compression.type", "rar"),
])
def test_a_bad_value_names_key_and_value(key, value):
    with pytest.raises(ServerConfigError) as info:
        parse_server_config({key: value})
    assert info.value.key == key and key in str(info.value) and value in str(info.value)


def test_overrides_win_and_must_be_key_value():
    raw = {"num.partitions": "1", **parse_overrides(["num.partitions=6", "log.retention.ms=5"])}
    assert parse_server_config(raw).values == {"num.partitions": 6, "log.retention.ms": 5}
    with pytest.raises(ServerConfigError):
        parse_overrides(["num.partitions"])


def test_broker_keys_become_topic_defaults():
    defaults = topic_defaults({"log.retention.hours": 24, "log.retention.minutes": None,
                               "log.retention.ms": None, "min.insync.replicas": 2,
                               "message.max.bytes": 2000})
    assert defaults["retention.ms"] == 86_400_000
    assert defaults["min.insync.replicas"] == 2 and defaults["max.message.bytes"] == 2000
    assert topic_defaults(parse_server_config({"log.retention.hours": "-1"}).values | {
        "log.retention.ms": None, "log.retention.minutes": None})["retention.ms"] == -1
    # log.retention.ms wins over hours, as in Kafka
    assert topic_defaults({"log.retention.ms": 5, "log.retention.hours": 24})["retention.ms"] == 5
    cluster = Cluster(brokers=3, broker_config={"log.retention.hours": 1,
                                                "min.insync.replicas": 2})
    cluster.create_topic("t", 1, 3)
    assert cluster.topic_config("t")["retention.ms"] == 3_600_000
    assert cluster.topic_config("t")["min.insync.replicas"] == 2
    cluster.create_topic("own", 1, 3, config={"retention.ms": "7"})
    cluster.alter_broker_config({"log.retention.ms": "60000"})  # a dynamic default
    assert cluster.topic_config("t")["retention.ms"] == 60_000
    assert cluster.topic_config("own")["retention.ms"] == 7  # its own override stays


def test_the_course_file_is_accepted_with_nothing_unknown():
    config = parse_server_config(read_properties(SAMPLE.read_text()))
    assert config.unknown == []
    assert config.values["default.replication.factor"] == 3
    assert config.values["min.insync.replicas"] == 2
    raw = read_properties(SAMPLE.read_text())
    assert _listener(raw["listeners"], {"CONTROLLER"}, "INTERNAL") == ("", 9092)
    assert _listener(raw["advertised.listeners"], {"CONTROLLER"}, "INTERNAL") == \
        ("localhost", 9092)


# -- minikafka serve ---------------------------------------------------------------------


def _serve(*args: str, wait_for_start: bool = True):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", "import sys; from minikafka.cli import main; "
                             "sys.exit(main(sys.argv[1:]))", "serve", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if not wait_for_start:
        out, err = proc.communicate(timeout=60)
        return proc.returncode, out, err
    for line in proc.stdout:
        if line.startswith("bootstrap servers: "):
            return proc, line.split()[2]
    proc.kill()
    raise AssertionError(f"serve did not start: {proc.stderr.read()}")


@pytest.mark.parametrize("args,message", [
    (["--override", "num.partitions=many"], "Invalid value many for configuration num.partitions"),
    (["--override", "auto.create.topics.enable=maybe"],
     "Invalid value maybe for configuration auto.create.topics.enable"),
    (["/nonexistent/server.properties"], "cannot read /nonexistent/server.properties"),
    (["--override", "listeners=PLAINTEXT://:http"], "configuration listeners"),
])
def test_serve_refuses_a_bad_value_with_exit_code_2(args, message):
    rc, out, err = _serve(*args, wait_for_start=False)
    assert rc == 2 and message in err and out == ""


@pytest.fixture
def served_file(tmp_path):
    path = tmp_path / "server.properties"
    path.write_text("num.partitions=4\nlog.retention.hours=24\nnum.io.threads=8\n"
                    "colour.of.broker=blue\nnode.id=1\nlisteners=PLAINTEXT://:9092\n")
    proc, bootstrap = _serve(str(path), "--port", "0", "--override", "message.max.bytes=2000000",
                             "--brokers", "2")
    try:
        yield proc, bootstrap
    finally:
        proc.terminate()
        proc.wait(10)


def _broker_configs(admin, name: str) -> dict:
    result = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, name)],
                                    config_filter="all")
    return result["broker"][name]


def test_describe_configs_reports_sources_and_alter_round_trips(served_file):
    proc, bootstrap = served_file
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
    try:
        configs = _broker_configs(admin, "1")
        sources = {k: v["config_source"] for k, v in configs.items()}
        values = {k: v["value"] for k, v in configs.items()}
        assert values["num.partitions"] == "4" and sources["num.partitions"] == STATIC
        assert values["message.max.bytes"] == "2000000" and sources["message.max.bytes"] == STATIC
        assert values["log.retention.hours"] == "24"
        assert sources["default.replication.factor"] == DEFAULT_CONFIG
        assert values["connections.max.idle.ms"] == "600000"
        assert configs["num.partitions"]["read_only"] is True
        assert configs["log.retention.ms"]["read_only"] is False  # dynamic in Kafka

        # a topic's default set by a broker key carries that key's source, and its
        # synonyms are that key's: as in Kafka, retention.ms follows log.retention.ms
        # only, so log.retention.hours=24 sets its value but no synonym (source DEFAULT)
        from kafka.admin import NewTopic
        admin.create_topics([NewTopic("t", 1, 1)])
        topic = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "t")],
                                       include_synonyms=True,
                                       config_filter="all")["topic"]["t"]
        assert topic["retention.ms"]["value"] == "86400000"
        assert topic["retention.ms"]["config_source"] == DEFAULT_CONFIG
        assert topic["retention.ms"]["synonyms"] == []
        assert topic["max.message.bytes"]["config_source"] == STATIC
        assert [(s["source"], s["name"], s["value"])
                for s in topic["max.message.bytes"]["synonyms"]] == [
            (STATIC, "message.max.bytes", "2000000"),
            (DEFAULT_CONFIG, "message.max.bytes", "1048588")]
        assert topic["segment.bytes"]["config_source"] == DEFAULT_CONFIG

        admin.alter_configs([ConfigResource(
            ConfigResourceType.BROKER, "1", {"log.retention.ms": (AlterConfigOp.SET, "60000")})],
            raise_on_unknown=False, incremental=True)
        altered = _broker_configs(admin, "1")["log.retention.ms"]
        assert altered["value"] == "60000" and altered["config_source"] == DYNAMIC_BROKER
        # broker 2 keeps its own: log.retention.hours=24 from the file decides there
        other = _broker_configs(admin, "2")["log.retention.ms"]
        assert other["value"] is None and other["config_source"] == DEFAULT_CONFIG
        synonyms = admin.describe_configs(
            [ConfigResource(ConfigResourceType.BROKER, "1", ["log.retention.ms"])],
            include_synonyms=True, config_filter="all")["broker"]["1"]["log.retention.ms"]
        assert [(s["source"], s["name"], s["value"]) for s in synonyms["synonyms"]] == [
            (DYNAMIC_BROKER, "log.retention.ms", "60000"),
            (STATIC, "log.retention.hours", "24"),
            (DEFAULT_CONFIG, "log.retention.hours", "168")]

        # a static-only key, and a bad value, are refused with Kafka's errors
        for key, value in (("num.partitions", "8"), ("log.retention.ms", "soon")):
            result = admin.alter_configs([ConfigResource(
                ConfigResourceType.BROKER, "1", {key: (AlterConfigOp.SET, value)})],
                raise_on_unknown=False, incremental=True)
            assert "Error" in repr(result), result
            assert _broker_configs(admin, "1")[key]["value"] != value
        admin.alter_configs([ConfigResource(
            ConfigResourceType.BROKER, "1", {"log.retention.ms": (AlterConfigOp.DELETE, None)})],
            raise_on_unknown=False, incremental=True)
        assert _broker_configs(admin, "1")["log.retention.ms"]["config_source"] == DEFAULT_CONFIG
    finally:
        admin.close()
    proc.terminate()
    _, err = proc.communicate(timeout=10)
    assert "unknown config 'colour.of.broker'" in err
    assert "num.io.threads" in err and "colour.of.broker" not in err.split("ignored: ")[-1]


def test_transaction_max_timeout_ms_bounds_a_producer_s_timeout():
    from minikafka.core import errors
    from minikafka.core.errors import KafkaCoreError

    cluster = Cluster(brokers=3, broker_config=parse_server_config(
        {"transaction.max.timeout.ms": "1000"}).values)
    coordinator = cluster.transaction_coordinator
    coordinator.init_producer_id("t1", 1000, cluster.now_ms)
    with pytest.raises(KafkaCoreError) as info:
        coordinator.init_producer_id("t2", 60_000, cluster.now_ms)  # Kafka's client default
    assert info.value.code == errors.INVALID_TRANSACTION_TIMEOUT


def test_the_course_file_agrees_with_the_compose_file():
    """docker/server.properties is kafka-1 of docker/compose.yaml written as a file: the
    same broker settings (the compose file names them KAFKA_SOME_SETTING)."""
    import yaml

    compose = yaml.safe_load((ROOT / "docker" / "compose.yaml").read_text())
    env = {**compose["x-kafka-env"], **compose["services"]["kafka-1"]["environment"]}
    from_compose = {k[len("KAFKA_"):].lower().replace("_", "."): str(v) for k, v in env.items()
                    if k.startswith("KAFKA_") and k != "KAFKA_HEAP_OPTS"}
    from_file = read_properties(SAMPLE.read_text())
    shared = ["process.roles", "node.id", "controller.listener.names",
              "inter.broker.listener.name", "listener.security.protocol.map",
              "offsets.topic.replication.factor", "transaction.state.log.replication.factor",
              "transaction.state.log.min.isr", "default.replication.factor",
              "min.insync.replicas", "group.initial.rebalance.delay.ms"]
    assert {k: from_file[k] for k in shared} == {k: from_compose[k] for k in shared}
    assert from_file["listeners"] == from_compose["listeners"]
    assert from_file["advertised.listeners"].split(",")[1] == \
        from_compose["advertised.listeners"].split(",")[1]  # EXTERNAL://localhost:9092


def test_log_dirs_and_node_id_from_the_file(tmp_path):
    path = tmp_path / "server.properties"
    path.write_text(f"node.id=4\nlog.dirs={tmp_path / 'data'}\n")
    proc, bootstrap = _serve(str(path), "--port", "0", "--brokers", "2")
    try:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
        try:
            brokers = admin.describe_cluster()["brokers"]
            assert sorted(b["broker_id"] for b in brokers) == [4, 5]
        finally:
            admin.close()
        assert (tmp_path / "data" / "broker-4").is_dir()
    finally:
        proc.terminate()
        proc.wait(10)
