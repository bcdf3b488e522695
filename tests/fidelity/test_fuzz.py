"""The differential fuzzer's fixed seeds against the session's real Kafka and served
minikafka: every operation observed alike (tests/fidelity/fuzz.py; the long run is
`python -m tests.fidelity.fuzz`, its figures in docs/fidelity.md)."""
from __future__ import annotations

import pytest

from .fuzz import differences, generate, run

CI_SEEDS = range(8)


def test_programs_are_reproducible_and_mix_bad_values():
    assert generate(3) == generate(3) and generate(3) != generate(4)
    ops = [op for seed in range(200) for op in generate(seed)]
    kinds = {op["op"] for op in ops}
    assert kinds == {"create", "produce", "read", "offsets", "delete_records", "alter",
                     "describe", "commit", "group", "delete_topic"}
    assert any(op["op"] == "create" and op["partitions"] <= 0 for op in ops)
    assert any(op["op"] == "alter" and op["value"] in ("abc", "bogus", "0") for op in ops)
    assert any(op["op"] == "produce" and op["size"] > 1_048_588 for op in ops)


def test_differences_name_the_operation():
    ops = [{"op": "read"}, {"op": "offsets"}]
    assert differences([1, 2], [1, 3], ops) == [(1, {"op": "offsets"}, 2, 3)]


@pytest.mark.real_kafka
def test_fixed_seeds_observe_alike(real_kafka, served_session):
    _, server = served_session
    result = run(real_kafka.bootstrap_servers, server.bootstrap_servers, CI_SEEDS,
                 report=lambda line: None)
    assert result["programs"] == len(CI_SEEDS) and result["operations"] > 50
    assert result["differences"] == []
