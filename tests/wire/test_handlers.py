"""The handlers against a Cluster through the sans-IO Session (no sockets): what each
answers, byte-for-byte where it matters, and that odd input gets error codes, not a
crash or a closed connection."""
from __future__ import annotations

import struct
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka import TopicPartition
from kafka.protocol.admin import (
    DeleteRecordsRequest,
    DescribeConfigsRequest,
    DescribeLogDirsRequest,
    DescribeTopicPartitionsRequest,
    ElectLeadersRequest,
    IncrementalAlterConfigsRequest,
)
from kafka.protocol.consumer import (
    FetchRequest,
    FetchResponse,
    ListOffsetsRequest,
    OffsetForLeaderEpochRequest,
)
from kafka.protocol.metadata import (
    ApiVersionsRequest,
    FindCoordinatorRequest,
    MetadataRequest,
)
from kafka.protocol.producer import (
    AddOffsetsToTxnRequest,
    AddPartitionsToTxnRequest,
    EndTxnRequest,
    InitProducerIdRequest,
    ProduceRequest,
    TxnOffsetCommitRequest,
)
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

from minikafka.cluster import Cluster
from minikafka.core.clock import EPOCH_MS
from minikafka.core.records import COMMIT_MARKER, control_batch
from minikafka.wire import Session, default_registry, encode_request
from minikafka.wire.batches import WireRecordBatch, _records_slot, encode_batch, parse_batch
from minikafka.wire.codec import response_class
from minikafka.wire.fetch_response import PartitionData, encode_fetch_response

REGISTRY = default_registry()
CORRUPT_MESSAGE, UNKNOWN_TOPIC, NOT_LEADER, INVALID_ACKS, INVALID_RECORD = 2, 3, 6, 21, 87
_Produce = ProduceRequest.TopicProduceData
_Fetch = FetchRequest.FetchTopic


class Client:
    """One connection to one broker, driven by hand."""

    def __init__(self, cluster: Cluster, broker_id: int) -> None:
        self.session = Session(REGISTRY, broker_id=broker_id, cluster=cluster)
        self.correlation_id = 0
        self.pending: list = []

    def send(self, request, version: int) -> None:
        self.correlation_id += 1
        self.pending.append((request, version, self.correlation_id))
        self.session.receive_data(encode_request(request, self.correlation_id, "test",
                                                 version=version))

    def responses(self, now_ms: int = 0) -> list:
        out = self.session.process(now_ms)
        assert out.close is None, out.close
        data, answers = out.data, []
        while data:
            (size,) = struct.unpack_from(">i", data)
            payload, data = data[4:4 + size], data[4 + size:]
            request, version, cid = self.pending.pop(0)
            while not request.expect_response():
                request, version, cid = self.pending.pop(0)
            response = response_class(request.API_KEY).decode(payload, version=version,
                                                               header=True)
            assert response.header.correlation_id == cid
            answers.append(response)
        return answers

    def call(self, request, version: int):
        self.send(request, version)
        [response] = self.responses()
        return response


def build(values, *, codec=0, producer_id=-1, epoch=-1, sequence=-1, txn=False,
          ts=EPOCH_MS, keyed=True) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=codec, is_transactional=txn, producer_id=producer_id,
        producer_epoch=epoch, base_sequence=sequence, batch_size=1 << 30)
    for i, value in enumerate(values):
        builder.append(i, ts + i, b"key-%d" % i if keyed else None, value, [("h", b"v")])
    return bytes(builder.build())


def produce(topic, partition, records, acks=1, txn_id=None, topic_id=None) -> ProduceRequest:
    """A producer's request for one partition; v13+ sends `topic_id` in place of the name."""
    return ProduceRequest(transactional_id=txn_id, acks=acks, timeout_ms=5000, topic_data=[
        _Produce(name=topic, topic_id=topic_id, partition_data=[
            _Produce.PartitionProduceData(index=partition, records=records)])])


def fetch(topic, partition, offset, *, max_wait=0, min_bytes=0, isolation=0, epoch=-1,
          session_id=0, session_epoch=-1, max_bytes=1 << 20, topic_id=None) -> FetchRequest:
    """A consumer's fetch of one partition; v13+ sends `topic_id` in place of the name."""
    return FetchRequest(
        replica_id=-1, max_wait_ms=max_wait, min_bytes=min_bytes, max_bytes=max_bytes,
        isolation_level=isolation, session_id=session_id, session_epoch=session_epoch,
        topics=[_Fetch(topic=topic, topic_id=topic_id, partitions=[_Fetch.FetchPartition(
            partition=partition, current_leader_epoch=epoch, fetch_offset=offset,
            log_start_offset=-1, partition_max_bytes=1 << 20)])],
        forgotten_topics_data=[], rack_id="")


def batches_of(records: bytes) -> list[bytes]:
    out = []
    while records:
        (length,) = struct.unpack_from(">i", records, 8)
        out.append(records[:12 + length])
        records = records[12 + length:]
    return out


@pytest.fixture
def cluster() -> Cluster:
    cluster = Cluster(brokers=3, seed=5, racks={1: "a", 2: "b", 3: "c"})
    cluster.create_topic("t", partitions=1, replication_factor=1)
    return cluster


def leader_of(cluster: Cluster, topic: str = "t", partition: int = 0) -> Client:
    return Client(cluster, cluster.describe_topic(topic).partitions[partition].leader)


# -- registry ---------------------------------------------------------------------


