"""minikafka/core/kafka_configdefs.json is what Kafka 4.4.0's jars define (ConfigDefs.java run
against them), so the config keys, defaults and validators minikafka uses cannot drift.
Regenerate with `minikafka kafka configdefs`."""
from __future__ import annotations

import json

import pytest

from minikafka.core import kafka_configs
from minikafka.realkafka import KAFKA_VERSION
from minikafka.realkafka.configdefs import DATA, dump
from minikafka.realkafka.jars import fetch_kafka


@pytest.mark.real_kafka
@pytest.mark.timeout(600)
def test_the_committed_configdefs_are_the_jars():
    live = json.loads(dump(fetch_kafka()))
    assert live["kafka_version"] == KAFKA_VERSION
    assert live == json.loads(DATA.read_text()), "run `minikafka kafka configdefs`"


def test_the_data_holds_kafka_s_keys_and_rules():
    topic, broker = kafka_configs.TOPIC, kafka_configs.BROKER
    assert len([k for k in topic.values() if not k.internal]) == 37  # Kafka 4.4.0's LogConfig
    assert len(broker) > 370
    assert topic["segment.bytes"].validator["min"] == 1 << 20
    assert broker["log.retention.ms"].dynamic == "cluster-wide"
    assert broker["num.network.threads"].dynamic == "cluster-wide"
    assert broker["node.id"].dynamic == "read-only"
    assert kafka_configs.TOPIC_SYNONYMS["segment.ms"] == (("log.roll.ms", 1),
                                                         ("log.roll.hours", 3_600_000))


@pytest.mark.parametrize("key, value, why", [
    ("segment.bytes", "1024", "Value must be at least 1048576"),
    ("retention.ms", "abc", "Not a number of type LONG"),
    ("min.insync.replicas", "99999999999", "Not a number of type INT"),
    ("cleanup.policy", "compact,remove", "String must be one of: compact, delete"),
    ("compression.type", "brotli", "String must be one of:"),
    ("compression.gzip.level", "0", "Value must be between 1 and 9 or equal to -1"),
    ("min.cleanable.dirty.ratio", "1.5", "Value must be no more than 1"),
    ("unclean.leader.election.enable", "yes", "Expected value to be either true or false"),
    ("leader.replication.throttled.replicas", "0-1", "must be the literal '*'"),
])
def test_values_kafka_refuses_are_refused_with_its_reason(key, value, why):
    with pytest.raises(kafka_configs.ConfigException, match=f"Invalid value {value} for "
                       f"configuration {key}: .*{why.split(':')[0]}"):
        kafka_configs.TOPIC[key].parse(value)


@pytest.mark.parametrize("key, value, parsed", [
    ("segment.bytes", "1048576", 1 << 20), ("compression.gzip.level", "-1", -1),
    ("cleanup.policy", "delete, compact", "delete,compact"), ("cleanup.policy", "", ""),
    ("leader.replication.throttled.replicas", "0:1,1:2", "0:1,1:2"),
    ("unclean.leader.election.enable", "TRUE", True)])
def test_values_kafka_takes_are_taken(key, value, parsed):
    assert kafka_configs.TOPIC[key].parse(value) == parsed


def test_a_new_cluster_finalizes_kafka_4_4_s_features():
    """Measured on the native 4.4.0 cluster (kafka-features.sh describe): every production
    feature, at the level the jars' defaults give; kraft.version supported, finalized 0
    (static voters)."""
    from minikafka.cluster import Cluster
    from minikafka.operations import features_describe
    described = Cluster(brokers=1).admin().describe_features()
    assert set(described) == set(kafka_configs.FEATURES)
    assert described["kraft.version"] == {"supported": (0, 1)}
    for name in ("metadata.version", "group.version", "share.version", "streams.version",
                 "eligible.leader.replicas.version", "transaction.version"):
        spec = kafka_configs.FEATURES[name]
        assert described[name]["supported"] == (spec["min"], spec["max"])
        assert described[name]["finalized"] == (spec["default"],) * 2
    assert described["transaction.version"]["finalized"] == (2, 2)
    text = features_describe(Cluster(brokers=1))
    assert "Feature: metadata.version                          SupportedMinVersion: 3.3-IV3   " \
           "       SupportedMaxVersion: 4.4-IV2          FinalizedVersionLevel: 4.4-IV2   " in text


def test_the_course_facts_sheet_agrees_with_kafka_s_own_defaults():
    """minikafka.course.facts (the defaults the lessons state) against the jars' ConfigDefs,
    for every topic, broker and group key it lists."""
    from minikafka.course.facts import DEFAULTS
    client_too = {"fetch.max.bytes"}  # the sheet states the consumer's (50 MiB), not the broker's
    checked = 0
    for name, fact in DEFAULTS.items():
        spec = kafka_configs.TOPIC.get(name) or kafka_configs.BROKER.get(name) \
            or kafka_configs.GROUP.get(name)
        if spec is None or name in client_too:
            continue
        assert fact.kafka == spec.default, (name, fact.kafka, spec.default)
        checked += 1
    assert checked > 40
