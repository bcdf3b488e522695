"""The ecosystem lesson's models: Connect's file connectors, the schema registry with
Avro, and the Streams word count with its changelog."""

from __future__ import annotations

import io
import json
from pathlib import Path

import fastavro
import pytest

from minikafka import Cluster
from minikafka.course.connect import FileSink, FileSource, connect_offsets, convert, parse_value
from minikafka.course.schema_registry import (
    IncompatibleSchemaError,
    SchemaRegistry,
    deserialize,
    problems,
    serialize,
)
from minikafka.course.streams import WordCount
from minikafka.viz import pipeline_view
from minikafka.viz.ecosystem import connect_state, streams_state

# -- Connect ---------------------------------------------------------------------------

def _source(path: Path, **config: str) -> dict:
    return {"name": "src", "config": {"connector.class": "FileStreamSource", "tasks.max": "1",
                                      "file": str(path), "topic": "lines", **config}}


def test_converters_write_what_connect_writes() -> None:
    # Checked against Kafka 4.4.0's JsonConverter: compact JSON, a string schema envelope.
    assert convert({}, "a b") == b'{"schema":{"type":"string","optional":false},"payload":"a b"}'
    plain = {"value.converter.schemas.enable": "false"}
    assert convert(plain, "a b") == b'"a b"' and parse_value(plain, b'"a b"') == "a b"
    text = {"value.converter": "org.apache.kafka.connect.storage.StringConverter"}
    assert convert(text, "a b") == b"a b" and parse_value(text, b"a b") == "a b"
    assert parse_value({}, convert({}, "x")) == "x"


def test_file_source_stores_its_offset_and_resumes(tmp_path: Path) -> None:
    cluster = Cluster(brokers=3, seed=5)
    cluster.create_topic("lines", partitions=1, replication_factor=3)
    path = tmp_path / "in.txt"
    path.write_text("one\ntwo\nthr")
    assert FileSource(cluster, _source(path)).poll() == 2
    key = json.dumps(["src", {"filename": str(path)}], separators=(",", ":"))
    assert connect_offsets(cluster) == {key: {"position": 8}}
    assert cluster.partitions_for("connect-offsets") == 25
    assert cluster.topic_config("connect-offsets")["cleanup.policy"] == "compact"
    path.write_text("one\ntwo\nthree\n")
    again = FileSource(cluster, _source(path))
    assert again.position == 8 and again.poll() == 1 and again.poll() == 0
    with pytest.raises(ValueError, match="missing required config"):
        FileSource(cluster, {"name": "x", "config": {"connector.class": "FileStreamSource"}})


def test_file_sink_replays_after_a_crash_before_commit(tmp_path: Path) -> None:
    cluster = Cluster(brokers=3, seed=5)
    cluster.create_topic("lines", partitions=1, replication_factor=3)
    (tmp_path / "in.txt").write_text("a\nb\nc\n")
    source = FileSource(cluster, _source(tmp_path / "in.txt"))
    source.poll()
    request = {"name": "snk", "config": {"connector.class": "FileStreamSink",
                                         "file": str(tmp_path / "out.txt"), "topics": "lines"}}
    first = FileSink(cluster, request)
    assert first.group_id == "connect-snk"
    written = 0
    while not written:
        written = first.poll(crash_before_commit=True)
    second = FileSink(cluster, request)
    second.run(rounds=60)
    lines = (tmp_path / "out.txt").read_text().splitlines()
    assert sorted(set(lines)) == ["a", "b", "c"] and len(lines) == 3 + written
    state = connect_state(cluster, source, second)
    assert [s["kind"] for s in state["stages"]] == ["store", "connector", "topic", "connector",
                                                    "store"]
    assert "6 lines" in state["stages"][-1]["lines"][0] or len(lines) != 6
    assert pipeline_view(state).source.count("->") == 5  # four steps and the offsets edge


# -- the schema registry -----------------------------------------------------------------

V1 = {"type": "record", "name": "Order", "fields": [
    {"name": "id", "type": "long"}, {"name": "item", "type": "string"},
    {"name": "qty", "type": "int"}, {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "state", "type": {"type": "enum", "name": "State", "symbols": ["NEW", "PAID"]}}]}


def _with(fields: list, drop: str | None = None) -> dict:
    return {**V1, "fields": [f for f in V1["fields"] if f["name"] != drop] + fields}


