"""Observations, their differences, and where the suite keeps them between runs."""
from __future__ import annotations

import fcntl
import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
RESULTS_FILE = REPO / ".cache" / "fidelity" / "results.json"
REPORT_FILE = REPO / "docs" / "fidelity.md"

# (scenario, target) -> {"same": bool, "kafka": obs, "minikafka": obs, "diff": {...}}
RESULTS: dict[tuple[str, str], dict] = {}


def normalised(observation: Any) -> Any:
    """JSON's view of an observation: tuples become lists, dict keys strings."""
    return json.loads(json.dumps(observation, sort_keys=True, default=str))


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(value, list) and value and any(isinstance(v, dict | list) for v in value):
        out = {f"{prefix}[#]": len(value)}
        for i, v in enumerate(value):
            out.update(flatten(v, f"{prefix}[{i}]"))
        return out
    return {prefix or ".": value}


def differences(kafka: Any, minikafka: Any) -> dict[str, list]:
    """path -> [Kafka's value, minikafka's value] wherever they differ (None where absent)."""
    a, b = flatten(normalised(kafka)), flatten(normalised(minikafka))
    return {p: [a.get(p), b.get(p)] for p in sorted(set(a) | set(b)) if a.get(p) != b.get(p)}


def record(name: str, target: str, kafka: Any, minikafka: Any, diff: dict) -> None:
    RESULTS[(name, target)] = {"same": not diff, "kafka": normalised(kafka),
                               "minikafka": normalised(minikafka), "diff": diff}


def record_error(name: str, target: str, exc: BaseException) -> None:
    """A scenario that raised instead of observing (on either cluster)."""
    RESULTS[(name, target)] = {"same": False, "error": f"{type(exc).__name__}: {exc}"[:300],
                               "diff": {}}


def load() -> dict[tuple[str, str], dict]:
    if not RESULTS_FILE.exists():
        return {}
    raw = json.loads(RESULTS_FILE.read_text())
    return {tuple(k.split("|", 1)): v for k, v in raw.items()}


def load_fuzz() -> dict | None:
    """The differential fuzzer's last long run (committed with the report), if any."""
    from .fuzz import FUZZ_RESULTS
    return json.loads(FUZZ_RESULTS.read_text()) if FUZZ_RESULTS.exists() else None


def save_and_report() -> None:
    """Merge this run's results into the saved ones; rewrite docs/fidelity.md once every
    case has a result (a -k selection alone never rewrites it)."""
    from .report import cases, render
    RESULTS_FILE.parent.mkdir(parents=True, exist_ok=True)
    # Parallel workers (pytest-xdist) each save their own results: merge one at a time.
    with open(RESULTS_FILE.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        merged = {**load(), **RESULTS}
        RESULTS_FILE.write_text(json.dumps({f"{n}|{t}": v for (n, t), v in sorted(merged.items())},
                                           indent=1, sort_keys=True))
        if all(case in merged for case in cases()):
            REPORT_FILE.write_text(render(merged, load_fuzz()))
