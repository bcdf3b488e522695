"""What a client cannot do to `minikafka serve`: ask for unbounded work, send nulls,
sit idle forever, or flood the log by hanging up; and the journal stays bounded.

Every test talks to a real loopback socket (WireServer or a served Cluster)."""
from __future__ import annotations

import logging
import socket
import struct
import time

import pytest
from kafka.protocol.admin import (
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    CreateTopicsRequest,
    CreateTopicsResponse,
    DescribeConfigsRequest,
    DescribeLogDirsRequest,
    ElectLeadersRequest,
    ListGroupsRequest,
)
from kafka.protocol.consumer import OffsetFetchRequest
from kafka.protocol.metadata import FindCoordinatorRequest, MetadataRequest, MetadataResponse

from minikafka.cluster import Cluster
from minikafka.core.checkers import acknowledged_writes, check_lost
from minikafka.wire import HandlerRegistry, WireServer, encode_request
from minikafka.wire.handlers import api_versions

from .test_robustness import (
    TIMEOUT,
    assert_closed_by_server,
    assert_healthy,
    call_api_versions,
    connect,
    read_frame,
    wait_until,
)

# -- a client hanging up mid-response ----------------------------------------------

RESPONSE_BYTES = 64 << 20  # a thousand 64 KiB chunks


def _huge_metadata(ctx, request):
    return b"\x00" * RESPONSE_BYTES  # an "encoded body": its content does not matter here


def test_a_client_hanging_up_mid_response_costs_one_log_line(caplog):
    registry = HandlerRegistry()
    registry.register(18, api_versions.handle, 0, 4)
    registry.register(3, _huge_metadata, 0, 12)
    with WireServer(ports=[0], registry=registry) as srv:
        caplog.set_level(logging.DEBUG)
        caplog.clear()
        sock = connect(srv)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.sendall(encode_request(MetadataRequest(version=5, topics=None), 1))
        sock.recv(1024)  # the response has started
        # RST instead of FIN: the server's next send fails
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
        wait_until(lambda: srv.connection_count() == 0)
        assert_healthy(srv)
        # The server's own lines: a kafka-python client left by another test in this
        # worker may log its metadata retries meanwhile.
        lines = [r for r in caplog.records if r.levelno >= logging.INFO
                 and r.name.startswith("minikafka") and "listening" not in r.getMessage()]
    assert len(lines) <= 1, [r.getMessage() for r in lines]


# -- idle connections ----------------------------------------------------------------


def _api_versions_registry() -> HandlerRegistry:
    registry = HandlerRegistry()
    registry.register(18, api_versions.handle, 0, 4)
    return registry


def test_idle_connections_are_closed_after_connections_max_idle_ms():
    with WireServer(ports=[0], registry=_api_versions_registry(),
                    connections_max_idle_ms=300) as srv:
        with connect(srv) as idle, connect(srv) as busy:
            started = time.monotonic()
            for c in range(8):  # a client that keeps talking stays connected
                assert call_api_versions(busy, correlation_id=c).error_code == 0
                time.sleep(0.1)
            assert_closed_by_server(idle)
            assert time.monotonic() - started < TIMEOUT
            assert call_api_versions(busy, correlation_id=99).error_code == 0
        assert_healthy(srv)


def test_connections_stay_open_by_default():
    with WireServer(ports=[0], registry=_api_versions_registry()) as srv:
        assert srv.connections_max_idle_ms == 600_000  # Kafka's default: 10 minutes
        with connect(srv) as sock:
            time.sleep(0.5)
            assert call_api_versions(sock).error_code == 0


# -- work bounded by Kafka's limits, not by what a client asks ----------------------------

POLICY_VIOLATION, INVALID_REPLICATION_FACTOR = 44, 38


@pytest.fixture
def served_cluster():
    cluster = Cluster(brokers=3, seed=5)
    with cluster.serve(port=0) as server:
        yield cluster, server


def _call(server, request, version: int, response_class, correlation_id: int = 7,
          timeout: float = TIMEOUT):
    port = next(iter(server.ports.values()))
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(encode_request(request, correlation_id, "limits", version=version))
        return response_class.decode(read_frame(sock), version=version, header=True)


def _create_topics(*topics):
    return CreateTopicsRequest(topics=[CreateTopicsRequest.CreatableTopic(
        name=name, num_partitions=n, replication_factor=rf, assignments=[], configs=[])
        for name, n, rf in topics], timeout_ms=5000, validate_only=False)


