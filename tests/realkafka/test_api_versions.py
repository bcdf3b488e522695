"""ApiVersions: minikafka advertises the ranges of the Kafka release the course targets.

kafka-4.4.0-api-versions.json is what Apache Kafka 4.4.0's brokers answer (captured from the
native cluster; the real_kafka test below checks it against a live one, so it cannot drift).
For every API minikafka serves, the floor must be Kafka's and the ceiling may not pass it;
where the ceiling is lower, the API is in BEHIND with the reason.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from minikafka.realkafka import KAFKA_VERSION
from minikafka.wire.handlers.api_versions import PRODUCE_LISTED_MIN_VERSION
from minikafka.wire.handlers.produce import API_KEY as PRODUCE
from minikafka.wire.registry import default_registry

CAPTURED = Path(__file__).with_name(f"kafka-{KAFKA_VERSION}-api-versions.json")

# API key -> why minikafka stops below Kafka 4.4.0's newest version: none. (ApiVersions v5,
# TxnOffsetCommit v6 and DeleteGroups v3, newer than kafka-python 3.0.12's specs, decode with
# Kafka 4.4.0's own, in minikafka.wire.messages.)
BEHIND: dict[int, str] = {}


def kafka_ranges() -> dict[int, tuple[int, int]]:
    return {int(k): tuple(v) for k, v in json.loads(CAPTURED.read_text()).items()}


def advertised() -> dict[int, tuple[int, int]]:
    ranges = dict(default_registry().version_ranges())
    low, high = ranges[PRODUCE]
    ranges[PRODUCE] = (PRODUCE_LISTED_MIN_VERSION, high)
    return ranges


def test_every_advertised_range_is_kafka_4_4s_or_below_its_newest():
    kafka = kafka_ranges()
    mine = advertised()
    assert set(mine) <= set(kafka), f"APIs Kafka {KAFKA_VERSION} does not have: {set(mine) - set(kafka)}"
    behind = {}
    for key, (low, high) in mine.items():
        assert low == kafka[key][0], f"API {key}: floor v{low}, Kafka {KAFKA_VERSION}'s is v{kafka[key][0]}"
        assert high <= kafka[key][1], f"API {key}: v{high} is newer than Kafka {KAFKA_VERSION}'s v{kafka[key][1]}"
        if high < kafka[key][1]:
            behind[key] = high
    assert set(behind) == set(BEHIND), behind


@pytest.mark.real_kafka
@pytest.mark.timeout(600)
def test_the_captured_ranges_are_what_real_kafka_answers(real_kafka):
    from kafka.net.compat import KafkaNetClient

    client = KafkaNetClient(bootstrap_servers=[f"localhost:{real_kafka.client_port(1)}"])
    try:
        client.check_version(timeout_ms=30_000)
        live = {int(k): tuple(v) for k, v in client._manager.broker_version_data.api_versions.items()}
    finally:
        client.close()
    assert live == kafka_ranges()


def test_every_kafka_api_is_served_or_a_documented_gap():
    """Each key Kafka 4.4.0 advertises: served, or in docs/fidelity.md with its reason."""
    from tests.fidelity.known import API_GAPS
    from tests.fidelity.results import REPORT_FILE
    kafka, mine = kafka_ranges(), advertised()
    assert not set(API_GAPS) & set(mine), "served, yet listed as a gap"
    assert set(kafka) == set(mine) | set(API_GAPS), set(kafka) - set(mine) - set(API_GAPS)
    report = REPORT_FILE.read_text()
    for key, (name, why) in API_GAPS.items():
        assert f"- {key} {name}: {why}" in report, f"{name} missing from {REPORT_FILE.name}"
