"""The suite's own shape, checked offline (no real Kafka needed)."""
from __future__ import annotations

from . import scenarios  # noqa: F401 (registers the scenarios)
from .known import FIXES, KNOWN_DIFFERENCES
from .registry import CONFLUENT, SCENARIOS
from .report import cases, render
from .results import differences


def test_enough_scenarios_with_both_clients():
    assert len(SCENARIOS) >= 40
    assert sum(s.client == CONFLUENT for s in SCENARIOS.values()) >= 10
    assert sum(s.in_process for s in SCENARIOS.values()) >= 10


def test_every_known_difference_names_a_case_and_says_why():
    for case, known in KNOWN_DIFFERENCES.items():
        assert case in cases(), case
        assert known.kind in ("simplification", "bug", "gap") and known.reason and known.diff
    assert set(FIXES) <= set(SCENARIOS)


def test_differences_name_paths_and_both_values():
    kafka = {"acks": [[0, 1]], "error": "NotEnoughReplicasError", "same": 1}
    mini = {"acks": [[0, 2]], "error": "NoError", "same": 1}
    assert differences(kafka, mini) == {"acks[0]": [[0, 1], [0, 2]],
                                        "error": ["NotEnoughReplicasError", "NoError"]}
    assert differences({"a": {1: (2, 3)}}, {"a": {"1": [2, 3]}}) == {}


def test_the_report_lists_every_scenario_and_difference():
    results = {case: {"same": case not in KNOWN_DIFFERENCES,
                      "diff": getattr(KNOWN_DIFFERENCES.get(case), "diff", {})}
               for case in cases()}
    text = render(results)
    assert all(f"`{name}`" in text for name in SCENARIOS)
    assert all(known.reason.split("\n")[0] in text for known in KNOWN_DIFFERENCES.values())
    assert "unexplained" not in text


def test_the_report_gives_the_fuzzers_figures_and_differences():
    from .known import FUZZ_NOTES
    fuzz = {"programs": 3, "operations": 30, "first_seed": 10, "seconds": 9,
            "differences": [{"seed": 11, "index": 2, "op": {"op": "read"},
                             "kafka": {"end": 1}, "minikafka": {"end": 2}}]}
    text = render({}, fuzz)
    assert "3 programs (seeds 10-12), 30 operations, 9 s: 1 differences" in text
    assert '| 11 | `{"op": "read"}` | `{"end": 1}` | `{"end": 2}` | unexplained |' in text
    assert all(note in text for note in FUZZ_NOTES.values())
