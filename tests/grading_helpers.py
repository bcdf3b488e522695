"""Small notebooks for the grading tests."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell


def nbgrader_cell(source: str, grade_id: str, kind: str, points: int = 1):
    """A code cell with nbgrader's metadata: kind is setup, answer or test."""
    meta = {"grade_id": grade_id, "locked": kind != "answer", "schema_version": 3,
            "solution": kind == "answer", "grade": kind == "test", "task": False}
    if kind == "test":
        meta["points"] = points
    return new_code_cell(source, metadata={"nbgrader": meta})


def grade_as_source(root: Path, nb, isolation: str = "bwrap"):
    """nb as the instructor's notebook n of assignment a under root, then graded as student
    s's submission in the sandbox: (root, the graded notebook)."""
    from grading import sandbox, sandboxed
    (root / "source" / "a").mkdir(parents=True)
    nbformat.write(nb, root / "source" / "a" / "n.ipynb")
    run = sandboxed.SandboxExecute(isolation=sandbox.available(isolation), course_root=str(root))
    graded, _ = run.preprocess(nbformat.from_dict(nb),
                               {"nbgrader": {"assignment": "a", "notebook": "n", "student": "s"}})
    return root, graded
