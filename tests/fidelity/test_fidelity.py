"""Every scenario against real Kafka and against minikafka: equal observations, or exactly
the difference known.py lists (so a fix, or a regression, shows)."""
from __future__ import annotations

import pytest

from . import scenarios  # noqa: F401 (registers the scenarios)
from .doors import InProcessDoor
from .known import KNOWN_DIFFERENCES
from .registry import SCENARIOS
from .report import cases
from .results import differences, record, record_error

_REAL: dict[str, dict] = {}  # each scenario runs once on real Kafka per session


def _observe(scenario, door) -> dict:
    try:
        return scenario.fn(door)
    finally:
        door.close()


def _real_observation(scenario, request) -> dict:
    if scenario.name not in _REAL:
        _REAL[scenario.name] = _observe(scenario, request.getfixturevalue("real_door"))
    return _REAL[scenario.name]


@pytest.mark.real_kafka
@pytest.mark.parametrize(("name", "target"), cases(), ids=[f"{n}-{t}" for n, t in cases()])
def test_scenario(name: str, target: str, request) -> None:
    scenario = SCENARIOS[name]
    try:
        kafka = _real_observation(scenario, request)
        door = request.getfixturevalue("serve_door") if target == "serve" else InProcessDoor()
        minikafka = _observe(scenario, door)
    except Exception as exc:
        record_error(name, target, exc)
        raise
    diff = differences(kafka, minikafka)
    record(name, target, kafka, minikafka, diff)
    known = KNOWN_DIFFERENCES.get((name, target))
    if known is None:
        assert diff == {}, f"{name} on {target} differs from Kafka: {diff}"
    else:
        assert diff == known.diff, (
            f"{name} on {target}: the known difference changed (fixed? regressed?): {diff}")
