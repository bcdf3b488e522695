"""Kafka Connect's file connectors in miniature, run from their real configurations.

Apache Kafka ships two example connectors, FileStreamSource (each new line of a file
becomes a record) and FileStreamSink (each record's value becomes a line of a file). A
connector is started by POSTing its configuration to a Connect worker's REST API:

    POST /connectors
    {"name": "orders-file-source",
     "config": {"connector.class": "FileStreamSource", "tasks.max": "1",
                "file": "/data/orders.txt", "topic": "orders"}}

`FileSource` and `FileSink` take that same JSON and do what the connectors' tasks do,
with the framework's parts that matter for a course modelled as Connect does them:

- converters: `value.converter` turns the connector's value into bytes.
  `org.apache.kafka.connect.storage.StringConverter` writes the string;
  `org.apache.kafka.connect.json.JsonConverter` writes JSON, wrapped in a
  {"schema": ..., "payload": ...} envelope unless `value.converter.schemas.enable` is
  false;
- source offsets: a source task reports, with every record, where it came from (its
  *source partition*, {"filename": ...}) and how far it got (its *source offset*,
  {"position": ...}); the worker writes the latest one to the compacted topic
  `offset.storage.topic` (connect-offsets) with the key [connector name, source
  partition], both as JSON, and a restarted task asks for it to resume;
- sink offsets: a sink task is a consumer in the group `connect-<connector name>`; the
  worker commits its offsets after the task has written the records (at least once).

Connect commits offsets every `offset.flush.interval.ms` (1 minute); here the source
writes its offset after each poll's records are acknowledged and the sink commits after
each poll, unless told to crash first.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka.structs import OffsetAndMetadata, TopicPartition

if TYPE_CHECKING:
    from ..cluster import Cluster

__all__ = ["FileSink", "FileSource", "connect_offsets", "convert", "parse_value"]

SOURCE_CLASSES = ("FileStreamSource", "FileStreamSourceConnector",
                  "org.apache.kafka.connect.file.FileStreamSourceConnector")
SINK_CLASSES = ("FileStreamSink", "FileStreamSinkConnector",
                "org.apache.kafka.connect.file.FileStreamSinkConnector")
JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
STRING_CONVERTER = "org.apache.kafka.connect.storage.StringConverter"
OFFSETS_TOPIC = "connect-offsets"
OFFSETS_PARTITIONS = 25  # offset.storage.partitions' default


def _compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def convert(config: dict[str, str], value: str | None) -> bytes | None:
    """A string value as the configured value.converter writes it."""
    if value is None:
        return None
    converter = config.get("value.converter", JSON_CONVERTER)
    if converter == STRING_CONVERTER:
        return value.encode()
    if converter != JSON_CONVERTER:
        raise ValueError(f"this model knows the String and Json converters, not {converter}")
    if config.get("value.converter.schemas.enable", "true") == "false":
        return _compact(value)
    return _compact({"schema": {"type": "string", "optional": False}, "payload": value})


def parse_value(config: dict[str, str], data: bytes | None) -> str | None:
    """The reverse: what a sink task gets from the converter."""
    if data is None:
        return None
    if config.get("value.converter", JSON_CONVERTER) == STRING_CONVERTER:
        return data.decode()
    value = json.loads(data)
    if config.get("value.converter.schemas.enable", "true") == "false":
        return value
    return value["payload"]


def _check(request: dict[str, Any], classes: tuple[str, ...], needs: tuple[str, ...]) -> dict:
    config = request.get("config", {})
    if "name" not in request or config.get("connector.class") not in classes:
        raise ValueError(f"a request needs a name and a connector.class of {classes[0]}")
    missing = [k for k in needs if k not in config]
    if missing:
        raise ValueError(f"connector {request['name']}: missing required config {missing}")
    if int(config.get("tasks.max", "1")) < 1:
        raise ValueError("tasks.max must be at least 1")
    return config


def connect_offsets(cluster: Cluster, topic: str = OFFSETS_TOPIC) -> dict[str, Any]:
    """The latest value of every key in the offsets topic, as the text Connect writes:
    '["connector",{"filename":"..."}]' -> {"position": ...}."""
    if topic not in cluster.list_topics():
        return {}
    consumer = cluster.consumer(auto_offset_reset="earliest", enable_auto_commit=False)
    tps = [TopicPartition(topic, p) for p in range(cluster.partitions_for(topic))]
    consumer.assign(tps)
    ends = consumer.end_offsets(tps)
    latest: dict[str, Any] = {}
    while any(consumer.position(tp) < ends[tp] for tp in tps):
        for records in consumer.poll(timeout_ms=200).values():
            for r in records:
                latest[r.key.decode()] = None if r.value is None else json.loads(r.value)
    consumer.close()
    return {k: v for k, v in latest.items() if v is not None}


class FileSource:
    """FileStreamSource's task: new lines of `file` become records of `topic`."""

    def __init__(self, cluster: Cluster, request: dict[str, Any]) -> None:
        self.config = _check(request, SOURCE_CLASSES, ("file", "topic"))
        self.name = request["name"]
        self.cluster = cluster
        self.file = Path(self.config["file"])
        self.topic = self.config["topic"]
        self.batch_size = int(self.config.get("batch.size", "2000"))
        self.offsets_topic = self.config.get("offsets.storage.topic", OFFSETS_TOPIC)
        if self.offsets_topic not in cluster.list_topics():
            cluster.create_topic(self.offsets_topic, partitions=OFFSETS_PARTITIONS,
                                 replication_factor=min(3, len(cluster.brokers)),
                                 config={"cleanup.policy": "compact"})
        self.partition_key = _compact([self.name, {"filename": str(self.file)}]).decode()
        stored = connect_offsets(cluster, self.offsets_topic).get(self.partition_key)
        self.position = stored["position"] if stored else 0  # bytes of the file read
        self._producer = cluster.producer(linger_ms=0)

    def poll(self) -> int:
        """Send the complete lines written since the last position (up to batch.size),
        then store the new source offset; returns how many records were sent."""
        data = self.file.read_bytes()[self.position:] if self.file.exists() else b""
        lines = data.split(b"\n")[:-1][:self.batch_size]  # only complete lines
        futures = [self._producer.send(self.topic, value=convert(self.config, line.decode()))
                   for line in lines]
        for f in futures:
            f.get()
        if lines:
            self.position += sum(len(line) + 1 for line in lines)
            self._producer.send(self.offsets_topic, key=self.partition_key.encode(),
                                value=_compact({"position": self.position})).get()
        return len(lines)


