"""Kafka Streams' word count, written out in Python on a minikafka cluster.

The Java application this mirrors:

    builder.stream("sentences")                                  // KStream<_, String>
           .flatMapValues(s -> Arrays.asList(s.toLowerCase().split("\\W+")))
           .groupBy((key, word) -> word)                         // a new key: repartition
           .count(Materialized.as("counts"))                     // KTable<String, Long>
           .toStream().to("word-counts");

with `application.id=wordcount`. Kafka Streams runs it as two sub-topologies joined by
an internal topic, and names its internal topics after the application id:

1. read `sentences`, split, and write each word, keyed by the word, to
   `wordcount-counts-repartition`, so that every occurrence of a word lands in the same
   partition, and so on the same instance;
2. read the repartition topic, add one to the word's count in the *state store*
   `counts` (a local key-value store: RocksDB by default), write the new count to the
   store's *changelog* `wordcount-counts-changelog` (a compacted topic: the latest count
   per word survives) and downstream to `word-counts`.

The instance's consumers are in the group `wordcount` (the application id); it commits
the input offsets after the outputs are written (at least once; exactly_once_v2 puts
outputs and offsets in one transaction instead). A new instance that takes over a
partition has no local store: it *restores* the store by reading the changelog from
the beginning before it processes anything.

One instance owns every partition here; its store keeps one table per partition of
the repartition topic, as Streams keeps one store per task.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kafka.structs import OffsetAndMetadata, TopicPartition

if TYPE_CHECKING:
    from ..cluster import Cluster

__all__ = ["SessionWindows", "TimeWindows", "WindowedCount", "WordCount", "arriving_late",
           "copartition_error", "run_windowed", "stream_stream_join", "stream_table_join",
           "window_state"]


def _commit(consumer: Any, batch: dict) -> None:
    if batch:
        consumer.commit({tp: OffsetAndMetadata(rs[-1].offset + 1, "", None)
                         for tp, rs in batch.items()})


class WordCount:
    """One instance of the word-count application (see the module docstring)."""

    def __init__(self, cluster: Cluster, application_id: str = "wordcount",
                 source: str = "sentences", sink: str = "word-counts") -> None:
        self.cluster = cluster
        self.application_id = application_id
        self.source, self.sink = source, sink
        self.repartition = f"{application_id}-counts-repartition"
        self.changelog = f"{application_id}-counts-changelog"
        partitions = cluster.partitions_for(source)
        rf = min(3, len(cluster.brokers))
        for topic, config in ((self.repartition, {}),
                              (self.changelog, {"cleanup.policy": "compact"}),
                              (sink, {})):
            if topic not in cluster.list_topics():
                cluster.create_topic(topic, partitions=partitions, replication_factor=rf,
                                     config=config)
        # The state store: one table per task (partition of the repartition topic).
        self.store: dict[int, dict[str, int]] = {p: {} for p in range(partitions)}
        self.restored = self._restore()
        common = {"group_id": application_id, "auto_offset_reset": "earliest",
                  "enable_auto_commit": False}
        self._split_in = cluster.consumer(source, client_id=f"{application_id}-split", **common)
        self._count_in = cluster.consumer(self.repartition,
                                          client_id=f"{application_id}-count", **common)
        self._out = cluster.producer(linger_ms=0)

    def _restore(self) -> int:
        """Read the changelog to its end into the store; returns the records read."""
        consumer = self.cluster.consumer(auto_offset_reset="earliest", enable_auto_commit=False)
        tps = [TopicPartition(self.changelog, p) for p in self.store]
        consumer.assign(tps)
        ends = consumer.end_offsets(tps)
        read = 0
        while any(consumer.position(tp) < ends[tp] for tp in tps):
            for tp, records in consumer.poll(timeout_ms=200).items():
                for r in records:
                    self.store[tp.partition][r.key.decode()] = int(r.value)
                    read += 1
        consumer.close()
        return read

    def counts(self) -> dict[str, int]:
        """Every word's count, from the local store."""
        return {w: n for table in self.store.values() for w, n in sorted(table.items())}

    def step(self, timeout_ms: int = 500) -> int:
        """One round of both sub-topologies; returns how many words were counted."""
        batch = self._split_in.poll(timeout_ms=timeout_ms)
        for records in batch.values():
            for r in records:
                for word in re.findall(r"\w+", r.value.decode().lower()):
                    self._out.send(self.repartition, key=word.encode(), value=word.encode())
        self._out.flush()
        _commit(self._split_in, batch)
        counted = 0
        batch = self._count_in.poll(timeout_ms=timeout_ms)
        for tp, records in batch.items():
            table = self.store[tp.partition]
            for r in records:
                word = r.key.decode()
                table[word] = table.get(word, 0) + 1
                value = str(table[word]).encode()
                # The changelog goes to the same partition as the task's input.
                self._out.send(self.changelog, key=r.key, value=value, partition=tp.partition)
                self._out.send(self.sink, key=r.key, value=value)
                counted += 1
        self._out.flush()
        _commit(self._count_in, batch)
        return counted

    def run(self, rounds: int = 20) -> int:
        return sum(self.step() for _ in range(rounds))

    def crash(self) -> None:
        """The instance dies with its local store; its consumers leave without a word."""
        self._split_in.crash()
        self._count_in.crash()
        self.store = {p: {} for p in self.store}


