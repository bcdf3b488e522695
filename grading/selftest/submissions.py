"""The self-test's students: notebooks made from the released (student) version.

solution  every solution cell filled with the instructor's code, markers removed
blank     the released notebook as it is
wrong     solution cells answered from selftest/wrong/<assignment>.py
edited    the wrong answers, plus every autograded test cell rewritten to pass
"""

from __future__ import annotations

import re

import nbformat
from nbformat import NotebookNode

_MARKER = re.compile(r"^[ \t]*(?:#+[ \t]*)?(BEGIN|END) SOLUTION[ \t]*\n?", re.MULTILINE)
EDITED_TEST = 'print("all tests pass")'


def _nbgrader(cell: NotebookNode) -> dict:
    return cell.metadata.get("nbgrader", {})


def solution_text(source: str) -> str:
    """The instructor's answer as a student would type it: the solution markers removed."""
    return _MARKER.sub("", source).strip("\n")


def with_solutions(released: NotebookNode, source: NotebookNode) -> NotebookNode:
    answers = {_nbgrader(c).get("grade_id"): solution_text(c.source) for c in source.cells
               if _nbgrader(c).get("solution")}
    return with_answers(released, answers)


def with_answers(released: NotebookNode, answers: dict[str, str]) -> NotebookNode:
    """A copy of the released notebook with some solution cells answered."""
    nb = nbformat.from_dict(released)
    unknown = set(answers) - {_nbgrader(c).get("grade_id") for c in nb.cells
                              if _nbgrader(c).get("solution")}
    if unknown:
        raise KeyError(f"not solution cells of this notebook: {sorted(unknown)}")
    for cell in nb.cells:
        gid = _nbgrader(cell).get("grade_id")
        if _nbgrader(cell).get("solution") and gid in answers:
            cell.source = answers[gid].strip("\n")
    return nb


def with_edited_tests(nb: NotebookNode) -> tuple[NotebookNode, list[str]]:
    """A copy whose autograded test cells all just print a success message (a student
    trying to collect points without passing), and the ids of the cells edited."""
    nb = nbformat.from_dict(nb)
    edited = []
    for cell in nb.cells:
        meta = _nbgrader(cell)
        if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
            cell.source = EDITED_TEST
            edited.append(meta["grade_id"])
    return nb, edited
