"""Client quotas on the wire: AlterClientQuotas/DescribeClientQuotas (keys 49, 48) with
Kafka's errors and authorisation, and Produce/Fetch over a byte rate answered with
throttle_time_ms."""
from __future__ import annotations

from kafka.protocol.admin import (
    AlterClientQuotasRequest,
    DescribeClientQuotasRequest,
)

from minikafka.cluster import Cluster

from .test_handlers import Client, build, fetch, produce

_Entry = AlterClientQuotasRequest.EntryData
_Component = DescribeClientQuotasRequest.ComponentData


def alter(entity: dict, ops: dict, validate_only=False) -> AlterClientQuotasRequest:
    return AlterClientQuotasRequest(validate_only=validate_only, entries=[_Entry(
        entity=[_Entry.EntityData(entity_type=t, entity_name=n) for t, n in entity.items()],
        ops=[_Entry.OpData(key=k, value=v or 0.0, remove=v is None) for k, v in ops.items()])])


def describe(*components, strict=False) -> DescribeClientQuotasRequest:
    return DescribeClientQuotasRequest(strict=strict, components=[
        _Component(entity_type=t, match_type=m, match=n) for t, m, n in components])


def entries(response) -> list:
    return [([(e.entity_type, e.entity_name) for e in entry.entity],
             {v.key: v.value for v in entry.values}) for entry in response.entries]


def test_alter_and_describe_client_quotas_over_the_wire():
    cluster = Cluster(brokers=1)
    client = Client(cluster, 1)
    for version in (0, 1):
        done = client.call(alter({"client-id": "app1"}, {"producer_byte_rate": 1024.0}),
                           version)
        assert [(e.error_code, e.error_message) for e in done.entries] == [(0, None)]
    bad = client.call(alter({"client-id": "app1"}, {"bogus": 1.0}), 1)
    assert [(e.error_code, e.error_message) for e in bad.entries] == [
        (42, "Invalid configuration key bogus")]
    client.call(alter({"user": None}, {"consumer_byte_rate": 10.0}, validate_only=True), 1)
    found = client.call(describe(("client-id", 2, None)), 1)
    assert (found.error_code, entries(found)) == (
        0, [([("client-id", "app1")], {"producer_byte_rate": 1024.0})])
    assert entries(client.call(describe(("user", 1, None)), 0)) == []
    refused = client.call(describe(("user", 0, None)), 1)
    assert (refused.error_code, refused.entries) == (42, None)


def test_client_quotas_need_alter_and_describe_configs_on_the_cluster():
    cluster = Cluster(brokers=1)
    cluster.enable_acls()
    client = Client(cluster, 1)
    done = client.call(alter({"client-id": "app1"}, {"producer_byte_rate": 1024.0}), 1)
    assert [e.error_code for e in done.entries] == [31]  # CLUSTER_AUTHORIZATION_FAILED
    assert client.call(describe(), 1).error_code == 31
    assert cluster.describe_client_quotas() == {}


def test_produce_and_fetch_over_their_byte_rate_are_throttled():
    cluster = Cluster(brokers=1)
    cluster.create_topic("t", partitions=1, replication_factor=1)
    client = Client(cluster, 1)
    records = build([b"x" * 4000])
    first = client.call(produce("t", 0, records), 9)
    assert first.throttle_time_ms == 0  # no quota: never throttled
    client.call(alter({"client-id": "test"}, {"producer_byte_rate": 100.0,
                                              "consumer_byte_rate": 100.0}), 1)
    second = client.call(produce("t", 0, records), 9)
    # Kafka's rate over at least 10 s: len(records) bytes / 10 s against 100 B/s.
    rate = len(records) / 10
    assert second.throttle_time_ms == int((rate - 100) / 100 * 10_000)
    # Journaled as the in-process producer's are (lesson 22's throttle chart reads these).
    assert [(e.client, e.broker, e.throttle_time_ms)
            for e in cluster.journal.of_kind("produce.throttled")] == [
        ("test", 1, second.throttle_time_ms)]
    # Kafka mutes the channel for the throttle time: the next request waits for it.
    client.send(fetch("t", 0, 0), 12)
    assert client.responses(now_ms=second.throttle_time_ms - 1) == []
    [read] = client.responses(now_ms=second.throttle_time_ms)
    assert read.throttle_time_ms > 0
    cluster.advance(20_000)  # a quiet window later the rate is back under the quota
    client.send(produce("t", 0, build([b"y"])), 9)
    [quiet] = client.responses(now_ms=10 * second.throttle_time_ms)
    assert quiet.throttle_time_ms == 0
