"""Wire codec throughput, to guide optimisation: requests per second, median of 5 runs.

    .venv/bin/python tests/benchmarks/wire_codec.py [--n 20000] [--tcp]

In-process (no sockets): framing + header + body decode alone, the whole
Session pipeline for ApiVersions (decode, dispatch, encode), and response
encoding. With --tcp, also pipelined ApiVersions round trips over 127.0.0.1
through WireServer (bounded: one connection, --n requests).
"""
from __future__ import annotations

import argparse
import socket
import statistics
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from kafka.protocol.metadata import ApiVersionsRequest, MetadataRequest, MetadataResponse

from minikafka.wire import (
    FrameDecoder,
    Session,
    WireServer,
    decode_request,
    default_registry,
    encode_request,
    encode_response,
)

RUNS = 5


def api_versions_frame(correlation_id: int) -> bytes:
    request = ApiVersionsRequest(version=4, client_software_name="bench", client_software_version="1.0")
    return encode_request(request, correlation_id, "bench-client")


def metadata_frame(correlation_id: int) -> bytes:
    topics = [MetadataRequest.MetadataRequestTopic(name=f"topic-{i}") for i in range(3)]
    request = MetadataRequest(version=12, topics=topics, allow_auto_topic_creation=False,
                              include_topic_authorized_operations=False)
    return encode_request(request, correlation_id, "bench-client")


def rate(label: str, n: int, once: Callable[[], None]) -> None:
    rates = []
    for _ in range(RUNS):
        started = time.perf_counter()
        once()
        rates.append(n / (time.perf_counter() - started))
    print(f"{label:<58} {statistics.median(rates):>12,.0f} req/s  (min {min(rates):,.0f}, max {max(rates):,.0f})")


def bench_frame_and_decode(n: int, frame: bytes, label: str) -> None:
    stream = frame * n

    def once() -> None:
        decoder = FrameDecoder()
        decoder.receive_data(stream)
        while (payload := decoder.next_frame()) is not None:
            decode_request(payload)

    rate(label, n, once)


def bench_session(n: int) -> None:
    registry = default_registry()
    stream = b"".join(api_versions_frame(i) for i in range(n))

    def once() -> None:
        session = Session(registry)
        session.receive_data(stream)
        out = session.process(0)
        assert out.close is None and out.data

    rate("ApiVersions v4: Session (decode+dispatch+encode), 1 chunk", n, once)

    frames = [api_versions_frame(i) for i in range(n)]

    def once_per_frame() -> None:
        session = Session(registry)
        for frame in frames:
            session.receive_data(frame)
            session.process(0)

    rate("ApiVersions v4: Session, one frame per receive_data", n, once_per_frame)


def bench_encode(n: int) -> None:
    body = b"\x00" * 64

    def encoded_body() -> None:
        for i in range(n):
            encode_response(body, 18, 4, i)

    rate("encode_response: pre-encoded 64-byte body", n, encoded_body)

    brokers = [MetadataResponse.MetadataResponseBroker(node_id=i, host="127.0.0.1", port=9092 + i, rack=None)
               for i in range(3)]

    def metadata_object() -> None:
        for i in range(n):
            encode_response(MetadataResponse(version=12, brokers=brokers, cluster_id="c", controller_id=1,
                                             topics=[]), 3, 12, i)

    rate("encode_response: MetadataResponse v12 object, 3 brokers", n, metadata_object)


def bench_tcp(n: int) -> None:
    stream = b"".join(api_versions_frame(i) for i in range(n))
    with WireServer(ports=[0]) as server:
        def once() -> None:
            with socket.create_connection(("127.0.0.1", server.bound_ports[0]), timeout=30) as sock:
                sock.sendall(stream)
                remaining = n
                buf = b""
                while remaining:
                    chunk = sock.recv(1 << 20)
                    if not chunk:
                        raise ConnectionError("server closed")
                    buf += chunk
                    while len(buf) >= 4 and len(buf) >= 4 + struct.unpack_from(">i", buf)[0]:
                        buf = buf[4 + struct.unpack_from(">i", buf)[0]:]
                        remaining -= 1

        rate("ApiVersions v4 over TCP 127.0.0.1, pipelined, 1 connection", n, once)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000, help="requests per run")
    parser.add_argument("--tcp", action="store_true", help="also measure through WireServer on 127.0.0.1")
    args = parser.parse_args()
    print(f"{args.n:,} requests per run, median of {RUNS} runs, Python {sys.version.split()[0]}")
    bench_frame_and_decode(args.n, api_versions_frame(1), "ApiVersions v4: frame + decode_request")
    bench_frame_and_decode(args.n, metadata_frame(1), "Metadata v12 (3 topics): frame + decode_request")
    bench_session(args.n)
    bench_encode(args.n)
    if args.tcp:
        bench_tcp(args.n)


if __name__ == "__main__":
    main()