# -- windows (lesson 21) -------------------------------------------------------------------------
#
# Kafka Streams' windowed aggregation, written out as it runs in KStreamWindowAggregate and
# KStreamSessionWindowAggregate (Kafka 4.4):
#
#     builder.stream("truck-positions")                 // keyed by truck, event time = record time
#            .groupByKey()                              // already keyed: no repartition topic
#            .windowedBy(TimeWindows.ofSizeAndGrace(size, grace).advanceBy(advance))
#            .count(Materialized.as("counts"))          // a window store, changelogged
#            .toStream().to("truck-counts");
#
# Each task keeps its *stream time*: the largest record timestamp it has seen. A window
# [start, end) takes a record while end > stream time - grace; after that the window is
# closed and a record for it is dropped (the task's dropped-records metric counts it).


@dataclass(frozen=True)
class TimeWindows:
    """Tumbling (advance = size) or hopping (advance < size) windows, Kafka's TimeWindows:
    the n-th window is [n * advance, n * advance + size)."""

    size_ms: int
    advance_ms: int | None = None  # None: tumbling
    grace_ms: int = 0  # ofSizeWithNoGrace; ofSizeAndGrace(size, grace) sets it

    def __post_init__(self) -> None:
        if self.size_ms <= 0:
            raise ValueError("size_ms must be positive")
        if self.advance_ms is not None and not 0 < self.advance_ms <= self.size_ms:
            raise ValueError(f"advance_ms must lie within (0, {self.size_ms}]")
        if self.grace_ms < 0:
            raise ValueError("grace_ms must not be negative")

    @property
    def advance(self) -> int:
        return self.advance_ms or self.size_ms

    def windows_for(self, timestamp: int) -> list[tuple[int, int]]:
        """Every window [start, end) that holds `timestamp` (TimeWindows.windowsFor)."""
        start = max(0, timestamp - self.size_ms + self.advance) // self.advance * self.advance
        out = []
        while start <= timestamp:
            out.append((start, start + self.size_ms))
            start += self.advance
        return out

    def describe(self) -> str:
        kind = "tumbling" if self.advance == self.size_ms else \
            f"hopping by {self.advance // 1000} s"
        return f"{self.size_ms // 1000} s windows, {kind}, grace {self.grace_ms // 1000} s"


@dataclass(frozen=True)
class SessionWindows:
    """Session windows, Kafka's SessionWindows: a key's records closer than `gap_ms` to each
    other form one session [first, last] (both ends inclusive); a record that falls between
    two sessions merges them."""

    gap_ms: int
    grace_ms: int = 0

    def describe(self) -> str:
        return f"sessions, inactivity gap {self.gap_ms // 1000} s, grace {self.grace_ms // 1000} s"


def arriving_late(records: list[Any], delays_ms: dict[tuple[str, int], int]) -> list[Any]:
    """Truck reports (minikafka.course.trucks.TruckPosition) in the order they reach Kafka
    when the n-th report of a truck is held back: {(truck id, n): delay in ms}. The others
    arrive as they are measured."""
    nth: dict[str, int] = {}
    arrivals = []
    for i, r in enumerate(records):
        n = nth[r.truck_id] = nth.get(r.truck_id, -1) + 1
        arrivals.append((r.event_time_ms + delays_ms.get((r.truck_id, n), 0), i, r))
    return [r for _, _, r in sorted(arrivals)]


def _window_key(key: str, start: int) -> bytes:
    return f"{key}@{start}".encode()


