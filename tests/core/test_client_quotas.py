"""Client quotas: AlterClientQuotas/DescribeClientQuotas in-process, Kafka's validation,
filters, precedence, and the records surviving a durable restart."""
import pytest

from minikafka import Cluster
from minikafka.core import errors
from minikafka.core.api import (
    QuotaAlteration,
    QuotaFilterComponent,
    QuotaOp,
    entity_of,
    quota_for,
)
from minikafka.core.api.client_quotas import MATCH_ANY, MATCH_DEFAULT, MATCH_EXACT

CLIENT, USER = "client-id", "user"


def alter(cluster, entity, validate_only=False, **values):
    ops = tuple(QuotaOp(k, v or 0.0, v is None) for k, v in values.items())
    [result] = cluster.alter_client_quotas([QuotaAlteration(entity_of(entity.items()), ops)],
                                           validate_only)
    return result.error_code, result.error_message


def test_set_describe_and_remove_a_client_quota():
    cluster = Cluster(brokers=1)
    assert alter(cluster, {CLIENT: "app1"}, producer_byte_rate=1024) == (errors.NONE, None)
    assert alter(cluster, {USER: "alice", CLIENT: None}, consumer_byte_rate=2048.0) == (0, None)
    assert cluster.describe_client_quotas() == {
        ((CLIENT, None), (USER, "alice")): {"consumer_byte_rate": 2048.0},
        ((CLIENT, "app1"),): {"producer_byte_rate": 1024.0}}
    assert alter(cluster, {CLIENT: "app1"}, producer_byte_rate=None) == (0, None)
    assert list(cluster.describe_client_quotas()) == [((CLIENT, None), (USER, "alice"))]


def test_validate_only_checks_without_storing():
    cluster = Cluster(brokers=1)
    assert alter(cluster, {CLIENT: "app1"}, True, producer_byte_rate=10) == (0, None)
    assert cluster.describe_client_quotas() == {}


@pytest.mark.parametrize("entity,values,message", [
    ({CLIENT: "a"}, {"bogus_rate": 1.0}, "Invalid configuration key bogus_rate"),
    ({CLIENT: "a"}, {"producer_byte_rate": 1.5}, "Configuration producer_byte_rate must be "
                                                 "a Long value"),
    ({CLIENT: "a"}, {"request_percentage": -1.0}, "Configuration request_percentage must be "
                                                  "greater than 0"),
    ({"group": "g"}, {"producer_byte_rate": 1.0}, "Unhandled client quota entity type: group"),
    ({}, {"producer_byte_rate": 1.0}, "Invalid empty client quota entity"),
])
def test_kafka_refuses_bad_alterations_with_invalid_request(entity, values, message):
    cluster = Cluster(brokers=1)
    assert alter(cluster, entity, **values) == (errors.INVALID_REQUEST, message)
    assert cluster.describe_client_quotas() == {}


def test_describe_filters_exact_default_any_and_strict():
    cluster = Cluster(brokers=1)
    for entity in ({USER: "alice"}, {USER: None}, {USER: "alice", CLIENT: "app1"},
                   {CLIENT: "app1"}):
        alter(cluster, entity, producer_byte_rate=100)

    def found(*components, strict=False):
        return sorted(cluster.describe_client_quotas(
            [QuotaFilterComponent(*c) for c in components], strict), key=repr)

    assert found((USER, MATCH_EXACT, "alice")) == [
        ((CLIENT, "app1"), (USER, "alice")), ((USER, "alice"),)]
    assert found((USER, MATCH_EXACT, "alice"), strict=True) == [((USER, "alice"),)]
    assert found((USER, MATCH_DEFAULT)) == [((USER, None),)]
    assert found((USER, MATCH_ANY), strict=True) == [((USER, "alice"),), ((USER, None),)]
    assert found((CLIENT, MATCH_ANY)) == [
        ((CLIENT, "app1"), (USER, "alice")), ((CLIENT, "app1"),)]
    with pytest.raises(Exception, match="Exact match requires"):
        found((USER, MATCH_EXACT, None))


