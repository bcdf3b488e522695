"""Spark's Kafka sources: the Python one (minikafka.spark) and Spark's own JVM connector.

Without Spark: option parsing, offset JSON, planning (Spark's rate limit, range
calculator and data-loss rules) against a fake cluster, the record decoder against
kafka-python's own decoder, and which jars a session gets for the JVM connector. With Spark
(one session for the module, local[2], against minikafka's server on free loopback ports),
the same reads through both sources, `kafka-python` and Spark's `format("kafka")` (fetched
from Maven, so marked real_kafka; it reads with Kafka's Java client, a test of minikafka's
wire protocol): batch reads, offsets JSON, minPartitions, streaming with
maxOffsetsPerTrigger and a restart from the checkpoint, failOnDataLoss both ways,
read_committed, headers, and choosing the source.
"""
from __future__ import annotations

import json
import pickle
import struct
import time
from datetime import UTC, datetime, timedelta

import pytest
from crc32c import crc32c
from hypothesis import given
from hypothesis import strategies as st
from kafka import KafkaAdminClient, KafkaProducer
from kafka.errors import CorruptRecordError
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.structs import TopicPartition
from pyspark.sql.datasource import CaseInsensitiveDict, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

from minikafka.core.records import RecordBatch, control_batch
from minikafka.spark import connector
from minikafka.spark.connector import (
    PYTHON_FORMAT,
    connector_jars,
    jvm_connector_loaded,
    kafka_format,
)
from minikafka.spark.offsets import from_json, parse_offsets_json, to_json
from minikafka.spark.options import Assign, Subscribe, SubscribePattern, parse_options
from minikafka.spark.planning import (
    DataLossError,
    OffsetRange,
    plan_ranges,
    rate_limit,
    resolve_offsets,
    split_ranges,
)
from minikafka.spark.records import decode_batches
from minikafka.spark.schema import arrow_schema, kafka_schema
from minikafka.spark.source import KafkaInputPartition, KafkaSource, KafkaStreamReader
from minikafka.wire.batches import encode_batch

SERVERS = "127.0.0.1:1"  # never dialled by the tests without Spark

pytestmark = pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas")


def tp(topic: str, p: int) -> TopicPartition:
    return TopicPartition(topic, p)


# --------------------------------------------------------------------------- options

def test_options_arrive_case_insensitive_with_lower_case_keys():
    # What Spark hands a Python source: a case-insensitive map, keys lower-cased.
    opts = CaseInsensitiveDict({"kafka.bootstrap.servers": SERVERS, "subscribe": "a, b",
                                "maxOffsetsPerTrigger": "500", "failOnDataLoss": "FALSE",
                                "kafka.isolation.level": "read_committed"})
    parsed = parse_options(opts, streaming=True)
    assert parsed.subscription == Subscribe(("a", "b"))
    assert parsed.max_offsets_per_trigger == 500
    assert parsed.fail_on_data_loss is False
    assert parsed.read_committed
    assert parsed.starting_offsets == "latest"  # the streaming default
    with pytest.warns(UserWarning, match="maxOffsetsPerTrigger is ignored in batch queries"):
        assert parse_options(opts, streaming=False).starting_offsets == "earliest"  # batch
    assert pickle.loads(pickle.dumps(parsed)) == parsed