class WindowedCount:
    """One instance of a windowed count per key (see the comment above): its window store
    (one per task), the changelog that backs it up, and every record's fate."""

    def __init__(self, cluster: Cluster, windows: TimeWindows | SessionWindows, *,
                 application_id: str = "truck-counts", source: str = "truck-positions",
                 sink: str | None = None) -> None:
        self.cluster, self.windows = cluster, windows
        self.application_id, self.source = application_id, source
        self.sink = sink or f"{application_id}-output"
        self.changelog = f"{application_id}-counts-changelog"
        partitions = cluster.partitions_for(source)
        rf = min(3, len(cluster.brokers))
        # A window store's changelog is compacted *and* deleted: old windows expire.
        for topic, config in ((self.changelog, {"cleanup.policy": "compact,delete"}),
                              (self.sink, {})):
            if topic not in cluster.list_topics():
                cluster.create_topic(topic, partitions=partitions, replication_factor=rf,
                                     config=config)
        # Per task: (key, window start) -> [window end, count]; and the task's stream time.
        self.store: dict[int, dict[tuple[str, int], list[int]]] = {
            p: {} for p in range(partitions)}
        self.stream_time: dict[int, int] = {}
        self.records: list[dict[str, Any]] = []  # every record, in processing order
        self._in = cluster.consumer(source, group_id=application_id,
                                    client_id=f"{application_id}-1",
                                    auto_offset_reset="earliest", enable_auto_commit=False)
        self._out = cluster.producer(linger_ms=0)

    @property
    def dropped(self) -> list[dict[str, Any]]:
        """The records dropped as too late for every window they belong to."""
        return [r for r in self.records if r["dropped"] and not r["counted"]]

    def counts(self, key: str | None = None) -> dict[tuple[str, int, int], int]:
        """(key, start, end) -> count over every task's store, in time order."""
        out = {(k, start, end): n for table in self.store.values()
               for (k, start), (end, n) in table.items() if key in (None, k)}
        return dict(sorted(out.items(), key=lambda kv: (kv[0][1], kv[0][0])))

    def _put(self, p: int, key: str, start: int, end: int, count: int) -> None:
        self.store[p][(key, start)] = [end, count]
        value = json.dumps({"start": start, "end": end, "count": count}).encode()
        # The changelog partition is the task's partition, as in WordCount.
        self._out.send(self.changelog, key=_window_key(key, start), value=value, partition=p)
        self._out.send(self.sink, key=_window_key(key, start), value=value, partition=p)

    def _delete(self, p: int, key: str, start: int) -> None:
        del self.store[p][(key, start)]
        self._out.send(self.changelog, key=_window_key(key, start), value=None, partition=p)

    def _time_windows(self, p: int, key: str, ts: int, close: int) -> tuple[list, list]:
        counted, dropped = [], []
        for start, end in self.windows.windows_for(ts):
            if end > close:
                n = self.store[p].get((key, start), [end, 0])[1] + 1
                self._put(p, key, start, end, n)
                counted.append((start, end))
            else:
                dropped.append((start, end))
        return counted, dropped

    def _session(self, p: int, key: str, ts: int, close: int) -> tuple[list, list]:
        gap = self.windows.gap_ms
        near = [(s, e) for (k, s), (e, _) in self.store[p].items()
                if k == key and s - gap <= ts <= e + gap]
        start = min([ts, *(s for s, _ in near)])
        end = max([ts, *(e for _, e in near)])
        if end < close:  # KStreamSessionWindowAggregate: a session ends inclusively
            return [], [(start, end)]
        count = 1 + sum(self.store[p][(key, s)][1] for s, _ in near)
        for s, _ in near:
            self._delete(p, key, s)  # merged sessions are replaced by the new one
        self._put(p, key, start, end, count)
        return [(start, end)], []

    def process(self, partition: int, offset: int, key: str, timestamp: int) -> dict[str, Any]:
        """One record through the aggregation; returns what became of it."""
        seen = self.stream_time.get(partition, -1)
        self.stream_time[partition] = stream_time = max(seen, timestamp)
        close = stream_time - self.windows.grace_ms
        handle = self._session if isinstance(self.windows, SessionWindows) \
            else self._time_windows
        counted, dropped = handle(partition, key, timestamp, close)
        fate = {"partition": partition, "offset": offset, "key": key, "timestamp": timestamp,
                "stream_time": stream_time, "late_by": stream_time - timestamp,
                "counted": counted, "dropped": dropped,
                "processed_at": self.cluster.clock.now_ms}
        self.records.append(fate)
        return fate

    def step(self, timeout_ms: int = 500) -> int:
        """Poll, count, write the changelog and output, then commit; the records read."""
        batch = self._in.poll(timeout_ms=timeout_ms)
        read = 0
        for tp, records in batch.items():
            for r in records:
                self.process(tp.partition, r.offset, r.key.decode(), r.timestamp)
                read += 1
        self._out.flush()
        _commit(self._in, batch)
        return read

    def run(self, rounds: int = 20) -> int:
        return sum(self.step() for _ in range(rounds))

    def close(self) -> None:
        self._in.close(autocommit=False)
        self._out.close()


