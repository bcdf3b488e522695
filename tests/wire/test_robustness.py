"""The TCP server on 127.0.0.1 (ephemeral ports) against bad and slow clients, and real clients.

Every socket has a timeout and every test opens a handful of connections.
"""
from __future__ import annotations

import shutil
import socket
import struct
import subprocess
import threading
import time

import pytest
from kafka.protocol.metadata import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    MetadataRequest,
    MetadataResponse,
)

from minikafka.wire import (
    Deferred,
    FrameTooLarge,
    HandlerRegistry,
    MalformedRequest,
    UnknownApiKey,
    UnsupportedVersion,
    WireServer,
    encode_request,
)
from minikafka.wire.handlers import api_versions

TIMEOUT = 5.0
SMALL_LIMIT = 4096


def api_versions_only(max_version: int = 4) -> HandlerRegistry:
    registry = HandlerRegistry()
    registry.register(18, api_versions.handle, 0, max_version)
    return registry


@pytest.fixture
def server():
    with WireServer(ports=[0], registry=api_versions_only(), max_request_bytes=SMALL_LIMIT) as srv:
        yield srv


def connect(srv: WireServer, broker_id: int | None = None) -> socket.socket:
    port = srv.bound_ports[broker_id if broker_id is not None else srv.broker_ids[0]]
    return socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)


