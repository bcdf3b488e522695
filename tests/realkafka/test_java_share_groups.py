"""Share groups (KIP-932) with the Java KafkaShareConsumer (kafka-clients 4.4.0) against
`minikafka serve`, and the same program against Apache Kafka 4.4.0 (share groups are on
there by default: share.version=1 since 4.2, so the native cluster needs no setting).

tests/java/ShareRoundTrip.java: two share consumers on one partition, explicit
acknowledgement; j3 released once, j5 rejected. It prints one JSON object of observations.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import GROUP_TEST_SETTINGS

from minikafka.cluster import Cluster

from .jvm import compile_java, observe

pytestmark = [pytest.mark.real_kafka, pytest.mark.slow, pytest.mark.timeout(900)]

SOURCE = Path(__file__).resolve().parents[1] / "java" / "ShareRoundTrip.java"


@pytest.fixture(scope="module")
def classes():
    return compile_java([SOURCE])


def share_round_trip(classes, bootstrap: str) -> dict:
    return observe("ShareRoundTrip", classes, bootstrap, "sh")


@pytest.fixture(scope="module")
def on_minikafka(classes):
    # The session's native cluster's share group settings (heartbeats every second)
    cluster = Cluster(brokers=3, broker_config=GROUP_TEST_SETTINGS)
    with cluster.serve(port=0) as server:
        return share_round_trip(classes, server.bootstrap_servers)


def test_two_share_consumers_on_one_partition_get_every_record_once(on_minikafka):
    assert on_minikafka["accepted"] == 19  # twenty records, j5 rejected
    assert on_minikafka["duplicates"] == 0
    assert on_minikafka["live"] == "Stable 2 member(s) [p0]"  # both assigned partition 0


def test_a_released_record_comes_again_and_a_rejected_one_does_not(on_minikafka):
    assert on_minikafka["j3"] == [1, 2]  # delivery counts
    assert on_minikafka["j5"] == [1]


def test_the_group_after_close(on_minikafka):
    assert on_minikafka["after_close"] == "Empty 0 member(s) []"
    # DescribeShareGroupOffsets reads the share state as last written: Kafka writes the
    # states of an acknowledgement with the start offset as it was before them, so after
    # the last record (offset 19, acknowledged alone) it says 19 with lag 0.
    assert on_minikafka["start_offset"] == 19 and on_minikafka["lag"] == 0
    assert on_minikafka["listed"] == ["Share Empty"]


def test_apache_kafka_gives_the_same_observations(on_minikafka, classes, real_kafka):
    on_kafka = share_round_trip(classes, real_kafka.bootstrap_servers)
    # Which consumer got which record is up to timing on either cluster.
    on_kafka.pop("consumers_with_records")
    expected = dict(on_minikafka)
    expected.pop("consumers_with_records")
    assert on_kafka == expected
