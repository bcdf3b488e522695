"""Streams groups (KIP-1071, `group.protocol=streams`) on Apache Kafka 4.4.0's native
cluster: the broker needs no setting for them. Kafka 4.4.0's
`group.coordinator.rebalance.protocols` defaults to classic,consumer,streams and a new
cluster finalizes `streams.version` 1, so StreamsGroupHeartbeat is served without
`unstable.api.versions.enable` (an internal broker setting, false by default). minikafka's
server does not serve StreamsGroupHeartbeat.
"""
from __future__ import annotations

import pytest

from .jvm import run_java

pytestmark = [pytest.mark.real_kafka, pytest.mark.slow, pytest.mark.timeout(900)]


def test_the_broker_serves_streams_groups_with_its_defaults(real_kafka) -> None:
    listed = run_java("org.apache.kafka.tools.FeatureCommand", "--bootstrap-server",
                      real_kafka.bootstrap_servers, "describe")
    assert listed.returncode == 0, listed.stderr
    streams = [line for line in listed.stdout.splitlines() if "Feature: streams.version" in line]
    assert streams and "FinalizedVersionLevel: 1" in streams[0], listed.stdout
    configs = run_java("org.apache.kafka.tools.ConfigCommand", "--bootstrap-server",
                       real_kafka.bootstrap_servers, "--entity-type", "brokers",
                       "--entity-name", "1", "--describe", "--all")
    assert configs.returncode == 0, configs.stderr
    text = configs.stdout
    assert "group.coordinator.rebalance.protocols=classic,consumer,streams" in text, text[-2000:]
    # Nothing in the nodes' server.properties switches streams groups or unstable APIs on.
    for node in (1, 2, 3):
        props = real_kafka.properties(node)
        assert "unstable.api.versions.enable" not in props
        assert "group.coordinator.rebalance.protocols" not in props
