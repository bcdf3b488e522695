"""The hand-written Produce and Fetch codecs agree with kafka-python's, and the real
handlers survive mutated requests (an answer or a closed connection, never a crash)."""
from __future__ import annotations

import random
import struct
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.protocol.producer import ProduceRequest, ProduceResponse

from minikafka.cluster import Cluster
from minikafka.wire import Session, default_registry, encode_request
from minikafka.wire.compact import Reader, uvarint
from minikafka.wire.produce_codec import decode, encode_produce_response

from .test_handlers import build, fetch, produce

_T = ProduceRequest.TopicProduceData


ALPHA, BETA = uuid.UUID(int=0xA1FA), uuid.UUID(int=0xBE7A)


def sample_request(txn_id: str | None) -> ProduceRequest:
    # Both a name and an id: the encoder writes the one the version has.
    return ProduceRequest(transactional_id=txn_id, acks=-1, timeout_ms=1234, topic_data=[
        _T(name="alpha", topic_id=ALPHA, partition_data=[
            _T.PartitionProduceData(index=0, records=build([b"a", b"b"])),
            _T.PartitionProduceData(index=3, records=None)]),
        _T(name="beta-é", topic_id=BETA, partition_data=[
            _T.PartitionProduceData(index=1, records=build([b"c"], codec=1))])])


@pytest.mark.parametrize("version", range(3, 14))
@pytest.mark.parametrize("txn_id", [None, "tx-1"])
def test_produce_request_decoding_matches_kafka_python(version, txn_id):
    frame = encode_request(sample_request(txn_id), 5, "c", version=version)
    header_end = 4 + 10 + 1 + (1 if version >= 9 else 0)  # client id "c", tagged fields
    body = memoryview(frame)[header_end:]
    ours = decode(body, version)
    theirs = ProduceRequest.decode(body, version=version)
    assert (ours.transactional_id, ours.acks, ours.timeout_ms) == (
        theirs.transactional_id, theirs.acks, theirs.timeout_ms)
    by_id = version >= 13  # KIP-516: the id in place of the name
    assert [(t.name, t.topic_id, [(p.index, p.records) for p in t.partition_data])
            for t in ours.topic_data] == [
        (None if by_id else t.name, t.topic_id if by_id else None,
         [(p.index, p.records) for p in t.partition_data]) for t in theirs.topic_data]
    assert [t.topic_id for t in ours.topic_data] == ([ALPHA, BETA] if by_id else [None, None])


def test_tagged_fields_are_skipped():
    reader = Reader(memoryview(b"\x02\x00\x03abc\x05\x01z" + b"\x07"))
    reader.skip_tags()
    assert reader.buf[reader.pos] == 7
    with pytest.raises(ValueError):
        Reader(memoryview(b"\x01\x00\x09ab")).skip_tags()  # a tag longer than the body
    assert uvarint(300) == b"\xac\x02"


@pytest.mark.parametrize("version", range(3, 14))
def test_produce_response_encoding_matches_kafka_python(version):
    alpha, beta = (ALPHA, BETA) if version >= 13 else ("alpha", "beta")
    answers = [(alpha, [(0, 0, 42, -1, 7, None), (3, 6, -1, -1, -1, "not the leader")]),
               (beta, [(1, 0, 0, 1_700_000_000_000, 0, None)])]
    _R = ProduceResponse.TopicProduceResponse
    _P = _R.PartitionProduceResponse
    named = (lambda key: {"topic_id": key}) if version >= 13 else (lambda key: {"name": key})
    expected = ProduceResponse(version=version, throttle_time_ms=0, responses=[
        _R(**named(name), partition_responses=[
            _P(index=i, error_code=c, base_offset=b, log_append_time_ms=t, log_start_offset=s,
               record_errors=[], error_message=m) for i, c, b, t, s, m in parts])
        for name, parts in answers])
    assert encode_produce_response(version, answers) == bytes(expected.encode())


