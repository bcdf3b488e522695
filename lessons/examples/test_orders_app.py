"""Testing a Kafka application with minikafka: the pattern, on orders_app.

Each test gets a fresh, seeded cluster in this process (no broker to start, nothing
to clean up), writes the inputs with a producer, runs the application with the same
kind of consumer and producer it gets in production, and reads every output topic
back. Waiting happens on the cluster's simulated clock, so backoff and timeouts cost
no real time and every run is the same.

Run it:  python -m pytest lessons/examples/test_orders_app.py -q
Copy it: swap orders_app for your module, keep the fixtures.
"""
from __future__ import annotations

import json

import pytest

from minikafka import Cluster
from minikafka.course.reading import read_topic
from minikafka.examples import orders_app
from minikafka.examples.orders_app import DEAD_LETTERS, SOURCE, VALID, Pricing


@pytest.fixture
def cluster() -> Cluster:
    cluster = Cluster(brokers=3, seed=16)
    for topic in (SOURCE, VALID, DEAD_LETTERS):
        cluster.create_topic(topic, partitions=1, replication_factor=3)
    return cluster


@pytest.fixture
def sleeps() -> list[float]:
    """Every sleep the application asks for, spent on the simulated clock."""
    return []


def send(cluster: Cluster, *values: bytes) -> None:
    producer = cluster.producer()
    for value in values:
        producer.send(SOURCE, value=value)
    producer.flush()


def run_app(cluster: Cluster, pricing: Pricing, sleeps: list[float]) -> list:
    consumer = cluster.consumer(SOURCE, group_id="orders-app", auto_offset_reset="earliest",
                                enable_auto_commit=False)
    producer = cluster.producer()

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        cluster.advance(int(seconds * 1000))

    try:
        return orders_app.run(consumer, producer, pricing, sleep=sleep)
    finally:
        consumer.close()


def values(cluster: Cluster, topic: str) -> list:
    return [r.value for records in read_topic(cluster, topic).values() for r in records]


def headers(cluster: Cluster, topic: str) -> list[dict]:
    return [{k: v.decode() for k, v in r.headers}
            for records in read_topic(cluster, topic).values() for r in records]


def order(oid: int, amount: float = 10) -> bytes:
    return json.dumps({"id": oid, "amount": amount}).encode()


def test_valid_orders_are_priced(cluster: Cluster, sleeps: list[float]) -> None:
    send(cluster, order(1), order(2, 5))
    run_app(cluster, Pricing(), sleeps)
    assert [json.loads(v)["total"] for v in values(cluster, VALID)] == [12.0, 6.0]
    assert values(cluster, DEAD_LETTERS) == []


def test_a_poison_pill_is_parked_and_the_rest_goes_on(cluster: Cluster, sleeps) -> None:
    send(cluster, order(1), b"not json", b'{"id": 3}', order(4))
    run_app(cluster, Pricing(), sleeps)
    assert [json.loads(v)["id"] for v in values(cluster, VALID)] == [1, 4]
    assert values(cluster, DEAD_LETTERS) == [b"not json", b'{"id": 3}']
    first = headers(cluster, DEAD_LETTERS)[0]
    assert first["error.class"] == "JSONDecodeError" and first["source.offset"] == "1"


def test_a_flaky_service_is_retried_with_backoff(cluster: Cluster, sleeps) -> None:
    send(cluster, order(1))
    pricing = Pricing(flaky={1: 2})
    run_app(cluster, pricing, sleeps)
    assert pricing.calls == {1: 3} and sleeps == [0.1, 0.2]
    assert len(values(cluster, VALID)) == 1


def test_a_service_that_stays_down_is_given_up_on(cluster: Cluster, sleeps) -> None:
    send(cluster, order(1), order(2))
    pricing = Pricing(down={1})
    run_app(cluster, pricing, sleeps)
    assert pricing.calls == {1: 5, 2: 1} and sleeps == [0.1, 0.2, 0.4, 0.8]
    assert headers(cluster, DEAD_LETTERS)[0]["error.class"] == "TemporaryError"
    assert [json.loads(v)["id"] for v in values(cluster, VALID)] == [2]


def test_a_restart_resumes_after_the_committed_offset(cluster: Cluster, sleeps) -> None:
    send(cluster, order(1), order(2))
    run_app(cluster, Pricing(), sleeps)
    send(cluster, order(3))
    again = run_app(cluster, Pricing(), sleeps)
    assert [h.offset for h in again] == [2]  # only the new order
    assert len(values(cluster, VALID)) == 3
