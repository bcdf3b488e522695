"""Doors into a cluster: the same scenario code reaches real Kafka, `minikafka serve` or the
in-process API through one of these.

A scenario asks its door for kafka-python clients (`producer`, `consumer`, `admin`), for
confluent-kafka ones (`ck_producer`, ...; not through the in-process door), and for broker
faults (`stop`, `kill`, `start`). The door closes every client it made when the scenario
ends, so a failing scenario leaves no threads behind.
"""
from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

# The real cluster's broker settings (minikafka.realkafka.nodes: compose's settings, the
# fast-start ones, and the test overrides of tests/conftest.py) that minikafka also knows.
# The served and in-process clusters get the same, so a scenario compares behaviour, not setup.
SHARED_BROKER_SETTINGS: dict[str, Any] = {
    "default.replication.factor": 3,
    "min.insync.replicas": 2,
    "offsets.topic.replication.factor": 3,
    "offsets.topic.num.partitions": 3,
    "transaction.state.log.num.partitions": 3,
    "group.initial.rebalance.delay.ms": 0,
    "log.retention.check.interval.ms": 1000,
    "log.cleaner.backoff.ms": 1000,
    "group.consumer.heartbeat.interval.ms": 1000,
    "group.consumer.min.heartbeat.interval.ms": 1000,
    "group.share.heartbeat.interval.ms": 1000,
    "group.share.min.heartbeat.interval.ms": 1000,
    "group.share.min.record.lock.duration.ms": 1000,
}


class NotExpressible(Exception):
    """The scenario needs something this door does not offer (e.g. confluent-kafka in process)."""


