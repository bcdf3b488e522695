"""The controller's metadata log on disk, and its replay on start.

Kafka keeps the cluster's metadata in a log of its own, replicated to every node:

    <log_dir>/__cluster_metadata-0/00000000000000000000.log

Each record here is one RecordBatch v2 record (real CRC-32C) whose value is the
metadata record as JSON ({"type": "TopicRecord", "term": 1, "fields": {...}}), at the
offset it has in the controller's log, the batch's partition leader epoch being the
controller's term. Kafka encodes the records as binary ApiMessages; JSON keeps them
readable in `minikafka dump-log`. A torn tail (a kill -9 in the middle of a write) is
cut at the first bad batch, as for any other log.

replay() rebuilds the controller's state (brokers, topics and their configs,
partitions with leaders, ISR, ELR and epochs, dynamic broker configs, the producer
id counter) from the records, as a restarted Kafka controller replays its log.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from .config import TopicConfig, validate_topic_config
from .controller import (
    BrokerRegistration,
    Controller,
    MetadataRecord,
    PartitionRegistration,
    TopicMetadata,
)
from .records import RecordBatch
from .storage import encode_batch, read_segment, segment_name, write_atomically

METADATA_DIR = "__cluster_metadata-0"
# Kafka's Topic.isInternal: topics the cluster keeps for itself.
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


def encode_records(records: Sequence[MetadataRecord], now_ms: int) -> bytes:
    """One batch of consecutive metadata records, the term as its leader epoch."""
    values = [json.dumps({"type": r.type, "term": r.term, "fields": r.fields},
                         sort_keys=True, default=str).encode() for r in records]
    batch = RecordBatch([(i, now_ms, None, v, ()) for i, v in enumerate(values)],
                        base_offset=records[0].offset, first_timestamp=now_ms,
                        max_timestamp=now_ms)
    batch.partition_leader_epoch = records[-1].term
    return encode_batch(batch)


def decode_segment(data: bytes) -> tuple[list[MetadataRecord], int, int]:
    """The records of a metadata log file up to its first torn batch, the valid bytes,
    and the newest batch's timestamp."""
    batches, valid = read_segment(data)
    out: list[MetadataRecord] = []
    last_ms = 0
    for batch, _ in batches:
        last_ms = max(last_ms, batch.max_timestamp)
        for delta, _, _, value, _ in batch.records:
            rec = json.loads(value)
            out.append(MetadataRecord(batch.base_offset + delta, rec["term"], rec["type"],
                                      rec["fields"]))
    return out, valid, last_ms


class MetadataLogFiles:
    """`__cluster_metadata-0` in each log directory: every node keeps a copy."""

    def __init__(self, log_dirs: Iterable[Path]) -> None:
        self.paths = [Path(d) / METADATA_DIR for d in log_dirs]
        self.written = 0  # records on disk
        self.cut = 0  # bytes cut off a torn tail on load
        self.last_ms = 0  # when the newest record was written (its batch's timestamp)

    def _file(self, path: Path) -> Path:
        return path / (segment_name(0) + ".log")

    def load(self) -> list[MetadataRecord]:
        """The longest valid copy (a kill can leave the copies one batch apart); every
        copy then holds its bytes, torn tails cut."""
        best: list[MetadataRecord] = []
        best_bytes = b""
        for path in self.paths:
            try:
                data = self._file(path).read_bytes()
            except FileNotFoundError:
                continue
            records, valid, last_ms = decode_segment(data)
            self.cut = max(self.cut, len(data) - valid)
            self.last_ms = max(self.last_ms, last_ms)
            if len(records) > len(best):
                best, best_bytes = records, data[:valid]
        if best:
            for path in self.paths:
                path.mkdir(parents=True, exist_ok=True)
                file = self._file(path)
                if not file.exists() or file.read_bytes() != best_bytes:
                    write_atomically(file, best_bytes)
        self.written = len(best)
        return best

    def sync(self, records: Sequence[MetadataRecord], now_ms: int) -> None:
        """Append the records not yet on disk (all of them as one batch)."""
        if self.written == 0 and not records:
            return
        if self.written == 0:
            for path in self.paths:
                path.mkdir(parents=True, exist_ok=True)
                self._file(path).write_bytes(b"")
        new = records[self.written:]
        if not new:
            return
        data = encode_records(new, now_ms)
        for path in self.paths:
            with open(self._file(path), "ab") as f:
                f.write(data)
        self.written = len(records)


def replay(controller: Controller, records: Sequence[MetadataRecord]) -> set[str]:
    """Rebuild the controller's state from its log; returns the ids of deleted topics
    (their directories may go: the metadata says so)."""
    removed: set[str] = set()
    topics = controller.topics
    for rec in records:
        f = rec.fields
        kind = rec.type
        if kind == "LeaderChangeMessage":
            controller.quorum.term = rec.term
        elif kind == "RegisterBrokerRecord":
            controller.brokers[f["broker_id"]] = BrokerRegistration(
                f["broker_id"], f["rack"], f.get("fenced", True), f["epoch"])
        elif kind in ("FenceBrokerRecord", "UnfenceBrokerRecord"):
            reg = controller.brokers.get(f["broker_id"])
            if reg is not None:
                reg.fenced = kind == "FenceBrokerRecord"
        elif kind == "TopicRecord":
            topics[f["name"]] = TopicMetadata(
                f["name"], f["topic_id"], [], TopicConfig({}, controller.topic_defaults),
                f["name"] in INTERNAL_TOPICS)
        elif kind == "ConfigRecord" and f.get("resource_type") == "BROKER":
            controller.broker_configs[(f["resource"], f["name"])] = f["value"]
        elif kind == "ConfigRecord":
            topic = topics.get(f["resource"])
            if topic is not None:
                if f["value"] is None:
                    topic.config.overrides.pop(f["name"], None)
                else:  # values as CreateTopics parsed them or AlterConfigs sent them
                    topic.config.overrides.update(
                        validate_topic_config({f["name"]: f["value"]}))
        elif kind == "PartitionRecord":
            topic = topics[f["topic"]]
            topic.partitions.append(PartitionRegistration(
                tuple(f["replicas"]), tuple(f["isr"]), f["leader"], f["leader_epoch"],
                f["partition_epoch"]))
        elif kind == "PartitionChangeRecord":
            topic = topics[f["topic"]]
            p = f["partition"]
            topic.partitions[p] = replace(
                topic.partitions[p], leader=f["leader"], isr=tuple(f["isr"]),
                leader_epoch=f["leader_epoch"], partition_epoch=f["partition_epoch"],
                elr=tuple(f.get("elr", ())), last_known_elr=tuple(f.get("last_known_elr", ())))
        elif kind == "ClearElrRecord":
            topic = topics[f["topic"]]
            topic.partitions[:] = [replace(p, elr=(), last_known_elr=())
                                   for p in topic.partitions]
        elif kind == "RemoveTopicRecord":
            topics.pop(f["name"], None)
            removed.add(f["topic_id"])
        elif kind == "ProducerIdsRecord":
            controller.next_producer_id = max(controller.next_producer_id,
                                              f["next_producer_id"])
    controller.log[:] = list(records)
    return removed
