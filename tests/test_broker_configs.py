"""Dynamic broker configs per broker, by Kafka's precedence: a broker's own
(DYNAMIC_BROKER_CONFIG) over the cluster-wide default (DYNAMIC_DEFAULT_BROKER_CONFIG) over
its static config over Kafka's default; the logs a broker hosts and the leader's
min.insync.replicas check follow that broker's values."""

from __future__ import annotations

import pytest

from minikafka.cluster import Cluster
from minikafka.core import api
from minikafka.core.api.configs import (
    BROKER,
    DEFAULT_CONFIG,
    DELETE,
    DYNAMIC_BROKER_CONFIG,
    DYNAMIC_DEFAULT_BROKER_CONFIG,
    DYNAMIC_TOPIC_CONFIG,
    SET,
    STATIC_BROKER_CONFIG,
    TOPIC,
)
from minikafka.errors import NotEnoughReplicasError


def _alter(cluster, name: str, key: str, value: str | None) -> int:
    op = SET if value is not None else DELETE
    [result] = api.incremental_alter_configs(cluster, [api.AlterConfigsResource(
        BROKER, name, [api.AlterableConfig(key, op, value)])])
    return result.error_code


def _entry(cluster, resource_type: int, name: str, key: str, broker_id: int | None = None):
    [result] = api.describe_configs(cluster, [api.ConfigResource(resource_type, name, [key])],
                                    broker_id=broker_id)
    assert result.error_code == 0
    return {e.name: e for e in result.entries}.get(key)


def _seen(cluster, name: str, key: str = "log.retention.ms") -> tuple:
    e = _entry(cluster, BROKER, name, key)
    return e.value, e.source, [(s.source, s.name, s.value) for s in api.entry_synonyms(e)]


def test_a_broker_s_own_value_reaches_only_its_own_logs():
    cluster = Cluster(brokers=3, seed=1)
    cluster.create_topic("t", 1, 3, config={"internal.segment.bytes": "200"})
    leader = cluster.describe_topic("t").partitions[0].leader
    follower = min(b for b in (1, 2, 3) if b != leader)
    producer = cluster.producer(acks="all", linger_ms=0)
    for _ in range(20):
        producer.send("t", value=b"x" * 50, partition=0).get()
    assert _alter(cluster, str(follower), "log.retention.ms", "60000") == 0

    replicas = {b: cluster.brokers[b].replicas[("t", 0)] for b in (1, 2, 3)}
    assert {b: r.config["retention.ms"] for b, r in replicas.items()} == {
        b: 60_000 if b == follower else 7 * 24 * 3600 * 1000 for b in (1, 2, 3)}
    assert cluster.topic_config("t")["retention.ms"] == 7 * 24 * 3600 * 1000  # cluster-wide

    cluster.advance(120_000)
    cluster.run_log_cleaner()
    starts = {b: r.log.log_start_offset for b, r in replicas.items()}
    assert starts[follower] > 0  # its closed segments are older than its 60 s
    assert all(starts[b] == 0 for b in starts if b != follower)

    # segment settings reach the hosted logs at once, on that broker only
    assert _alter(cluster, str(leader), "log.segment.bytes", "4096") == 40  # below 1 MiB
    assert _alter(cluster, str(leader), "log.segment.bytes", "2097152") == 0
    assert replicas[leader].config["internal.segment.bytes"] == 200  # the topic's own wins
    cluster.create_topic("u", 1, 3)
    segment_bytes = {b: cluster.brokers[b].replicas[("u", 0)].log.segment_bytes
                     for b in (1, 2, 3)}
    assert segment_bytes == {b: 2097152 if b == leader else 1 << 30 for b in (1, 2, 3)}


def test_min_insync_replicas_is_the_leader_s():
    cluster = Cluster(brokers=3, seed=2)
    cluster.create_topic("t", 1, 3)
    leader = cluster.describe_topic("t").partitions[0].leader
    follower = min(b for b in (1, 2, 3) if b != leader)
    cluster.stop_broker(follower)
    cluster.advance(60_000)  # out of the ISR
    assert len(cluster.describe_topic("t").partitions[0].isr) == 2
    producer = cluster.producer(acks="all", linger_ms=0, retries=0)

    # set on the stopped follower: the leader's own value (1) still decides
    assert _alter(cluster, str(follower), "min.insync.replicas", "3") == 0
    producer.send("t", value=b"a").get()
    # set on the leader: refused with Kafka's NOT_ENOUGH_REPLICAS
    assert _alter(cluster, str(leader), "min.insync.replicas", "3") == 0
    with pytest.raises(NotEnoughReplicasError):
        producer.send("t", value=b"b").get()
    # the leader's own value wins over the cluster-wide default
    assert _alter(cluster, "", "min.insync.replicas", "2") == 0
    with pytest.raises(NotEnoughReplicasError):
        producer.send("t", value=b"c").get()
    assert _alter(cluster, str(leader), "min.insync.replicas", None) == 0
    producer.send("t", value=b"d").get()  # the default's 2 is met