def wait_until(predicate: Callable[[], Any], timeout_s: float, step_s: float = 0.05) -> Any:
    """Poll `predicate` until it returns something truthy or `timeout_s` passes; returns its
    last value (falsy on time-out, so the observation shows what was reached)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(step_s)


def unique(prefix: str) -> str:
    return f"fid-{prefix}-{uuid.uuid4().hex[:8]}"


class Door:
    """Common parts: client bookkeeping and names."""

    kind = "?"
    wire = True

    def __init__(self) -> None:
        self._clients: list[Any] = []

    def _keep(self, client: Any) -> Any:
        self._clients.append(client)
        return client

    def close(self) -> None:
        for client in reversed(self._clients):
            try:
                close = getattr(client, "close", None)
                if close is not None:
                    close() if not hasattr(client, "flush") else close(timeout=2)
            except Exception:
                pass
        self._clients.clear()

    def topic(self, prefix: str = "t") -> str:
        return unique(prefix)

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def sleep_ms(self, ms: int) -> None:
        time.sleep(ms / 1000)

    def await_metadata(self, ms: int = 2000) -> None:
        """Give a change (a config, a new topic) time to reach every broker: Kafka's brokers
        apply it from the metadata log a moment after the controller has answered."""
        self.sleep_ms(ms)


class WireDoor(Door):
    """A cluster behind a Kafka listener: real Kafka or `minikafka serve` (whose brokers
    share one metadata image, changed before the answer: nothing to wait for,
    metadata_lag=False)."""

    def __init__(self, kind: str, bootstrap: str, faults: Any, *,
                 metadata_lag: bool = True) -> None:
        super().__init__()
        self.kind = kind
        self.bootstrap = bootstrap
        self._faults = faults  # stop(n) / kill(n) / start(n)
        self._metadata_lag = metadata_lag

    def await_metadata(self, ms: int = 2000) -> None:
        if self._metadata_lag:
            super().await_metadata(ms)

    # kafka-python
    def producer(self, **config: Any) -> Any:
        from kafka import KafkaProducer
        config.setdefault("request_timeout_ms", 10_000)
        return self._keep(KafkaProducer(bootstrap_servers=self.bootstrap, **config))

    def consumer(self, *topics: str, **config: Any) -> Any:
        from kafka import KafkaConsumer
        config.setdefault("request_timeout_ms", 10_000)
        return self._keep(KafkaConsumer(*topics, bootstrap_servers=self.bootstrap, **config))

    def admin(self, **config: Any) -> Any:
        from kafka.admin import KafkaAdminClient
        return self._keep(KafkaAdminClient(bootstrap_servers=self.bootstrap, **config))

    # confluent-kafka
    def ck_producer(self, **config: Any) -> Any:
        from confluent_kafka import Producer
        return Producer({"bootstrap.servers": self.bootstrap, **config})

    def ck_consumer(self, **config: Any) -> Any:
        from confluent_kafka import Consumer
        return self._keep(Consumer({"bootstrap.servers": self.bootstrap, **config}))

    def ck_admin(self, **config: Any) -> Any:
        from confluent_kafka.admin import AdminClient
        return AdminClient({"bootstrap.servers": self.bootstrap, **config})

    def ck_share_consumer(self, **config: Any) -> Any:
        from confluent_kafka import ShareConsumer
        return self._keep(ShareConsumer({"bootstrap.servers": self.bootstrap, **config}))

    # faults
    def stop(self, node: int) -> None:
        self._faults.stop(node)

    def kill(self, node: int) -> None:
        self._faults.kill(node)

    def start(self, node: int) -> None:
        self._faults.start(node)

    def create_topic(self, name: str, partitions: int = 1, replication_factor: int = 3,
                     configs: dict[str, str] | None = None) -> None:
        admin = self.admin()
        admin.create_topics({name: {"num_partitions": partitions,
                                    "replication_factor": replication_factor,
                                    "configs": configs or {}}}, wait_for_metadata=True)

    def create_errors(self, specs: dict[str, dict]) -> dict[str, str]:
        """CreateTopics for each spec; topic -> error class name (NoError when created)."""
        from kafka.errors import for_code
        out = {}
        for name, spec in specs.items():
            result = self.admin().create_topics({name: spec}, raise_errors=False)
            for t in result["topics"]:
                out[name] = for_code(t["error_code"]).__name__
        return out


class RealFaults:
    """stop/kill/start of a NativeKafka node."""

    def __init__(self, native: Any) -> None:
        self.native = native

    def stop(self, node: int) -> None:
        self.native.stop(node)

    def kill(self, node: int) -> None:
        self.native.kill(node)

    def start(self, node: int) -> None:
        from minikafka.realkafka.nodes import KafkaNodeError
        try:
            self.native.start(node)
        except KafkaNodeError:  # a JVM that dies while starting on a loaded machine: once more
            self.native.start(node)


class ServedFaults:
    """The same on a served minikafka Cluster: the broker stops, its listener closes."""

    def __init__(self, cluster: Any, server: Any) -> None:
        self.cluster, self.server = cluster, server

    def stop(self, node: int) -> None:
        with self.cluster.lock:
            self.cluster.stop_broker(node)
        wait_until(lambda: not self.server.listening(node), 10)

    def kill(self, node: int) -> None:
        with self.cluster.lock:
            self.cluster.crash_broker(node)
        wait_until(lambda: not self.server.listening(node), 10)

    def start(self, node: int) -> None:
        with self.cluster.lock:
            self.cluster.start_broker(node)
        wait_until(lambda: self.server.listening(node), 10)

    def restart_all(self) -> None:
        with self.cluster.lock:
            stopped = [b for b, broker in self.cluster.brokers.items() if not broker.running]
        for b in stopped:
            self.start(b)


class InProcessDoor(Door):
    """minikafka.Cluster's own clients, in this process, on the simulated clock."""

    kind = "in-process"
    wire = False

    def __init__(self, seed: int = 19) -> None:
        super().__init__()
        from minikafka import Cluster
        self.cluster = Cluster(brokers=3, seed=seed, broker_config=SHARED_BROKER_SETTINGS)

    def producer(self, **config: Any) -> Any:
        return self._keep(self.cluster.producer(**config))

    def consumer(self, *topics: str, **config: Any) -> Any:
        return self._keep(self.cluster.consumer(*topics, **config))

    def admin(self, **config: Any) -> Any:
        return self._keep(self.cluster.admin(**config))

    def ck_producer(self, **config: Any) -> Any:
        raise NotExpressible("confluent-kafka needs a listener")

    ck_consumer = ck_admin = ck_producer

    def now_ms(self) -> int:
        return self.cluster.now_ms

    def sleep_ms(self, ms: int) -> None:
        self.cluster.advance(ms)

    def stop(self, node: int) -> None:
        self.cluster.stop_broker(node)

    def kill(self, node: int) -> None:
        self.cluster.crash_broker(node)

    def start(self, node: int) -> None:
        self.cluster.start_broker(node)

    def create_topic(self, name: str, partitions: int = 1, replication_factor: int = 3,
                     configs: dict[str, str] | None = None) -> None:
        self.admin().create_topics({name: {"num_partitions": partitions,
                                           "replication_factor": replication_factor,
                                           "configs": configs or {}}})

    def create_errors(self, specs: dict[str, dict]) -> dict[str, str]:
        out = {}
        for name, spec in specs.items():
            result = self.admin().create_topics({name: spec}, raise_errors=False)
            exc = result[name]
            out[name] = "NoError" if exc is None else type(exc).__name__
        return out
