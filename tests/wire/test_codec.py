"""The sans-IO codec, registry and ApiVersions handler, in-process (no sockets)."""
from __future__ import annotations

import io
import struct
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.protocol.api_header import RequestHeader
from kafka.protocol.consumer import FetchRequest, ListOffsetsRequest
from kafka.protocol.metadata import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    MetadataRequest,
    MetadataResponse,
)
from kafka.protocol.producer import ProduceRequest

from minikafka.wire import (
    CloseConnection,
    Deferred,
    FrameDecoder,
    FrameTooLarge,
    HandlerFailed,
    HandlerRegistry,
    KafkaRequest,
    MalformedRequest,
    Session,
    UnknownApiKey,
    UnsupportedVersion,
    decode_request,
    encode_request,
    encode_response,
    exchange,
)
from minikafka.wire.codec import kafka_version_range, request_class, response_class
from minikafka.wire.handlers import api_versions

ALL_REQUEST_VERSIONS = [
    (key, version)
    for key in range(100)
    if request_class(key) is not None
    for version in range(kafka_version_range(key)[0], kafka_version_range(key)[1] + 1)
]


def base_registry() -> HandlerRegistry:
    """ApiVersions alone; tests register what else they need (default_registry() also
    holds every handler module, see test_handlers.py)."""
    registry = HandlerRegistry()
    registry.register(18, api_versions.handle, 0, 4)
    return registry


def frames(data: bytes) -> list[bytes]:
    """Split response bytes into payloads (size prefix dropped)."""
    out, pos = [], 0
    while pos < len(data):
        (size,) = struct.unpack_from(">i", data, pos)
        out.append(data[pos + 4:pos + 4 + size])
        pos += 4 + size
    assert pos == len(data)
    return out


def api_versions_frame(version: int, correlation_id: int = 1, name: str = "kafka-python",
                       software_version: str = "3.0.12") -> bytes:
    request = ApiVersionsRequest(version=min(version, 4), client_software_name=name,
                                 client_software_version=software_version)
    frame = bytearray(encode_request(request, correlation_id, "test-client"))
    struct.pack_into(">h", frame, 6, version)  # versions above 4 keep v4's (flexible) layout
    return bytes(frame)


# -- framing -----------------------------------------------------------------


def test_frame_decoder_handles_every_split_point():
    stream = b"".join(api_versions_frame(v, correlation_id=v) for v in range(5))
    for cut in range(len(stream) + 1):
        decoder = FrameDecoder()
        got = []
        for part in (stream[:cut], stream[cut:]):
            decoder.receive_data(part)
            while (frame := decoder.next_frame()) is not None:
                got.append(frame)
        assert [struct.unpack_from(">i", f, 4)[0] for f in got] == [0, 1, 2, 3, 4]
        assert decoder.buffered == 0 and not decoder.mid_frame


def test_frame_decoder_byte_at_a_time():
    frame = api_versions_frame(3)
    decoder = FrameDecoder()
    for i in range(len(frame) - 1):
        decoder.receive_data(frame[i:i + 1])
        assert decoder.next_frame() is None
    decoder.receive_data(frame[-1:])
    assert decoder.next_frame() == frame[4:]


@pytest.mark.parametrize("size", [101, 2**31 - 1, -1, -(2**31)])
def test_frame_decoder_rejects_sizes_outside_limit_before_buffering(size):
    decoder = FrameDecoder(max_request_bytes=100)
    decoder.receive_data(struct.pack(">i", size) + b"x" * 10)
    event = decoder.next_frame()
    assert isinstance(event, FrameTooLarge)
    assert decoder.buffered == 0
    decoder.receive_data(b"more")
    assert decoder.next_frame() is event  # sticky: the connection is done


def test_frame_at_exact_limit_is_accepted():
    decoder = FrameDecoder(max_request_bytes=100)
    decoder.receive_data(struct.pack(">i", 100) + bytes(100))
    assert decoder.next_frame() == bytes(100)


# -- request decoding ----------------------------------------------------------


@pytest.mark.parametrize("key,version", ALL_REQUEST_VERSIONS)
def test_every_request_class_and_version_round_trips(key, version):
    cls = request_class(key)
    frame = encode_request(cls(version=version), 77, "cid")
    request = decode_request(frame[4:])
    assert isinstance(request, KafkaRequest)
    assert (request.api_key, request.api_version, request.correlation_id, request.client_id) == (
        key, version, 77, "cid")
    assert request.body.to_dict() == cls(version=version).to_dict()
    assert request.size == len(frame) - 4