@pytest.mark.parametrize("options, streaming, message", [
    ({"subscribe": "a"}, True, "'kafka.bootstrap.servers' must be specified"),
    ({"kafka.bootstrap.servers": SERVERS}, True, "One of the following options"),
    ({"kafka.bootstrap.servers": SERVERS, "subscribe": "a", "assign": '{"a":[0]}'}, True,
     "Only one of the following options"),
    ({"kafka.bootstrap.servers": SERVERS, "subscribe": "a", "startingOffsets": "latest"},
     False, "starting offset can't be latest for batch queries"),
    ({"kafka.bootstrap.servers": SERVERS, "subscribe": "a",
      "startingOffsets": '{"a":{"0":-1}}'}, False, "can't be latest"),
    ({"kafka.bootstrap.servers": SERVERS, "subscribe": "a", "endingOffsets": "earliest"},
     False, "ending offset can't be earliest"),
    ({"kafka.bootstrap.servers": SERVERS, "subscribe": "a", "endingOffsets": "latest"},
     True, "Ending offset not valid in streaming queries"),
    ({"kafka.bootstrap.servers": SERVERS, "subscribe": "a", "kafka.auto.offset.reset": "x"},
     True, "set the source option 'startingOffsets'"),
    ({"kafka.bootstrap.servers": SERVERS, "subscribe": "a", "kafka.value.deserializer": "x"},
     True, "Values are always read as bytes"),
    ({"kafka.bootstrap.servers": SERVERS, "subscribe": "a", "maxOffsetsPerTrigger": "0"},
     True, "'maxOffsetsPerTrigger' must be a positive integer"),
    ({"kafka.bootstrap.servers": SERVERS, "assign": "[0, 1]"}, True, "Expected e.g."),
    ({"kafka.bootstrap.servers": SERVERS, "subscribePattern": "(unclosed"}, True,
     "not a valid pattern"),
    ({"kafka.bootstrap.servers": SERVERS, "subscribe": "a", "startingOffsets": "oldest"},
     True, "must be \"earliest\", \"latest\" or JSON"),
    ({"kafka.bootstrap.servers": SERVERS, "subscribe": "a", "startingTimestamp": "1"}, True,
     "not supported by minikafka's Python Kafka source"),
])
def test_bad_options_say_what_is_wrong(options, streaming, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        parse_options(options, streaming=streaming)


def test_subscriptions_and_kafka_options():
    assign = parse_options({"kafka.bootstrap.servers": SERVERS,
                            "assign": '{"b": [1, 0], "a": [2]}'}, streaming=True)
    assert assign.subscription == Assign((("a", 2), ("b", 0), ("b", 1)))
    pattern = parse_options({"kafka.bootstrap.servers": SERVERS, "subscribePattern": "truck.*",
                             "kafka.request.timeout.ms": "5000",
                             "kafka.check.crcs": "false"}, streaming=True)
    assert isinstance(pattern.subscription, SubscribePattern)
    assert pattern.subscription.matches("trucks") and not pattern.subscription.matches("my-trucks")
    assert pattern.client_config() == {"bootstrap_servers": [SERVERS], "check_crcs": False,
                                       "request_timeout_ms": 5000}
    with pytest.warns(UserWarning, match="no kafka-python equivalent"):
        parse_options({"kafka.bootstrap.servers": SERVERS, "subscribe": "a",
                       "kafka.sasl.jaas.config": "x"}, streaming=True)


def test_offsets_json_round_trip_has_string_partition_keys():
    offsets = {tp("b", 10): 3, tp("a", 2): 7, tp("a", 0): 0}
    text = json.dumps(to_json(offsets))
    assert text == '{"a": {"0": 0, "2": 7}, "b": {"10": 3}}'
    assert from_json(json.loads(text)) == offsets
    assert parse_offsets_json('{"a":{"0":-2,"1":-1}}') == {tp("a", 0): -2, tp("a", 1): -1}
    with pytest.raises(ValueError):
        parse_offsets_json('{"a":{"0":-3}}')
    with pytest.raises(ValueError):
        from_json({"a": {"0": "12"}})


# --------------------------------------------------------------------------- planning

def test_resolve_offsets_json_must_name_every_partition():
    parts = {tp("a", 0), tp("a", 1)}
    earliest, latest = {tp("a", 0): 5, tp("a", 1): 0}, {tp("a", 0): 50, tp("a", 1): 40}
    assert resolve_offsets("earliest", parts, earliest, latest, option="x") == earliest
    assert resolve_offsets({tp("a", 0): -2, tp("a", 1): 17}, parts, earliest, latest,
                           option="x") == {tp("a", 0): 5, tp("a", 1): 17}
    with pytest.raises(ValueError, match="you must specify all TopicPartitions"):
        resolve_offsets({tp("a", 0): -2}, parts, earliest, latest, option="startingOffsets")


def test_rate_limit_shares_by_backlog_and_does_not_starve_small_partitions():
    start = {tp("a", 0): 0, tp("a", 1): 0, tp("a", 2): 100}
    latest = {tp("a", 0): 1000, tp("a", 1): 1, tp("a", 2): 100, tp("a", 3): 10}
    end = rate_limit(100, start, latest, earliest_of_new={tp("a", 3): 0})
    # backlog 1000 + 1 + 0 + 10 = 1011: shares floor(98.9), ceil(0.099), none, floor(0.989) -> 1
    assert end == {tp("a", 0): 98, tp("a", 1): 1, tp("a", 2): 100, tp("a", 3): 1}
    assert rate_limit(5, {tp("a", 0): 7}, {tp("a", 0): 7}, {}) == {tp("a", 0): 7}


def test_plan_ranges_reads_new_partitions_from_earliest_and_reports_losses():
    losses: list[str] = []
    ranges = plan_ranges(
        start={tp("a", 0): 10, tp("a", 1): 20, tp("gone", 0): 3, tp("a", 4): 9},
        end={tp("a", 0): 15, tp("a", 1): 20, tp("a", 2): 4, tp("a", 3): 8, tp("a", 4): 2},
        earliest_of_new={tp("a", 2): 0, tp("a", 3): 5}, report_data_loss=losses.append)
    assert ranges == [OffsetRange("a", 0, 10, 15), OffsetRange("a", 2, 0, 4),
                      OffsetRange("a", 3, 5, 8)]
    assert len(losses) == 3
    assert "gone-0 is gone" in losses[0]
    assert "Added partition a-3 starts from 5 instead of 0" in losses[1]
    assert "a-4's offset was changed from 9 to 2" in losses[2]


def test_split_ranges_like_sparks_range_calculator():
    one = [OffsetRange("t", 0, 1, 4)]
    assert split_ranges(one, None) == one
    assert split_ranges(one, 3) == [OffsetRange("t", 0, 1, 2), OffsetRange("t", 0, 2, 3),
                                    OffsetRange("t", 0, 3, 4)]
    two = [OffsetRange("t", 0, 0, 100), OffsetRange("t", 1, 0, 10), OffsetRange("t", 2, 5, 5)]
    split = split_ranges(two, 4)
    # round(100 / 110 * 4) = 4 parts of the big range, max(round(0.36), 1) = 1 of the small
    # one; the empty range is dropped.
    assert [r.size for r in split] == [25, 25, 25, 25, 10]
    assert sum(r.size for r in split) == 110


class FakeCluster:
    """An OffsetReader over offsets the test sets; counts its calls."""

    def __init__(self, earliest: dict, latest: dict) -> None:
        self.earliest_offsets, self.latest_offsets = earliest, latest
        self.calls = 0
        self.lock = __import__("threading").Lock()  # does not pickle, like a socket

    def partitions(self):
        return set(self.latest_offsets)

    def earliest(self, partitions):
        self.calls += 1
        return {p: self.earliest_offsets[p] for p in partitions}

    def latest(self, partitions):
        self.calls += 1
        return {p: self.latest_offsets[p] for p in partitions}


def stream_reader(cluster: FakeCluster, **options: str) -> KafkaStreamReader:
    opts = {"kafka.bootstrap.servers": SERVERS, "subscribe": "a", **options}
    return KafkaStreamReader(parse_options(opts, streaming=True), kafka_schema(), cluster)


def json_trip(offsets: dict) -> dict:
    """What Spark does to an offset between two calls: JSON out and back in."""
    return json.loads(json.dumps(offsets))


def test_stream_reader_plans_micro_batches_from_checkpointed_json():
    cluster = FakeCluster({tp("a", 0): 0, tp("a", 1): 0}, {tp("a", 0): 300, tp("a", 1): 100})
    reader = stream_reader(cluster, startingOffsets="earliest", maxOffsetsPerTrigger="200")
    start = json_trip(reader.initialOffset())
    assert start == {"a": {"0": 0, "1": 0}}
    limit = reader.getDefaultReadLimit()
    assert limit == ReadMaxRows(200)
    end = json_trip(reader.latestOffset(start, limit))
    assert end == {"a": {"0": 150, "1": 50}}
    parts = reader.partitions(start, end)
    assert [p.value for p in parts] == [OffsetRange("a", 0, 0, 150), OffsetRange("a", 1, 0, 50)]
    assert all(isinstance(p, KafkaInputPartition) for p in parts)
    # A partition added between batches is read from its earliest offset.
    cluster.earliest_offsets[tp("a", 2)] = 0
    cluster.latest_offsets[tp("a", 2)] = 7
    end2 = json_trip(reader.latestOffset(end, ReadAllAvailable()))
    assert end2 == {"a": {"0": 300, "1": 100, "2": 7}}
    assert [p.value for p in reader.partitions(end, end2)] == [
        OffsetRange("a", 0, 150, 300), OffsetRange("a", 1, 50, 100), OffsetRange("a", 2, 0, 7)]
    assert reader.reportLatestOffset() == end2


def test_available_now_stops_at_the_offsets_seen_when_it_started():
    cluster = FakeCluster({tp("a", 0): 0}, {tp("a", 0): 10})
    reader = stream_reader(cluster, startingOffsets="latest")
    start = json_trip(reader.initialOffset())
    assert start == {"a": {"0": 10}}
    reader.prepareForTriggerAvailableNow()
    cluster.latest_offsets[tp("a", 0)] = 99  # arrives after the query started
    assert reader.latestOffset(start, ReadAllAvailable()) == {"a": {"0": 10}}


def test_data_loss_fails_the_plan_unless_failondataloss_is_false():
    cluster = FakeCluster({tp("a", 0): 0}, {tp("a", 0): 5})
    with pytest.raises(DataLossError, match='set the source option "failOnDataLoss"'):
        stream_reader(cluster).partitions({"a": {"0": 9}}, {"a": {"0": 5}})
    assert stream_reader(cluster, failOnDataLoss="false").partitions(
        {"a": {"0": 9}}, {"a": {"0": 5}}) == []


def test_readers_pickle_without_their_cluster_connection():
    cluster = FakeCluster({tp("a", 0): 0}, {tp("a", 0): 5})
    reader = stream_reader(cluster)
    reader.initialOffset()
    copy = pickle.loads(pickle.dumps(reader))
    assert copy.options == reader.options and copy._offset_reader is None
    source = KafkaSource(CaseInsensitiveDict({"kafka.bootstrap.servers": SERVERS,
                                              "subscribe": "a", "includeHeaders": "true"}))
    assert source.schema() == kafka_schema(include_headers=True)
    batch_reader = pickle.loads(pickle.dumps(source.reader(source.schema())))
    assert list(batch_reader.read(InputPartition(None))) == []


# --------------------------------------------------------------------------- records

SCHEMA = arrow_schema(kafka_schema())
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def wire(base_offset: int, records, *, compression: int = 0) -> bytes:
    """A v2 batch from kafka-python's own builder, at base_offset."""
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=compression,
                                        is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1,
                                        batch_size=1 << 30)
    for delta, (ts, key, value) in enumerate(records):
        builder.append(delta, timestamp=ts, key=key, value=value, headers=[])
    buf = bytearray(builder.build())
    struct.pack_into(">q", buf, 0, base_offset)
    return bytes(buf)


