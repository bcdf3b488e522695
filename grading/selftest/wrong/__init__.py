"""A plausible wrong submission per assignment, for the self-test.

Each module is named after its assignment and holds CELLS, the answers (by nbgrader cell id)
a student might write instead of the solution, and EXPECTED_POINTS, the autograded points
they earn. Deterministic grading makes that number exact, so a change to a test's partial
credit shows up here. RUNAWAY_CELL, when set, is a cell whose answer never finishes: the
self-test gives that cell a 5 s limit in its copy of the instructor's source notebook (the
per-cell metadata the grader honours) and checks that the limit stopped it and grading went on.
"""

from __future__ import annotations

import importlib
from types import ModuleType


def for_assignment(assignment: str) -> ModuleType:
    return importlib.import_module(f"{__name__}.{assignment}")