def test_describe_configs_sources_and_synonyms_by_precedence():
    cluster = Cluster(brokers=2, seed=3, broker_config={"log.retention.ms": 7_200_000})
    cluster.create_topic("t", 1, 2)
    assert _alter(cluster, "", "log.retention.ms", "3600000") == 0
    assert _alter(cluster, "1", "log.retention.ms", "60000") == 0
    static = (STATIC_BROKER_CONFIG, "log.retention.ms", "7200000")
    cluster_default = (DYNAMIC_DEFAULT_BROKER_CONFIG, "log.retention.ms", "3600000")
    default = (DEFAULT_CONFIG, "log.retention.hours", "168")
    assert _seen(cluster, "1") == ("60000", DYNAMIC_BROKER_CONFIG, [
        (DYNAMIC_BROKER_CONFIG, "log.retention.ms", "60000"), cluster_default, static, default])
    assert _seen(cluster, "2") == ("3600000", DYNAMIC_DEFAULT_BROKER_CONFIG,
                                   [cluster_default, static, default])
    # the default resource lists its own values only
    [d] = api.describe_configs(cluster, [api.ConfigResource(BROKER, "")])
    assert [(e.name, e.value, e.source) for e in d.entries] == [
        ("log.retention.ms", "3600000", DYNAMIC_DEFAULT_BROKER_CONFIG)]
    # a topic's default as the answering broker has it, or cluster-wide
    for broker_id, value, source in ((1, "60000", DYNAMIC_BROKER_CONFIG),
                                     (2, "3600000", DYNAMIC_DEFAULT_BROKER_CONFIG),
                                     (None, "3600000", DYNAMIC_DEFAULT_BROKER_CONFIG)):
        e = _entry(cluster, TOPIC, "t", "retention.ms", broker_id)
        assert (e.value, e.source) == (value, source)

    # DELETE on broker 1 falls back to the cluster-wide default, then to the static value
    replica = cluster.brokers[1].replicas[("t", 0)]
    assert replica.config["retention.ms"] == 60_000
    assert _alter(cluster, "1", "log.retention.ms", None) == 0
    assert _seen(cluster, "1") == _seen(cluster, "2")
    assert replica.config["retention.ms"] == 3_600_000
    assert _alter(cluster, "", "log.retention.ms", None) == 0
    assert _seen(cluster, "1") == ("7200000", STATIC_BROKER_CONFIG, [static, default])
    assert replica.config["retention.ms"] == 7_200_000
    assert cluster.dynamic_broker_config == {}
    [d] = api.describe_configs(cluster, [api.ConfigResource(BROKER, "")])
    assert d.entries == ()


def test_a_key_with_no_value_of_its_own_has_no_synonyms_before_it():
    """Kafka drops the synonyms that come before the key itself: log.retention.ms unset
    everywhere has none (its hours synonym decides)."""
    cluster = Cluster(brokers=1, seed=4)
    assert _seen(cluster, "1") == (None, DEFAULT_CONFIG, [])
    assert _seen(cluster, "1", "log.retention.hours") == (
        "168", DEFAULT_CONFIG, [(DEFAULT_CONFIG, "log.retention.hours", "168")])


def _topic_seen(cluster, key: str, broker_id: int | None = 1) -> tuple:
    e = _entry(cluster, TOPIC, "t", key, broker_id)
    return e.value, e.source, [(s.source, s.name, s.value) for s in api.entry_synonyms(e)]