def at(base_offset: int, batch: RecordBatch) -> bytes:
    buf = bytearray(encode_batch(batch))
    struct.pack_into(">q", buf, 0, base_offset)
    return bytes(buf)


def reference(buf: bytes, start: int, until: int) -> list[tuple]:
    """kafka-python's reading of the same bytes."""
    out, pos = [], 0
    while pos + 61 <= len(buf):
        length = struct.unpack_from(">i", buf, pos + 8)[0]
        batch = DefaultRecordBatch(buf[pos:pos + 12 + length])
        if not batch.is_control_batch:
            out += [(r.key, r.value, r.offset, r.timestamp * 1000, batch.timestamp_type)
                    for r in batch if start <= r.offset < until]
        pos += 12 + length
    return out


def decoded_rows(buf: bytes, start: int = 0, until: int = 1 << 62, **kw) -> list[tuple]:
    d = decode_batches(buf, topic="t", partition=3, start=start, until=until, schema=SCHEMA, **kw)
    if d.batch is None:
        return []
    cols = d.batch.to_pydict()
    assert set(cols["topic"]) == {"t"} and set(cols["partition"]) == {3}
    return [(k, v, o, (ts - EPOCH) // timedelta(microseconds=1), tt) for k, v, o, ts, tt in
            zip(cols["key"], cols["value"], cols["offset"], cols["timestamp"],
                cols["timestampType"])]


record = st.tuples(st.integers(0, 2**41), st.none() | st.binary(max_size=300),
                   st.none() | st.binary(max_size=300))


@given(batches=st.lists(st.tuples(st.lists(record, min_size=1, max_size=40),
                                  st.sampled_from([0, 1, 2, 3, 4])), min_size=1, max_size=4),
       cut=st.tuples(st.integers(0, 60), st.integers(0, 200)))
def test_decoder_agrees_with_kafka_python(batches, cut):
    buf, base = b"", 0
    for records, compression in batches:
        buf += wire(base, records, compression=compression)
        base += len(records)
    start, until = cut[0], cut[0] + cut[1]
    assert decoded_rows(buf, start, until) == reference(buf, start, until)


def test_decoder_long_fields_log_append_time_and_trailing_partial_batch():
    big = [(1_700_000_000_000, b"k" * 9000, b"v" * 70_000), (1_700_000_000_001, None, b"")]
    buf = wire(100, big)
    rows = decoded_rows(buf)
    assert [(len(k or b""), len(v), o) for k, v, o, *_ in rows] == [(9000, 70_000, 100),
                                                                   (0, 0, 101)]
    assert rows[1][0] is None
    # LogAppendTime: every record gets the broker's time (the batch's maxTimestamp).
    stamped = bytearray(wire(0, [(5, b"a", b"1"), (6, b"b", b"2")]))
    attributes = struct.unpack_from(">h", stamped, 21)[0] | 0x08
    struct.pack_into(">h", stamped, 21, attributes)
    struct.pack_into(">q", stamped, 35, 1_234_567)
    struct.pack_into(">I", stamped, 17, crc32c(bytes(stamped[21:])))
    assert [(ts, tt) for *_, ts, tt in decoded_rows(bytes(stamped))] == [
        (1_234_567_000, 1), (1_234_567_000, 1)]
    # A fetch can end inside a batch: the complete ones are read, the next fetch starts after.
    two = wire(0, [(1, b"a", b"1")]) + wire(1, [(2, b"b", b"2")])
    partial = decode_batches(two[:-3], topic="t", partition=0, start=0, until=10, schema=SCHEMA)
    assert partial.batch.num_rows == 1 and partial.next_offset == 1
    corrupt = bytearray(two)
    corrupt[64] ^= 0xFF  # inside the first batch's record
    with pytest.raises(CorruptRecordError, match="CRC"):
        decode_batches(bytes(corrupt), topic="t", partition=0, start=0, until=10, schema=SCHEMA)


def test_decoder_skips_markers_and_aborted_transactions_under_read_committed():
    def txn(records, pid):
        return RecordBatch([(i, 10 + i, k, v, ()) for i, (k, v) in enumerate(records)],
                           producer_id=pid, producer_epoch=0, base_sequence=0,
                           is_transactional=True, first_timestamp=10, max_timestamp=10 + len(records))

    buf = (at(0, txn([(b"a", b"committed")], pid=7))
           + at(1, txn([(b"b", b"aborted"), (b"c", b"aborted")], pid=8))
           + at(3, control_batch(1, 7, 0, 20))    # commit pid 7
           + at(4, control_batch(0, 8, 0, 21))    # abort pid 8
           + at(5, txn([(b"d", b"later")], pid=8)))
    uncommitted = [(k, v, o) for k, v, o, *_ in decoded_rows(buf)]
    assert uncommitted == [(b"a", b"committed", 0), (b"b", b"aborted", 1),
                           (b"c", b"aborted", 2), (b"d", b"later", 5)]
    committed = [(k, o) for k, v, o, *_ in decoded_rows(buf, aborted=[(8, 1)])]
    assert committed == [(b"a", 0), (b"d", 5)]
    # Markers take offsets too: a fetch of only markers still moves on.
    only_markers = decode_batches(at(3, control_batch(1, 7, 0, 20)), topic="t", partition=0,
                                  start=3, until=10, schema=SCHEMA)
    assert only_markers.batch is None and only_markers.next_offset == 4


def test_decoder_headers_take_the_slow_road_with_the_same_rows():
    schema = arrow_schema(kafka_schema(include_headers=True))
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False,
                                        producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                        batch_size=1 << 30)
    builder.append(0, timestamp=1, key=b"k", value=b"v", headers=[("trace", b"42"), ("x", None)])
    builder.append(1, timestamp=2, key=None, value=b"w", headers=[])
    d = decode_batches(bytes(builder.build()), topic="t", partition=0, start=0, until=5,
                       schema=schema, include_headers=True)
    assert d.batch.schema == schema
    assert d.batch.column("headers").to_pylist() == [
        [{"key": "trace", "value": b"42"}, {"key": "x", "value": None}], []]
    assert d.batch.column("key").to_pylist() == [b"k", None]


