"""Mutated request frames through the sans-IO session (no sockets).

Seeds are valid frames for every request class and version kafka-python knows
within Kafka's ranges. Each example mutates one (bit flips, truncation,
length-field corruption, random API key or version, splices) and feeds it to a
Session whose registry serves every key. Whatever the input, nothing may raise,
and the outcome must be one of: responses kafka-python decodes (one per
dispatched request, in order, correlation ids intact), a close decision, or a
frame still waiting for its bytes.
"""
from __future__ import annotations

import random
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minikafka.wire import HandlerRegistry, Session, encode_request
from minikafka.wire.codec import kafka_version_range, request_class, response_class
from minikafka.wire.handlers import api_versions

from .test_codec import fetch, list_offsets, metadata, produce

EXAMPLES = 10_000  # mutated frames
FRAMES_PER_EXAMPLE = 4
LIMIT = 1 << 16

KEYS = [k for k in range(100) if request_class(k) is not None]

dispatched: list[tuple[int, int, int]] = []  # (api_key, api_version, correlation_id) per handler call


def _record(handler):
    def wrapped(ctx, request):
        dispatched.append((ctx.api_key, ctx.api_version, ctx.correlation_id))
        return handler(ctx, request)
    return wrapped


def _default_response(ctx, request):
    return response_class(ctx.api_key)(version=ctx.api_version)


def _registry() -> HandlerRegistry:
    registry = HandlerRegistry()
    for key in KEYS:
        handler = api_versions.handle if key == 18 else _default_response
        registry.register(key, _record(handler), *kafka_version_range(key))
    return registry


REGISTRY = _registry()

SEEDS = [
    encode_request(request_class(key)(version=version), 1000 + key, "fuzz")
    for key in KEYS
    for version in range(kafka_version_range(key)[0], kafka_version_range(key)[1] + 1)
] + [
    encode_request(build(version), 7, "fuzz-content")
    for build, versions in ((produce, (3, 9, 12, 13)), (fetch, (4, 12)), (metadata, (0, 12)), (list_offsets, (1, 9)))
    for version in versions
]

MUTATIONS = ["flip", "truncate", "truncate_framed", "length", "api_key", "api_version", "insert", "delete",
             "prefix_valid"]


def mutate(seed: bytes, ops: list[str], rng: random.Random) -> bytes:
    """Apply `ops` to a valid frame; positions and values come from `rng`.

    Hypothesis draws only the seed, the ops and the rng seed: drawing every
    position through Hypothesis cost ~4 ms per example, too slow for 10,000.
    """
    frame = bytearray(seed)
    prefix = b""
    for op in ops:
        payload_len = max(len(frame) - 4, 0)
        if op == "flip":
            for _ in range(rng.randint(1, 8)):
                if frame:
                    frame[rng.randrange(len(frame))] ^= 1 << rng.randrange(8)
        elif op == "truncate":  # size prefix still promises the whole frame
            frame = frame[:rng.randint(0, len(frame))]
        elif op == "truncate_framed":  # a shorter payload, correctly framed
            cut = rng.randint(0, payload_len)
            frame = bytearray(struct.pack(">i", cut)) + frame[4:4 + cut]
        elif op == "length" and len(frame) >= 4:
            size = rng.choice((rng.randint(-(2**31), 2**31 - 1), payload_len + rng.randint(-8, 8)))
            struct.pack_into(">i", frame, 0, max(-(2**31), min(size, 2**31 - 1)))
        elif op == "api_key" and len(frame) >= 6:
            struct.pack_into(">h", frame, 4, rng.choice((rng.choice(KEYS), rng.randint(-(2**15), 2**15 - 1))))
        elif op == "api_version" and len(frame) >= 8:
            struct.pack_into(">h", frame, 6, rng.choice((rng.randint(-2, 20), rng.randint(-(2**15), 2**15 - 1))))
        elif op in ("insert", "delete") and len(frame) >= 4:
            pos = rng.randint(4, len(frame))
            if op == "insert":
                frame[pos:pos] = rng.randbytes(rng.randint(1, 16))
            else:
                del frame[pos:pos + rng.randint(1, 16)]
            struct.pack_into(">i", frame, 0, len(frame) - 4)
        elif op == "prefix_valid":
            prefix = rng.choice(SEEDS)
    return prefix + bytes(frame)


def decode_response(api_key: int, api_version: int, payload: bytes):
    if api_key == 18:
        (error_code,) = struct.unpack_from(">h", payload, 4)
        version = 0 if error_code == 35 else api_version
        # Kafka answers INVALID_REQUEST in the request's version, UNSUPPORTED_VERSION in v0.
        return response_class(18).decode(payload, version=version, header=True)
    return response_class(api_key).decode(payload, version=api_version, header=True)


def check(data: bytes) -> str:
    dispatched.clear()
    session = Session(REGISTRY, max_request_bytes=LIMIT)
    session.receive_data(data)
    out = session.process(0)  # must not raise

    responses, pos = [], 0
    while pos < len(out.data):
        (size,) = struct.unpack_from(">i", out.data, pos)
        responses.append(out.data[pos + 4:pos + 4 + size])
        pos += 4 + size
    assert pos == len(out.data)
    assert len(responses) == len(dispatched)
    for (api_key, api_version, correlation_id), payload in zip(dispatched, responses):
        response = decode_response(api_key, api_version, payload)
        assert response.header.correlation_id == correlation_id

    if out.close is not None:
        assert out.close.reason
        return "closed"
    # Not closed: everything complete was answered; what is left is a partial frame.
    assert session.frames.next_frame() is None
    return "answered" if responses else "waiting"


def test_seeds_are_all_answered():
    for seed in SEEDS:
        assert check(seed) == "answered"
    assert len(SEEDS) > 240


@pytest.mark.property
@pytest.mark.slow
def test_fuzzed_frames_never_escape():
    outcomes = {"answered": 0, "closed": 0, "waiting": 0}

    # Hypothesis's own bookkeeping costs ~2 ms per example, so each example
    # mutates FRAMES_PER_EXAMPLE frames (ops and rng seed drawn by Hypothesis,
    # each frame on a fresh Session): 10,000 frames in well under 30 s.
    @given(st.lists(st.tuples(st.integers(0, len(SEEDS) - 1),
                              st.lists(st.sampled_from(MUTATIONS), min_size=1, max_size=3)),
                    min_size=FRAMES_PER_EXAMPLE, max_size=FRAMES_PER_EXAMPLE),
           st.integers(0, 2**32 - 1))
    @settings(max_examples=EXAMPLES // FRAMES_PER_EXAMPLE, derandomize=True, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    def run(cases: list[tuple[int, list[str]]], rng_seed: int) -> None:
        rng = random.Random(rng_seed)
        for seed_index, ops in cases:
            outcomes[check(mutate(SEEDS[seed_index], ops, rng))] += 1

    run()
    assert sum(outcomes.values()) >= EXAMPLES
    assert all(outcomes.values()), outcomes  # each kind of outcome was exercised