def run_windowed(reports: list[Any], windows: TimeWindows | SessionWindows, *, seed: int = 21,
                 partitions: int = 3) -> WindowedCount:
    """A fresh cluster with the truck reports in `truck-positions` (each record's timestamp
    its event time, as a producer sets it), and a WindowedCount run over all of them."""
    from ..cluster import Cluster

    cluster = Cluster(brokers=3, seed=seed)
    cluster.create_topic("truck-positions", partitions=partitions, replication_factor=3)
    producer = cluster.producer()
    for r in reports:
        producer.send("truck-positions", key=r.key(), value=r.value(),
                      timestamp_ms=r.event_time_ms)
    producer.flush()
    app = WindowedCount(cluster, windows)
    app.run()
    return app


# -- joins (lesson 21) ---------------------------------------------------------------------------


def copartition_error(cluster: Cluster, *topics: str) -> str | None:
    """What Kafka Streams says before a join whose inputs have different partition counts
    (CopartitionedTopicsEnforcer; a streams group's heartbeat answers the same with status
    INCORRECTLY_PARTITIONED_TOPICS), or None when they are co-partitioned."""
    counts = {t: cluster.partitions_for(t) for t in sorted(topics)}
    if len(set(counts.values())) == 1:
        return None
    listed = ", ".join(f"{t}={n}" for t, n in counts.items())
    return f"Following topics do not have the same number of partitions: [{{{listed}}}]"


def _read_partition(cluster: Cluster, topic: str, partition: int) -> list[Any]:
    consumer = cluster.consumer(auto_offset_reset="earliest", enable_auto_commit=False)
    tp = TopicPartition(topic, partition)
    consumer.assign([tp])
    end = consumer.end_offsets([tp])[tp]
    records: list[Any] = []
    while consumer.position(tp) < end:
        records += consumer.poll(timeout_ms=200).get(tp, [])
    consumer.close()
    return records


def stream_table_join(cluster: Cluster, stream: str, table: str) -> dict[str, Any]:
    """`stream.join(table)` run task by task, as Streams runs it: task p reads partition p
    of the stream and looks each key up in its own copy of partition p of the table. Run
    on topics that are not co-partitioned (which Streams refuses), it shows why: a key's
    table row sits in another task's partition and the lookup misses."""
    joined: list[tuple[str, str, str]] = []
    missed: list[tuple[int, str]] = []
    for p in range(cluster.partitions_for(stream)):
        rows = {r.key.decode(): r.value.decode() for r in _read_partition(cluster, table, p)
                } if p < cluster.partitions_for(table) else {}
        for r in _read_partition(cluster, stream, p):
            key = r.key.decode()
            if key in rows:
                joined.append((key, r.value.decode(), rows[key]))
            else:
                missed.append((p, key))
    return {"joined": joined, "missed": missed}


def stream_stream_join(cluster: Cluster, left: str, right: str,
                       within_ms: int) -> list[tuple[str, int, int]]:
    """`left.join(right, JoinWindows.ofTimeDifferenceWithNoGrace(within))` task by task:
    (key, left timestamp, right timestamp) for each pair with the same key whose
    timestamps are at most `within_ms` apart. (Both topics are read whole, so no record is
    late here; in a running application a window's grace decides that, as above.)"""
    pairs = []
    for p in range(cluster.partitions_for(left)):
        rights = _read_partition(cluster, right, p)
        for a in _read_partition(cluster, left, p):
            pairs += [(a.key.decode(), a.timestamp, b.timestamp) for b in rights
                      if b.key == a.key and abs(a.timestamp - b.timestamp) <= within_ms]
    return sorted(pairs)


def window_state(app: WindowedCount, key: str) -> dict[str, Any]:
    """One key's windows and records as plain data, for minikafka.viz.windows_view: each
    window with its count and whether it has closed (its end at or before its task's
    stream time minus the grace), each record with its event time, how far behind the
    stream time it arrived and whether any window counted it."""
    records = [r for r in app.records if r["key"] == key]
    stream_time = max((app.stream_time[r["partition"]] for r in records), default=0)
    close = stream_time - app.windows.grace_ms
    windows = [{"start": s, "end": e, "count": n,
                "closed": e < close if isinstance(app.windows, SessionWindows) else e <= close}
               for (_, s, e), n in app.counts(key).items()]
    times = [r["timestamp"] for r in records]
    return {"key": key, "windows": windows, "grace_ms": app.windows.grace_ms,
            "describe": app.windows.describe(), "stream_time": stream_time,
            "sessions": isinstance(app.windows, SessionWindows),
            "base_ms": min(times, default=0) // 60_000 * 60_000,
            "records": [{"timestamp": r["timestamp"], "late_by": r["late_by"],
                         "counted": bool(r["counted"])} for r in records]}
