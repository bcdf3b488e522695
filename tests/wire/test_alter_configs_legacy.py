"""The legacy AlterConfigs (key 33) and the config rules Kafka 4.4.0 has, through kafka-python
against serve and through the in-process admin: the same answers (measured against the
native cluster in tests/fidelity/s_configs.py)."""
from __future__ import annotations

import pytest
from kafka import KafkaAdminClient
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic

from .test_clients_kafka_python import CLIENT

TOPIC = ConfigResourceType.TOPIC


def _scenario(admin) -> dict:
    admin.create_topics([NewTopic("legacy", 1, 1, topic_configs={"retention.ms": "3600000",
                                                                  "cleanup.policy": "compact"})])
    seen = {}

    def modified() -> dict:
        return {k: v["value"] for k, v in
                admin.describe_configs([ConfigResource(TOPIC, "legacy")])["topic"]["legacy"].items()}

    def alter(configs, incremental) -> str:
        return admin.alter_configs([ConfigResource(TOPIC, "legacy", configs=configs)],
                                   incremental=incremental)["topic"]["legacy"]

    seen["legacy"] = alter({"segment.ms": "120000"}, False)
    seen["legacy kept the others"] = modified()
    seen["legacy bad value"] = alter({"retention.ms": "abc"}, False)
    seen["legacy small segment"] = alter({"segment.bytes": "1024"}, False)
    seen["append"] = alter({"cleanup.policy": ("APPEND", "delete")}, True)
    seen["after append"] = modified()["cleanup.policy"]
    seen["subtract all"] = alter({"cleanup.policy": ("SUBTRACT", "compact,delete")}, True)
    all_configs = admin.describe_configs([ConfigResource(TOPIC, "legacy")],
                                         config_filter="all")["topic"]["legacy"]
    seen["emptied"] = (all_configs["cleanup.policy"]["value"],
                       all_configs["cleanup.policy"]["config_source"])
    seen["keys"] = sorted(all_configs)
    return seen


def _check(seen: dict) -> None:
    assert seen["legacy"] == "OK"
    assert seen["legacy kept the others"] == {"retention.ms": "3600000",
                                              "cleanup.policy": "compact", "segment.ms": "120000"}
    assert seen["legacy bad value"] == ("[Error 40] InvalidConfigurationError: Invalid value abc "
                                        "for configuration retention.ms: Not a number of type LONG")
    assert seen["legacy small segment"].endswith(
        "Invalid value 1024 for configuration segment.bytes: Value must be at least 1048576")
    assert seen["after append"] == "compact,delete"
    assert seen["emptied"] == ("", "DYNAMIC_TOPIC_CONFIG")
    assert len(seen["keys"]) == 37 and "message.timestamp.after.max.ms" in seen["keys"]


def test_over_the_wire(served):
    _, server = served
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap_servers, **CLIENT)
    try:
        seen = _scenario(admin)
    finally:
        admin.close()
    _check(seen)
    in_process = _scenario(_cluster().admin())
    assert in_process == seen


def _cluster():
    from minikafka.cluster import Cluster
    return Cluster(brokers=1, seed=3)


def test_legacy_api_replaces_the_overrides_and_refuses_loggers():
    from minikafka.core import api
    from minikafka.core.api.configs import BROKER_LOGGER
    cluster = _cluster()
    cluster.create_topic("t", 1, 1, config={"retention.ms": "60000"})
    [r] = api.alter_configs(cluster, [api.AlterConfigsResource(
        2, "t", [api.AlterableConfig("segment.ms", 0, "120000")])])
    assert r.error_code == 0
    assert cluster.controller.topics["t"].config.overrides == {"segment.ms": 120000}
    [r] = api.alter_configs(cluster, [api.AlterConfigsResource(
        2, "t", [api.AlterableConfig("segment.ms", 0, None)])])
    assert r.error_code == 42  # INVALID_REQUEST: a null value
    [r] = api.alter_configs(cluster, [api.AlterConfigsResource(BROKER_LOGGER, "1", [])])
    assert r.error_code == 42


@pytest.mark.parametrize("before, after, stamp_offset, code", [
    ("1000", "1000", 0, 0), ("1000", "1000", -60_000, 32), ("1000", "1000", 60_000, 32),
    (None, None, -10**9, 0), (None, None, 2 * 3600_000, 32)])
def test_timestamps_outside_the_topic_s_bounds_are_refused(before, after, stamp_offset, code):
    from kafka.errors import InvalidTimestampError
    cluster = _cluster()
    cluster.advance(10**10)
    config = {} if before is None else {"message.timestamp.before.max.ms": before,
                                        "message.timestamp.after.max.ms": after}
    cluster.create_topic("t", 1, 1, config=config)
    producer = cluster.producer(retries=0)
    future = producer.send("t", b"v", timestamp_ms=cluster.now_ms + stamp_offset)
    if code:
        with pytest.raises(InvalidTimestampError):
            future.get()
        assert cluster.leader_replica("t", 0).log_end_offset == 0
    else:
        assert future.get().offset == 0