def read_exactly(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed by server")
        buf += chunk
    return buf


def read_frame(sock: socket.socket) -> bytes:
    (size,) = struct.unpack(">i", read_exactly(sock, 4))
    return read_exactly(sock, size)


def api_versions_frame(version: int = 4, correlation_id: int = 1) -> bytes:
    request = ApiVersionsRequest(version=min(version, 4), client_software_name="test",
                                 client_software_version="1.0")
    frame = bytearray(encode_request(request, correlation_id, "robustness"))
    struct.pack_into(">h", frame, 6, version)
    return bytes(frame)


def call_api_versions(sock: socket.socket, version: int = 4, correlation_id: int = 1) -> ApiVersionsResponse:
    sock.sendall(api_versions_frame(version, correlation_id))
    response = ApiVersionsResponse.decode(read_frame(sock), version=min(version, 4), header=True)
    assert response.header.correlation_id == correlation_id
    return response


def assert_closed_by_server(sock: socket.socket) -> None:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        try:
            if sock.recv(65536) == b"":
                return
        except (ConnectionResetError, BrokenPipeError):
            return
    raise AssertionError("server did not close the connection")


def assert_healthy(srv: WireServer) -> None:
    with connect(srv) as sock:
        response = call_api_versions(sock, 4, correlation_id=99)
        assert response.error_code == 0
        advertised = {a.api_key: (a.min_version, a.max_version) for a in response.api_keys}
        assert advertised == dict(srv.registry.version_ranges())


def wait_until(predicate, timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.01)


# -- well-formed traffic -------------------------------------------------------


def test_pipelined_requests_are_answered_in_order(server):
    with connect(server) as sock:
        sock.sendall(b"".join(api_versions_frame(v % 5, correlation_id=c) for c, v in enumerate(range(40))))
        ids = [struct.unpack_from(">i", read_frame(sock))[0] for _ in range(40)]
    assert ids == list(range(40))
    assert server.stats.requests == 40


def test_api_versions_above_max_answers_v0_and_keeps_the_connection(server):
    with connect(server) as sock:
        sock.sendall(api_versions_frame(7, correlation_id=3))
        response = ApiVersionsResponse[0].decode(read_frame(sock), header=True)
        assert response.error_code == 35 and response.api_keys[0].max_version == 4
        assert call_api_versions(sock, 4, correlation_id=4).error_code == 0  # the client retries lower


# -- bad clients ---------------------------------------------------------------


def test_malformed_frame_closes_only_that_connection(server):
    with connect(server) as bystander, connect(server) as bad:
        assert call_api_versions(bystander).error_code == 0
        payload = struct.pack(">hhih", 18, 3, 1, 200) + b"client id shorter than its length"
        bad.sendall(struct.pack(">i", len(payload)) + payload)
        assert_closed_by_server(bad)
        assert call_api_versions(bystander, correlation_id=2).error_code == 0
    assert isinstance(server.closed_connections[-1][2], MalformedRequest)
    assert_healthy(server)


def test_truncated_body_closes(server):
    with connect(server) as sock:
        payload = struct.pack(">hhih", 18, 3, 1, 1) + b"c\x00\x05ab"  # software name cut short
        sock.sendall(struct.pack(">i", len(payload)) + payload)
        assert_closed_by_server(sock)
    assert_healthy(server)


def test_unknown_api_key_closes(server):
    with connect(server) as sock:
        sock.sendall(encode_request(MetadataRequest(version=12, topics=None), 5))  # not registered here
        assert_closed_by_server(sock)
    with connect(server) as sock:
        payload = struct.pack(">hhih", 4242, 0, 1, -1)
        sock.sendall(struct.pack(">i", len(payload)) + payload)
        assert_closed_by_server(sock)
    assert isinstance(server.closed_connections[-1][2], UnknownApiKey)
    assert_healthy(server)


def test_unsupported_version_of_other_apis_closes():
    registry = api_versions_only()
    registry.register(3, lambda ctx, req: MetadataResponse(brokers=[], topics=[]), 0, 5)
    with WireServer(ports=[0], registry=registry) as srv:
        with connect(srv) as sock:
            sock.sendall(encode_request(MetadataRequest(version=5, topics=None), 1))
            assert struct.unpack_from(">i", read_frame(sock))[0] == 1
            sock.sendall(encode_request(MetadataRequest(version=12, topics=None), 2))
            assert_closed_by_server(sock)  # Kafka closes: the version is not enabled
        assert isinstance(srv.closed_connections[-1][2], UnsupportedVersion)
        assert_healthy(srv)


@pytest.mark.parametrize("size", [SMALL_LIMIT + 1, 1 << 30, -5])
def test_oversized_frame_closes_without_reading_the_payload(server, size):
    with connect(server) as sock:
        started = time.monotonic()
        sock.sendall(struct.pack(">i", size) + b"\x00" * 16)
        assert_closed_by_server(sock)
        assert time.monotonic() - started < 2.0
    assert isinstance(server.closed_connections[-1][2], FrameTooLarge)
    assert_healthy(server)


def test_frame_at_the_limit_is_served(server):
    # A valid ApiVersions v0 request padded to exactly the limit: trailing bytes are ignored.
    frame = api_versions_frame(0)
    padded = frame[4:] + b"\x00" * (SMALL_LIMIT - len(frame) + 4)
    with connect(server) as sock:
        sock.sendall(struct.pack(">i", len(padded)) + padded)
        assert ApiVersionsResponse[0].decode(read_frame(sock), header=True).error_code == 0


def test_client_disconnecting_mid_request(server):
    for cut in (2, 7, 20):
        sock = connect(server)
        sock.sendall(api_versions_frame()[:cut])
        sock.close()
    sock = connect(server)
    sock.sendall(struct.pack(">i", 1000))  # promises a body that never comes
    sock.close()
    wait_until(lambda: server.connection_count() == 0)
    assert_healthy(server)


def test_connect_and_close_without_data(server):
    for _ in range(5):
        connect(server).close()
    wait_until(lambda: server.connection_count() == 0)
    assert_healthy(server)


def test_trickling_client_does_not_delay_others(server):
    frame = api_versions_frame(4, correlation_id=77)
    result = {}

    def trickle():
        with connect(server) as slow:
            for i in range(len(frame)):
                slow.sendall(frame[i:i + 1])
                time.sleep(0.02)
            result["response"] = ApiVersionsResponse.decode(read_frame(slow), version=4, header=True)

    thread = threading.Thread(target=trickle)
    thread.start()
    try:
        latencies = []
        with connect(server) as fast:
            for c in range(20):
                started = time.monotonic()
                assert call_api_versions(fast, correlation_id=c).error_code == 0
                latencies.append(time.monotonic() - started)
        assert thread.is_alive(), "the trickling client should still be sending"
        assert max(latencies) < 0.5
    finally:
        thread.join(TIMEOUT + len(frame) * 0.05)
    assert result["response"].header.correlation_id == 77


def test_many_bad_clients_then_a_good_one(server):
    socks = [connect(server) for _ in range(10)]
    for i, sock in enumerate(socks):
        sock.sendall(struct.pack(">i", 12) + bytes([i]) * 12)
    for sock in socks:
        assert_closed_by_server(sock)
        sock.close()
    assert_healthy(server)


# -- listeners, deferred requests, ticks ----------------------------------------


def test_stop_and_start_listener_per_broker():
    with WireServer(ports=[0, 0], broker_ids=[1, 2], registry=api_versions_only()) as srv:
        ports = srv.bound_ports
        assert len(set(ports.values())) == 2 and srv.bootstrap_servers.count(",") == 1
        with connect(srv, 1) as one, connect(srv, 2) as two:
            call_api_versions(one)
            srv.stop_listener(1)
            assert not srv.listening(1) and srv.listening(2)
            assert_closed_by_server(one)
            with pytest.raises(ConnectionRefusedError):
                connect(srv, 1)
            assert call_api_versions(two).error_code == 0
            srv.start_listener(1)
            assert srv.bound_ports == ports
            with connect(srv, 1) as again:
                assert call_api_versions(again).error_code == 0
    assert not srv.running


def deferred_metadata_registry(gate: threading.Event, timeout_ms: int) -> HandlerRegistry:
    registry = api_versions_only()

    def handle(ctx, request):
        def poll():
            return MetadataResponse(throttle_time_ms=1, brokers=[], topics=[]) if gate.is_set() else None
        return Deferred(ctx.now_ms + timeout_ms, poll,
                        lambda: MetadataResponse(throttle_time_ms=2, brokers=[], topics=[]))

    registry.register(3, handle, 0, 12)
    return registry


def test_deferred_answers_on_notify_and_keeps_order():
    gate = threading.Event()
    with WireServer(ports=[0], registry=deferred_metadata_registry(gate, 60_000), tick_ms=1000) as srv:
        with connect(srv) as sock:
            sock.sendall(encode_request(MetadataRequest(version=12, topics=None), 1) + api_versions_frame(4, 2))
            sock.settimeout(0.3)
            with pytest.raises(socket.timeout):
                sock.recv(1)
            sock.settimeout(TIMEOUT)
            gate.set()
            started = time.monotonic()
            srv.notify()
            first = MetadataResponse[12].decode(read_frame(sock), header=True)
            assert time.monotonic() - started < 0.5  # notify, not the 1 s tick
            assert (first.header.correlation_id, first.throttle_time_ms) == (1, 1)
            assert ApiVersionsResponse.decode(read_frame(sock), version=4, header=True).header.correlation_id == 2


def test_a_request_on_one_connection_wakes_a_parked_one():
    # Like a Produce completing a Fetch long-poll: no notify() and a slow tick.
    gate = threading.Event()
    registry = deferred_metadata_registry(gate, 60_000)

    def opener(ctx, request):
        gate.set()
        return api_versions.handle(ctx, request)

    registry.register(18, opener, 0, 4)
    with WireServer(ports=[0], registry=registry, tick_ms=5000) as srv:
        with connect(srv) as waiter, connect(srv) as producer:
            waiter.sendall(encode_request(MetadataRequest(version=12, topics=None), 1))
            wait_until(lambda: srv.stats.requests == 1)
            started = time.monotonic()
            assert call_api_versions(producer).error_code == 0
            response = MetadataResponse[12].decode(read_frame(waiter), header=True)
            assert time.monotonic() - started < 1.0
            assert response.throttle_time_ms == 1


def test_client_that_does_not_read_its_responses():
    # 300 x 64 KiB responses overflow the socket buffers: the server must pause
    # reading from that client, keep serving others, and finish once it reads.
    count, body = 300, bytes(65536)  # a handler may return a pre-encoded body
    registry = api_versions_only()
    registry.register(3, lambda ctx, req: body, 0, 12)
    stream = b"".join(encode_request(MetadataRequest(version=12, topics=None), c) for c in range(count))
    with WireServer(ports=[0], registry=registry) as srv:
        with connect(srv) as greedy:
            sender = threading.Thread(target=greedy.sendall, args=(stream,))
            sender.start()
            time.sleep(0.3)
            assert_healthy(srv)
            ids = []
            for _ in range(count):
                payload = read_frame(greedy)
                assert len(payload) == 5 + len(body)  # correlation id + empty tagged fields + body
                ids.append(struct.unpack_from(">i", payload)[0])
            sender.join(TIMEOUT)
            assert ids == list(range(count))


def test_large_responses_reach_a_slow_reader_whole_and_in_order():
    # Multi-MiB responses leave the server in chunks as the socket takes them; a
    # reader with a small buffer that reads slowly still gets every byte in order,
    # and the server keeps serving other clients meanwhile.
    bodies = [bytes([i]) * (3 << 20) + bytes(range(256)) * 7 for i in range(1, 5)]
    registry = api_versions_only()
    registry.register(3, lambda ctx, req: bodies[ctx.correlation_id], 0, 12)
    stream = b"".join(encode_request(MetadataRequest(version=12, topics=None), c)
                      for c in range(len(bodies)))
    with WireServer(ports=[0], registry=registry, send_buffer_bytes=102_400) as srv:
        with socket.socket() as slow:
            slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32_768)
            slow.connect(("127.0.0.1", srv.bound_ports[0]))
            slow.settimeout(TIMEOUT)
            slow.sendall(stream)
            time.sleep(0.2)
            assert_healthy(srv)
            for correlation_id, body in enumerate(bodies):
                size = struct.unpack(">i", read_exactly(slow, 4))[0]
                assert size == 5 + len(body)
                payload = bytearray()
                while len(payload) < size:
                    payload += read_exactly(slow, min(50_000, size - len(payload)))
                    if len(payload) % 1_000_000 < 50_000:
                        assert_healthy(srv)  # others are served while this one drains
                assert struct.unpack_from(">i", payload)[0] == correlation_id
                assert payload[5:] == body


