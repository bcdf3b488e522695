"""serve(): consecutive loopback ports, the simulated clock following real time,
listeners following brokers as they stop and start, and `minikafka serve`."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from kafka import KafkaAdminClient

from minikafka.cluster import Cluster
from minikafka.wire import encode_request
from minikafka.wire.serve import serve

from .conftest import wait_for
from .test_handlers import fetch


def free_port_run(count: int) -> int:
    """A base port with `count` free consecutive ports above it."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = probe.getsockname()[1]
        if base + count > 65535:
            continue
        try:
            held = []
            for port in range(base, base + count):
                s = socket.socket()
                held.append(s)
                s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for s in held:
                s.close()
    raise AssertionError("no free port range")


def test_brokers_listen_on_consecutive_loopback_ports_in_id_order():
    cluster = Cluster(brokers=[101, 102, 103], seed=3, racks={101: "r1", 102: "r2", 103: "r3"})
    base = free_port_run(3)
    with serve(cluster, port=base) as server:
        assert server.ports == {101: base, 102: base + 1, 103: base + 2}
        assert server.bootstrap_servers == f"127.0.0.1:{base},127.0.0.1:{base + 1},127.0.0.1:{base + 2}"
        admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{base + 1}",
                                 request_timeout_ms=5000)
        try:
            brokers = admin.describe_cluster()["brokers"]
        finally:
            admin.close()
        assert sorted((b["broker_id"], b["host"], b["port"], b["rack"]) for b in brokers) == [
            (101, "127.0.0.1", base, "r1"), (102, "127.0.0.1", base + 1, "r2"),
            (103, "127.0.0.1", base + 2, "r3")]
    assert not server.running


def test_the_clock_jumps_to_wall_time_and_follows_it():
    cluster = Cluster(brokers=1, seed=1)
    before = cluster.now_ms
    with cluster.serve(port=0):
        with cluster.lock:
            start = cluster.now_ms
        assert start > before and abs(start - time.time() * 1000) < 1000
        time.sleep(0.3)
        with cluster.lock:
            later = cluster.now_ms
            assert 250 <= later - start < 3000
            cluster.advance(60_000)  # a notebook moves time on by hand
            moved = cluster.now_ms
        time.sleep(0.1)
        with cluster.lock:
            assert cluster.now_ms >= moved + 50  # real time carries on from there


def test_stopping_a_broker_closes_its_listener_and_starting_reopens_it(served):
    cluster, server = served
    port = server.ports[2]
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        with cluster.lock:
            cluster.stop_broker(2)
        wait_for(lambda: not server.listening(2), 5, "listener 2 closing")
        conn.settimeout(5)
        assert conn.recv(1) == b""  # the connection was dropped too
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    with cluster.lock:
        cluster.crash_broker(3)
    wait_for(lambda: not server.listening(3), 5, "listener 3 closing")
    with cluster.lock:
        cluster.start_broker(2)
        cluster.start_broker(3)
    wait_for(lambda: server.listening(2) and server.listening(3), 5, "listeners reopening")
    socket.create_connection(("127.0.0.1", port), timeout=5).close()
    assert server.ports[2] == port


def test_a_restarted_broker_listens_only_once_unfenced(served):
    cluster, server = served
    with cluster.lock:
        cluster.crash_broker(3)
    wait_for(lambda: not server.listening(3), 5, "listener 3 closing")
    with cluster.lock:
        cluster.start_broker(3)  # registers fenced; unfenced after a broker heartbeat
        assert cluster.controller.brokers[3].fenced
    time.sleep(0.2)  # several server ticks
    with cluster.lock:
        fenced = cluster.controller.brokers[3].fenced
        listening = server.listening(3)
    assert not (fenced and listening)
    with cluster.lock:
        cluster.advance(int(cluster.broker_config["broker.heartbeat.interval.ms"]))
        assert not cluster.controller.brokers[3].fenced
    wait_for(lambda: server.listening(3), 5, "listener 3 opening once unfenced")


def test_a_cluster_is_served_once_at_a_time(served):
    cluster, _ = served
    with pytest.raises(RuntimeError):
        cluster.serve(port=0)


def test_a_broker_stopped_before_serving_does_not_listen():
    cluster = Cluster(brokers=2, seed=1)
    cluster.stop_broker(2)
    with cluster.serve(port=0) as server:
        assert server.listening(1) and not server.listening(2)



def _server_side_buffers(server, broker_id: int) -> tuple[int, int]:
    [conn] = server.wire._connections[broker_id]
    sock = conn.transport.get_extra_info("socket")
    return (sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF),
            sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF))