def test_default_registry_advertises_every_handler_module():
    assert dict(REGISTRY.version_ranges()) == {
        0: (3, 13), 1: (4, 18), 2: (1, 11), 3: (0, 13), 8: (2, 10), 9: (1, 10), 10: (0, 6),
        11: (0, 9), 12: (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 6), 16: (0, 5), 17: (0, 1),
        18: (0, 5), 19: (2, 7), 20: (1, 6), 21: (0, 2), 22: (0, 5), 23: (2, 4), 24: (0, 5),
        25: (0, 4), 26: (0, 5), 27: (1, 2), 28: (0, 6), 29: (1, 3), 30: (1, 3), 31: (1, 3), 32: (1, 4), 33: (0, 2),
        34: (1, 2), 35: (1, 5), 36: (0, 2), 37: (0, 3), 38: (1, 3), 39: (1, 2), 40: (1, 2),
        41: (1, 3), 42: (0, 3), 43: (0, 2), 44: (0, 1),
        45: (0, 1), 46: (0, 0), 47: (0, 0), 48: (0, 1), 49: (0, 1), 50: (0, 0), 51: (0, 0),
        55: (0, 2), 57: (0, 2), 60: (0, 2), 61: (0, 0), 65: (0, 0), 66: (0, 2), 68: (0, 1), 69: (0, 1), 74: (0, 1),
        75: (0, 0), 76: (1, 1), 77: (1, 1), 78: (1, 2), 79: (1, 2), 90: (0, 1), 91: (0, 0),
        92: (0, 0)}


# -- produce and fetch ----------------------------------------------------------------


@pytest.mark.parametrize("produce_version,fetch_version", [(3, 4), (7, 10), (9, 11), (12, 12)])
@pytest.mark.parametrize("codec", [0, 1, 4])
def test_produced_bytes_are_fetched_back_unchanged(cluster, produce_version, fetch_version,
                                                   codec):
    client = leader_of(cluster)
    sent = [build([b"a" * 50, b"b", None], codec=codec), build([b"c"], codec=codec)]
    for records in sent:
        response = client.call(produce("t", 0, records), produce_version)
        assert response.responses[0].partition_responses[0].error_code == 0
    response = client.call(fetch("t", 0, 0), fetch_version)
    part = response.responses[0].partitions[0]
    start = 0 if fetch_version >= 5 else -1  # log_start_offset is in v5+
    assert (part.error_code, part.high_watermark, part.log_start_offset) == (0, 4, start)
    served = batches_of(part.records)
    assert [b[16:] for b in served] == [s[16:] for s in sent]  # magic onwards: as produced
    assert [struct.unpack_from(">qii", b) for b in served] == [
        (0, len(sent[0]) - 12, 0), (3, len(sent[1]) - 12, 0)]  # baseOffset, length, epoch
    records = [r for batch in MemoryRecords(part.records) for r in batch]
    assert [(r.offset, r.value, r.headers) for r in records] == [
        (0, b"a" * 50, [("h", b"v")]), (1, b"b", [("h", b"v")]), (2, None, [("h", b"v")]),
        (3, b"c", [("h", b"v")])]


def test_wire_batches_decode_lazily_for_in_process_readers(cluster):
    client = leader_of(cluster)
    client.call(produce("t", 0, build([b"x", b"y"], codec=2)), 9)
    [batch] = list(cluster.leader_replica("t", 0).log.batches())
    assert isinstance(batch, WireRecordBatch) and batch.record_count == 2
    with pytest.raises(AttributeError):
        _records_slot.__get__(batch)  # nothing decoded on the produce path
    consumer = cluster.consumer(auto_offset_reset="earliest")
    consumer.assign([TopicPartition("t", 0)])
    values = [r.value for rs in consumer.poll(timeout_ms=1000).values() for r in rs]
    assert values == [b"x", b"y"]
    assert [r[3] for r in _records_slot.__get__(batch)] == [b"x", b"y"]


def test_in_process_batches_are_encoded_once_with_a_valid_crc(cluster):
    producer = cluster.producer(compression_type="lz4")
    producer.send("t", key=b"k", value=b"hello" * 20, headers=[("n", b"1")]).get()
    # Too small to gain, and compressed all the same: one codec for disk and wire, which
    # compresses every batch of a compressed producer as the Java producer does.
    producer.send("t", key=b"k", value=b"again").get()
    client = leader_of(cluster)
    first = client.call(fetch("t", 0, 0), 12).responses[0].partitions[0].records
    stored = list(cluster.leader_replica("t", 0).log.batches())
    raw = [b.raw for b in stored]
    second = client.call(fetch("t", 0, 0), 12).responses[0].partitions[0].records
    assert first == second and [b.raw for b in stored] == raw and all(r is not None for r in raw)
    wire = list(MemoryRecords(first))
    assert all(b.validate_crc() for b in MemoryRecords(first))
    assert [(b.base_offset, b.producer_id, b.base_sequence, b.compression_type) for b in wire] \
        == [(0, 0, 0, 3), (1, 0, 1, 3)]
    values = [(r.offset, r.key, r.value, r.headers) for b in MemoryRecords(first) for r in b]
    assert values == [(0, b"k", b"hello" * 20, [("n", b"1")]), (1, b"k", b"again", [])]


def test_control_and_log_append_time_batches_keep_a_valid_crc():
    marker = control_batch(COMMIT_MARKER, 7, 2, 1_000)
    wire = DefaultRecordBatch(encode_batch(marker))
    assert wire.validate_crc() and wire.is_control_batch and wire.is_transactional
    cluster = Cluster(brokers=1, seed=1)
    cluster.create_topic("stamped", config={"message.timestamp.type": "LogAppendTime"})
    cluster.advance(5_000)
    client = Client(cluster, 1)
    response = client.call(produce("stamped", 0, build([b"v"], ts=42)), 9)
    assert response.responses[0].partition_responses[0].log_append_time_ms == cluster.now_ms
    records = client.call(fetch("stamped", 0, 0), 12).responses[0].partitions[0].records
    [batch] = list(MemoryRecords(records))
    assert batch.validate_crc() and batch.timestamp_type == 1
    assert [r.timestamp for r in batch] == [cluster.now_ms]


