"""Debian's kcat (librdkafka 2.0.2) against a served cluster: metadata, then
100,000 records produced from a file and consumed back from the beginning.
test.sh installs kcat; without it these tests fail rather than skip."""
from __future__ import annotations

import shutil
import subprocess

import pytest

pytestmark = [pytest.mark.kcat, pytest.mark.interop, pytest.mark.timeout(90)]

RECORDS = 100_000


def kcat() -> str:
    path = shutil.which("kcat")
    assert path, "kcat is not installed (Debian package kcat; test.sh installs it)"
    return path


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run([kcat(), *args], input=stdin, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    return done


def test_kcat_lists_brokers_and_topics(served):
    cluster, server = served
    with cluster.lock:
        cluster.create_topic("listed", partitions=3, replication_factor=2)
    listing = run("-b", server.bootstrap_servers, "-L").stdout.decode()
    for broker_id, port in server.ports.items():
        assert f"broker {broker_id} at 127.0.0.1:{port}" in listing
    assert 'topic "listed" with 3 partitions' in listing


def test_kcat_produces_and_consumes_100k_records(served, tmp_path):
    cluster, server = served
    with cluster.lock:
        cluster.create_topic("bulk", partitions=3, replication_factor=3)
    lines = [b"record-%06d" % i for i in range(RECORDS)]
    source = tmp_path / "records.txt"
    source.write_bytes(b"\n".join(lines) + b"\n")
    run("-P", "-b", server.bootstrap_servers, "-t", "bulk", "-z", "snappy", "-l", str(source))
    with cluster.lock:
        stored = sum(p.high_watermark for p in cluster.describe_topic("bulk").partitions)
    assert stored == RECORDS
    out = run("-C", "-b", server.bootstrap_servers, "-t", "bulk", "-e", "-o", "beginning",
              "-q", "-f", "%p %s\\n").stdout
    consumed = out.splitlines()
    assert sorted(line.split(b" ", 1)[1] for line in consumed) == lines
    by_partition: dict[bytes, list[bytes]] = {}
    for line in consumed:
        partition, value = line.split(b" ", 1)
        by_partition.setdefault(partition, []).append(value)
    assert all(values == sorted(values) for values in by_partition.values())  # file order


@pytest.mark.parametrize("codec,attribute", [("gzip", 1), ("snappy", 2), ("lz4", 3), ("zstd", 4)])
def test_kcat_compresses_with_every_codec(served, codec, attribute):
    # librdkafka 2.0.2 looks for Produce v0 in ApiVersions before it uses gzip, snappy or
    # lz4; without it the batches would arrive uncompressed (KAFKA-18659).
    cluster, server = served
    topic = f"squeezed-{codec}"
    with cluster.lock:
        cluster.create_topic(topic, partitions=1, replication_factor=1)
    # Values that shrink even alone: librdkafka sends a batch that would grow as it is.
    lines = [b"%03d " % i + b"x" * 200 for i in range(200)]
    run("-P", "-b", server.bootstrap_servers, "-t", topic, "-z", codec,
        stdin=b"\n".join(lines) + b"\n")
    with cluster.lock:
        batches = list(cluster.leader_replica(topic, 0).log.batches())
    assert sum(b.record_count for b in batches) == 200
    assert {b.compression for b in batches} == {attribute}
    out = run("-C", "-b", server.bootstrap_servers, "-t", topic, "-e", "-o", "beginning",
              "-q").stdout
    assert out.splitlines() == lines
