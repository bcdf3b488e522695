"""Transactions V2 (KIP-890 part 2) with the Java client (kafka-clients 4.4.0), which follows
the cluster's finalized transaction.version: on `minikafka serve` and on Apache Kafka 4.4.0
the coordinator holds the same epochs after every commit, abort and fencing, the leader the
same last epoch, and read_committed consumers see the same records.

tests/java/TxnVersions.java runs the steps and prints one JSON object of observations.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from minikafka.cluster import Cluster

from .jvm import compile_java, observe

pytestmark = [pytest.mark.real_kafka, pytest.mark.slow, pytest.mark.timeout(900)]

SOURCE = Path(__file__).resolve().parents[1] / "java" / "TxnVersions.java"
COMMON = {
    "group_offset": 2, "end_offset": 11, "zombie_commit": "ProducerFencedException",
    "read_committed": ["a0", "a1", "c0", "d0"],
    "read_uncommitted": ["a0", "a1", "b0", "c0", "zombie", "d0"],
}


@pytest.fixture(scope="module")
def classes():
    return compile_java([SOURCE])


def on_minikafka(classes, **features: int) -> dict:
    cluster = Cluster(brokers=3, features={k.replace("_", "."): v for k, v in features.items()})
    with cluster.serve(port=0) as server:
        return observe("TxnVersions", classes, server.bootstrap_servers, "tv")


def test_version_2_bumps_the_epoch_at_every_commit_and_abort(classes):
    seen = on_minikafka(classes)
    assert seen == {**COMMON, "finalized": 2, "supported": 2, "leader_epoch": 4, "steps": [
        "init Empty epoch 0",
        "commit CompleteCommit epoch 1",
        "abort CompleteAbort epoch 2",
        "empty CompleteAbort epoch 2",  # nothing sent: the client sends no EndTxn
        "offsets CompleteCommit epoch 3",
        "commit CompleteCommit epoch 4",
        "fenced Empty epoch 6",  # fence and abort (+1; no second bump), the retry (+1)
        "next CompleteCommit epoch 7"]}


def test_version_1_keeps_the_epoch_for_the_session(classes):
    seen = on_minikafka(classes, transaction_version=1)
    assert seen == {**COMMON, "finalized": 1, "supported": 2, "leader_epoch": 0, "steps": [
        "init Empty epoch 0",
        "commit CompleteCommit epoch 0",
        "abort CompleteAbort epoch 0",
        "empty CompleteAbort epoch 0",
        "offsets CompleteCommit epoch 0",
        "commit CompleteCommit epoch 0",
        "fenced Empty epoch 2",  # fence (+1), the client's retry (+1)
        "next CompleteCommit epoch 2"]}


def test_apache_kafka_agrees(classes, real_kafka):
    seen = observe("TxnVersions", classes, real_kafka.bootstrap_servers, "tv")
    expected = on_minikafka(classes)
    assert seen["steps"] == expected["steps"]
    assert seen == expected
