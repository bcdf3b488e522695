"""The consumers a panel runs in one group: add, poll, commit, close, crash.

No widgets here: each action returns a sentence saying what happened, and the
group's offsets and description come out as the plain dicts the log and group views
take. Consumers read from the earliest offset, never auto-commit (the commit button is
the lesson) and return at most `poll_records` records per poll, so positions move in
visible steps.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka.errors import KafkaError
from kafka.structs import TopicPartition

from minikafka.cluster import settle_group

from .groupview import group_description

if TYPE_CHECKING:
    from ..cluster import Cluster


class GroupConsumers:
    def __init__(self, cluster: Cluster, group_id: str, topic: str, *, poll_records: int = 5,
                 poll_ms: int = 200, settle_ms: int = 60_000) -> None:
        self.cluster = cluster
        self.group_id = group_id
        self.topic = topic
        self.poll_records = poll_records
        self.poll_ms = poll_ms
        self.settle_ms = settle_ms
        self.consumers: dict[str, Any] = {}  # live consumers by name: c1, c2, ...
        # The next offset each consumer will read, from the records its polls returned.
        self.positions: dict[str, dict[TopicPartition, int]] = {}
        self._made = 0

    # -- actions ---------------------------------------------------------------------
    def add(self) -> str:
        """Start a consumer subscribed to the topic and poll the group until it settles."""
        self._made += 1
        name = f"c{self._made}"
        self.consumers[name] = self.cluster.consumer(
            self.topic, group_id=self.group_id, client_id=name, auto_offset_reset="earliest",
            enable_auto_commit=False, max_poll_records=self.poll_records)
        self.positions[name] = {}
        return f"add consumer {name}{self._settle()}"

    def poll(self) -> str:
        """Each live consumer polls once."""
        said = []
        for name, consumer in self.consumers.items():
            try:
                batch = consumer.poll(timeout_ms=self.poll_ms)
            except KafkaError as exc:
                said.append(f"{name} {type(exc).__name__}")
                continue
            records = [r for rs in batch.values() for r in rs]
            self._track(name, records)
            said.append(f"{name} got {len(records)}")
        return "poll: " + (", ".join(said) or "no consumers")

    def commit(self) -> str:
        """Each live consumer commits its positions (commitSync)."""
        said = []
        for name, consumer in self.consumers.items():
            try:
                consumer.commit()
                said.append(f"{name} ok")
            except KafkaError as exc:
                said.append(f"{name} {type(exc).__name__}")
        return "commit: " + (", ".join(said) or "no consumers")

    def close(self, name: str) -> str:
        """A clean shutdown: LeaveGroup, then the others rebalance."""
        consumer = self._take(name)
        consumer.close(autocommit=False)
        return f"close consumer {name}{self._settle()}"

    def crash(self, name: str) -> str:
        """kill -9: no LeaveGroup; the coordinator notices after session.timeout.ms."""
        consumer = self._take(name)
        consumer.crash()
        session = consumer.config["session_timeout_ms"]
        return (f"crash consumer {name} (the group notices after session.timeout.ms = "
                f"{session} ms: advance time, then poll)")

    # -- views -----------------------------------------------------------------------
    def offsets(self, topic: str, partition: int) -> dict[str, dict[str, int | None]]:
        """{group: {"committed": c, "position": p}} of one partition, for the log view."""
        tp = TopicPartition(topic, partition)
        committed = None
        if self._made:
            snap = self.cluster.groups.snapshot().get(self.group_id)
            committed = snap["offsets"].get(f"{topic}-{partition}") if snap else None
        position = None
        for name, consumer in self.consumers.items():
            if tp in consumer.assignment() and tp in self.positions[name]:
                position = self.positions[name][tp]
        return {self.group_id: {"committed": committed, "position": position}}

    def description(self) -> dict[str, Any]:
        """The group_view() dict, every partition of the topic listed."""
        if not self._made:  # do not start a coordinator just to draw an empty group
            return {"group_id": self.group_id, "state": "unknown", "members": [],
                    "partitions": [{"topic": self.topic, "partition": p, "committed": None,
                                    "log_end_offset": None}
                                   for p in range(self.cluster.partitions_for(self.topic))]}
        return group_description(self.cluster, self.group_id, [self.topic])

    # -- plumbing --------------------------------------------------------------------
    def _take(self, name: str) -> Any:
        if name not in self.consumers:
            raise KeyError(f"no live consumer {name}")
        self.positions.pop(name, None)
        return self.consumers.pop(name)

    def _track(self, name: str, records: list) -> None:
        pos = self.positions[name]
        for r in records:
            tp = TopicPartition(r.topic, r.partition)
            pos[tp] = max(pos.get(tp, 0), r.offset + 1)

    def _settle(self) -> str:
        """Poll everyone round-robin until the group is Stable with all of them in it
        (a rebalance only moves while members poll)."""
        if not self.consumers:
            return ""
        names = list(self.consumers)
        try:
            got = settle_group([self.consumers[n] for n in names], timeout_ms=self.settle_ms)
        except KafkaError as exc:
            return f"; the group did not settle in {self.settle_ms} ms ({type(exc).__name__})"
        for name, records in zip(names, got):
            self._track(name, records)
        snap = self.cluster.groups.snapshot().get(self.group_id, {})
        return f"; group stable, generation {snap.get('generation')}"