def test_topic_synonyms_are_the_override_then_the_broker_key_s_chain():
    """As Kafka 4.4.0 lists them (kafka-configs --describe --all on a cluster with
    log.retention.hours=72 and log.segment.bytes=536870912 in server.properties): the
    topic override, then the synonyms of the broker key that sets the default, from the
    answering broker's view; retention.ms follows log.retention.ms, so with that unset
    the hours keys set the value but no synonym is listed."""
    cluster = Cluster(brokers=2, seed=7, broker_config={"log.retention.hours": 72,
                                                        "log.segment.bytes": 536_870_912})
    cluster.create_topic("t", 1, 2)
    hours = [(STATIC_BROKER_CONFIG, "log.retention.hours", "72"),
             (DEFAULT_CONFIG, "log.retention.hours", "168")]
    segment = [(STATIC_BROKER_CONFIG, "log.segment.bytes", "536870912"),
               (DEFAULT_CONFIG, "log.segment.bytes", "1073741824")]
    assert _topic_seen(cluster, "retention.ms") == ("259200000", DEFAULT_CONFIG, [])
    assert _topic_seen(cluster, "segment.bytes") == ("536870912", STATIC_BROKER_CONFIG, segment)
    assert _topic_seen(cluster, "segment.ms") == ("604800000", DEFAULT_CONFIG, [])
    assert _topic_seen(cluster, "cleanup.policy") == (
        "delete", DEFAULT_CONFIG, [(DEFAULT_CONFIG, "log.cleanup.policy", "delete")])

    assert _alter(cluster, "", "log.retention.ms", "172800000") == 0
    cluster_default = (DYNAMIC_DEFAULT_BROKER_CONFIG, "log.retention.ms", "172800000")
    assert _topic_seen(cluster, "retention.ms") == (
        "172800000", DYNAMIC_DEFAULT_BROKER_CONFIG, [cluster_default, *hours])
    [r] = api.incremental_alter_configs(cluster, [api.AlterConfigsResource(TOPIC, "t", [
        api.AlterableConfig("retention.ms", SET, "3600000"),
        api.AlterableConfig("segment.bytes", SET, "1048576")])])
    assert r.error_code == 0
    assert _topic_seen(cluster, "retention.ms") == ("3600000", DYNAMIC_TOPIC_CONFIG, [
        (DYNAMIC_TOPIC_CONFIG, "retention.ms", "3600000"), cluster_default, *hours])
    assert _topic_seen(cluster, "segment.bytes") == ("1048576", DYNAMIC_TOPIC_CONFIG, [
        (DYNAMIC_TOPIC_CONFIG, "segment.bytes", "1048576"), *segment])
    # a broker's own value shows on that broker's answer only
    assert _alter(cluster, "2", "log.retention.ms", "60000") == 0
    assert _topic_seen(cluster, "retention.ms", 2)[2][1] == (
        DYNAMIC_BROKER_CONFIG, "log.retention.ms", "60000")
    assert _topic_seen(cluster, "retention.ms", 1)[2][1] == cluster_default
    assert _alter(cluster, "", "log.retention.ms", None) == 0
    assert _topic_seen(cluster, "retention.ms") == ("3600000", DYNAMIC_TOPIC_CONFIG, [
        (DYNAMIC_TOPIC_CONFIG, "retention.ms", "3600000")])


def test_per_broker_values_survive_a_restart(tmp_path):
    cluster = Cluster(brokers=2, seed=5, log_dir=tmp_path)
    cluster.create_topic("t", 1, 2)
    assert _alter(cluster, "2", "log.retention.ms", "60000") == 0
    assert _alter(cluster, "", "min.insync.replicas", "2") == 0
    again = Cluster(brokers=2, seed=5, log_dir=tmp_path)
    assert again.dynamic_broker_config == {None: {"min.insync.replicas": 2},
                                           2: {"log.retention.ms": 60_000}}
    assert {b: again.brokers[b].replicas[("t", 0)].config["retention.ms"] for b in (1, 2)} == {
        1: 7 * 24 * 3600 * 1000, 2: 60_000}
    assert _seen(again, "2")[:2] == ("60000", DYNAMIC_BROKER_CONFIG)
    assert again.brokers[1].config["min.insync.replicas"] == 2


def test_the_cleaner_backs_off_by_the_cluster_wide_value():
    cluster = Cluster(brokers=1, seed=6)
    cluster.create_topic("c", config={"cleanup.policy": "compact"})
    assert _alter(cluster, "", "log.cleaner.backoff.ms", "1000") == 0
    cluster.producer(linger_ms=0).send("c", key=b"k", value=b"v").get()
    origin = cluster.log_manager.origin_ms
    when = cluster.log_manager.scheduled()["cleaner"]
    assert when is not None and (when - origin) % 1000 == 0 and when - cluster.now_ms <= 1000