def test_deferred_times_out_on_the_tick_and_on_tick_runs():
    ticks = []
    with WireServer(ports=[0], registry=deferred_metadata_registry(threading.Event(), 150),
                    tick_ms=5, on_tick=ticks.append) as srv:
        with connect(srv) as sock:
            started = time.monotonic()
            sock.sendall(encode_request(MetadataRequest(version=12, topics=None), 1))
            response = MetadataResponse[12].decode(read_frame(sock), header=True)
            elapsed = time.monotonic() - started
    assert response.throttle_time_ms == 2
    assert 0.14 <= elapsed < 2.0
    assert len(ticks) >= 10 and ticks == sorted(ticks)


def test_handlers_run_under_the_shared_lock():
    lock = threading.RLock()
    registry = api_versions_only()
    registry.register(3, lambda ctx, req: MetadataResponse(brokers=[], topics=[]), 0, 12)
    with WireServer(ports=[0], registry=registry, lock=lock) as srv, connect(srv) as sock:
        with lock:  # the notebook thread holds the cluster: requests wait
            sock.sendall(encode_request(MetadataRequest(version=12, topics=None), 1))
            sock.settimeout(0.3)
            with pytest.raises(socket.timeout):
                sock.recv(1)
        sock.settimeout(TIMEOUT)
        assert struct.unpack_from(">i", read_frame(sock))[0] == 1