@pytest.mark.parametrize("mangle,code", [
    (lambda b: b[:30] + bytes([b[30] ^ 1]) + b[31:], CORRUPT_MESSAGE),  # payload bit flip
    (lambda b: b[:16] + b"\x01" + b[17:], INVALID_RECORD),  # magic 1
    (lambda b: b + b, INVALID_RECORD),  # two batches in one partition
    (lambda b: b[:-3], CORRUPT_MESSAGE),  # truncated
    (lambda b: b[:40], CORRUPT_MESSAGE),  # shorter than a header
    (lambda b: b"", CORRUPT_MESSAGE),
])
def test_invalid_batches_get_error_codes_and_the_connection_stays(cluster, mangle, code):
    client = leader_of(cluster)
    response = client.call(produce("t", 0, mangle(build([b"one", b"two"]))), 9)
    part = response.responses[0].partition_responses[0]
    assert (part.error_code, part.base_offset) == (code, -1)
    good = client.call(produce("t", 0, build([b"fine"])), 9)
    assert good.responses[0].partition_responses[0].error_code == 0
    assert cluster.describe_topic("t").partitions[0].log_end_offset == 1


def test_control_batches_from_clients_are_refused(cluster):
    raw = bytearray(encode_batch(control_batch(COMMIT_MARKER, 3, 0, 1)))
    client = leader_of(cluster)
    response = client.call(produce("t", 0, bytes(raw)), 9)
    assert response.responses[0].partition_responses[0].error_code == INVALID_RECORD


def test_produce_is_listed_from_v0_but_served_from_v3(cluster):
    # Kafka 4.x's ApiVersions answer (KAFKA-18659): older librdkafka needs Produce v0
    # listed to compress; a request below v3 still closes the connection.
    client = leader_of(cluster)
    listed = client.call(ApiVersionsRequest(client_software_name="t",
                                            client_software_version="1"), 3)
    assert [(a.min_version, a.max_version) for a in listed.api_keys if a.api_key == 0] == [
        (0, 13)]
    client.send(produce("t", 0, build([b"x"])), 2)
    out = client.session.process(0)
    assert type(out.close).__name__ == "UnsupportedVersion" and out.data == b""
    assert cluster.leader_replica("t", 0).log.log_end_offset == 0


def test_produce_errors_per_partition(cluster):
    follower = next(b for b in cluster.brokers if b != cluster.describe_topic("t").partitions[0].leader)
    request = ProduceRequest(transactional_id=None, acks=1, timeout_ms=1000, topic_data=[
        _Produce(name="t", partition_data=[
            _Produce.PartitionProduceData(index=0, records=build([b"x"])),
            _Produce.PartitionProduceData(index=7, records=build([b"x"]))]),
        _Produce(name="nope", partition_data=[
            _Produce.PartitionProduceData(index=0, records=build([b"x"]))])])
    response = Client(cluster, follower).call(request, 9)
    codes = [[p.error_code for p in t.partition_responses] for t in response.responses]
    assert codes == [[NOT_LEADER, UNKNOWN_TOPIC], [UNKNOWN_TOPIC]]
    bad_acks = leader_of(cluster).call(produce("t", 0, build([b"x"]), acks=2), 9)
    assert bad_acks.responses[0].partition_responses[0].error_code == INVALID_ACKS


def test_acks_zero_gets_no_response_and_acks_all_waits_for_the_isr():
    cluster = Cluster(brokers=3, seed=2)
    cluster.create_topic("r", partitions=1, replication_factor=3)
    client = leader_of(cluster, "r")
    client.send(produce("r", 0, build([b"fire-and-forget"]), acks=0), 9)
    client.send(produce("r", 0, build([b"durable"]), acks=-1), 9)
    assert client.responses(now_ms=0) == [] and client.session.parked
    cluster.advance(50)  # followers fetch; the high watermark passes the batch
    [response] = client.responses(now_ms=10)
    part = response.responses[0].partition_responses[0]
    assert (part.error_code, part.base_offset) == (0, 1)
    assert cluster.describe_topic("r").partitions[0].high_watermark == 2


def test_idempotent_retry_is_answered_with_the_original_offset(cluster):
    client = leader_of(cluster)
    records = build([b"once"], producer_id=4, epoch=0, sequence=0)
    first = client.call(produce("t", 0, records), 9).responses[0].partition_responses[0]
    again = client.call(produce("t", 0, records), 9).responses[0].partition_responses[0]
    assert (first.error_code, again.error_code, again.base_offset) == (0, 0, first.base_offset)
    gap = build([b"gap"], producer_id=4, epoch=0, sequence=5)
    assert client.call(produce("t", 0, gap), 9).responses[0].partition_responses[0] \
        .error_code == 45  # OUT_OF_ORDER_SEQUENCE_NUMBER
    assert cluster.describe_topic("t").partitions[0].log_end_offset == 1
    # A producer the partition has no state for (its batches went to retention, say) may
    # go on at any sequence number, as in Kafka's ProducerAppendInfo.checkSequence.
    unknown = build([b"later"], producer_id=8, epoch=0, sequence=7)
    assert client.call(produce("t", 0, unknown), 9).responses[0].partition_responses[0] \
        .error_code == 0


def test_fetch_long_polls_until_a_produce_arrives(cluster):
    reader, writer = leader_of(cluster), leader_of(cluster)
    reader.send(fetch("t", 0, 0, max_wait=500, min_bytes=1), 12)
    assert reader.responses(now_ms=1000) == [] and reader.session.deadline_ms == 1500
    writer.call(produce("t", 0, build([b"wake"])), 9)
    [response] = reader.responses(now_ms=1010)
    assert [r.value for b in MemoryRecords(response.responses[0].partitions[0].records)
            for r in b] == [b"wake"]
    reader.send(fetch("t", 0, 1, max_wait=500, min_bytes=1), 12)
    assert reader.responses(now_ms=2000) == []
    [late] = reader.responses(now_ms=2500)  # max_wait_ms passed: an empty answer
    assert late.responses[0].partitions[0].records in (b"", None)


