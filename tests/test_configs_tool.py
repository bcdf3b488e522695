"""minikafka configs (kafka-configs.sh): Kafka's flags and output, against a served
minikafka cluster through kafka-python."""

from __future__ import annotations

import pytest

from minikafka.cli import main
from minikafka.course.served import real_cluster
from minikafka.tools.configs import parse_add_config


@pytest.fixture(scope="module")
def server():
    with real_cluster(topics={"payments": 3}, configs={"payments": {"min.insync.replicas": "2"}}) as s:
        yield s


def configs(server, *argv: str) -> int:
    return main(["configs", "--bootstrap-server", server.bootstrap_servers, *argv])


def test_describe_shows_what_is_set_on_the_topic(server, capsys) -> None:
    assert configs(server, "--entity-type", "topics", "--entity-name", "payments",
                   "--describe") == 0
    assert capsys.readouterr().out.splitlines() == [
        "Dynamic configs for topic payments are:",
        "  min.insync.replicas=2 sensitive=false "
        "synonyms={DYNAMIC_TOPIC_CONFIG:min.insync.replicas=2, "
        "DEFAULT_CONFIG:min.insync.replicas=1}"]


def test_alter_a_topic_and_the_broker_default(server, capsys) -> None:
    assert configs(server, "--entity-type", "topics", "--entity-name", "payments", "--alter",
                   "--add-config", "retention.ms=86400000,cleanup.policy=[delete,compact]") == 0
    assert configs(server, "--entity-type", "brokers", "--entity-default", "--alter",
                   "--add-config", "log.retention.ms=259200000") == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["Completed updating config for topic payments.",
                   "Completed updating default config for brokers in the cluster."]
    with server.cluster.lock:
        config = server.cluster.topic_config("payments")
        assert config["retention.ms"] == 86_400_000
        assert server.cluster.broker_config["log.retention.ms"] == 259_200_000
    assert configs(server, "--entity-type", "brokers", "--entity-default", "--describe") == 0
    assert "  log.retention.ms=259200000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:" \
        "log.retention.ms=259200000}" in capsys.readouterr().out
    # A topic's synonyms, as Kafka lists them: its override, then the broker key's chain.
    all_topic = ("--entity-type", "topics", "--entity-name", "payments", "--describe", "--all")
    assert configs(server, *all_topic) == 0
    assert "  retention.ms=86400000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:" \
        "retention.ms=86400000, DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=259200000, " \
        "DEFAULT_CONFIG:log.retention.hours=168}" in capsys.readouterr().out.splitlines()
    assert configs(server, "--entity-type", "topics", "--entity-name", "payments", "--alter",
                   "--delete-config", "retention.ms") == 0
    capsys.readouterr()
    assert configs(server, *all_topic) == 0
    assert "  retention.ms=259200000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:" \
        "log.retention.ms=259200000, DEFAULT_CONFIG:log.retention.hours=168}" \
        in capsys.readouterr().out.splitlines()
    with server.cluster.lock:
        assert server.cluster.topic_config("payments")["retention.ms"] == 259_200_000


def test_a_static_broker_config_is_refused(server, capsys) -> None:
    assert configs(server, "--entity-type", "brokers", "--entity-name", "1", "--alter",
                   "--add-config", "num.partitions=3") == 1
    assert "Cannot update these configs dynamically" in capsys.readouterr().err


def test_flags_are_checked() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["configs", "--bootstrap-server", "localhost:1", "--entity-type", "topics",
              "--entity-name", "t"])
    assert exc.value.code == 2
    assert parse_add_config("a=1,b=[x,y]") == {"a": "1", "b": "x,y"}
