"""nbgrader's Execute step replaced by two sandboxed phases, verdicts made here.

nbgrader stays the course manager: it restores the locked cells from the gradebook, and after
this step its own preprocessors give each test cell its points (none when the cell shows an
error) and write the gradebook, all in the grading process. What changes is where the
student's code runs (see harness.py and sandbox.py):

1. answers: setup cells and the student's answer cells in a sandbox. Its output becomes the
   answer cells' output; the values it defined come back as plain data.
2. tests: a fresh sandbox with the setup, the student's definitions, those values and the test
   cells (hidden ones included). Each test cell's pass, failure or timeout comes back as data.

A phase that dies (a limit, a crash, the wall time) fails the cells it did not report, with the
reason. Every cell's time limit comes from the instructor's source notebook, never from the
submission. Evidence of tampering is written to integrity/<assignment>/<student>.json.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
from nbformat.notebooknode import NotebookNode
from nbformat.v4 import new_output
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Dict, Integer, Unicode

from . import sandbox

HIDDEN = re.compile(r"BEGIN HIDDEN TESTS", re.IGNORECASE)
MAX_CELL_TIMEOUT = 600
INTEGRITY_DIR = "integrity"


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def role(cell) -> str | None:
    """setup (locked harness code), answer (student code), test (graded code), or None."""
    if cell.cell_type != "code":
        return None
    meta = _meta(cell)
    if meta.get("solution"):
        return "answer"
    if meta.get("grade"):
        return "test"
    return "setup"


def instructor_timeouts(source_nb: Path, default: int) -> dict[str, int]:
    """Each cell's time limit from the instructor's notebook ("minikafka": {"timeout": N},
    capped at 600 s); anything that is not a positive number means the default."""
    out: dict[str, int] = {}
    if not source_nb.exists():
        return out
    for index, cell in enumerate(nbformat.read(source_nb, as_version=4).cells):
        asked = cell.get("metadata", {}).get("minikafka", {}).get("timeout")
        ok = isinstance(asked, (int, float)) and not isinstance(asked, bool) and asked > 0
        key = _meta(cell).get("grade_id") or f"#{index}"
        out[key] = min(int(asked), MAX_CELL_TIMEOUT) if ok else default
    return out


def uses_spark(cells: list) -> bool:
    return any("pyspark" in c.source for c in cells if role(c) == "setup")


def static_values(sources: list[str]) -> dict | None:
    """When every answer cell holds only def, class and import statements and assignments of
    literals to names, the literals' values (encoded as the harness does), read without
    running anything; None when some cell has code that must run."""
    import ast

    from IPython.core.inputtransformer2 import TransformerManager

    from .harness import NotPlain, encode
    values = {}
    for source in sources:
        try:
            tree = ast.parse(TransformerManager().transform_cell(source))
        except SyntaxError:
            return None
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                 ast.Import, ast.ImportFrom)):
                continue
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue  # a docstring
            targets = node.targets if isinstance(node, ast.Assign) else (
                [node.target] if isinstance(node, ast.AnnAssign) and node.value else None)
            if not targets or not all(isinstance(t, ast.Name) for t in targets):
                return None
            try:
                value = encode(ast.literal_eval(node.value))
            except (ValueError, TypeError, SyntaxError, NotPlain, RecursionError):
                return None
            values.update({t.id: value for t in targets})
    return values


class SandboxExecute(NbGraderPreprocessor):
    """Runs the notebook in two sandboxed phases (see the module docstring)."""

    isolation = Unicode("bwrap", help="bwrap, docker or none").tag(config=True)
    course_root = Unicode("", help="the course directory (source/, integrity/)").tag(config=True)
    timeout = Integer(30, help="default seconds per cell").tag(config=True)
    limits = Dict({}, help="sandbox.Limits fields to override").tag(config=True)
    spark_memory_mb = Integer(6144, help="memory for assignments that start Spark").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict):
        info = resources.get("nbgrader", {})
        assignment, notebook = info.get("assignment", ""), info.get("notebook", "")
        student = info.get("student", "")
        root = Path(self.course_root or ".")
        timeouts = instructor_timeouts(root / "source" / assignment / f"{notebook}.ipynb",
                                       self.timeout)
        cells = [(i, c) for i, c in enumerate(nb.cells) if role(c)]
        limits = sandbox.Limits(**{**({"memory_mb": self.spark_memory_mb}
                                      if uses_spark(nb.cells) else {}), **self.limits})

        def spec(i, cell, kind=None):
            key = _meta(cell).get("grade_id") or f"#{i}"
            return {"id": key, "kind": kind or role(cell), "source": cell.source,
                    "timeout": timeouts.get(key, self.timeout)}

        setup = [spec(i, c) for i, c in cells if role(c) == "setup"]
        answers = [spec(i, c) for i, c in cells if role(c) == "answer"]
        tests = [spec(i, c) for i, c in cells if role(c) == "test"]
        by_id = {spec(i, c)["id"]: c for i, c in cells}
        for _, cell in cells:
            cell.outputs = []
            cell.execution_count = None

        spawn = self._spawn_allowed()
        values = static_values([a["source"] for a in answers])
        if values is None:
            first_cells = [spec(i, c) for i, c in cells if role(c) in ("setup", "answer")]
            first = sandbox.run(self.isolation, {"phase": "answers", "cells": first_cells,
                                                 "spawn_allowed": spawn},
                                limits, self._wall(first_cells))
            for record in first.of("cell"):
                cell = by_id.get(record.get("id"))
                if cell is not None and role(cell) in ("setup", "answer"):
                    cell.outputs = _outputs(record, hidden=False)
            values = (first.of("values") or [{}])[0].get("values", {})
        else:
            # Answers that only define (def, class, import, literal constants) print nothing
            # and need no run of their own: the tests' sandbox is the only one.
            first = sandbox.Outcome(isolation=self.isolation, records=[
                {"kind": "values", "values": values, "skipped": {}}, {"kind": "done"}])
        second = sandbox.run(self.isolation, {"phase": "tests", "setup": setup,
                                              "answers": answers, "values": values,
                                              "tests": tests, "spawn_allowed": spawn},
                             limits, self._wall(setup + tests))
        reported = {r.get("id"): r for r in second.of("cell")}
        for spec_ in tests:
            cell = by_id[spec_["id"]]
            hidden = bool(HIDDEN.search(cell.source))
            record = reported.get(spec_["id"])
            if record is None:
                why = second.problem or _crash(second) or "the test did not run"
                record = {"status": "error", "ename": "SandboxError", "evalue": why}
            cell.outputs = _outputs(record, hidden=hidden)
        self._record_integrity(root, assignment, student, notebook, limits, first, second)
        return nb, resources

    def _wall(self, cells: list[dict]) -> float:
        """The whole phase's wall time: its cells' limits, plus start-up."""
        return sum(c["timeout"] for c in cells) + 60

    def _spawn_allowed(self) -> list[str]:
        try:
            import pyspark
            return [str(Path(pyspark.__file__).resolve().parent)]
        except ImportError:
            return []

    def _record_integrity(self, root: Path, assignment: str, student: str, notebook: str,
                          limits: sandbox.Limits, *phases: sandbox.Outcome) -> None:
        folder = root / INTEGRITY_DIR / assignment
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{student}.json"
        data = json.loads(path.read_text()) if path.exists() else {}
        data[notebook] = {
            "isolation": sandbox.describe(self.isolation, limits),
            "phases": [dict(sandbox.outcome_dict(p), phase=name,
                            evidence=[e for r in p.of("evidence") for e in r.get("items", [])],
                            crash=_crash(p))
                       for name, p in zip(("answers", "tests"), phases)],
            "answers": {r["id"]: {"stdout": r.get("stdout", "")[:4000],
                                  "status": r.get("status"),
                                  "error": f"{r.get('ename')}: {str(r.get('evalue'))[:300]}"
                                  if r.get("status") != "ok" else ""}
                        for r in phases[0].of("cell") if r.get("role") == "answer"},
            "values": (phases[0].of("values") or [{}])[0],
        }
        path.write_text(json.dumps(data, indent=1, sort_keys=True))


def _crash(outcome: sandbox.Outcome) -> str:
    crash = outcome.of("crash")
    return f"grading harness error {crash[0].get('ename')}: {crash[0].get('evalue')}" if crash else ""


def _outputs(record: dict, hidden: bool) -> list:
    """Notebook outputs for one cell's record. A cell with hidden tests shows only that it
    failed, not the hidden test's message (which may quote its data)."""
    out = []
    if record.get("stdout"):
        out.append(new_output("stream", name="stdout", text=record["stdout"]))
    if record.get("stderr"):
        out.append(new_output("stream", name="stderr", text=record["stderr"]))
    if record.get("status", "ok") != "ok":
        ename = str(record.get("ename") or "Error")
        evalue = str(record.get("evalue") or "")
        if record.get("status") == "timeout" or ename == "CellTimeout":
            ename, evalue = "CellTimeoutError", evalue or "the cell ran longer than its limit"
        if hidden and ename != "SandboxError":
            evalue = "a hidden test failed"
        out.append(new_output("error", ename=ename, evalue=evalue,
                              traceback=[f"{ename}: {evalue}"]))
    return out