def test_fetch_partition_errors(cluster):
    client = leader_of(cluster)
    client.call(produce("t", 0, build([b"a", b"b"])), 9)
    epoch = cluster.describe_topic("t").partitions[0].leader_epoch

    def code(request, via=client):
        return via.call(request, 12).responses[0].partitions[0].error_code

    assert code(fetch("t", 0, 3)) == 1  # OFFSET_OUT_OF_RANGE
    assert code(fetch("t", 0, 2)) == 0  # the log end is a valid position
    assert code(fetch("t", 0, 0, epoch=epoch + 1)) == 75  # UNKNOWN_LEADER_EPOCH
    assert code(fetch("t", 9, 0)) == UNKNOWN_TOPIC
    assert code(fetch("gone", 0, 0)) == UNKNOWN_TOPIC
    follower = next(b for b in cluster.brokers if b != client.session.broker_id)
    assert code(fetch("t", 0, 0), Client(cluster, follower)) == NOT_LEADER
    cluster.create_topic("e", replication_factor=3)
    old = cluster.describe_topic("e").partitions[0]
    cluster.stop_broker(old.leader)
    new = cluster.describe_topic("e").partitions[0]
    assert code(fetch("e", 0, 0, epoch=old.leader_epoch), Client(cluster, new.leader)) == 74


def test_fetch_sessions_are_declined(cluster):
    client = leader_of(cluster)
    opened = client.call(fetch("t", 0, 0, session_id=0, session_epoch=0), 12)
    assert (opened.error_code, opened.session_id, len(opened.responses)) == (0, 0, 1)
    stale = client.call(fetch("t", 0, 0, session_id=77, session_epoch=3), 12)
    assert (stale.error_code, stale.responses) == (70, [])  # FETCH_SESSION_ID_NOT_FOUND
    bad = client.call(fetch("t", 0, 0, session_id=0, session_epoch=2), 12)
    assert bad.error_code == 71  # INVALID_FETCH_SESSION_EPOCH


def test_read_committed_stops_at_the_lso_and_lists_aborted_transactions(cluster):
    producer = cluster.producer(transactional_id="tx")
    producer.init_transactions()
    producer.begin_transaction()
    producer.send("t", value=b"aborted")
    producer.flush()
    producer.abort_transaction()
    producer.begin_transaction()
    producer.send("t", value=b"open")
    producer.flush()
    client = leader_of(cluster)
    committed = client.call(fetch("t", 0, 0, isolation=1), 12).responses[0].partitions[0]
    assert committed.last_stable_offset == 2 and committed.high_watermark == 3
    assert [(a.producer_id, a.first_offset) for a in committed.aborted_transactions] == [(0, 0)]
    assert [b.base_offset for b in MemoryRecords(committed.records)] == [0, 1]  # data, marker
    uncommitted = client.call(fetch("t", 0, 0), 12).responses[0].partitions[0]
    assert uncommitted.aborted_transactions is None
    assert [b.base_offset for b in MemoryRecords(uncommitted.records)] == [0, 1, 2]


@pytest.mark.parametrize("version", range(4, 19))
def test_fetch_response_encoding_matches_kafka_python(version):
    records = build([b"r1", b"r2"])
    data = [PartitionData(0, 0, 10, 8, 2, [(5, 3), (6, 4)], [records[:30], records[30:]],
                          len(records)),
            PartitionData(1, 6)]
    by_id = version >= 13
    a, b = (uuid.uuid4(), uuid.uuid4()) if by_id else ("topic-a", "b")
    named = (lambda t: {"topic_id": t}) if by_id else (lambda t: {"topic": t})
    body = b"".join(encode_fetch_response(version, [(a, data), (b, [])], 0, 0, 3))
    decoded = FetchResponse.decode(body, version=version)
    expected = FetchResponse(
        version=version, throttle_time_ms=3, error_code=0, session_id=0, responses=[
            FetchResponse.FetchableTopicResponse(**named(a), partitions=[
                FetchResponse.FetchableTopicResponse.PartitionData(
                    partition_index=0, error_code=0, high_watermark=10, last_stable_offset=8,
                    log_start_offset=2, preferred_read_replica=-1, records=records,
                    aborted_transactions=[
                        FetchResponse.FetchableTopicResponse.PartitionData.AbortedTransaction(
                            producer_id=p, first_offset=o) for p, o in [(5, 3), (6, 4)]]),
                FetchResponse.FetchableTopicResponse.PartitionData(
                    partition_index=1, error_code=6, high_watermark=-1, last_stable_offset=-1,
                    log_start_offset=-1, preferred_read_replica=-1, records=b"",
                    aborted_transactions=None)]),
            FetchResponse.FetchableTopicResponse(**named(b), partitions=[])])
    assert body == bytes(expected.encode())
    assert decoded.responses[0].partitions[0].records == records


@pytest.mark.parametrize("version", [12, 16])
def test_fetch_response_leader_hints_match_kafka_python(version):
    # KIP-951: CurrentLeader (tagged, v12+) and NodeEndpoints (tagged, v16+).
    moved = PartitionData(0, 6, current_leader=(3, 7))
    topic = uuid.uuid4() if version >= 13 else "t"
    body = b"".join(encode_fetch_response(version, [(topic, [moved])], node_endpoints=[
        (3, "127.0.0.1", 9094, None)]))
    _T = FetchResponse.FetchableTopicResponse
    named = {"topic_id": topic} if version >= 13 else {"topic": topic}
    expected = FetchResponse(
        version=version, throttle_time_ms=0, error_code=0, session_id=0, responses=[
            _T(**named, partitions=[_T.PartitionData(
                partition_index=0, error_code=6, high_watermark=-1, last_stable_offset=-1,
                log_start_offset=-1, preferred_read_replica=-1, records=b"",
                aborted_transactions=None,
                current_leader=_T.PartitionData.LeaderIdAndEpoch(leader_id=3, leader_epoch=7))])],
        **({"node_endpoints": [FetchResponse.NodeEndpoint(
            node_id=3, host="127.0.0.1", port=9094, rack=None)]} if version >= 16 else {}))
    assert body == bytes(expected.encode())


