"""Every request type the server serves, at its lowest and highest version, with nulls put
where the schema has none, and cut short at every length: the server answers or closes the
connection with one log line, and no handler fails with a Python traceback (Kafka closes
such a connection, logging one line). test_fuzz.py mutates frames at random through
stand-in handlers; this goes through the real ones, on a cluster."""
from __future__ import annotations

import logging
import struct

import pytest

from minikafka import Cluster
from minikafka.wire.codec import request_class
from minikafka.wire.registry import Session, default_registry

REGISTRY = default_registry()
POSITIONS = 48  # mutations at the first bytes of each body, where the top-level fields are


def _frame(api_key: int, version: int, body: bytes, flexible: bool) -> bytes:
    payload = struct.pack(">hhih", api_key, version, 1, 4) + b"fuzz" + \
        (b"\x00" if flexible else b"") + body
    return struct.pack(">i", len(payload)) + payload


def _seed_body(cls, version: int) -> bytes:
    """The request with its defaults (empty arrays, zero numbers), or nothing."""
    try:
        return bytes(cls(version=version).encode())
    except Exception:
        return b""


def _mutations(body: bytes, flexible: bool) -> list[bytes]:
    null_element = b"\x02\x00" if flexible else b"\x00\x00\x00\x01\xff\xff"
    out = [body[:i] for i in range(len(body))]  # truncated
    for i in range(min(len(body) + 1, POSITIONS)):
        out.append(body[:i] + b"\xff\xff" + body[i + 2:])  # an int16 length of -1: null
        out.append(body[:i] + b"\xff\xff\xff\xff" + body[i + 4:])  # an int32 -1: null array
        out.append(body[:i] + b"\x00" + body[i + 1:])  # compact null
        out.append(body[:i] + null_element + body[i:])  # an array of one null element ...
        out.append(body[:i] + null_element + body[i + (1 if flexible else 4):])  # ... for []
    return out


def _cases() -> list[tuple[int, int]]:
    return [(key, version) for key, (low, high) in sorted(REGISTRY.version_ranges().items())
            for version in sorted({low, high})]


@pytest.fixture(scope="module")
def cluster():
    return Cluster(brokers=1, seed=3)


@pytest.mark.parametrize(("api_key", "version"), _cases(),
                         ids=[f"key{k}-v{v}" for k, v in _cases()])
def test_malformed_requests_close_without_a_traceback(api_key, version, cluster, caplog):
    cls = request_class(api_key)
    flexible = cls.flexible_version_q(version)
    body = _seed_body(cls, version)
    failures = []
    with caplog.at_level(logging.ERROR, logger="minikafka"):
        for mutated in _mutations(body, flexible):
            session = Session(REGISTRY, broker_id=1, cluster=cluster, client_host="127.0.0.1",
                              client_port=50000)
            session.receive_data(_frame(api_key, version, mutated, flexible))
            session.process(cluster.now_ms)
            tracebacks = [r for r in caplog.records if r.exc_info and r.name.startswith("minikafka")]
            if tracebacks:
                failures.append((mutated.hex(), tracebacks[0].getMessage(),
                                 repr(tracebacks[0].exc_info[1])))
                caplog.clear()
    assert not failures, failures[:3]


def test_the_fuzz_reaches_the_null_element_class():
    """The mutations include ListGroups v4 with a states filter of one null, the request
    that once failed in the handler."""
    cls = request_class(16)
    bodies = _mutations(_seed_body(cls, 4), True)
    assert b"\x02\x00\x00" in bodies
