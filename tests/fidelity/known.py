"""Differences between minikafka and real Kafka that the suite expects, each with its reason,
and the fixes the suite led to (for docs/fidelity.md).

A known difference is (scenario, target) -> Known(kind, reason, diff): `diff` is exactly what
results.differences() gives today, path -> [Kafka's value, minikafka's value]. kind is
"simplification" (deliberate, and the lesson named says so) or "bug" (a lesson would be
untrue; not fixed yet).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Known:
    kind: str
    reason: str
    diff: dict[str, list]


KNOWN_DIFFERENCES: dict[tuple[str, str], Known] = {}

# scenario -> the change in minikafka that made its observations equal.
FIXES: dict[str, str] = {}