def test_a_moved_partition_names_its_leader_to_fetch_v16_and_produce_v10():
    cluster = Cluster(brokers=3, seed=5, racks={1: "a", 2: "b", 3: "c"})
    cluster.create_topic("t", partitions=1, replication_factor=1)
    leader = cluster.describe_topic("t").partitions[0].leader
    epoch = cluster.describe_topic("t").partitions[0].leader_epoch
    other = Client(cluster, next(b for b in (1, 2, 3) if b != leader))
    where = (leader, "127.0.0.1", 9092 + leader - 1, "abc"[leader - 1])
    topic_id = uuid.UUID(cluster.describe_topic("t").topic_id)
    fetched = other.call(fetch(None, 0, 0, topic_id=topic_id), 16)
    part = fetched.responses[0].partitions[0]
    assert part.error_code == 6  # NOT_LEADER_OR_FOLLOWER
    assert (part.current_leader.leader_id, part.current_leader.leader_epoch) == (leader, epoch)
    assert [(n.node_id, n.host, n.port, n.rack) for n in fetched.node_endpoints] == [where]
    produced = other.call(produce("t", 0, build([b"x"])), 10)
    answer = produced.responses[0].partition_responses[0]
    assert answer.error_code == 6
    assert (answer.current_leader.leader_id, answer.current_leader.leader_epoch) == (leader, epoch)
    assert [(n.node_id, n.host, n.port, n.rack) for n in produced.node_endpoints] == [where]
    # Older versions carry no hint: those clients ask Metadata.
    old_fetch = other.call(fetch(None, 0, 0, topic_id=topic_id), 15)
    assert old_fetch.responses[0].partitions[0].error_code == 6
    assert old_fetch.responses[0].partitions[0].current_leader is None
    assert not old_fetch.node_endpoints
    old_produce = other.call(produce("t", 0, build([b"x"])), 9).responses[0]
    assert old_produce.partition_responses[0].error_code == 6
    # Produce v13 names the topic by id, and so does the hint's answer.
    [by_id] = other.call(produce(None, 0, build([b"x"]), topic_id=topic_id), 13).responses
    assert by_id.topic_id == topic_id and by_id.partition_responses[0].error_code == 6
    hint = by_id.partition_responses[0].current_leader
    assert (hint.leader_id, hint.leader_epoch) == (leader, epoch)


@pytest.mark.parametrize("acks", [1, -1])
def test_produce_v13_names_topics_by_id(cluster, acks):
    client = leader_of(cluster)
    topic_id = uuid.UUID(cluster.describe_topic("t").topic_id)
    sent = build([b"by-id", b"again"])
    [topic] = client.call(produce(None, 0, sent, acks=acks, topic_id=topic_id), 13).responses
    assert (topic.topic_id, topic.partition_responses[0].error_code,
            topic.partition_responses[0].base_offset) == (topic_id, 0, 0)
    fetched = client.call(fetch("t", 0, 0), 12).responses[0].partitions[0]
    assert [b[16:] for b in batches_of(fetched.records)] == [sent[16:]]
    unknown = uuid.uuid4()
    [topic] = client.call(produce(None, 0, build([b"lost?"]), acks=acks, topic_id=unknown),
                          13).responses
    assert (topic.topic_id, topic.partition_responses[0].error_code) == (unknown, 100)
    assert cluster.leader_replica("t", 0).log.log_end_offset == 2  # nothing appended


@pytest.mark.parametrize("version", [13, 16, 18])
def test_fetch_v13_names_topics_by_id(cluster, version):
    client = leader_of(cluster)
    sent = build([b"by-id"])
    assert client.call(produce("t", 0, sent), 9).responses[0].partition_responses[0] \
        .error_code == 0
    topic_id = uuid.UUID(cluster.describe_topic("t").topic_id)
    [topic] = client.call(fetch(None, 0, 0, topic_id=topic_id), version).responses
    assert topic.topic_id == topic_id
    assert [b[16:] for b in batches_of(topic.partitions[0].records)] == [sent[16:]]
    unknown = uuid.uuid4()
    [topic] = client.call(fetch(None, 0, 0, topic_id=unknown, max_wait=500, min_bytes=1),
                          version).responses  # an error answers at once, not after max_wait
    assert (topic.topic_id, topic.partitions[0].error_code) == (unknown, 100)  # UNKNOWN_TOPIC_ID
    [topic] = client.call(fetch("t", 0, 0), version).responses  # a name, but no id
    assert topic.partitions[0].error_code == 100


def test_fetch_by_the_id_of_a_topic_deleted_and_made_again_is_unknown(cluster):
    old_id = uuid.UUID(cluster.describe_topic("t").topic_id)
    cluster.delete_topic("t")
    cluster.create_topic("t", partitions=1, replication_factor=1)
    client = leader_of(cluster)
    [topic] = client.call(fetch(None, 0, 0, topic_id=old_id), 16).responses
    assert topic.partitions[0].error_code == 100
    new_id = uuid.UUID(cluster.describe_topic("t").topic_id)
    [topic] = client.call(fetch(None, 0, 0, topic_id=new_id), 16).responses
    assert topic.partitions[0].error_code == 0


# -- other handlers ------------------------------------------------------------------


def test_list_offsets_special_and_timestamp_lookups(cluster):
    client = leader_of(cluster)
    for ts in (100, 300, 200):
        client.call(produce("t", 0, build([b"x"], ts=ts)), 9)

    def lookup(timestamp, version=9):
        request = ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=[
            ListOffsetsRequest.ListOffsetsTopic(name="t", partitions=[
                ListOffsetsRequest.ListOffsetsTopic.ListOffsetsPartition(
                    partition_index=0, current_leader_epoch=-1, timestamp=timestamp)])])
        p = client.call(request, version).topics[0].partitions[0]
        return p.error_code, p.offset, p.timestamp

    assert lookup(-2) == (0, 0, -1)
    assert lookup(-1) == (0, 3, -1)
    assert lookup(-3) == (0, 1, 300)  # the record with the largest timestamp (KIP-734)
    assert lookup(150) == (0, 1, 300)
    assert lookup(250, version=1) == (0, 1, 300)
    assert lookup(301) == (0, -1, -1)