def produce(version: int) -> ProduceRequest:
    partition = ProduceRequest.TopicProduceData.PartitionProduceData(index=2, records=b"\x00" * 61 + b"batch")
    topic = ProduceRequest.TopicProduceData(name="orders", topic_id=uuid.UUID(int=7),  # v13+
                                            partition_data=[partition])
    return ProduceRequest(version=version, transactional_id=None, acks=-1, timeout_ms=1500, topic_data=[topic])


def fetch(version: int) -> FetchRequest:
    part = FetchRequest.FetchTopic.FetchPartition(partition=0, current_leader_epoch=3, fetch_offset=42,
                                                  last_fetched_epoch=-1, log_start_offset=-1,
                                                  partition_max_bytes=1 << 20)
    topic = FetchRequest.FetchTopic(topic="orders", partitions=[part])
    return FetchRequest(version=version, replica_id=-1, max_wait_ms=500, min_bytes=1, max_bytes=50 << 20,
                        isolation_level=1, session_id=0, session_epoch=-1, topics=[topic],
                        forgotten_topics_data=[], rack_id="")


def metadata(version: int) -> MetadataRequest:
    topics = [MetadataRequest.MetadataRequestTopic(name="orders"), MetadataRequest.MetadataRequestTopic(name="ü")]
    return MetadataRequest(version=version, topics=topics, allow_auto_topic_creation=True,
                           include_topic_authorized_operations=False)


def list_offsets(version: int) -> ListOffsetsRequest:
    part = ListOffsetsRequest.ListOffsetsTopic.ListOffsetsPartition(partition_index=1, timestamp=-2)
    topic = ListOffsetsRequest.ListOffsetsTopic(name="orders", partitions=[part])
    return ListOffsetsRequest(version=version, replica_id=-1, isolation_level=0, topics=[topic])


@pytest.mark.parametrize("build,version", [
    (produce, 3), (produce, 8), (produce, 9), (produce, 12),
    (fetch, 4), (fetch, 11), (fetch, 12),
    (metadata, 0), (metadata, 8), (metadata, 9), (metadata, 12),
    (list_offsets, 1), (list_offsets, 6), (list_offsets, 9),
])
def test_requests_with_content_round_trip(build, version):
    original = build(version)
    request = decode_request(encode_request(original, 5, "c")[4:])
    assert isinstance(request, KafkaRequest)
    assert request.body.version == version
    # Sub-structs built without a version list every field in to_dict(), so
    # compare what matters: the bytes each side encodes at this version.
    assert bytes(request.body.encode()) == bytes(build(version).encode(version=version))
    assert "orders" in repr(request.body)


@pytest.mark.property
@given(client_id=st.one_of(st.none(), st.text(max_size=40)), version=st.integers(0, 4),
       correlation_id=st.integers(-(2**31), 2**31 - 1))
@settings(max_examples=300, derandomize=True, deadline=None, database=None)
def test_hand_parsed_header_matches_kafka_python(client_id, version, correlation_id):
    frame = encode_request(ApiVersionsRequest(version=version, client_software_name="a",
                                              client_software_version="1"), correlation_id, client_id)
    payload = frame[4:]
    request = decode_request(payload)
    stream = io.BytesIO(payload)
    header = ApiVersionsRequest.parse_header(stream, version=version)
    assert request.correlation_id == header.correlation_id
    assert request.client_id == (header.client_id or "")  # Kafka reads a null client id as ""
    assert request.body.to_dict() == ApiVersionsRequest.decode(payload[stream.tell():], version=version).to_dict()


def test_flexible_header_with_tagged_fields_is_skipped_correctly():
    body = ApiVersionsRequest(version=3, client_software_name="a", client_software_version="1").encode()
    # Header v2 with one unknown tagged field (tag 5, 3 bytes) before the body.
    header = struct.pack(">hhih", 18, 3, 9, 1) + b"c" + b"\x01\x05\x03xyz"
    request = decode_request(header + body)
    assert isinstance(request, KafkaRequest)
    assert request.body.client_software_name == "a"
    assert RequestHeader.decode(io.BytesIO(header + body), flexible=True).correlation_id == 9