# --------------------------------------------------------------------------- with Spark

def serve():
    from minikafka.cluster import Cluster

    cluster = Cluster(brokers=3, seed=11, broker_config={"default.replication.factor": 3})
    return cluster.serve(port=0)


@pytest.fixture(scope="module")
def plain_server():
    with serve() as served:
        yield served


@pytest.fixture(scope="module")
def server(fmt):
    """A fresh server for each source: both read the same topics from scratch."""
    with serve() as served:
        yield served


@pytest.fixture(scope="module")
def spark():
    from minikafka.course.spark import spark_session

    session = spark_session("test-spark-source", ui=False)
    yield session
    session.stop()


@pytest.fixture(scope="module", params=["python", pytest.param("jvm", marks=pytest.mark.real_kafka)])
def fmt(request, spark):
    """The format each Spark test reads with: the Python source, then Spark's connector."""
    if request.param == "jvm" and not jvm_connector_loaded(spark):
        pytest.fail("Spark's Kafka connector is not on the session's classpath: "
                    "`minikafka kafka fetch` fetches it")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("MINIKAFKA_SPARK_SOURCE", request.param)
        return kafka_format(spark)


def produce(server, topic: str, partitions: int, records: list[tuple[bytes, bytes]],
            **producer_config) -> list:
    """Create `topic` if needed and produce `records` over the wire; their RecordMetadata."""
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap_servers)
    try:
        if topic not in admin.list_topics():
            from kafka.admin import NewTopic

            admin.create_topics([NewTopic(topic, partitions, 3)])
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=server.bootstrap_servers, acks="all",
                             linger_ms=5, **producer_config)
    try:
        futures = [producer.send(topic, key=k, value=v) for k, v in records]
        producer.flush()
        return [f.get(timeout=30) for f in futures]
    finally:
        producer.close()


