"""What a client cannot do to `minikafka serve`: ask for unbounded work, send nulls,
sit idle forever, or flood the log by hanging up; and the journal stays bounded.

Every test talks to a real loopback socket (WireServer or a served Cluster)."""
from __future__ import annotations

import logging
import socket
import struct
import time

import pytest
from kafka.protocol.metadata import MetadataRequest

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
        lines = [r for r in caplog.records if r.levelno >= logging.INFO
                 and "listening" not in r.getMessage()]
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