def test_partition_requests_need_the_leader_and_its_epoch(cluster):
    """ListOffsets, OffsetForLeaderEpoch and DeleteRecords check the partition as Fetch
    does: unknown topic or partition, not the leader, then the leader epoch (KIP-320)."""
    leader = leader_of(cluster)
    follower = Client(cluster, next(b for b in (1, 2, 3) if b != leader.session.broker_id))
    epoch = cluster.describe_topic("t").partitions[0].leader_epoch

    def list_offsets(topic, index, current=-1, via=leader):
        L = ListOffsetsRequest.ListOffsetsTopic
        request = ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=[L(
            name=topic, partitions=[L.ListOffsetsPartition(
                partition_index=index, current_leader_epoch=current, timestamp=-1)])])
        return via.call(request, 9).topics[0].partitions[0].error_code

    def end_for_epoch(topic, index, current=-1, via=leader):
        T = OffsetForLeaderEpochRequest.OffsetForLeaderTopic
        request = OffsetForLeaderEpochRequest(replica_id=-1, topics=[T(
            topic=topic, partitions=[T.OffsetForLeaderPartition(
                partition=index, current_leader_epoch=current, leader_epoch=epoch)])])
        return via.call(request, 4).topics[0].partitions[0].error_code

    def delete(topic, index, via=leader):
        D = DeleteRecordsRequest.DeleteRecordsTopic
        request = DeleteRecordsRequest(timeout_ms=1000, topics=[D(
            name=topic, partitions=[D.DeleteRecordsPartition(partition_index=index, offset=0)])])
        return via.call(request, 2).topics[0].partitions[0].error_code

    for ask in (list_offsets, end_for_epoch, delete):
        assert ask("t", 0) == 0
        assert ask("gone", 0) == UNKNOWN_TOPIC
        assert ask("t", 9) == UNKNOWN_TOPIC
        assert ask("t", 0, via=follower) == NOT_LEADER
    cluster.create_topic("e", replication_factor=3)
    old = cluster.describe_topic("e").partitions[0]
    cluster.stop_broker(old.leader)
    new = cluster.describe_topic("e").partitions[0]
    now = Client(cluster, new.leader)
    for ask in (list_offsets, end_for_epoch):
        assert ask("e", 0, new.leader_epoch, via=now) == 0
        assert ask("e", 0, new.leader_epoch + 1, via=now) == 75  # UNKNOWN_LEADER_EPOCH
        assert ask("e", 0, old.leader_epoch, via=now) == 74  # FENCED_LEADER_EPOCH


def test_metadata_lists_brokers_racks_and_creates_topics_on_request(cluster):
    client = Client(cluster, 1)
    request = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name="fresh")],
                              allow_auto_topic_creation=False,
                              include_topic_authorized_operations=True)
    response = client.call(request, 12)
    assert [(b.node_id, b.rack) for b in response.brokers] == [(1, "a"), (2, "b"), (3, "c")]
    assert response.topics[0].error_code == UNKNOWN_TOPIC
    request.allow_auto_topic_creation = True
    # Kafka answers before its controller has created the topic: the next Metadata has it
    creating = client.call(request, 12).topics[0]
    assert (creating.error_code, creating.partitions) == (UNKNOWN_TOPIC, [])
    created = client.call(request, 12).topics[0]
    assert created.error_code == 0 and len(created.partitions) == 1
    assert created.authorized_operations == {3, 4, 5, 6, 7, 8, 10, 11}
    invalid = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name="bad name!")],
                              allow_auto_topic_creation=True)
    assert client.call(invalid, 12).topics[0].error_code == 17  # INVALID_TOPIC_EXCEPTION
    everything = client.call(MetadataRequest(topics=None), 1)
    assert sorted(t.name for t in everything.topics) == ["fresh", "t"]
    cluster.stop_broker(3)
    after = client.call(MetadataRequest(topics=None), 13)
    assert [b.node_id for b in after.brokers] == [1, 2]


def test_metadata_auto_creates_the_internal_topics_with_their_own_settings(cluster):
    """As Kafka 4.4.0 does (measured): a Metadata request that may auto-create names
    __consumer_offsets and __transaction_state; they are unknown in that answer and exist
    in the next, with offsets.topic.num.partitions and
    transaction.state.log.num.partitions partitions, compacted and internal."""
    client = Client(cluster, 1)
    names = ["__consumer_offsets", "__transaction_state"]
    request = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=n)
                                      for n in names], allow_auto_topic_creation=False)
    assert [t.error_code for t in client.call(request, 12).topics] == [UNKNOWN_TOPIC] * 2
    assert not set(names) & set(cluster.controller.topics)
    request.allow_auto_topic_creation = True
    assert [t.error_code for t in client.call(request, 12).topics] == [UNKNOWN_TOPIC] * 2
    created = client.call(request, 12).topics
    assert [(t.error_code, t.is_internal, len(t.partitions)) for t in created] == \
        [(0, True, 50), (0, True, 50)]
    for name in names:
        assert cluster.topic_config(name)["cleanup.policy"] == "compact"


def describe_partitions(client, topics, limit=2000, cursor=None):
    request = DescribeTopicPartitionsRequest(
        topics=[DescribeTopicPartitionsRequest.TopicRequest(name=t) for t in topics],
        response_partition_limit=limit,
        cursor=None if cursor is None else DescribeTopicPartitionsRequest.Cursor(
            topic_name=cursor[0], partition_index=cursor[1]))
    return client.call(request, 0)


def test_describe_topic_partitions_pages_and_shows_eligible_leader_replicas():
    cluster = Cluster(brokers=3, seed=5, controllers=[1001, 1002, 1003])
    cluster.create_topic("a", partitions=3, replication_factor=3,
                         config={"min.insync.replicas": "2"})
    cluster.create_topic("b", partitions=2, replication_factor=1)
    client = Client(cluster, 1)
    page = describe_partitions(client, [], limit=4)
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in page.topics] == \
        [("a", [0, 1, 2]), ("b", [0])]
    assert (page.next_cursor.topic_name, page.next_cursor.partition_index) == ("b", 1)
    rest = describe_partitions(client, [], cursor=("b", 1))
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in rest.topics] == \
        [("b", [1])] and rest.next_cursor is None
    last, first = (b for b in cluster.describe_topic("a").partitions[0].replicas
                   if b != 1)
    cluster.stop_broker(last)
    cluster.stop_broker(first)  # a's ISRs fall to broker 1 alone
    [a] = describe_partitions(client, ["a"]).topics
    reg = cluster.describe_topic("a").partitions
    assert [(p.isr_nodes, p.eligible_leader_replicas, p.offline_replicas) for p in a.partitions] \
        == [([1], list(r.elr), sorted({last, first}, key=r.replicas.index)) for r in reg]
    assert all(len(p.eligible_leader_replicas) == 1 for p in a.partitions)
    missing = describe_partitions(client, ["nope", "bad name!"]).topics
    assert [(t.name, t.error_code) for t in missing] == [("bad name!", 17), ("nope", UNKNOWN_TOPIC)]
    bad_cursor = describe_partitions(client, ["a"], cursor=("b", 0)).topics
    assert [(t.name, t.error_code) for t in bad_cursor] == [("a", 42)]  # INVALID_REQUEST


