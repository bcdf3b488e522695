"""The scenario registry and the helpers scenarios share.

    @scenario("offsets", lesson="01")
    def offsets_of_a_fresh_partition(door):
        ...
        return {"offsets": [...]}          # a normalised, JSON-able observation

A scenario returns only what must be the same on every cluster: no timestamps the broker
chose, no cluster ids, no node ids where Kafka picks at random (a scenario names replicas
by role instead: leader, follower).
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

KAFKA_PYTHON, CONFLUENT = "kafka-python", "confluent-kafka"


@dataclass(frozen=True)
class Scenario:
    name: str
    group: str
    client: str
    lesson: str  # the lesson whose claim the scenario checks
    in_process: bool  # expressible with minikafka.Cluster's own clients
    fn: Callable[[Any], dict]
    doc: str


SCENARIOS: dict[str, Scenario] = {}


def scenario(group: str, *, lesson: str, client: str = KAFKA_PYTHON,
             in_process: bool = False) -> Callable[[Callable], Callable]:
    def register(fn: Callable[[Any], dict]) -> Callable[[Any], dict]:
        name = fn.__name__
        assert name not in SCENARIOS, name
        doc = " ".join((fn.__doc__ or "").split())
        SCENARIOS[name] = Scenario(name, group, client, lesson, in_process, fn, doc)
        return fn
    return register


def err(exc: BaseException | None) -> str:
    """An error as its Kafka name: kafka-python's class name, confluent-kafka's code name."""
    if exc is None:
        return "NoError"
    from confluent_kafka import KafkaError, KafkaException
    if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
        return exc.args[0].name()
    if isinstance(exc, KafkaError):
        return exc.name()
    return type(exc).__name__


def attempt(fn: Callable[[], Any]) -> Any:
    """fn()'s result, or the name of the error it raised."""
    from confluent_kafka import KafkaException
    from kafka.errors import KafkaError
    try:
        return fn()
    except (KafkaError, KafkaException) as exc:  # not a scenario's own bug (KeyError, ...)
        return {"error": err(exc)}


def drain(consumer: Any, count: int, timeout_s: float = 15) -> list:
    """Poll a kafka-python-shaped consumer until `count` records arrived (or time-out)."""
    records: list = []
    deadline = time.monotonic() + timeout_s
    while len(records) < count and time.monotonic() < deadline:
        # Polls of a second: kafka-python 3.0.12 can drop a JoinGroup/SyncGroup that
        # finishes between two short polls and join again, which a loaded machine makes
        # likely (a poll returns as soon as records come either way).
        for batch in consumer.poll(timeout_ms=1_000).values():
            records.extend(batch)
    return sorted(records, key=lambda r: (r.topic, r.partition, r.offset))


def settle_poll(consumer: Any, polls: int = 5) -> list:
    """Poll `polls` times (300 ms each: real time on a wire door, simulated time in
    process) and return whatever arrived, to show that nothing more does."""
    records: list = []
    for _ in range(polls):
        for batch in consumer.poll(timeout_ms=300).values():
            records.extend(batch)
    return records


def ck_drain(consumer: Any, count: int, timeout_s: float = 15) -> list:
    """The same for a confluent-kafka Consumer; errors other than end-of-partition raise."""
    from confluent_kafka import KafkaError, KafkaException
    records: list = []
    deadline = time.monotonic() + timeout_s
    while len(records) < count and time.monotonic() < deadline:
        msg = consumer.poll(0.2)
        if msg is None:
            continue
        if msg.error():
            if msg.error().code() == KafkaError._PARTITION_EOF:
                continue
            raise KafkaException(msg.error())
        records.append(msg)
    return sorted(records, key=lambda m: (m.topic(), m.partition(), m.offset()))


def ck_flush(producer: Any, timeout_s: float = 15) -> None:
    left = producer.flush(timeout_s)
    assert left == 0, f"{left} messages not delivered"


def rows(records: list) -> list[list]:
    """kafka-python records as [partition, offset, key, value]."""
    return [[r.partition, r.offset, _text(r.key), _text(r.value)] for r in records]


def ck_rows(messages: list) -> list[list]:
    return [[m.partition(), m.offset(), _text(m.key()), _text(m.value())] for m in messages]


def _text(b: bytes | None) -> str | None:
    return None if b is None else b.decode("utf-8", "replace")
