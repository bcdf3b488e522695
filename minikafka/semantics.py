"""Delivery semantics: where a consumer commits decides what a crash costs.

=================  ===============================  =====================================
semantics          the loop                         a crash between the two steps ...
=================  ===============================  =====================================
at-most-once       commit, then process             loses the batch; nothing runs twice
at-least-once      process, then commit             replays the batch; nothing is lost
exactly-once       process and commit atomically:   neither loses nor repeats an effect
                   a transaction (outputs + offsets)
                   or an idempotent sink keyed by
                   (topic, partition, offset)
=================  ===============================  =====================================

The loops below are the three patterns as library code; each takes a ``hook`` called at
every named point of the loop, which is where ``CrashAt`` kills the process. The
checker (``run_with_crash``, ``delivery_matrix``) runs each loop, crashes it at every
point, lets a second consumer of the same group finish the job, and reports what was
lost and what was duplicated::

    >>> matrix = delivery_matrix(records=8)
    >>> print(format_matrix(matrix))  # doctest: +NORMALIZE_WHITESPACE
    semantics        crash at      lost  duplicated  deliveries
    at-most-once     -             0     0           8
    at-most-once     polled        0     0           8
    at-most-once     committed     3     0           5
    at-most-once     processing    2     0           6
    at-most-once     processed     0     0           8
    at-least-once    -             0     0           8
    at-least-once    polled        0     0           8
    at-least-once    processing    0     1           9
    at-least-once    processed     0     3           11
    at-least-once    committed     0     0           8
    exactly-once     -             0     0           8
    exactly-once     polled        0     0           8
    exactly-once     processing    0     0           9
    exactly-once     offsets_sent  0     0           11
    exactly-once     committed     0     0           8
    idempotent-sink  -             0     0           8
    idempotent-sink  polled        0     0           8
    idempotent-sink  processing    0     0           9
    idempotent-sink  processed     0     0           11
    idempotent-sink  committed     0     0           8

"deliveries" counts side effects attempted (process calls, records sent): exactly-once
does repeat work after a crash, but the repeat is invisible -- an aborted transaction's
records are skipped by read_committed readers, a sink write overwrites its own key.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafka.structs import MemberState, OffsetAndMetadata, TopicPartition

if TYPE_CHECKING:
    from .cluster import Cluster

Hook = Callable[[str], None]

AT_MOST_ONCE_POINTS = ("polled", "committed", "processing", "processed")
AT_LEAST_ONCE_POINTS = ("polled", "processing", "processed", "committed")
EXACTLY_ONCE_POINTS = ("polled", "processing", "offsets_sent", "committed")
POINTS: dict[str, tuple[str, ...]] = {
    "at-most-once": AT_MOST_ONCE_POINTS,
    "at-least-once": AT_LEAST_ONCE_POINTS,
    "exactly-once": EXACTLY_ONCE_POINTS,
    "idempotent-sink": AT_LEAST_ONCE_POINTS,
}


class Crash(Exception):
    """The process dies here (raised by a hook; the caller then calls consumer.crash())."""


class CrashAt:
    """A hook that crashes the first time ``point`` is reached in batch ``batch``
    (0-based; batches are counted by the loop's "polled" point)."""

    def __init__(self, point: str, batch: int = 1) -> None:
        self.point = point
        self.batch = batch
        self.current = -1
        self.fired = False

    def __call__(self, point: str) -> None:
        if point == "polled":
            self.current += 1
        if not self.fired and point == self.point and self.current == self.batch:
            self.fired = True
            raise Crash(f"crashed at {point!r} in batch {self.batch}")


def _noop(point: str) -> None:
    """No crash."""


def _loop(consumer: Any, on_batch: Callable[[dict], None], until: Callable[[], bool] | None,
          poll_timeout_ms: int, max_idle_polls: int, timeout_ms: int) -> None:
    cluster = consumer.cluster
    deadline = cluster.now_ms + timeout_ms
    idle = 0
    while cluster.now_ms < deadline:
        if until is not None and until():
            return
        batch = consumer.poll(timeout_ms=poll_timeout_ms)
        if not batch:
            meta = consumer.group_metadata()
            if meta.group_id is None or meta.state == MemberState.STABLE:
                idle += 1  # polls while the group is still forming do not count
            if until is None and idle >= max_idle_polls:
                return
            continue
        idle = 0
        on_batch(batch)


def _next_offsets(batch: Mapping[TopicPartition, list]) -> dict[TopicPartition, OffsetAndMetadata]:
    return {tp: OffsetAndMetadata(records[-1].offset + 1, "", records[-1].leader_epoch)
            for tp, records in batch.items()}


def at_most_once(consumer: Any, process: Callable[[Any], None], *, hook: Hook = _noop,
                 until: Callable[[], bool] | None = None, poll_timeout_ms: int = 500,
                 max_idle_polls: int = 5, timeout_ms: int = 600_000) -> int:
    """Commit what was polled, then process it. Returns how many records were processed.

    Worked example: a batch of offsets 3, 4, 5 is polled and offset 6 committed; the
    process dies while handling 4. The next owner starts at 6: records 4 and 5 are never
    processed (lost), and no record is ever processed twice::

        records = consumer.poll(timeout_ms=500)
        consumer.commit()              # offsets after the batch
        for record in records: process(record)
    """
    done = 0

    def on_batch(batch: dict) -> None:
        nonlocal done
        hook("polled")
        consumer.commit(_next_offsets(batch))
        hook("committed")
        for records in batch.values():
            for record in records:
                process(record)
                done += 1
                hook("processing")
        hook("processed")

    _loop(consumer, on_batch, until, poll_timeout_ms, max_idle_polls, timeout_ms)
    return done


def at_least_once(consumer: Any, process: Callable[[Any], None], *, hook: Hook = _noop,
                  until: Callable[[], bool] | None = None, poll_timeout_ms: int = 500,
                  max_idle_polls: int = 5, timeout_ms: int = 600_000) -> int:
    """Process what was polled, then commit it. Returns how many records were processed.

    Worked example: offsets 3, 4, 5 are polled and processed, and the process dies before
    committing 6. The next owner starts at the last commit, 3, and processes 3, 4, 5
    again: nothing is lost, three records are duplicated::

        records = consumer.poll(timeout_ms=500)
        for record in records: process(record)
        consumer.commit()
    """
    done = 0

    def on_batch(batch: dict) -> None:
        nonlocal done
        hook("polled")
        for records in batch.values():
            for record in records:
                process(record)
                done += 1
                hook("processing")
        hook("processed")
        consumer.commit(_next_offsets(batch))
        hook("committed")

    _loop(consumer, on_batch, until, poll_timeout_ms, max_idle_polls, timeout_ms)
    return done


def exactly_once(consumer: Any, producer: Any, transform: Callable[[Any], bytes],
                 output_topic: str, *, hook: Hook = _noop,
                 until: Callable[[], bool] | None = None, poll_timeout_ms: int = 500,
                 max_idle_polls: int = 5, timeout_ms: int = 600_000) -> int:
    """Consume-transform-produce in transactions (KIP-98, KIP-447): the outputs and the
    input offsets (send_offsets_to_transaction) commit together or not at all.

    The producer needs a transactional_id and init_transactions(); the consumer
    enable_auto_commit=False, and readers of the output isolation_level="read_committed".
    Worked example: outputs for offsets 3, 4, 5 are sent, then the process dies before
    commit_transaction. Its successor's init_transactions() (same transactional_id)
    aborts the open transaction: the three outputs stay in the log but no read_committed
    reader sees them, the group's offset is still 3, and 3, 4, 5 are transformed again
    in a transaction that commits -- each output visible exactly once::

        producer.begin_transaction()
        for record in records: producer.send(output_topic, transform(record))
        producer.send_offsets_to_transaction(next_offsets, consumer.group_metadata())
        producer.commit_transaction()

    Returns how many records were sent (including sends of aborted transactions).
    """
    sent = 0

    def on_batch(batch: dict) -> None:
        nonlocal sent
        hook("polled")
        producer.begin_transaction()
        for tp, records in batch.items():
            for record in records:
                producer.send(output_topic, key=record.key, value=transform(record),
                              partition=tp.partition)
                sent += 1
                hook("processing")
        producer.send_offsets_to_transaction(_next_offsets(batch), consumer.group_metadata())
        hook("offsets_sent")
        producer.commit_transaction()
        hook("committed")

    _loop(consumer, on_batch, until, poll_timeout_ms, max_idle_polls, timeout_ms)
    return sent


@dataclass
class IdempotentSink:
    """A store keyed by where a record came from, (topic, partition, offset): writing the
    same record twice leaves one row. At-least-once delivery into it is exactly-once in
    effect -- the usual way to get exactly-once into a database."""

    rows: dict[tuple[str, int, int], Any] = field(default_factory=dict)
    writes: int = 0

    def put(self, record: Any, value: Any) -> None:
        self.writes += 1
        self.rows[(record.topic, record.partition, record.offset)] = value

    def values(self) -> list:
        return [self.rows[k] for k in sorted(self.rows)]


def idempotent_sink(consumer: Any, sink: IdempotentSink, transform: Callable[[Any], Any], *,
                    hook: Hook = _noop, until: Callable[[], bool] | None = None,
                    poll_timeout_ms: int = 500, max_idle_polls: int = 5,
                    timeout_ms: int = 600_000) -> int:
    """At-least-once into an IdempotentSink. Worked example: offsets 3, 4, 5 are written
    and the process dies before committing; the successor writes rows (t, p, 3..5)
    again, over themselves -- the sink holds each once."""
    return at_least_once(consumer, lambda r: sink.put(r, transform(r)), hook=hook,
                         until=until, poll_timeout_ms=poll_timeout_ms,
                         max_idle_polls=max_idle_polls, timeout_ms=timeout_ms)


# -- the checker ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Report:
    """What a run did to its inputs: the ones never seen in the outputs, and the ones
    seen more than once (with how many times)."""

    lost: tuple = ()
    duplicated: tuple = ()

    @property
    def ok(self) -> bool:
        return not self.lost and not self.duplicated


def check(inputs: Iterable[Any], outputs: Iterable[Any]) -> Report:
    """Compare what went in with the effects that came out.

    >>> check([b"a", b"b", b"c"], [b"a", b"c", b"c"])
    Report(lost=(b'b',), duplicated=((b'c', 2),))
    >>> check([b"a", b"b"], [b"b", b"a"]).ok
    True
    """
    counts = Counter(outputs)
    inputs = list(inputs)
    lost = tuple(v for v in inputs if counts[v] == 0)
    duplicated = tuple((v, counts[v]) for v in inputs if counts[v] > 1)
    return Report(lost, duplicated)


@dataclass(frozen=True)
class Verdict:
    semantics: str
    crash_point: str | None
    report: Report
    deliveries: int


def caught_up(consumer: Any, topic: str) -> bool:
    """The consumer owns every partition of ``topic`` and has read up to its end."""
    partitions = consumer.partitions_for_topic(topic) or set()
    tps = {TopicPartition(topic, p) for p in partitions}
    if not tps or not tps <= consumer.assignment():  # it may read other topics too
        return False
    ends = consumer.end_offsets(list(tps))
    return all(tp in consumer._positions and consumer._positions[tp] >= ends[tp] for tp in tps)


def run_with_crash(semantics: str, crash_point: str | None, *, records: int = 12,
                   partitions: int = 2, crash_batch: int = 1, seed: int = 0) -> Verdict:
    """One scenario: ``records`` unique values in topic "in"; a consumer runs the loop
    of ``semantics`` and is killed at ``crash_point`` (None: no crash) in batch
    ``crash_batch``; a second consumer of the same group finishes the job."""
    from .cluster import Cluster  # the checker builds clusters; the loops do not need one

    if semantics not in POINTS:
        raise ValueError(f"unknown semantics {semantics!r}; one of {sorted(POINTS)}")
    if crash_point is not None and crash_point not in POINTS[semantics]:
        raise ValueError(f"{semantics} has no point {crash_point!r}: {POINTS[semantics]}")
    cluster = Cluster(brokers=3, seed=seed)
    cluster.create_topic("in", partitions=partitions, replication_factor=3)
    cluster.create_topic("out", partitions=partitions, replication_factor=3)
    inputs = [f"r{i}".encode() for i in range(records)]
    producer = cluster.producer()
    for i, value in enumerate(inputs):
        producer.send("in", value=value, partition=i % partitions)
    producer.flush()

    effects: list = []  # every process() call, for the first two loops
    sink = IdempotentSink()
    sends = _SendCounter()

    def run(instance: int, hook: Hook) -> None:
        consumer = cluster.consumer(
            "in", group_id="semantics", client_id=f"worker-{instance}",
            auto_offset_reset="earliest", enable_auto_commit=False, max_poll_records=3,
            session_timeout_ms=10_000, heartbeat_interval_ms=1_000,
            isolation_level="read_committed")
        if semantics == "exactly-once":
            sends.producer = cluster.producer(transactional_id="semantics-worker")
            sends.producer.init_transactions()  # fences a dead predecessor, aborts its txn

        def until() -> bool:
            return caught_up(consumer, "in")

        def process(record: Any) -> None:
            effects.append(record.value)

        try:
            if semantics == "at-most-once":
                at_most_once(consumer, process, hook=hook, until=until)
            elif semantics == "at-least-once":
                at_least_once(consumer, process, hook=hook, until=until)
            elif semantics == "idempotent-sink":
                idempotent_sink(consumer, sink, lambda r: r.value, hook=hook, until=until)
            else:
                exactly_once(consumer, sends, lambda r: r.value, "out", hook=hook, until=until)
        except Crash:
            consumer.crash()
            return
        consumer.close(autocommit=False)

    run(1, CrashAt(crash_point, crash_batch) if crash_point else _noop)
    run(2, _noop)

    if semantics == "exactly-once":
        outputs, deliveries = _read_all(cluster, "out"), sends.sent
    elif semantics == "idempotent-sink":
        outputs, deliveries = sink.values(), sink.writes
    else:
        outputs, deliveries = effects, len(effects)
    return Verdict(semantics, crash_point, check(inputs, outputs), deliveries)


class _SendCounter:
    """A transactional producer that counts its sends (committed or aborted)."""

    def __init__(self) -> None:
        self.producer: Any = None
        self.sent = 0

    def send(self, *args: Any, **kwargs: Any) -> Any:
        self.sent += 1
        return self.producer.send(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.producer, name)


def _read_all(cluster: Cluster, topic: str) -> list:
    """Everything a read_committed reader gets from ``topic``, until it goes quiet."""
    reader = cluster.consumer(topic, auto_offset_reset="earliest",
                              isolation_level="read_committed")
    out: list = []
    quiet = 0
    while quiet < 3:
        batch = reader.poll(timeout_ms=500)
        quiet = 0 if batch else quiet + 1
        for records in batch.values():
            out.extend(r.value for r in records)
    reader.close()
    return out


def delivery_matrix(records: int = 12, semantics: Sequence[str] | None = None,
                    seed: int = 0) -> dict[str, list[Verdict]]:
    """Every semantics, crashed at each of its points (and once not at all)."""
    out: dict[str, list[Verdict]] = {}
    for name in semantics or POINTS:
        out[name] = [run_with_crash(name, point, records=records, seed=seed)
                     for point in (None, *POINTS[name])]
    return out


def format_matrix(matrix: Mapping[str, list[Verdict]]) -> str:
    """The matrix as a table: one row per (semantics, crash point)."""
    rows = [("semantics", "crash at", "lost", "duplicated", "deliveries")]
    for verdicts in matrix.values():
        for v in verdicts:
            rows.append((v.semantics, v.crash_point or "-", str(len(v.report.lost)),
                         str(sum(n - 1 for _, n in v.report.duplicated)), str(v.deliveries)))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                     for r in rows)