def test_a_stopped_broker_drops_its_connections(cluster):
    client = Client(cluster, 2)
    cluster.stop_broker(2)
    client.send(MetadataRequest(topics=None), 12)
    assert client.session.process(0).close is not None


def test_delete_records_moves_the_log_start_offset(cluster):
    client = leader_of(cluster)
    for i in range(4):
        client.call(produce("t", 0, build([b"%d" % i])), 9)

    def delete(offset):
        request = DeleteRecordsRequest(timeout_ms=1000, topics=[
            DeleteRecordsRequest.DeleteRecordsTopic(name="t", partitions=[
                DeleteRecordsRequest.DeleteRecordsTopic.DeleteRecordsPartition(
                    partition_index=0, offset=offset)])])
        p = client.call(request, 2).topics[0].partitions[0]
        return p.error_code, p.low_watermark

    assert delete(2) == (0, 2)
    assert delete(9) == (1, -1)  # beyond the high watermark
    assert delete(-1) == (0, 4)
    assert client.call(fetch("t", 0, 1), 12).responses[0].partitions[0].error_code == 1
    # A compact-only topic keeps its records: POLICY_VIOLATION (44), as in Kafka.
    cluster.alter_topic_config("t", {"cleanup.policy": "compact"})
    assert delete(-1) == (44, -1)
    cluster.alter_topic_config("t", {"cleanup.policy": "compact,delete"})
    assert delete(-1) == (0, 4)


def test_a_compacted_topic_refuses_a_record_without_key(cluster):
    cluster.create_topic("c", partitions=1, replication_factor=3,
                         config={"cleanup.policy": "compact"})
    client = leader_of(cluster, "c")
    keyed = client.call(produce("c", 0, build([b"k"])), 9).responses[0].partition_responses[0]
    assert keyed.error_code == 0
    part = client.call(produce("c", 0, build([b"a", b"b"], keyed=False)), 9) \
        .responses[0].partition_responses[0]
    assert part.error_code == 87  # INVALID_RECORD
    assert cluster.describe_topic("c").partitions[0].log_end_offset == 1  # nothing appended


def test_configs_describe_and_alter_incrementally(cluster):
    client = Client(cluster, 1)
    R = IncrementalAlterConfigsRequest.AlterConfigsResource
    alter = IncrementalAlterConfigsRequest(validate_only=False, resources=[
        R(resource_type=2, resource_name="t", configs=[
            R.AlterableConfig(name="retention.ms", config_operation=0, value="1000"),
            R.AlterableConfig(name="cleanup.policy", config_operation=2, value="compact")]),
        R(resource_type=2, resource_name="t2", configs=[]),
        R(resource_type=2, resource_name="t", configs=[
            R.AlterableConfig(name="retention.ms", config_operation=2, value="5")])])
    codes = [r.error_code for r in client.call(alter, 1).responses]
    assert codes == [0, UNKNOWN_TOPIC, 40]  # INVALID_CONFIG: append to a non-list config
    describe = DescribeConfigsRequest(include_synonyms=True, include_documentation=False,
                                      resources=[
        DescribeConfigsRequest.DescribeConfigsResource(
            resource_type=2, resource_name="t",
            configuration_keys=["retention.ms", "cleanup.policy", "segment.bytes"]),
        DescribeConfigsRequest.DescribeConfigsResource(
            resource_type=4, resource_name="2", configuration_keys=None)])
    topic, broker = client.call(describe, 4).results
    values = {c.name: (c.value, c.config_source, c.config_type) for c in topic.configs}
    assert values == {"retention.ms": ("1000", 1, 5), "cleanup.policy": ("delete,compact", 1, 7),
                      "segment.bytes": ("1073741824", 5, 3)}
    assert {c.name: c.value for c in broker.configs}["broker.rack"] == "b"


def test_a_broker_s_own_config_is_what_it_answers_with(cluster):
    """A value set on broker 2 only: broker 2 answers with it (a topic's default too, with
    its synonyms, highest precedence first), broker 1 with the cluster-wide one."""
    R = IncrementalAlterConfigsRequest.AlterConfigsResource
    for name, value in (("", "3600000"), ("2", "60000")):
        alter = IncrementalAlterConfigsRequest(validate_only=False, resources=[
            R(resource_type=4, resource_name=name, configs=[
                R.AlterableConfig(name="log.retention.ms", config_operation=0, value=value)])])
        assert [r.error_code for r in Client(cluster, 1).call(alter, 1).responses] == [0]
    D = DescribeConfigsRequest.DescribeConfigsResource
    describe = DescribeConfigsRequest(include_synonyms=True, include_documentation=False,
                                      resources=[D(resource_type=2, resource_name="t",
                                                   configuration_keys=["retention.ms"]),
                                                 D(resource_type=4, resource_name="2",
                                                   configuration_keys=["log.retention.ms"])])
    answers = {}
    for b in (1, 2):
        topic, broker = Client(cluster, b).call(describe, 4).results
        answers[b] = [(c.value, c.config_source) for c in topic.configs]
        if b == 2:
            [entry] = broker.configs
            assert [(s.source, s.name, s.value) for s in entry.synonyms] == [
                (2, "log.retention.ms", "60000"), (3, "log.retention.ms", "3600000"),
                (5, "log.retention.hours", "168")]
    assert answers == {1: [("3600000", 3)], 2: [("60000", 2)]}