def test_kafkas_precedence_of_quotas():
    quotas = {}
    levels = [({USER: "u", CLIENT: "c"}, 1), ({USER: "u", CLIENT: None}, 2), ({USER: "u"}, 3),
              ({USER: None, CLIENT: "c"}, 4), ({USER: None, CLIENT: None}, 5),
              ({USER: None}, 6), ({CLIENT: "c"}, 7), ({CLIENT: None}, 8)]
    for entity, value in levels:
        quotas[entity_of(entity.items())] = {"producer_byte_rate": float(value)}
    for _, value in levels:  # take the most specific away, the next one applies
        assert quota_for(quotas, "u", "c", "producer_byte_rate") == value
        del quotas[min(quotas, key=lambda e: quotas[e]["producer_byte_rate"])]
    assert quota_for(quotas, "u", "c", "producer_byte_rate") is None


def test_client_quotas_outlive_a_restart(tmp_path):
    cluster = Cluster(brokers=1, seed=3, log_dir=tmp_path)
    alter(cluster, {CLIENT: "app1"}, producer_byte_rate=1024)
    alter(cluster, {USER: None}, consumer_byte_rate=4096, request_percentage=50.5)
    alter(cluster, {USER: None}, request_percentage=None)
    again = Cluster(brokers=1, seed=3, log_dir=tmp_path)
    assert again.describe_client_quotas() == {
        ((CLIENT, "app1"),): {"producer_byte_rate": 1024.0},
        ((USER, None),): {"consumer_byte_rate": 4096.0}}


def test_the_in_process_admin_alters_and_describes_client_quotas():
    cluster = Cluster(brokers=1)
    admin = cluster.admin()
    results = admin.alter_client_quotas([({CLIENT: "app1"}, {"producer_byte_rate": 1024}),
                                         ({USER: None}, {"bogus": 1})])
    assert results[((CLIENT, "app1"),)] is None
    assert type(results[((USER, None),)]).__name__ == "InvalidRequestError"
    assert admin.describe_client_quotas([QuotaFilterComponent(CLIENT, MATCH_ANY)]) == {
        ((CLIENT, "app1"),): {"producer_byte_rate": 1024.0}}
    admin.alter_client_quotas([({CLIENT: "app1"}, {"producer_byte_rate": None})])
    assert admin.describe_client_quotas() == {}


def test_an_in_process_producer_over_its_quota_waits_the_throttle_time():
    cluster = Cluster(brokers=1)
    cluster.create_topic("t", partitions=1, replication_factor=1)
    cluster.admin().alter_client_quotas([({CLIENT: "app1"}, {"producer_byte_rate": 100})])
    producer = cluster.producer(client_id="app1", linger_ms=0)
    producer.send("t", b"x" * 3000)
    producer.flush()
    [throttled] = cluster.journal.of_kind("produce.throttled")
    # Kafka's rate over at least 10 s: ~3000 B / 10 s = ~300 B/s against 100 B/s.
    assert 15_000 < throttled.fields["throttle_time_ms"] < 25_000
    waited_until = throttled.time_ms + throttled.fields["throttle_time_ms"]
    producer.send("t", b"y")
    producer.flush()
    [_, second] = cluster.journal.of_kind("produce.acked")
    assert second.time_ms >= waited_until  # not sent before the throttle time passed
    other = cluster.producer(client_id="other", linger_ms=0)
    other.send("t", b"z" * 3000)
    other.flush()
    assert len(cluster.journal.of_kind("produce.throttled")) == 1  # no quota, no throttle


def test_an_in_process_consumer_over_its_quota_waits_the_throttle_time():
    cluster = Cluster(brokers=1)
    cluster.create_topic("t", partitions=1, replication_factor=1)
    producer = cluster.producer(linger_ms=0)
    for _ in range(3):
        producer.send("t", b"x" * 3000)
        producer.flush()  # three batches
    cluster.admin().alter_client_quotas([({USER: None}, {"consumer_byte_rate": 100})])
    consumer = cluster.consumer("t", client_id="reader", auto_offset_reset="earliest",
                                max_partition_fetch_bytes=3200)
    first = consumer.poll(timeout_ms=1000)
    assert sum(len(v) for v in first.values()) == 1
    [throttled] = cluster.journal.of_kind("fetch.throttled")
    until = throttled.time_ms + throttled.fields["throttle_time_ms"]
    assert throttled.fields["throttle_time_ms"] > 0
    assert consumer.poll(timeout_ms=1000) == {}  # throttled: no fetch yet
    while cluster.now_ms < until:
        consumer.poll(timeout_ms=1000)
    assert len(cluster.journal.of_kind("fetch.throttled")) >= 2  # fetched again after it