def reader(spark, fmt, server, **options):
    r = spark.read.format(fmt).option("kafka.bootstrap.servers", server.bootstrap_servers)
    for key, value in options.items():
        r = r.option(key, value)
    return r.load()



@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.timeout(240)
def test_batch_read_returns_every_record_with_the_kafka_schema(spark, fmt, server):
    assert fmt in (PYTHON_FORMAT, "kafka")
    records = [(b"truck-%d" % (i % 5), b"position %d" % i) for i in range(300)]
    sent = produce(server, "orders", 3, records)
    df = reader(spark, fmt, server, subscribe="orders")
    assert df.schema == kafka_schema()
    rows = df.collect()
    got = {(r["partition"], r["offset"]): (r["key"], r["value"], r["topic"],
                                           int(r["timestamp"].timestamp() * 1000),
                                           r["timestampType"]) for r in rows}
    want = {(m.partition, m.offset): (k, v, "orders", m.timestamp, 0)
            for m, (k, v) in zip(sent, records)}
    assert len(rows) == 300 and got == want
    assert reader(spark, fmt, server, subscribePattern="ord.*").count() == 300


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.timeout(240)
def test_batch_offsets_json_and_min_partitions(spark, fmt, server):
    produce(server, "slices", 3, [(b"%d" % i, b"x") for i in range(90)])
    ends = {r["partition"]: r["n"] for r in reader(spark, fmt, server, subscribe="slices")
            .groupBy("partition").count().withColumnRenamed("count", "n").collect()}
    df = reader(spark, fmt, server, assign='{"slices": [0, 1, 2]}',
                startingOffsets='{"slices": {"0": 2, "1": -2, "2": 5}}',
                endingOffsets=json.dumps({"slices": {"0": 4, "1": -1, "2": ends[2]}}),
                minPartitions="6")
    assert df.rdd.getNumPartitions() >= 6
    counts = {r["partition"]: r["count"] for r in df.groupBy("partition").count().collect()}
    assert counts == {0: 2, 1: ends[1], 2: ends[2] - 5}


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.timeout(240)
def test_stream_rate_limited_and_restarted_reads_each_record_once(spark, fmt, server, tmp_path):
    produce(server, "gps", 3, [(b"t%d" % (i % 4), b"%d" % i) for i in range(240)])

    def run() -> list[dict]:
        query = (spark.readStream.format(fmt)
                 .option("kafka.bootstrap.servers", server.bootstrap_servers)
                 .option("subscribe", "gps").option("startingOffsets", "earliest")
                 .option("maxOffsetsPerTrigger", "100").load()
                 .writeStream.format("parquet").option("path", str(tmp_path / "out"))
                 .option("checkpointLocation", str(tmp_path / "checkpoint"))
                 .trigger(availableNow=True).start())
        query.awaitTermination(180)
        return [p for p in query.recentProgress if p["numInputRows"]]

    first = run()
    assert [p["numInputRows"] for p in first][:2] == [100, 100] or len(first) >= 3
    assert sum(p["numInputRows"] for p in first) == 240
    produce(server, "gps", 3, [(b"t%d" % (i % 4), b"%d" % i) for i in range(240, 300)])
    second = run()
    assert sum(p["numInputRows"] for p in second) == 60  # only what arrived since
    out = spark.read.parquet(str(tmp_path / "out"))
    stats = out.selectExpr("count(*) AS n", "count(DISTINCT partition, offset) AS distinct_n",
                           "count(DISTINCT value) AS values").first()
    assert (stats["n"], stats["distinct_n"], stats["values"]) == (300, 300, 300)


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.timeout(240)
def test_deleted_records_fail_the_query_unless_failondataloss_false(spark, fmt, server):
    produce(server, "aged", 1, [(None, b"%d" % i) for i in range(100)])
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap_servers)
    try:
        admin.delete_records({TopicPartition("aged", 0): 60})  # as retention would
    finally:
        admin.close()
    planned = {"assign": '{"aged": [0]}', "startingOffsets": '{"aged": {"0": 0}}'}
    with pytest.raises(Exception, match="Some data may have been lost"):
        reader(spark, fmt, server, **planned).count()
    rows = reader(spark, fmt, server, failOnDataLoss="false", **planned).select("offset").collect()
    assert sorted(r["offset"] for r in rows) == list(range(60, 100))


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.timeout(240)
def test_read_committed_hides_aborted_transactions_and_headers_come_along(spark, fmt, server):
    cluster = server.cluster
    with cluster.lock:
        cluster.create_topic("payments", partitions=1, replication_factor=3)
        producer = cluster.producer(transactional_id="pay-1", acks="all")
        producer.init_transactions()
        for outcome in ("commit", "abort", "commit"):
            producer.begin_transaction()
            for i in range(5):
                producer.send("payments", key=b"%s-%d" % (outcome.encode(), i), value=b"1",
                              headers=[("outcome", outcome.encode())])
            producer.flush()  # aborting unsent records would keep them off the log
            getattr(producer, f"{outcome}_transaction")()
        producer.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # markers are written asynchronously
        with cluster.lock:
            lso = cluster.leader_replica("payments", 0).last_stable_offset
        if lso >= 17:
            break
        time.sleep(0.05)
    committed = reader(spark, fmt, server, subscribe="payments",
                       **{"kafka.isolation.level": "read_committed", "includeHeaders": "true"})
    rows = committed.selectExpr("CAST(key AS STRING) AS key", "headers").collect()
    assert sorted(r["key"] for r in rows) == sorted(
        [f"commit-{i}" for i in range(5)] * 2)
    assert {(h["key"], h["value"]) for r in rows for h in r["headers"]} == {
        ("outcome", b"commit")}
    everything = reader(spark, fmt, server, subscribe="payments")
    assert everything.count() == 15


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.timeout(120)
def test_kafka_format_names_the_jvm_connector_when_told(spark, monkeypatch):
    monkeypatch.setenv("MINIKAFKA_SPARK_SOURCE", "jvm")
    assert kafka_format(spark) == "kafka"
    monkeypatch.setenv("MINIKAFKA_SPARK_SOURCE", "python")
    assert kafka_format(spark) == PYTHON_FORMAT
    monkeypatch.setenv("MINIKAFKA_SPARK_SOURCE", "auto")
    # auto: the connector when its class loads in the session's JVM (spark_session puts a
    # fetched connector on spark.jars), else the Python source.
    assert kafka_format(spark) == ("kafka" if jvm_connector_loaded(spark) else PYTHON_FORMAT)
    assert jvm_connector_loaded(spark) == any(
        "spark-sql-kafka-0-10" in jar for jar in spark.sparkContext.getConf().get(
            "spark.jars", "").split(","))
    monkeypatch.setattr(connector, "CONNECTOR_CLASS", "org.example.NoSuchProvider")
    assert not jvm_connector_loaded(spark) and kafka_format(spark) == PYTHON_FORMAT
    monkeypatch.setattr(connector, "CONNECTOR_CLASS", "org.apache.spark.sql.SparkSession")
    assert jvm_connector_loaded(spark) and kafka_format(spark) == "kafka"  # a class that loads
    monkeypatch.setenv("MINIKAFKA_SPARK_SOURCE", "nonsense")
    with pytest.raises(ValueError, match="auto, jvm or python"):
        kafka_format(spark)


