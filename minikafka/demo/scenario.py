"""Scenarios are data: a seeded cluster, a set-up, and steps of (narration, action).

    Scenario(name="leader-failover", title=..., summary=..., topic="orders",
             setup=make_topic, intro="Three brokers ...",
             steps=(Step("Broker {old} crashes ...", crash_leader), ...))

A step's action runs on a `Run` (the cluster plus the clients and facts the scenario
keeps); then its narration is filled in from `run.facts`, so a line can name the broker
that actually led, or quote the history checker's verdict. Everything runs on the
simulated clock with the scenario's seed, so replaying steps 0..k-1 on a fresh Run gives
the same state every time: that is what Back does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafka.structs import TopicPartition

from minikafka.cluster import Cluster
from minikafka.core.checkers import CheckResult, acknowledged_writes, check

Action = Callable[["Run"], None]


class Diverged(Exception):
    """The cluster did not do what the script expects (after faults the presenter
    injected); the message says what was expected."""


@dataclass(frozen=True)
class Step:
    """One press of Next: an action on the cluster, then a line to say about it.

    `say` is a format string over `run.facts` (e.g. "broker {leader} crashes")."""

    say: str
    do: Action | None = None


@dataclass(frozen=True)
class Scenario:
    name: str  # the command-line name, e.g. "leader-failover"
    title: str  # the page heading
    summary: str  # one line for `minikafka demo --list`
    topic: str  # the topic the cluster picture shows
    setup: Action  # creates topics and clients: the state before step 1
    intro: str  # narration before step 1 (formatted like Step.say)
    steps: tuple[Step, ...]
    partition: int = 0  # the partition whose log strips are drawn
    columns: int = 10  # offsets per log strip (fixed, so the strip keeps its size)
    group: str | None = None  # a consumer group to show with its lag
    brokers: int = 3
    seed: int = 7
    broker_config: dict[str, Any] = field(default_factory=dict)
    features: dict[str, int] = field(default_factory=dict)  # e.g. ELR off: version 0


@dataclass
class Sent:
    """What one produce call got back, for narration."""

    values: list[bytes]
    acked: list[int] = field(default_factory=list)  # offsets acknowledged
    failed: list[str] = field(default_factory=list)  # exception class names
    waiting: int = 0  # no answer yet

    def __str__(self) -> str:
        parts = [f"{len(self.acked)} acknowledged"]
        if self.failed:
            parts.append(f"{len(self.failed)} failed ({self.failed[0]})")
        if self.waiting:
            parts.append(f"{self.waiting} still waiting")
        return ", ".join(parts)


class Run:
    """One play-through of a scenario: a fresh cluster, its clients and what happened.

    `facts` feed the narration; `notes` are (label -> text) lines shown beside the
    picture (a checker's verdict, what each kind of consumer reads).
    """

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.cluster = Cluster(brokers=scenario.brokers, seed=scenario.seed,
                               broker_config=scenario.broker_config or None,
                               features=scenario.features or None)
        self.facts: dict[str, Any] = {"topic": scenario.topic}
        self.notes: dict[str, str] = {}
        self.watch: tuple[str, int] = (scenario.topic, scenario.partition)
        self.producers: dict[str, Any] = {}
        self.pending: list[Any] = []  # futures of sends still in flight
        self.consumers: Any = None  # a viz GroupConsumers when the scenario has a group
        self.sent_count = 0

    # -- reading the cluster -----------------------------------------------------------
    def partition(self, p: int | None = None, topic: str | None = None) -> Any:
        """The PartitionDescription of a partition of the watched topic."""
        topic = topic or self.watch[0]
        return self.cluster.describe_topic(topic).partitions[self.watch[1] if p is None else p]

    def leader(self, p: int | None = None) -> int | None:
        return self.partition(p).leader

    def followers(self, p: int | None = None) -> list[int]:
        d = self.partition(p)
        return [b for b in d.replicas if b != d.leader]

    def wait_for(self, done: Callable[[], bool], timeout_ms: int, expected: str) -> None:
        """Run the clock until done() or timeout_ms; raise Diverged(expected) if it never
        happens, so the narration never describes something that did not occur.
        Without an active controller the metadata is frozen and proves nothing."""
        def really_done() -> bool:
            return self.cluster.active_controller is not None and done()

        if not self.cluster.run_until(really_done, timeout_ms):
            raise Diverged(expected)

    def require(self, ok: bool, expected: str) -> None:
        """Raise Diverged(expected) unless ok."""
        if not ok:
            raise Diverged(expected)

    # -- producing ---------------------------------------------------------------------
    def producer(self, acks: str | int = "all", **config: Any) -> Any:
        """One producer per configuration, made on first use (the same in every replay)."""
        name = config.get("transactional_id") or f"acks-{acks}"
        if name not in self.producers:
            self.producers[name] = self.cluster.producer(
                acks=acks, linger_ms=0, client_id=f"demo-{name}", **config)
        return self.producers[name]

    def produce(self, values: Iterable[str], *, acks: str | int = "all",
                keys: Sequence[str | None] | None = None, partition: int | None = None,
                wait_ms: int = 5_000, producer: Any = None) -> Sent:
        """Send values to the watched partition and run the clock until every send is
        answered or wait_ms passes. Sends still open stay in `pending`."""
        producer = producer or self.producer(acks)
        topic, p = self.watch
        p = p if partition is None else partition
        encoded = [v.encode() for v in values]
        futures = []
        for i, value in enumerate(encoded):
            key = keys[i] if keys is not None else None
            futures.append(producer.send(topic, value=value, partition=p,
                                         key=key.encode() if key is not None else None))
            self.sent_count += 1
        self.cluster.run_until(lambda: all(f.is_done for f in futures), wait_ms)
        self.pending.extend(f for f in futures if not f.is_done)
        return _outcome(encoded, futures)

    def tombstone(self, key: str, *, acks: str | int = "all") -> Sent:
        """A record with a key and a null value: 'delete this key' in a compacted topic."""
        producer = self.producer(acks)
        topic, p = self.watch
        future = producer.send(topic, key=key.encode(), value=None, partition=p)
        self.cluster.run_until(lambda: future.is_done, 5_000)
        return _outcome([b""], [future])

    # -- checking ----------------------------------------------------------------------
    def committed_values(self, topic: str | None = None, partition: int | None = None
                         ) -> list[tuple[int, bytes | None]]:
        """(offset, value) of every record below the leader's high watermark."""
        topic = topic or self.watch[0]
        partition = self.watch[1] if partition is None else partition
        replica = self.cluster.leader_replica(topic, partition)
        if replica is None:
            return []
        out = []
        for batch in replica.log.read(replica.log_start_offset, replica.high_watermark,
                                      1 << 62):
            if not batch.is_control:
                out.extend((r.offset, r.value) for r in batch.iter_records())
        return out

    def verdict(self, values: Iterable[str]) -> CheckResult:
        """The history checker over the acknowledged writes among `values`: which of
        them can a reader still find in the partition?"""
        wanted = {v.encode() for v in values}
        topic, p = self.watch
        acked = [w for w in acknowledged_writes(self.cluster.journal)
                 if w.value in wanted and (w.topic, w.partition) == (topic, p)]
        return check(acked, {(topic, p): self.committed_values()})

    def read(self, isolation_level: str = "read_uncommitted") -> list[str]:
        """Every value a fresh consumer reads from the watched partition, from the start."""
        consumer = self.cluster.consumer(isolation_level=isolation_level,
                                         enable_auto_commit=False,
                                         client_id=f"demo-reader-{isolation_level}")
        tp = TopicPartition(*self.watch)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        values: list[str] = []
        try:
            for _ in range(5):
                for records in consumer.poll(timeout_ms=100).values():
                    values.extend("null" if r.value is None else r.value.decode()
                                  for r in records)
        finally:
            consumer.close()
        return values


def _outcome(values: list[bytes], futures: list[Any]) -> Sent:
    sent = Sent(values)
    for f in futures:
        if not f.is_done:
            sent.waiting += 1
        elif f.succeeded():
            sent.acked.append(f.value.offset)
        else:
            sent.failed.append(type(f.exception).__name__)
    return sent


def verdict_text(result: CheckResult) -> str:
    """The checker's verdict as one line: the summary and a ✓ or ✗."""
    mark = "✓ OK" if result.ok else "✗ LOST WRITES"
    text = f"{mark}: {result.acknowledged} acknowledged, {len(result.lost)} lost"
    if result.duplicated:
        text += f", {len(result.duplicated)} duplicated"
    return text