def test_create_partitions_to_2_31_is_refused_at_once(served_cluster):
    cluster, server = served_cluster
    with cluster.lock:
        cluster.create_topic("small", 1, 1)
    started = time.monotonic()
    request = CreatePartitionsRequest(topics=[CreatePartitionsRequest.CreatePartitionsTopic(
        name="small", count=2**31 - 1, assignments=None)], timeout_ms=5000, validate_only=False)
    response = _call(server, request, 3, CreatePartitionsResponse)
    assert time.monotonic() - started < 2.0
    assert [(r.error_code, r.error_message) for r in response.results] == [
        (POLICY_VIOLATION, "Excessively large number of partitions per request.")]
    with cluster.lock:
        assert len(cluster.controller.topics["small"].partitions) == 1


def test_create_topics_over_10000_partitions_in_one_request_is_refused_whole(served_cluster):
    cluster, server = served_cluster
    request = _create_topics(("a", 6000, 1), ("b", 4001, 1), ("c", 1, 1))
    response = _call(server, request, 7, CreateTopicsResponse)
    assert [t.error_code for t in response.topics] == [POLICY_VIOLATION] * 3
    with cluster.lock:
        assert not {"a", "b", "c"} & set(cluster.controller.topics)
    # one topic asking for 2**31-1 partitions, or a replication factor of 32767
    response = _call(server, _create_topics(("huge", 2**31 - 1, 1), ("wide", 1, 32767)), 7,
                     CreateTopicsResponse)
    assert [t.error_code for t in response.topics] == [POLICY_VIOLATION] * 2
    response = _call(server, _create_topics(("wide", 1, 32767)), 7, CreateTopicsResponse)
    assert [t.error_code for t in response.topics] == [INVALID_REPLICATION_FACTOR]
    response = _call(server, _create_topics(("fine", 3, 3)), 7, CreateTopicsResponse)
    assert [t.error_code for t in response.topics] == [0]


# -- nulls ---------------------------------------------------------------------------------


NULLABLE = [  # fields Kafka's schemas mark nullable: answered, connection kept
    (MetadataRequest(version=12, topics=None, allow_auto_topic_creation=False), 12),
    (DescribeConfigsRequest(resources=[DescribeConfigsRequest.DescribeConfigsResource(
        resource_type=4, resource_name="1", configuration_keys=None)],
        include_synonyms=False, include_documentation=False), 4),
    (DescribeLogDirsRequest(topics=None), 4),
    (ElectLeadersRequest(election_type=0, topic_partitions=None, timeout_ms=1000), 2),
    (OffsetFetchRequest(group_id="g", topics=None, require_stable=False), 7),
    (CreatePartitionsRequest(topics=[CreatePartitionsRequest.CreatePartitionsTopic(
        name="nope", count=2, assignments=None)], timeout_ms=1000, validate_only=False), 3),
]


@pytest.mark.parametrize("request_,version", NULLABLE,
                         ids=[type(r).__name__ for r, _ in NULLABLE])
def test_null_where_the_schema_allows_it_is_answered(served_cluster, request_, version):
    cluster, server = served_cluster
    port = next(iter(server.ports.values()))
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
        sock.sendall(encode_request(request_, 1, "nulls", version=version))
        assert struct.unpack_from(">i", read_frame(sock))[0] == 1
        assert call_api_versions(sock, correlation_id=2).error_code == 0  # still open
    assert not server.wire.closed_connections


NOT_NULLABLE = [  # Kafka cannot parse these and closes the connection; so does minikafka
    (ListGroupsRequest(states_filter=None, types_filter=[]), 5),
    (ListGroupsRequest(states_filter=[], types_filter=None), 5),
    (FindCoordinatorRequest(key_type=0, coordinator_keys=None), 6),
    (FindCoordinatorRequest(key_type=0, key=None), 3),
    (DescribeConfigsRequest(resources=None, include_synonyms=False,
                            include_documentation=False), 4),
]


@pytest.mark.parametrize("request_,version", NOT_NULLABLE,
                         ids=[f"{type(r).__name__}-v{v}" for r, v in NOT_NULLABLE])
def test_null_where_the_schema_forbids_it_closes_only_that_connection(
        served_cluster, request_, version, caplog):
    cluster, server = served_cluster
    caplog.set_level(logging.INFO)
    port = next(iter(server.ports.values()))
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
        sock.sendall(encode_request(request_, 1, "nulls", version=version))
        assert_closed_by_server(sock)
    reason = server.wire.closed_connections[-1][2]
    assert "not nullable" in reason.reason and type(reason).__name__ == "MalformedRequest"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR
                and r.name.startswith("minikafka")]  # no traceback
    with connect(server.wire) as sock:  # the server carries on
        assert call_api_versions(sock, correlation_id=3).error_code == 0


# -- the journal of a long-running serve ---------------------------------------------------