def test_session_jars_are_the_fetched_connector_unless_spark_has_one(tmp_path, monkeypatch):
    from minikafka.realkafka import jars

    monkeypatch.setenv("MINIKAFKA_CACHE", str(tmp_path / "cache"))
    spark_jars = tmp_path / "pyspark-jars"
    spark_jars.mkdir()
    monkeypatch.setattr(jars, "pyspark_jars", lambda: spark_jars)
    monkeypatch.delenv("MINIKAFKA_SPARK_SOURCE", raising=False)
    assert connector.session_jars() == []  # nothing fetched: the Python source will read
    libs = jars.spark_libs()
    libs.mkdir(parents=True)
    names = [f"spark-sql-kafka-0-10_2.13-{jars.pyspark_version()}.jar", "kafka-clients-3.9.2.jar"]
    for name in names:
        (libs / name).write_bytes(b"")
    assert connector.session_jars() == []  # a fetch without its stamp is unfinished
    (libs.parent / jars.STAMP).write_text("\n".join(names))
    assert [p.name for p in connector.session_jars()] == sorted(names)
    assert connector.fetched_connector() == libs and libs / names[0] in connector_jars()
    monkeypatch.setenv("MINIKAFKA_SPARK_SOURCE", "python")
    assert connector.session_jars() == []
    monkeypatch.setenv("MINIKAFKA_SPARK_SOURCE", "auto")
    (spark_jars / names[0]).write_bytes(b"")  # the Docker image: Spark's jars/ has it
    assert connector.session_jars() == []