@pytest.mark.parametrize("payload,kind", [
    (b"", MalformedRequest),
    (b"\x00\x12\x00\x03\x00\x00", MalformedRequest),
    (struct.pack(">hhih", 18, 3, 1, 50) + b"short", MalformedRequest),  # client id past the end
    (struct.pack(">hhih", 18, 3, 1, -2), MalformedRequest),
    (struct.pack(">hhih", 18, 3, 1, 0), MalformedRequest),  # flexible header missing its tag byte
    (struct.pack(">hhih", 3, 12, 1, 0) + b"\x00\x05", MalformedRequest),  # body cut short
    (struct.pack(">hhih", 999, 0, 1, -1), UnknownApiKey),
    (struct.pack(">hhih", -1, 0, 1, -1), UnknownApiKey),
    (struct.pack(">hhih", 0, 2, 1, -1), UnsupportedVersion),  # Produce v2 was removed in Kafka 4.0
    (struct.pack(">hhih", 1, 19, 1, -1), UnsupportedVersion),
])
def test_bad_requests_are_typed_errors(payload, kind):
    event = decode_request(payload)
    assert type(event) is kind
    assert event.reason


def test_versions_mapping_limits_keys_and_ranges():
    frame = encode_request(metadata(12), 3)[4:]
    assert isinstance(decode_request(frame, {18: (0, 4)}), UnknownApiKey)
    assert isinstance(decode_request(frame, {3: (0, 11)}), UnsupportedVersion)
    assert isinstance(decode_request(frame, {3: (0, 12)}), KafkaRequest)


def test_kafka_minimums_come_from_the_specs():
    # kafka-python reports min_version 0 for everything; the spec floors are Kafka 4.x's (KIP-896).
    assert kafka_version_range(0)[0] == 3  # Produce
    assert kafka_version_range(1)[0] == 4  # Fetch
    assert kafka_version_range(3)[0] == 0  # Metadata
    assert kafka_version_range(18) == (0, 5)  # ApiVersions (Kafka 4.4.0's spec, KIP-1242)
    assert ProduceRequest.min_version == 0
    assert kafka_version_range(0) == (3, 13) and kafka_version_range(1) == (4, 18)


# -- response encoding ---------------------------------------------------------


@pytest.mark.parametrize("key,version", ALL_REQUEST_VERSIONS)
def test_response_frames_match_kafka_python(key, version):
    reference = response_class(key)(version=version)
    reference.with_header(correlation_id=123456)
    expected = bytes(reference.encode(header=True, framed=True))
    assert encode_response(response_class(key)(version=version), key, version, 123456) == expected
    body = bytes(response_class(key)(version=version).encode())
    assert encode_response(body, key, version, 123456) == expected


def test_response_without_version_takes_the_request_version():
    frame = encode_response(MetadataResponse(brokers=[], topics=[]), 3, 9, 4)
    decoded = MetadataResponse[9].decode(frame[4:], header=True)
    assert decoded.header.correlation_id == 4 and decoded.version == 9


# -- ApiVersions ----------------------------------------------------------------


def run(data: bytes, registry: HandlerRegistry | None = None, **kw):
    return exchange(registry or base_registry(), data, **kw)


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_api_versions_response_decodes_and_has_v0_header(version):
    out = run(api_versions_frame(version, correlation_id=41))
    assert out.close is None
    [payload] = frames(out.data)
    assert struct.unpack_from(">i", payload)[0] == 41
    # v0 header: the body starts right after the correlation id (no tagged-field byte).
    expected_body = ApiVersionsResponse(
        version=version, error_code=0, throttle_time_ms=0,
        api_keys=[ApiVersionsResponse.ApiVersion(api_key=18, min_version=0, max_version=4)],
    ).encode()
    assert payload[4:] == bytes(expected_body)
    response = ApiVersionsResponse[version].decode(payload, header=True)
    assert response.error_code == 0
    assert [(a.api_key, a.min_version, a.max_version) for a in response.api_keys] == [(18, 0, 4)]
    assert not response.tags and not response.unknown_tags
    if version >= 3:
        assert payload[-1] == 0  # empty tagged-field section, nothing in it


@pytest.mark.parametrize("version", [5, 6, 100, 32767])
def test_api_versions_above_max_gets_v0_unsupported_version(version):
    out = run(api_versions_frame(version, correlation_id=8))
    assert out.close is None
    [payload] = frames(out.data)
    response = ApiVersionsResponse[0].decode(payload, header=True)
    assert response.header.correlation_id == 8
    assert response.error_code == 35
    assert [(a.api_key, a.min_version, a.max_version) for a in response.api_keys] == [(18, 0, 4)]
    assert payload[4:] == b"\x00\x23\x00\x00\x00\x01\x00\x12\x00\x00\x00\x04"  # exactly a v0 body


