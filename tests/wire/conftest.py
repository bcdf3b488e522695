"""Fixtures and helpers for the wire tests that serve a Cluster to real clients on loopback."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest
from kafka import KafkaProducer

from minikafka.cluster import Cluster
from minikafka.wire.serve import ClusterServer


@pytest.fixture
def served() -> Iterator[tuple[Cluster, ClusterServer]]:
    """A 3-broker cluster served on ephemeral loopback ports."""
    cluster = Cluster(brokers=3, seed=11)
    with cluster.serve(port=0) as server:
        yield cluster, server


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {timeout} s")
        time.sleep(0.02)


class BackgroundProducer(threading.Thread):
    """An idempotent acks=all kafka-python producer that keeps sending numbered, keyed records
    (value `value % i`, key `key % (i % keys)`) until stop(), retrying through broker stops.

    `acked` and `failed` fill from the send callbacks; `produced` is set once the producer has
    flushed what it sent and closed. Start it, stop() it, join() it.
    """

    def __init__(self, bootstrap_servers: str, topic: str, *, value: bytes, key: bytes,
                 keys: int, pause: float) -> None:
        super().__init__(daemon=True)
        self.bootstrap_servers, self.topic = bootstrap_servers, topic
        self.value, self.key, self.keys, self.pause = value, key, keys, pause
        self.acked: list[bytes] = []
        self.failed: list[tuple[bytes, Exception]] = []
        self.produced = threading.Event()
        self._producing = threading.Event()
        self._producing.set()

    def stop(self) -> None:
        self._producing.clear()

    def run(self) -> None:
        producer = KafkaProducer(
            bootstrap_servers=self.bootstrap_servers, acks="all", enable_idempotence=True,
            linger_ms=2, request_timeout_ms=5000, retry_backoff_ms=50,
            reconnect_backoff_ms=50, reconnect_backoff_max_ms=300, delivery_timeout_ms=60000)
        i = 0
        try:
            while self._producing.is_set():
                value = self.value % i
                future = producer.send(self.topic, key=self.key % (i % self.keys), value=value)
                future.add_callback(lambda _md, v=value: self.acked.append(v))
                future.add_errback(lambda exc, v=value: self.failed.append((v, exc)))
                i += 1
                time.sleep(self.pause)
            producer.flush(60)
        finally:
            producer.close(10)
            self.produced.set()

    def wait_for_more(self, n: int, timeout: float, what: str) -> None:
        """Wait until `n` more records than now are acknowledged."""
        mark = len(self.acked)
        wait_for(lambda: len(self.acked) >= mark + n, timeout, what)


def stored_values(cluster: Cluster, topic: str, partitions: int) -> dict[int, list[bytes]]:
    """Every data record below the high watermark, per partition, read from the leaders."""
    out = {}
    with cluster.lock:
        for p in range(partitions):
            replica = cluster.leader_replica(topic, p)
            batches = replica.log.read(replica.log_start_offset, replica.high_watermark, 1 << 30)
            out[p] = [r.value for b in batches if not b.is_control for r in b.iter_records()]
    return out