def test_a_served_journal_stays_bounded_and_the_checkers_read_its_window():
    from kafka import KafkaProducer

    cluster = Cluster(brokers=3, seed=3, journal_max_events=500)
    with cluster.serve(port=0) as server:
        with cluster.lock:
            cluster.create_topic("events", 3, 3)
        producer = KafkaProducer(bootstrap_servers=server.bootstrap_servers, acks="all",
                                 linger_ms=0, max_in_flight_requests_per_connection=1)
        for i in range(600):
            producer.send("events", key=str(i % 7).encode(), value=b"v%d" % i).get(10)
        producer.close(5)
        with cluster.lock:
            journal = cluster.journal
            assert journal.next_seq > 2000  # far more happened than is kept
            # the bound counts an event once plus once per record it carries
            weight = sum(1 + len(e.fields.get("records") or ()) for e in journal)
            assert 450 < weight <= 500
            assert len(journal) == len(journal.events) < 500
            assert journal.first_seq == journal.next_seq - len(journal)
            assert journal.since(journal.next_seq - 10)[0].seq == journal.next_seq - 10
            assert journal.since(0)[0].seq == journal.first_seq
            appends = journal.of_kind("append")
            assert appends and all(e.seq >= journal.first_seq for e in appends)
        # both doors journal acknowledgements: the checkers judge the retained window
        # against the log
        with cluster.lock:
            producer = cluster.producer(acks="all")
            for i in range(100):
                producer.send("events", value=b"in-process %d" % i)
            producer.flush()
            acked = acknowledged_writes(cluster.journal)
            assert {b"in-process %d" % i for i in range(100)} <= {w.value for w in acked}
            assert sum(1 + len(e.fields.get("records") or ()) for e in cluster.journal) <= 500
            observed = {}
            for p in range(3):
                replica = cluster.leader_replica("events", p)
                batches = replica.log.read(replica.log_start_offset, replica.high_watermark,
                                           1 << 30)
                observed[("events", p)] = [(r.offset, r.value) for b in batches
                                           for r in b.iter_records()]
            assert check_lost(acked, observed) == []
            lost = check_lost(acked + [acked[0]._replace(value=b"never written")], observed)
            assert [w.value for w in lost] == [b"never written"]


def test_metadata_auto_creates_at_most_10000_partitions_per_request():
    cluster = Cluster(brokers=1, seed=5, broker_config={"num.partitions": 5001})
    with cluster.serve(port=0) as server:
        names = ["auto-1", "auto-2"]
        request = MetadataRequest(version=12, allow_auto_topic_creation=True,
                                  include_topic_authorized_operations=False,
                                  topics=[MetadataRequest.MetadataRequestTopic(name=n)
                                          for n in names])
        response = _call(server, request, 12, MetadataResponse, timeout=60)
        codes = {t.name: t.error_code for t in response.topics}
        assert codes["auto-2"] == 3  # UNKNOWN_TOPIC_OR_PARTITION: over the limit
        with cluster.lock:
            assert cluster.list_topics() == ["auto-1"]


def test_auto_create_topics_enable_false_creates_nothing():
    cluster = Cluster(brokers=1, seed=5, broker_config={"auto.create.topics.enable": False})
    with cluster.serve(port=0) as server:
        request = MetadataRequest(version=12, allow_auto_topic_creation=True,
                                  include_topic_authorized_operations=False,
                                  topics=[MetadataRequest.MetadataRequestTopic(name="nope")])
        assert [t.error_code for t in _call(server, request, 12, MetadataResponse).topics] == [3]
        with cluster.lock:
            assert cluster.list_topics() == []


def test_a_batch_claiming_more_records_than_it_holds_is_refused(served_cluster):
    from crc32c import crc32c
    from kafka.protocol.producer import ProduceResponse

    from .test_handlers import build, produce

    cluster, server = served_cluster
    with cluster.lock:
        cluster.create_topic("claims", 1, 1)
        leader = cluster.leader_replica("claims", 0).broker_id
    raw = bytearray(build([b"one record"]))
    struct.pack_into(">i", raw, 23, 2**31 - 2)  # lastOffsetDelta
    struct.pack_into(">i", raw, 57, 2**31 - 1)  # record count
    struct.pack_into(">I", raw, 17, crc32c(bytes(raw[21:])))
    port = server.ports[leader]
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
        sock.sendall(encode_request(produce("claims", 0, bytes(raw)), 1, "limits", version=9))
        response = ProduceResponse.decode(read_frame(sock), version=9, header=True)
    assert response.responses[0].partition_responses[0].error_code == 87  # INVALID_RECORD
    with cluster.lock:
        assert cluster.describe_topic("claims").partitions[0].log_end_offset == 0