class FileSink:
    """FileStreamSink's task: each record's value is appended to `file` as a line."""

    def __init__(self, cluster: Cluster, request: dict[str, Any]) -> None:
        self.config = _check(request, SINK_CLASSES, ("file", "topics"))
        self.name = request["name"]
        self.file = Path(self.config["file"])
        self.group_id = f"connect-{self.name}"
        topics = [t.strip() for t in self.config["topics"].split(",")]
        self.consumer = cluster.consumer(*topics, group_id=self.group_id,
                                         client_id=self.group_id, auto_offset_reset="earliest",
                                         enable_auto_commit=False)

    def poll(self, timeout_ms: int = 1_000, crash_before_commit: bool = False) -> int:
        """One round: poll, append every value to the file, then commit the offsets
        (unless the worker crashes first: after a round that got records, the consumer is
        gone). Returns how many lines were written."""
        batch = self.consumer.poll(timeout_ms=timeout_ms)
        lines = [parse_value(self.config, r.value) for rs in batch.values() for r in rs]
        with self.file.open("a") as out:
            out.writelines(f"{line}\n" for line in lines)
        if crash_before_commit and batch:
            self.consumer.crash()
        elif batch:
            self.consumer.commit({tp: OffsetAndMetadata(rs[-1].offset + 1, "", None)
                                  for tp, rs in batch.items()})
        return len(lines)

    def run(self, rounds: int = 10) -> int:
        return sum(self.poll() for _ in range(rounds))