def test_the_sessions_jvm_is_reaped_as_soon_as_it_exits():
    """A Jupyter kernel that shuts down terminates its children and waits until none is
    left: the JVM, terminated but unreaped, kept every Spark lab's kernel 2.5 s longer."""
    import subprocess
    import threading
    from types import SimpleNamespace

    from minikafka.course import spark as lab_spark

    jvm = subprocess.Popen(["sleep", "60"])  # stands in for pyspark's gateway process
    session = SimpleNamespace(sparkContext=SimpleNamespace(_gateway=SimpleNamespace(proc=jvm)))
    reapers = sum(t.name == "spark-jvm-reaper" for t in threading.enumerate())
    lab_spark._reap_when_it_ends(session)
    lab_spark._reap_when_it_ends(session)  # getOrCreate's same JVM: one thread waits on it
    assert sum(t.name == "spark-jvm-reaper" for t in threading.enumerate()) == reapers + 1
    jvm.terminate()  # what the kernel does to its children
    deadline = time.monotonic() + 30
    while jvm.returncode is None and time.monotonic() < deadline:  # read, never polled here
        time.sleep(0.05)
    assert jvm.returncode == -15


def test_session_jars_fetch_the_connector_when_the_jvm_one_is_asked_for(tmp_path, monkeypatch):
    from minikafka.realkafka import jars

    monkeypatch.setenv("MINIKAFKA_CACHE", str(tmp_path))
    monkeypatch.setattr(jars, "pyspark_jars", lambda: None)
    monkeypatch.setenv("MINIKAFKA_SPARK_SOURCE", "jvm")
    monkeypatch.setattr(jars.shutil, "which", lambda name: None)  # no Maven here
    with pytest.raises(jars.FetchError, match="./setup.sh --real-kafka"):
        connector.session_jars()