@pytest.mark.parametrize("version", [9, 10, 12, 13])
def test_produce_response_leader_hints_match_kafka_python(version):
    # KIP-951 (v10+): a partition answered NOT_LEADER_OR_FOLLOWER names its leader.
    alpha = ALPHA if version >= 13 else "alpha"
    answers = [(alpha, [(0, 0, 42, -1, 7, None), (3, 6, -1, -1, -1, None)])]
    endpoints = [(2, "127.0.0.1", 9093, "rack-b")]
    _R = ProduceResponse.TopicProduceResponse
    _P = _R.PartitionProduceResponse
    hinted = version >= 10
    moved = {"current_leader": _P.LeaderIdAndEpoch(leader_id=2, leader_epoch=5)} if hinted else {}
    named = {"topic_id": ALPHA} if version >= 13 else {"name": "alpha"}
    expected = ProduceResponse(version=version, throttle_time_ms=0, responses=[
        _R(**named, partition_responses=[
            _P(index=0, error_code=0, base_offset=42, log_append_time_ms=-1, log_start_offset=7,
               record_errors=[], error_message=None),
            _P(index=3, error_code=6, base_offset=-1, log_append_time_ms=-1, log_start_offset=-1,
               record_errors=[], error_message=None, **moved)])],
        **({"node_endpoints": [ProduceResponse.NodeEndpoint(
            node_id=2, host="127.0.0.1", port=9093, rack="rack-b")]} if hinted else {}))
    body = encode_produce_response(version, answers, leaders={(alpha, 3): (2, 5)},
                                   node_endpoints=endpoints)
    assert body == bytes(expected.encode())
    decoded = ProduceResponse.decode(body, version=version)
    if hinted:
        leader = decoded.responses[0].partition_responses[1].current_leader
        assert (leader.leader_id, leader.leader_epoch) == (2, 5)
        assert [(n.node_id, n.host, n.port, n.rack) for n in decoded.node_endpoints] == endpoints


@pytest.mark.parametrize("version", [9, 13])
def test_truncated_produce_bodies_are_malformed_not_crashes(version):
    frame = encode_request(sample_request("tx"), 5, "c", version=version)
    body = bytes(frame[16:])
    for cut in range(len(body)):
        with pytest.raises(ValueError):
            decode(memoryview(body[:cut]), version)


# -- mutated requests through the real handlers ---------------------------------------

CLUSTER = Cluster(brokers=3, seed=9)
CLUSTER.create_topic("f", partitions=2, replication_factor=1)  # acks=all answers at once
REGISTRY = default_registry()
LEADER = CLUSTER.describe_topic("f").partitions[0].leader
SEEDS = [
    *(encode_request(produce("f", 0, build([b"x" * 30, b"y"]), acks=a), 1, "fz", version=v)
      for v in (3, 8, 9, 12) for a in (1, -1)),
    *(encode_request(produce(None, 0, build([b"x" * 30, b"y"]), acks=a, topic_id=uuid.UUID(
        CLUSTER.describe_topic("f").topic_id)), 1, "fz", version=13) for a in (1, -1)),
    *(encode_request(fetch("f", p, 0, max_wait=0), 2, "fz", version=v)
      for v in (4, 11, 12) for p in (0, 1)),
]


def mutate(frame: bytes, rng: random.Random) -> bytes:
    data = bytearray(frame)
    for _ in range(rng.randint(1, 4)):
        op = rng.choice(["flip", "byte", "cut", "dup"])
        at = rng.randrange(4, len(data))
        if op == "flip":
            data[at] ^= 1 << rng.randrange(8)
        elif op == "byte":
            data[at] = rng.choice([0, 1, 0x7F, 0x80, 0xFF])
        elif op == "cut":
            del data[at:at + rng.randint(1, 8)]
        else:
            data[at:at] = data[at:at + rng.randint(1, 8)]
    struct.pack_into(">i", data, 0, len(data) - 4)  # keep the frame whole
    return bytes(data)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SEEDS), st.integers(0, 2**32))
def test_mutated_produce_and_fetch_requests_never_crash_a_handler(seed, rng_seed):
    session = Session(REGISTRY, broker_id=LEADER, cluster=CLUSTER)
    session.receive_data(mutate(seed, random.Random(rng_seed)))
    out = session.process(0)
    if session.parked:  # a mutated max_wait_ms: let it time out
        out = session.process(10**9)
    if out.close is not None:
        assert type(out.close).__name__ in ("MalformedRequest", "UnsupportedVersion",
                                            "UnknownApiKey"), out.close
        return
    session.receive_data(SEEDS[0])
    assert session.process(0).data, "the connection still serves the next request"