def test_api_versions_above_max_ignores_the_body():
    # Kafka does not parse the body of an ApiVersions version it does not know.
    frame = struct.pack(">hhih", 18, 9, 2, 1) + b"c" + b"\x00" + b"\xff" * 7
    out = run(struct.pack(">i", len(frame)) + frame)
    response = ApiVersionsResponse[0].decode(frames(out.data)[0], header=True)
    assert response.error_code == 35


def test_api_versions_max_follows_the_registration():
    registry = HandlerRegistry()
    registry.register(18, api_versions.handle, 0, 2)
    out = run(api_versions_frame(3), registry)
    response = ApiVersionsResponse[0].decode(frames(out.data)[0], header=True)
    assert response.error_code == 35 and response.api_keys[0].max_version == 2


@pytest.mark.parametrize("name,version", [("", "1"), ("a", ""), ("-bad", "1"), ("ok", "1.0-"), ("sp ace", "1")])
def test_api_versions_v3_rejects_invalid_client_software(name, version):
    out = run(api_versions_frame(3, name=name, software_version=version, correlation_id=6))
    # Kafka answers INVALID_REQUEST in the request's version (v3 here). kafka-python
    # decodes any ApiVersions error body as v0, so compare bytes instead.
    expected = ApiVersionsResponse(version=3, error_code=42, api_keys=[], throttle_time_ms=0).encode()
    assert frames(out.data) == [struct.pack(">i", 6) + bytes(expected)]
    assert out.close is None


@pytest.mark.parametrize("name,version", [("kafka-python", "3.0.12"), ("librdkafka", "2.0.2"),
                                          ("apache-kafka-java", "4.1.0"), ("a", "1")])
def test_api_versions_v3_accepts_client_software(name, version):
    session = Session(base_registry())
    session.receive_data(api_versions_frame(3, name=name, software_version=version))
    out = session.process(0)
    assert ApiVersionsResponse[3].decode(frames(out.data)[0], header=True).error_code == 0
    assert (session.client_software_name, session.client_software_version) == (name, version)


def test_api_versions_lists_exactly_the_registry():
    registry = base_registry()
    assert dict(registry.version_ranges()) == {18: (0, 4)}
    first = ApiVersionsResponse[4].decode(frames(run(api_versions_frame(4), registry).data)[0], header=True)
    assert [(a.api_key, a.min_version, a.max_version) for a in first.api_keys] == [(18, 0, 4)]
    registry.register(3, lambda ctx, req: MetadataResponse(brokers=[], topics=[]), 0, 12)
    registry.register(0, lambda ctx, req: None, *kafka_version_range(0))
    second = ApiVersionsResponse[4].decode(frames(run(api_versions_frame(4), registry).data)[0], header=True)
    # Produce is listed from v0, as Kafka 4.x lists it (KAFKA-18659), but served from v3.
    assert [(a.api_key, a.min_version, a.max_version) for a in second.api_keys] == [
        (0, 0, 13), (3, 0, 12), (18, 0, 4)]
    assert dict(registry.version_ranges())[0] == (3, 13)


# -- registry ------------------------------------------------------------------


def test_register_rejects_ranges_outside_kafka():
    registry = HandlerRegistry()
    with pytest.raises(ValueError):
        registry.register(0, lambda ctx, req: None, 2, 12)  # Produce v2: gone since Kafka 4.0
    with pytest.raises(ValueError):
        registry.register(18, lambda ctx, req: None, 0, 6)
    with pytest.raises(ValueError):
        registry.register(18, lambda ctx, req: None, 3, 2)
    with pytest.raises(ValueError):
        registry.register(7, lambda ctx, req: None, 0, 0)  # ControlledShutdown: no client class
    assert len(registry) == 0


def test_handles_decorator_and_unregister():
    registry = HandlerRegistry()

    @registry.handles(3, 0, 12)
    def metadata_handler(ctx, request):
        return MetadataResponse(brokers=[], topics=[])

    assert 3 in registry and registry.get(3).handler is metadata_handler
    generation = registry.generation
    registry.unregister(3)
    assert 3 not in registry and registry.generation == generation + 1


def metadata_registry(handler) -> HandlerRegistry:
    registry = base_registry()
    registry.register(3, handler, 0, 12)
    return registry


