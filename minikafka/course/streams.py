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

import re
from typing import Any

from kafka.structs import OffsetAndMetadata, TopicPartition

__all__ = ["WordCount"]


def _commit(consumer: Any, batch: dict) -> None:
    if batch:
        consumer.commit({tp: OffsetAndMetadata(rs[-1].offset + 1, "", None)
                         for tp, rs in batch.items()})


class WordCount:
    """One instance of the word-count application (see the module docstring)."""

    def __init__(self, cluster: Any, application_id: str = "wordcount",
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