def test_transaction_apis_end_to_end(cluster):
    client = Client(cluster, 1)
    find = client.call(FindCoordinatorRequest(key_type=1, coordinator_keys=["tx-a"]), 4)
    assert find.coordinators[0].error_code == 0 and find.coordinators[0].node_id in (1, 2, 3)
    group = client.call(FindCoordinatorRequest(key_type=0, key="g"), 3)
    assert (group.error_code, group.node_id) == (0, cluster.groups.find_coordinator("g"))
    init = client.call(InitProducerIdRequest(transactional_id="tx-a",
                                             transaction_timeout_ms=60_000), 4)
    pid, epoch = init.producer_id, init.producer_epoch
    add = client.call(AddPartitionsToTxnRequest(
        v3_and_below_transactional_id="tx-a", v3_and_below_producer_id=pid,
        v3_and_below_producer_epoch=epoch, v3_and_below_topics=[
            AddPartitionsToTxnRequest.AddPartitionsToTxnTopic(name="t", partitions=[0, 5])]), 3)
    assert [r.partition_error_code for r in add.results_by_topic_v3_and_below[0]
            .results_by_partition] == [55, UNKNOWN_TOPIC]  # OPERATION_NOT_ATTEMPTED
    add = client.call(AddPartitionsToTxnRequest(
        v3_and_below_transactional_id="tx-a", v3_and_below_producer_id=pid,
        v3_and_below_producer_epoch=epoch, v3_and_below_topics=[
            AddPartitionsToTxnRequest.AddPartitionsToTxnTopic(name="t", partitions=[0])]), 3)
    assert add.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == 0
    records = build([b"in-txn"], producer_id=pid, epoch=epoch, sequence=0, txn=True)
    assert leader_of(cluster).call(produce("t", 0, records, txn_id="tx-a"), 9) \
        .responses[0].partition_responses[0].error_code == 0
    assert client.call(AddOffsetsToTxnRequest(transactional_id="tx-a", producer_id=pid,
                                              producer_epoch=epoch, group_id="g"), 3) \
        .error_code == 0
    T = TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic
    offsets = TxnOffsetCommitRequest(
        transactional_id="tx-a", group_id="g", producer_id=pid, producer_epoch=epoch,
        topics=[T(name="t", partitions=[T.TxnOffsetCommitRequestPartition(
            partition_index=0, committed_offset=1, committed_leader_epoch=-1,
            committed_metadata="m")])])
    coordinator = cluster.groups.find_coordinator("g")
    elsewhere = Client(cluster, next(b for b in cluster.brokers if b != coordinator))
    assert elsewhere.call(offsets, 3).topics[0].partitions[0].error_code == 16  # NOT_COORDINATOR
    commit = Client(cluster, coordinator).call(offsets, 3)
    assert commit.topics[0].partitions[0].error_code == 0
    fenced = client.call(EndTxnRequest(transactional_id="tx-a", producer_id=pid,
                                       producer_epoch=epoch - 1, committed=True), 3)
    assert fenced.error_code == 90  # PRODUCER_FENCED
    assert client.call(EndTxnRequest(transactional_id="tx-a", producer_id=pid,
                                     producer_epoch=epoch, committed=True), 3).error_code == 0
    part = cluster.describe_topic("t").partitions[0]
    assert part.last_stable_offset == part.log_end_offset == 2  # data + commit marker
    code, offsets = cluster.groups.offset_fetch(None, "g")
    assert code == 0 and offsets[("t", 0)].offset == 1
    idempotent = client.call(InitProducerIdRequest(transactional_id=None,
                                                   transaction_timeout_ms=1, producer_id=pid,
                                                   producer_epoch=3), 4)
    assert (idempotent.producer_id, idempotent.producer_epoch) == (pid, 4)  # KIP-360 bump


def test_elect_leaders_and_describe_log_dirs():
    cluster = Cluster(brokers=3, seed=3)
    cluster.create_topic("p", partitions=2, replication_factor=3)
    preferred = cluster.describe_topic("p").partitions[0].replicas[0]
    cluster.stop_broker(preferred)
    cluster.start_broker(preferred)
    cluster.advance(10_000)
    client = Client(cluster, 1)
    T = ElectLeadersRequest.TopicPartitions
    response = client.call(ElectLeadersRequest(election_type=0, timeout_ms=1000,
                                               topic_partitions=[T(topic="p", partitions=[0, 9])]),
                           1)
    results = {r.partition_id: r.error_code for r in response.replica_election_results[0]
               .partition_result}
    assert results == {0: 0, 9: UNKNOWN_TOPIC}
    assert cluster.describe_topic("p").partitions[0].leader == preferred
    dirs = Client(cluster, 2).call(DescribeLogDirsRequest(topics=None), 4).results[0]
    assert dirs.log_dir == "/minikafka/broker-2"
    assert sorted(p.partition_index for t in dirs.topics for p in t.partitions) == [0, 1]


# -- odd input --------------------------------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200), st.integers(0, 200))
def test_any_records_bytes_get_an_answer(data, cut):
    cluster = Cluster(brokers=1, seed=1)
    cluster.create_topic("f")
    client = Client(cluster, 1)
    valid = build([b"x" * 20])
    for records in (data, valid[:cut] + data, data + valid):
        response = client.call(produce("f", 0, records), 9)
        assert response.responses[0].partition_responses[0].error_code in (
            0, CORRUPT_MESSAGE, INVALID_RECORD)


def test_parse_batch_reads_the_header_without_decoding():
    values = [b"v1" * 40, b"v2" * 40, b"v3" * 40]
    raw = build(values, producer_id=9, epoch=1, sequence=40, codec=4)
    batch = parse_batch(raw)
    assert (batch.record_count, batch.producer_id, batch.producer_epoch, batch.base_sequence,
            batch.last_sequence, batch.compression, batch.size_bytes) == (
        3, 9, 1, 40, 42, 4, len(raw))
    assert batch.raw is raw
    assert [r[3] for r in batch.records] == values