def test_context_carries_request_fields():
    seen = []

    def handler(ctx, request):
        seen.append((ctx.broker_id, ctx.cluster, ctx.api_key, ctx.api_version, ctx.correlation_id,
                     ctx.client_id, ctx.client_host, ctx.client_port, ctx.now_ms, ctx.client_software_name))
        return MetadataResponse(brokers=[], topics=[])

    data = api_versions_frame(4) + encode_request(metadata(12), 99, "app")
    cluster = object()
    out = run(data, metadata_registry(handler), now_ms=1234, broker_id=2, cluster=cluster,
              client_host="127.0.0.1", client_port=5555)
    assert len(frames(out.data)) == 2
    assert seen == [(2, cluster, 3, 12, 99, "app", "127.0.0.1", 5555, 1234, "kafka-python")]


def test_pipelined_responses_keep_request_order():
    data = b"".join(api_versions_frame(v % 5, correlation_id=c) for c, v in enumerate(range(50)))
    out = run(data)
    assert [struct.unpack_from(">i", f)[0] for f in frames(out.data)] == list(range(50))


def test_handler_returning_none_sends_nothing():
    registry = base_registry()
    registry.register(0, lambda ctx, req: None, 3, 12)  # like Produce acks=0
    out = run(encode_request(produce(9), 1) + api_versions_frame(0, correlation_id=2), registry)
    assert [struct.unpack_from(">i", f)[0] for f in frames(out.data)] == [2]


def test_deferred_parks_the_connection_in_order():
    state = {"ready": False}

    def handler(ctx, request):
        def poll():
            return MetadataResponse(brokers=[], topics=[]) if state["ready"] else None
        return Deferred(ctx.now_ms + 500, poll, lambda: MetadataResponse(throttle_time_ms=7, brokers=[], topics=[]))

    session = Session(metadata_registry(handler))
    session.receive_data(encode_request(metadata(12), 1) + api_versions_frame(4, correlation_id=2))
    assert session.process(0).data == b"" and session.parked and session.deadline_ms == 500
    assert session.process(100).data == b""  # still waiting; the ApiVersions behind it waits too
    state["ready"] = True
    out = session.process(200)
    assert [struct.unpack_from(">i", f)[0] for f in frames(out.data)] == [1, 2]
    assert not session.parked


def test_deferred_times_out_with_the_timeout_response():
    def handler(ctx, request):
        return Deferred(ctx.now_ms + 500, lambda: None,
                        lambda: MetadataResponse(throttle_time_ms=7, brokers=[], topics=[]))

    session = Session(metadata_registry(handler))
    session.receive_data(encode_request(metadata(12), 1))
    assert session.process(1000).data == b""
    assert session.process(1499).data == b""
    [payload] = frames(session.process(1500).data)
    assert MetadataResponse[12].decode(payload, header=True).throttle_time_ms == 7


def test_handler_errors_close_only_that_connection():
    def broken(ctx, request):
        raise RuntimeError("bug")

    out = run(api_versions_frame(4, correlation_id=1) + encode_request(metadata(12), 2)
              + api_versions_frame(4, correlation_id=3), metadata_registry(broken))
    assert isinstance(out.close, HandlerFailed) and "bug" in out.close.reason
    assert [struct.unpack_from(">i", f)[0] for f in frames(out.data)] == [1]

    def closer(ctx, request):
        raise CloseConnection("go away")

    out = run(encode_request(metadata(12), 2), metadata_registry(closer))
    assert isinstance(out.close, HandlerFailed) and out.data == b""


def test_close_decisions_for_protocol_errors():
    unknown = run(encode_request(metadata(12), 2))
    assert isinstance(unknown.close, UnknownApiKey)
    unsupported = run(encode_request(metadata(12), 2), _metadata_upto(11))
    assert isinstance(unsupported.close, UnsupportedVersion)
    oversized = run(api_versions_frame(4), max_request_bytes=10)
    assert isinstance(oversized.close, FrameTooLarge) and oversized.data == b""


def _metadata_upto(max_version: int) -> HandlerRegistry:
    registry = base_registry()
    registry.register(3, lambda ctx, req: MetadataResponse(brokers=[], topics=[]), 0, max_version)
    return registry


def test_zero_size_frame_is_malformed_not_a_crash():
    decoder = FrameDecoder()
    decoder.receive_data(b"\x00\x00\x00\x00")
    assert decoder.next_frame() == b""
    assert isinstance(run(b"\x00\x00\x00\x00").close, MalformedRequest)
