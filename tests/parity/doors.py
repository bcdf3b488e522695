"""The two doors onto one cluster: the in-process clients a lesson uses and kafka-python
over the wire (`minikafka serve` on loopback). Each door builds the same Cluster (same
seed, same brokers) and hands out clients with kafka-python's names and shapes, so a
scenario is written once and run through both."""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer

from minikafka.cluster import Cluster

SEED = 11
BROKERS = 3
WIRE = {"request_timeout_ms": 10_000, "retry_backoff_ms": 50}


class Door:
    """Clients onto `cluster` through one door; `setup` runs cluster code safely."""

    name = ""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._clients: list[Any] = []

    def setup(self, fn: Callable[[Cluster], Any]) -> Any:
        with self.cluster.lock:
            return fn(self.cluster)

    def settle(self, topic: str, partition: int = 0) -> None:
        """Wait until the partition's leader has replicated and resolved everything it
        holds (LSO = HW = LEO): transaction markers land after EndTxn is answered."""
        self.wait_until(lambda c: _settled(c, topic, partition), f"{topic}-{partition} settled")

    def wait_until(self, done: Callable[[Cluster], bool], what: str) -> None:
        """Wait (simulated time in process, wall time behind a server) until done(cluster)."""
        raise NotImplementedError

    def wait_until_polled(self, consumers: list, done: Callable[[], bool], what: str,
                          polls: int = 100) -> None:
        """Poll the consumers in turn (a group only moves while its members poll) until
        done(), which may ask through the door's own clients."""
        for _ in range(polls):
            for consumer in consumers:
                consumer.poll(timeout_ms=100)
            if done():
                return
        raise AssertionError(f"never {what}")

    def _keep(self, client: Any) -> Any:
        self._clients.append(client)
        return client

    def close(self) -> None:
        for client in reversed(self._clients):
            client.close()


def _settled(cluster: Cluster, topic: str, partition: int) -> bool:
    replica = cluster.leader_replica(topic, partition)
    return replica is not None and \
        replica.last_stable_offset == replica.high_watermark == replica.log_end_offset


class InProcess(Door):
    name = "in-process"

    def wait_until(self, done: Callable[[Cluster], bool], what: str) -> None:
        assert self.cluster.run_until(lambda: done(self.cluster), 30_000), f"never {what}"

    def producer(self, **config: Any) -> Any:
        return self._keep(self.cluster.producer(**config))

    def consumer(self, **config: Any) -> Any:
        return self._keep(self.cluster.consumer(**config))

    def admin(self, **config: Any) -> Any:
        return self._keep(self.cluster.admin(**config))

    def create_topics(self, specs: dict, validate_only: bool, **config: Any
                      ) -> dict[str, tuple]:
        """{name: (error code, error message)}, (0, None) for a topic that passed."""
        out = self.admin(**config).create_topics(specs, validate_only=validate_only,
                                                  raise_errors=False)
        return {name: (0, None) if exc is None else (exc.errno, exc.args[0] if exc.args
                                                     else None)
                for name, exc in out.items()}


class KafkaPython(Door):
    name = "kafka-python"

    def __init__(self, cluster: Cluster, bootstrap_servers: str) -> None:
        super().__init__(cluster)
        self.bootstrap_servers = bootstrap_servers

    def wait_until(self, done: Callable[[Cluster], bool], what: str) -> None:
        deadline = time.monotonic() + 30
        while not self.setup(done):
            assert time.monotonic() < deadline, f"never {what}"
            time.sleep(0.01)

    def producer(self, **config: Any) -> Any:
        return self._keep(KafkaProducer(bootstrap_servers=self.bootstrap_servers, **WIRE,
                                        **config))

    def consumer(self, **config: Any) -> Any:
        return self._keep(KafkaConsumer(bootstrap_servers=self.bootstrap_servers,
                                        fetch_max_wait_ms=100, **WIRE, **config))

    def admin(self, **config: Any) -> Any:
        return self._keep(KafkaAdminClient(bootstrap_servers=self.bootstrap_servers, **WIRE,
                                           **config))

    def create_topics(self, specs: dict, validate_only: bool, **config: Any
                      ) -> dict[str, tuple]:
        out = self.admin(**config).create_topics(specs, validate_only=validate_only,
                                                  raise_errors=False)
        return {t["name"]: (t["error_code"], t["error_message"]) for t in out["topics"]}


@contextmanager
def open_door(kind: str, make_cluster: Callable[[], Cluster] | None = None,
              listeners: list | None = None) -> Iterator[Door]:
    """A fresh cluster (seed SEED, or make_cluster's) behind the door named `kind`; a
    server on `listeners` (serve's ListenerConfigs) is reached by kafka-python through
    the first of them."""
    cluster = make_cluster() if make_cluster else Cluster(brokers=BROKERS, seed=SEED)
    if kind == InProcess.name:
        door: Door = InProcess(cluster)
        try:
            yield door
        finally:
            door.close()
        return
    options = {} if listeners is None else {"listeners": listeners}
    with cluster.serve(port=0, **options) as server:
        door = KafkaPython(cluster, server.bootstrap_servers if listeners is None
                           else server.listener_bootstrap(listeners[0].name))
        try:
            yield door
        finally:
            door.close()


DOORS = (InProcess.name, KafkaPython.name)


def through_both(scenario: Callable[[Door], Any], make_cluster: Callable[[], Cluster] | None = None,
                 listeners: list | None = None) -> dict[str, Any]:
    """What `scenario` observes through each door: {door name: observations}."""
    out = {}
    for kind in DOORS:
        with open_door(kind, make_cluster, listeners) as door:
            out[kind] = scenario(door)
    return out
