"""The pure-Python CRC-32C and murmur2 (used where the C packages have no build, as in the
browser edition) give the C packages' results, and the codecs a Python lacks are refused."""
from __future__ import annotations

import random

import crc32c as c_crc32c
import murmurhash2 as c_murmurhash2
import pytest
from kafka.errors import UnsupportedCodecError

from minikafka import codecs
from minikafka.core import hashing
from minikafka.core.partitioner import SEED


def _inputs(n: int = 2000):
    rng = random.Random(34)
    yield b""
    for size in range(1, 17):  # every tail length, several times over
        yield bytes(rng.getrandbits(8) for _ in range(size))
    for _ in range(n):
        yield rng.randbytes(rng.randrange(0, 600))


def test_native_is_used_on_cpython():
    assert hashing.NATIVE
    assert hashing.crc32c is c_crc32c.crc32c


def test_py_crc32c_matches_the_c_package():
    rng = random.Random(7)
    for data in _inputs():
        assert hashing.py_crc32c(data) == c_crc32c.crc32c(data)
        start = rng.getrandbits(32)
        assert hashing.py_crc32c(memoryview(data), start) == c_crc32c.crc32c(data, start)
    assert hashing.py_crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value


def test_py_murmurhash2_matches_the_c_package():
    rng = random.Random(8)
    for data in _inputs():
        assert hashing.py_murmurhash2(data, SEED) == c_murmurhash2.murmurhash2(data, SEED)
        seed = rng.getrandbits(32)
        assert hashing.py_murmurhash2(data, seed) == c_murmurhash2.murmurhash2(data, seed)
    # Kafka's own test vectors (Java client UtilsTest.testMurmur2), as signed ints.
    for key, java in [(b"21", -973932308), (b"foobar", -790332482), (b"a-little-bit-long-string", -985981536)]:
        h = hashing.py_murmurhash2(key, SEED)
        assert (h - (1 << 32) if h & 0x80000000 else h) == java


def test_a_codec_without_its_library_is_refused_with_its_name(monkeypatch):
    monkeypatch.setitem(codecs.AVAILABLE, 4, False)
    with pytest.raises(UnsupportedCodecError, match="zstd compression is not available"):
        codecs.require_codec(4)
    codecs.require_codec(1)  # gzip is always there
    codecs.require_codec(0)


def test_producer_refuses_an_unavailable_codec_at_construction(monkeypatch):
    from minikafka import Cluster
    monkeypatch.setitem(codecs.AVAILABLE, 3, False)
    cluster = Cluster(brokers=1, seed=1)
    with pytest.raises(UnsupportedCodecError, match="lz4"):
        cluster.producer(compression_type="lz4")
    cluster.producer(compression_type="gzip").send("t", b"v").get()
