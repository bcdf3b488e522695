"""orders_app: price incoming orders; park what cannot be processed.

Reads `orders` (JSON values), asks a pricing service for each order's total, writes the
priced order to `orders.valid`, and sends any record it cannot process to the
dead-letter topic `orders.DLT`, with headers that say why and where it came from:

- a **poison pill** (not JSON, or not an order) fails the same way on every try: it is
  parked at once;
- a **temporary** failure of the pricing service (`TemporaryError`: a timeout, a 503)
  is retried with exponential backoff, 100 ms doubling up to 1 s, at most 5 tries,
  like the Kafka clients' own retry.backoff.ms and retry.backoff.max.ms; if it still
  fails, the order is parked too.

Offsets are committed after the outputs are flushed, so a crash repeats work rather
than losing it (at least once). Any other exception is a bug in this code: it stops the
application loudly instead of parking good orders.

Only kafka-python's API is used: `consumer.poll()`, `consumer.commit()`,
`producer.send(..., headers=...)`, `producer.flush()`. `sleep` is passed in so a test
can run the backoff on a simulated clock.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

SOURCE = "orders"
VALID = "orders.valid"
DEAD_LETTERS = "orders.DLT"


class TemporaryError(Exception):
    """A downstream hiccup (a timeout, a 503): worth trying again."""


@dataclass(frozen=True)
class Handled:
    """What became of one input record."""

    offset: int
    value: bytes | None
    outcome: str  # "valid" or "parked"
    error: str = ""


def parse(value: bytes | None) -> dict:
    """The order in a record's value; ValueError if there is none (a poison pill)."""
    if value is None:
        raise ValueError("no value")
    order = json.loads(value)  # json.JSONDecodeError is a ValueError
    if not isinstance(order, dict) or not {"id", "amount"} <= order.keys():
        raise ValueError("an order needs an id and an amount")
    return order


def with_retries(fn: Callable[[], Any], *, attempts: int = 5, backoff_ms: int = 100,
                 max_backoff_ms: int = 1_000,
                 sleep: Callable[[float], Any] = time.sleep) -> Any:
    """fn(), tried again after a TemporaryError: wait backoff_ms, doubling up to
    max_backoff_ms, at most `attempts` tries, then raise the last error. Any other
    error is raised at once: trying a bad order again cannot fix it."""
    for attempt in range(1, attempts + 1):
        try:
            return fn()
        except TemporaryError:
            if attempt == attempts:
                raise
            sleep(min(backoff_ms * 2 ** (attempt - 1), max_backoff_ms) / 1000)
    raise ValueError("attempts must be at least 1")


def dead_letter(producer: Any, record: Any, error: Exception) -> None:
    """Park a record, unchanged, with why it failed and where it came from."""
    headers = [("error.class", type(error).__name__.encode()),
               ("error.message", str(error).encode()),
               ("source.topic", record.topic.encode()),
               ("source.partition", str(record.partition).encode()),
               ("source.offset", str(record.offset).encode())]
    producer.send(DEAD_LETTERS, key=record.key, value=record.value, headers=headers)


def handle(record: Any, producer: Any, price: Callable[[dict], float],
           sleep: Callable[[float], Any] = time.sleep) -> Handled:
    """One record: priced into orders.valid, or parked in orders.DLT."""
    try:
        order = parse(record.value)
        order["total"] = with_retries(lambda: price(order), sleep=sleep)
    except (ValueError, TemporaryError) as error:  # the data's fault, or a service down
        dead_letter(producer, record, error)
        return Handled(record.offset, record.value, "parked", f"{type(error).__name__}: {error}")
    producer.send(VALID, key=record.key, value=json.dumps(order).encode())
    return Handled(record.offset, record.value, "valid")


def run(consumer: Any, producer: Any, price: Callable[[dict], float], *,
        sleep: Callable[[float], Any] = time.sleep, idle_polls: int = 3,
        handle: Callable[..., Handled] = handle) -> list[Handled]:
    """The poll loop, until `idle_polls` polls in a row bring nothing (a service would
    loop forever). After each batch: flush the outputs, then commit the offsets."""
    done: list[Handled] = []
    idle = 0
    while idle < idle_polls:
        batch = consumer.poll(timeout_ms=1_000)
        # Polls while the group is still forming bring nothing and do not count.
        idle = 0 if batch or not consumer.assignment() else idle + 1
        for records in batch.values():
            for record in records:
                done.append(handle(record, producer, price, sleep))
        if batch:
            producer.flush()  # the outputs are stored before the offsets move on
            consumer.commit()
    return done


class Pricing:
    """A pricing service for tests and lessons: total = amount * 1.2, except that the
    orders in `flaky` fail with TemporaryError that many times first, and those in
    `down` always do. `calls` counts the calls per order id."""

    def __init__(self, flaky: dict[int, int] | None = None, down: set[int] | None = None
                 ) -> None:
        self.flaky = dict(flaky or {})
        self.down = set(down or ())
        self.calls: dict[int, int] = {}

    def __call__(self, order: dict) -> float:
        oid = order["id"]
        self.calls[oid] = self.calls.get(oid, 0) + 1
        if oid in self.down or self.calls[oid] <= self.flaky.get(oid, 0):
            raise TemporaryError(f"pricing timed out for order {oid}")
        return round(order["amount"] * 1.2, 2)
