"""Lesson 13's pipeline in miniature: a Kafka Connect source and sink, and MirrorMaker 2."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kafka.structs import OffsetAndMetadata, TopicPartition

from minikafka.course.reading import read_topic

if TYPE_CHECKING:
    from ..cluster import Cluster


class SourceConnector:
    """A Kafka Connect *source* in miniature: copies rows of an external system (here a
    list of dicts) into a topic, keyed by ``key_field``. Like Connect, it stores how far
    it got (its *source offset*) in a compacted topic, ``connect-offsets``, keyed by the
    connector's name, after the rows it copied are acknowledged; a restarted connector
    with the same name reads it back and carries on instead of copying everything again.
    A crash between the two steps copies some rows twice (at-least-once)."""

    def __init__(self, cluster: Cluster, name: str, rows: Sequence[Mapping[str, Any]], topic: str,
                 key_field: str, offsets_topic: str = "connect-offsets") -> None:
        self.cluster = cluster
        self.name = name
        self.rows = rows
        self.topic = topic
        self.key_field = key_field
        self.offsets_topic = offsets_topic
        if offsets_topic not in cluster.list_topics():
            cluster.create_topic(offsets_topic, partitions=1,
                                 replication_factor=min(3, len(cluster.brokers)),
                                 config={"cleanup.policy": "compact"})
        self.position = 0  # the source offset: rows already copied
        for record in read_topic(cluster, offsets_topic)[0]:
            if record.key == name.encode():
                self.position = json.loads(record.value)["position"]
        self._producer = cluster.producer(linger_ms=0)

    def poll(self, max_rows: int = 100) -> int:
        """Copy up to max_rows new rows, then store the new source offset; returns how
        many rows were copied."""
        chunk = list(self.rows[self.position:self.position + max_rows])
        futures = [self._producer.send(self.topic, key=str(row[self.key_field]).encode(),
                                       value=json.dumps(row).encode()) for row in chunk]
        for f in futures:
            f.get()
        if chunk:
            self.position += len(chunk)
            self._producer.send(self.offsets_topic, key=self.name.encode(),
                                value=json.dumps({"position": self.position}).encode()).get()
        return len(chunk)


class SinkConnector:
    """A Kafka Connect *sink* in miniature: a consumer group that writes each record into
    a table keyed by the record key (an upsert), committing offsets after writing. If it
    crashes between the two, the replayed records overwrite themselves: at-least-once
    delivery, exactly-once effect."""

    def __init__(self, cluster: Cluster, topic: str, group_id: str = "sink",
                 table: dict[str, Any] | None = None) -> None:
        self.cluster = cluster
        self.topic = topic
        # The external store: pass the same dict to a restarted connector (it survives).
        self.table: dict[str, Any] = {} if table is None else table
        self.writes = 0
        self.consumer = cluster.consumer(topic, group_id=group_id, client_id=group_id,
                                         auto_offset_reset="earliest",
                                         enable_auto_commit=False)

    def poll(self, timeout_ms: int = 1_000, commit: bool = True) -> int:
        """One round: poll, upsert every record, then commit (unless commit=False, which
        is a crash before the commit). Returns how many records were written."""
        batch = self.consumer.poll(timeout_ms=timeout_ms)
        n = 0
        for records in batch.values():
            for r in records:
                self.table[r.key.decode()] = json.loads(r.value)
                n += 1
        self.writes += n
        if commit and batch:
            self.consumer.commit({tp: OffsetAndMetadata(rs[-1].offset + 1, "", None)
                                  for tp, rs in batch.items()})
        return n

    def run(self, rounds: int = 10) -> int:
        """Poll (and write and commit) ``rounds`` times; returns how many records were
        written."""
        return sum(self.poll() for _ in range(rounds))

    def crash(self) -> None:
        self.consumer.crash()


class MirrorMaker:
    """MirrorMaker 2 in miniature: copies a topic from a source cluster to a target
    cluster as ``<alias>.<topic>`` (MM2's default replication policy), partition for
    partition, and records which target offset each source offset landed at (MM2's
    offset syncs), so a consumer group can move to the other cluster and carry on near
    where it was."""

    def __init__(self, source: Any, target: Any, topic: str, alias: str = "primary") -> None:
        self.source, self.target = source, target
        self.topic = topic
        self.remote_topic = f"{alias}.{topic}"
        partitions = source.partitions_for(topic)
        if self.remote_topic not in target.list_topics():
            target.create_topic(self.remote_topic, partitions=partitions,
                                replication_factor=min(3, len(target.brokers)))
        self.consumer = source.consumer(auto_offset_reset="earliest",
                                        enable_auto_commit=False)
        self.consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
        self.producer = target.producer(linger_ms=0)
        self.offset_syncs: dict[int, list[tuple[int, int]]] = {p: [] for p in range(partitions)}

    def poll(self, timeout_ms: int = 1_000) -> int:
        """Copy what is new; returns how many records were copied."""
        n = 0
        for tp, records in self.consumer.poll(timeout_ms=timeout_ms).items():
            futures = [(r.offset, self.producer.send(self.remote_topic, key=r.key,
                                                     value=r.value, partition=tp.partition))
                       for r in records]
            for source_offset, f in futures:
                self.offset_syncs[tp.partition].append((source_offset, f.get().offset))
                n += 1
        return n

    def translate(self, partition: int, source_offset: int) -> int:
        """The target offset to resume at for a group committed at ``source_offset``:
        the copy of the last record before it, plus one (never skipping a record), or
        the first copy when nothing before it was copied."""
        syncs = self.offset_syncs[partition]
        before = [dst for src, dst in syncs if src < source_offset]
        if before:
            return before[-1] + 1
        return syncs[0][1] if syncs else 0