def _connect_and_wait(server, broker_id: int) -> socket.socket:
    conn = socket.create_connection(("127.0.0.1", server.ports[broker_id]), timeout=5)
    wait_for(lambda: len(server.wire._connections[broker_id]) == 1, 5, "the accept")
    return conn


def test_accepted_connections_get_kafkas_socket_buffer_sizes():
    # Linux reports twice the size set (the kernel's bookkeeping share); other systems the size.
    with Cluster(brokers=1, seed=1).serve(port=0) as server, _connect_and_wait(server, 1):
        send, receive = _server_side_buffers(server, 1)
        assert send in (102_400, 204_800) and receive in (102_400, 204_800)
    tuned = Cluster(brokers=1, seed=1, broker_config={"socket.send.buffer.bytes": 65_536,
                                                       "socket.receive.buffer.bytes": 32_768})
    with tuned.serve(port=0) as server, _connect_and_wait(server, 1):
        assert _server_side_buffers(server, 1) in ((65_536, 32_768), (131_072, 65_536))
    untuned = Cluster(brokers=1, seed=1, broker_config={"socket.send.buffer.bytes": -1,
                                                         "socket.receive.buffer.bytes": -1})
    with untuned.serve(port=0) as server, _connect_and_wait(server, 1):
        send, _ = _server_side_buffers(server, 1)
        assert send not in (102_400, 204_800)  # -1: left to the OS, which autotunes it


@pytest.mark.timeout(60)
def test_minikafka_serve_command():
    base = free_port_run(2)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "minikafka.cli", "serve", "--brokers", "2", "--port", str(base),
         "--rack", "1=east"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    try:
        banner = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = proc.stdout.readline().decode()
            banner.append(line)
            if line.startswith("bootstrap servers") or not line:
                break
        assert banner[:2] == [f"broker 1 listening on 127.0.0.1:{base}\n",
                              f"broker 2 listening on 127.0.0.1:{base + 1}\n"], banner
        admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{base}", request_timeout_ms=5000)
        try:
            racks = {b["broker_id"]: b["rack"] for b in admin.describe_cluster()["brokers"]}
        finally:
            admin.close()
        assert racks == {1: "east", 2: None}
        proc.send_signal(signal.SIGINT)
        assert proc.wait(15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def test_minikafka_serve_refuses_bad_flags():
    done = subprocess.run([sys.executable, "-m", "minikafka.cli", "serve", "--rack", "x"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "BROKER=RACK" in done.stderr
    for feature, message in (("eligible.leader.replicas.version=2", "must be 0 or 1"),
                             ("transaction.version=3", "transaction.version must be 0 to 2"),
                             ("no.such.version=1", "Unknown feature"),
                             ("eligible.leader.replicas.version", "NAME=LEVEL")):
        done = subprocess.run([sys.executable, "-m", "minikafka.cli", "serve", "--feature",
                               feature], capture_output=True, text=True, timeout=30)
        assert done.returncode == 2 and message in done.stderr
        assert done.stderr.startswith("minikafka serve: ") and "[Error" not in done.stderr


def test_a_connection_accepted_as_its_listener_closes_is_dropped(served):
    _, server = served
    port = server.ports[1]
    for _ in range(20):
        conn = socket.create_connection(("127.0.0.1", port), timeout=5)
        server.wire.stop_listener(1)  # races the accept of `conn`
        conn.settimeout(5)
        try:
            assert conn.recv(1) == b""
        except ConnectionResetError:
            pass
        finally:
            conn.close()
        server.wire.start_listener(1)


def test_ticks_slow_down_while_nothing_waits(served):
    cluster, server = served
    with cluster.lock:
        cluster.create_topic("quiet", replication_factor=1)
        leader = cluster.describe_topic("quiet").partitions[0].leader
    wait_for(lambda: server.wire.tick_interval_ms == 25, 5, "the idle pace")
    request = encode_request(fetch("quiet", 0, 0, max_wait=1500, min_bytes=1), 7, "t", version=12)
    with socket.create_connection(("127.0.0.1", server.ports[leader]), timeout=5) as conn:
        conn.sendall(request)  # a long poll: parked until data or max_wait_ms
        wait_for(lambda: server.wire.tick_interval_ms == 2, 5, "the busy pace")
        started = time.monotonic()
        assert len(conn.recv(65536)) > 8  # the empty answer after max_wait_ms
        assert 0.5 < time.monotonic() - started < 5
    wait_for(lambda: server.wire.tick_interval_ms == 25, 5, "the idle pace again")