def test_cluster_lock_is_used_by_default():
    class Cluster:
        lock = threading.RLock()

    cluster = Cluster()
    server = WireServer(cluster, ports=[0], registry=api_versions_only())
    assert server.lock is cluster.lock and server.cluster is cluster


# -- real clients ----------------------------------------------------------------


def kafka_python_negotiate(srv: WireServer):
    from kafka.net import KafkaConnectionManager, NetworkSelector

    net = NetworkSelector()
    manager = KafkaConnectionManager(net, bootstrap_servers=srv.bootstrap_servers,
                                     socket_connection_setup_timeout_ms=5000)
    node = manager.cluster.bootstrap_brokers()[0]
    conn = manager.get_connection(node.node_id, pop_on_close=False, refresh_metadata_on_err=False)

    async def connected():
        await conn
        return conn.broker_version_data

    try:
        return net.run(connected)
    finally:
        conn.close()
        manager.close()
        net.stop(timeout_ms=1000)


@pytest.mark.interop
def test_kafka_python_negotiates_api_versions(server):
    versions = kafka_python_negotiate(server)
    assert versions.api_versions == {18: (0, 4)}
    assert server.stats.by_api == {(18, 4): 1}  # kafka-python 3 sends v4 first


@pytest.mark.interop
def test_kafka_python_retries_lower_after_unsupported_version():
    with WireServer(ports=[0], registry=api_versions_only(max_version=2)) as srv:
        versions = kafka_python_negotiate(srv)
        assert versions.api_versions == {18: (0, 2)}
        assert srv.stats.by_api == {(18, 4): 1, (18, 2): 1}  # KIP-511: v4 -> error 35 -> v2


@pytest.mark.interop
def test_librdkafka_parses_api_versions(server):
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": server.bootstrap_servers, "log_level": 0})
    with pytest.raises(KafkaException) as failure:
        admin.list_topics(timeout=3)
    # It parsed our ApiVersions (no Metadata offered), so it fails locally, not on the wire.
    assert failure.value.args[0].name() == "_UNSUPPORTED_FEATURE"
    assert server.stats.by_api.get((18, 3), 0) >= 1
    assert not [c for c in server.closed_connections if isinstance(c[2], MalformedRequest)]


# test.sh installs Debian's kcat (librdkafka 2.0.2); without it this test is not generated.
KCAT = shutil.which("kcat")


@pytest.mark.kcat
@pytest.mark.interop
@pytest.mark.parametrize("kcat", [KCAT] if KCAT else [])
def test_debian_kcat_parses_api_versions(server, kcat):
    run = subprocess.run([kcat, "-b", server.bootstrap_servers, "-L", "-m", "3", "-d", "protocol,broker"],
                         capture_output=True, text=True, timeout=30)
    assert run.returncode != 0  # no Metadata handler yet
    log = run.stderr
    assert "Received ApiVersionResponse (v3" in log
    assert "APIVERSION_QUERY -> UP" in log
    assert "Bad message format" not in log
    assert "Required feature not supported by broker" in log


def test_port_in_use_fails_start_cleanly():
    with WireServer(ports=[0], registry=api_versions_only()) as first:
        taken = first.bound_ports[0]
        second = WireServer(ports=[taken], registry=api_versions_only())
        with pytest.raises(OSError):
            second.start()
        assert not second.running
        assert_healthy(first)