VARIANTS = {
    "add with default": _with([{"name": "currency", "type": "string", "default": "EUR"}]),
    "add without default": _with([{"name": "coupon", "type": "string"}]),
    "drop a field": _with([], drop="item"),
    "int to long": {**V1, "fields": [
        {**f, "type": "long"} if f["name"] == "qty" else f for f in V1["fields"]]},
    "long to int": {**V1, "fields": [
        {**f, "type": "int"} if f["name"] == "id" else f for f in V1["fields"]]},
    "optional union": {**V1, "fields": [
        {**f, "type": ["null", "string"]} if f["name"] == "item" else f for f in V1["fields"]]},
    "fewer enum symbols": {**V1, "fields": [
        {**f, "type": {"type": "enum", "name": "State", "symbols": ["NEW"]}}
        if f["name"] == "state" else f for f in V1["fields"]]},
    "array of ints": {**V1, "fields": [
        {**f, "type": {"type": "array", "items": "int"}} if f["name"] == "tags" else f
        for f in V1["fields"]]},
}
SAMPLE = {"id": 7, "item": "tea", "qty": 2, "tags": ["x"], "state": "PAID", "currency": "USD",
          "coupon": "C"}


def _fastavro_reads(reader: dict, writer: dict) -> bool:
    """Whether fastavro resolves a record written with `writer` into `reader`."""
    buf = io.BytesIO()
    w = fastavro.parse_schema(writer)
    value = {f["name"]: SAMPLE[f["name"]] for f in w["fields"]}
    # Values that take the writer's new branch, item type or symbol, where it has one.
    types = {f["name"]: f["type"] for f in w["fields"]}
    if types.get("item") == ["null", "string"]:
        value["item"] = None
    if types["tags"]["items"] == "int":
        value["tags"] = [1]
    if types["state"]["symbols"] == ["NEW"]:
        value["state"] = "NEW"
    fastavro.schemaless_writer(buf, w, value)
    try:
        fastavro.schemaless_reader(io.BytesIO(buf.getvalue()), w, fastavro.parse_schema(reader))
        return True
    except Exception:
        return False


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_problems_agree_with_fastavros_resolution(name: str) -> None:
    new, old = fastavro.parse_schema(VARIANTS[name]), fastavro.parse_schema(V1)
    for reader, writer in ((new, old), (old, new)):
        assert (not problems(reader, writer)) == _fastavro_reads(reader, writer), (
            name, problems(reader, writer))


def test_register_checks_the_subjects_rule_and_the_wire_format() -> None:
    registry = SchemaRegistry()
    data = serialize(registry, "orders", V1, SAMPLE)
    assert data[:5] == b"\x00\x00\x00\x00\x01" and registry.versions("orders-value") == [1]
    assert serialize(registry, "orders", V1, SAMPLE)[:5] == data[:5]  # same schema, same id
    with pytest.raises(IncompatibleSchemaError, match="coupon"):
        registry.register("orders-value", VARIANTS["add without default"])
    assert registry.register("orders-value", VARIANTS["add with default"]) == 2
    assert deserialize(registry, data, VARIANTS["add with default"])["currency"] == "EUR"
    # FORWARD: readers of the last version must read new data: a new field is fine, a
    # dropped field that has no default there is not.
    registry.set_compatibility("orders-value", "FORWARD")
    assert registry.check("orders-value", _with([{"name": "currency", "type": "string",
                                                  "default": "EUR"},
                                                 {"name": "n", "type": "int"}])) == []
    assert "'item'" in registry.check("orders-value", VARIANTS["drop a field"])[0]
    registry.set_compatibility("orders-value", "FULL")
    assert registry.check("orders-value", _with([{"name": "n", "type": "int"}]))
    registry.set_compatibility("orders-value", "NONE")
    assert registry.register("orders-value", VARIANTS["long to int"]) == 3
    with pytest.raises(ValueError, match="magic"):
        deserialize(registry, b"\x01" + data[1:])


# -- Streams -------------------------------------------------------------------------------

def test_word_count_restores_its_store_from_the_changelog() -> None:
    cluster = Cluster(brokers=3, seed=8)
    cluster.create_topic("sentences", partitions=2, replication_factor=3)
    producer = cluster.producer()
    for line in ("b a b", "c b", "a"):
        producer.send("sentences", value=line.encode())
    producer.flush()
    app = WordCount(cluster, application_id="wc")
    assert app.run(rounds=20) == 6 and app.counts() == {"a": 2, "b": 3, "c": 1}
    assert cluster.topic_config("wc-counts-changelog")["cleanup.policy"] == "compact"
    assert cluster.partitions_for("wc-counts-repartition") == 2
    # Each word lives in one task: the partition its key hashes to.
    assert sum(len(t) for t in app.store.values()) == 3
    before = app.counts()
    app.crash()
    again = WordCount(cluster, application_id="wc")
    assert again.restored == 6 and again.counts() == before
    producer.send("sentences", value=b"c").get()
    again.run(rounds=100)
    assert again.counts() == {"a": 2, "b": 3, "c": 2}
    state = streams_state(again)
    assert "4 words" not in state["side"][0]["lines"][0] and "3 words, 7 counted" in \
        state["side"][0]["lines"][0]