@pytest.mark.real_kafka
@pytest.mark.timeout(600)
def test_the_fetched_connector_is_what_packages_adds_to_spark():
    """From Maven (once): the connector at pyspark's version and the three jars Spark lacks;
    no SLF4J binding, none of Kafka's broker jars (those are kafka_libs', for the nodes)."""
    from minikafka.realkafka import jars

    libs = jars.fetch_spark()
    assert libs == jars.spark_libs() and libs.parent != jars.kafka_libs().parent
    assert sorted(jars.artifact_of(p.name) for p in libs.glob("*.jar")) == [
        "commons-pool2", "kafka-clients", "spark-sql-kafka-0-10_2.13",
        "spark-token-provider-kafka-0-10_2.13"]
    assert (libs / f"spark-sql-kafka-0-10_2.13-{jars.pyspark_version()}.jar").exists()
    assert any(jar.parent == libs for jar in connector_jars())


def test_fetched_connector_leaves_out_what_spark_ships(tmp_path, monkeypatch):
    from minikafka.realkafka import jars

    spark_jars, libs = tmp_path / "jars", tmp_path / "libs"
    spark_jars.mkdir()
    libs.mkdir()
    for name in ("slf4j-api-2.0.17.jar", "snappy-java-1.1.10.8.jar", "zstd-jni-1.5.7-7.jar"):
        (spark_jars / name).write_bytes(b"spark")
    for name in ("spark-sql-kafka-0-10_2.13-4.2.0.jar", "kafka-clients-3.9.2.jar",
                 "commons-pool2-2.13.1.jar", "slf4j-api-1.7.36.jar", "snappy-java-1.1.10.5.jar",
                 "zstd-jni-1.5.6-4.jar"):
        (libs / name).write_bytes(b"maven")
    monkeypatch.setattr(jars, "pyspark_jars", lambda: spark_jars)
    jars._without_spark_jars(libs, maven=None)
    assert sorted(p.name for p in libs.glob("*.jar")) == [
        "commons-pool2-2.13.1.jar", "kafka-clients-3.9.2.jar",
        "spark-sql-kafka-0-10_2.13-4.2.0.jar"]
    assert jars.artifact_of("spark-token-provider-kafka-0-10_2.13-4.2.0.jar") == (
        "spark-token-provider-kafka-0-10_2.13")
    (libs / "slf4j-simple-2.0.17.jar").write_bytes(b"")  # a second binding would clash
    with pytest.raises(jars.FetchError, match="SLF4J"):
        jars._without_spark_jars(libs, maven=None)


@pytest.mark.timeout(120)
def test_fetches_over_the_direct_connection_match_kafka_pythons_client(plain_server):
    """PLAINTEXT fetches use a BrokerConnection; other security protocols go through
    kafka-python's client. Both give the same rows, and a broker restart is survived."""
    server = plain_server
    from minikafka.spark.fetcher import RangeReader, _client

    records = [(b"k%d" % (i % 3), b"v" * (i % 50)) for i in range(500)]
    produce(server, "transport", 2, records)
    options = parse_options({"kafka.bootstrap.servers": server.bootstrap_servers,
                             "subscribe": "transport"}, streaming=False)
    client = _client(options)

    def rows(connections) -> list:
        reader = RangeReader(options, client, connections)
        out = []
        for p in (0, 1):
            end = _end(server, "transport", p)
            for batch in reader.read(OffsetRange("transport", p, 0, end), SCHEMA):
                out += zip(batch.column("partition").to_pylist(),
                           batch.column("offset").to_pylist(), batch.column("value").to_pylist())
        return out

    direct: dict = {}
    assert rows(direct) == rows(None)
    assert len(rows(direct)) == 500 and direct  # the direct path opened connections
    with server.cluster.lock:
        leader = server.cluster.describe_topic("transport").partitions[0].leader
        server.cluster.stop_broker(leader)
    try:
        assert len(rows(direct)) == 500  # new leaders, reconnected
    finally:
        with server.cluster.lock:
            server.cluster.start_broker(leader)


def _end(server, topic: str, partition: int) -> int:
    with server.cluster.lock:
        return server.cluster.describe_topic(topic).partitions[partition].high_watermark
