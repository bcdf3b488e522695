"""nbgrader's Execute step replaced: the student's code runs in sandboxes, verdicts are made here.

nbgrader stays the course manager: it restores the locked cells from the gradebook, and after
this step its own preprocessors give each test cell its points (none when the cell shows an
error) and write the gradebook, all in the grading process. What changes is where the
student's code runs and where tests are judged (see harness.py, sandbox.py and
minikafka/course/autograde.py):

1. answers: setup cells and the student's answer cells in a sandbox. Its output becomes the
   answer cells' output; the values it defined come back as plain data.
2. plan (here): the instructor's setup and test cells run in this process with collect() and
   judge() recording: which functions to call with which plain arguments, and which checks
   to run on the results. Hidden tests included, they never leave this process.
3. calls: a fresh sandbox with the setup, the student's definitions and values, runs the
   calls and returns each result (or exception) as plain data with exact types, each when
   its call returns; the hidden tests' calls in a sandbox of their own. Each call is timed,
   and killed past its cell's limit, by the harness's main process, which the student's code
   runs apart from (harness.py).
4. judge (here): each test cell's checks run on the decoded results; what they assert is the
   cell's pass or failure.

A phase that dies (a crash, the wall time) fails the cells it did not report, with the
reason; one that sends more than the output limits allow gives the submission 0. Every cell's time limit comes from the instructor's source notebook, never from the
submission. Evidence of tampering is written to integrity/<assignment>/<student>.json.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import signal
import threading
from pathlib import Path

import nbformat
from nbformat.notebooknode import NotebookNode
from nbformat.v4 import new_output
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Dict, Integer, Unicode

from minikafka.course import autograde

from . import sandbox

HIDDEN = re.compile(r"BEGIN HIDDEN TESTS", re.IGNORECASE)
_ENAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]{0,99}")
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
    """Runs the answers and the tests' collections in sandboxes and judges in this process
    (see the module docstring)."""

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
        source_nb = root / "source" / assignment / f"{notebook}.ipynb"
        timeouts = instructor_timeouts(source_nb, self.timeout)
        # Setup and test code come from the instructor's notebook only: a code cell a student
        # added counts as an answer, and test cells are judged as the instructor wrote them.
        if not source_nb.exists():
            # the grading process runs setup and test code: only ever the instructor's
            raise FileNotFoundError(f"no instructor notebook {source_nb}: cannot judge")
        source = nbformat.read(source_nb, as_version=4)
        instructor = {key: (i, c) for i, c in enumerate(source.cells) if role(c)
                      for key in [_meta(c).get("grade_id") or f"#{i}"]}
        limits = sandbox.Limits(**{**({"memory_mb": self.spark_memory_mb}
                                      if uses_spark(source.cells) else {}), **self.limits})

        def spec(key, cell, kind):
            # a cell the student added has no limit of its own in the source: the default
            return {"id": key, "kind": kind, "source": cell.source,
                    "timeout": timeouts.get(key, self.timeout) if key in instructor
                    else self.timeout}

        setup = [spec(k, c, "setup") for k, (_, c) in instructor.items() if role(c) == "setup"]
        setup_ids = {s["id"] for s in setup}
        tests = [spec(k, c, "test") for k, (_, c) in instructor.items() if role(c) == "test"]
        submitted = [(_meta(c).get("grade_id") or f"#{i}", c) for i, c in enumerate(nb.cells)
                     if role(c)]
        first_cells = [spec(k, instructor[k][1], "setup") if k in setup_ids
                       else spec(k, c, "answer")
                       for k, c in submitted if role(c) != "test"]
        answers = [c for c in first_cells if c["kind"] == "answer"]
        by_id = dict(submitted)
        for _, cell in submitted:
            cell.outputs = []
            cell.execution_count = None

        spawn = self._spawn_allowed()
        values = static_values([a["source"] for a in answers])
        if values is None:
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
            # and need no run of their own.
            first = sandbox.Outcome(isolation=self.isolation, records=[
                {"kind": "values", "values": values, "skipped": {}}, {"kind": "done"}])

        plan, planned = plan_tests(setup, tests, values, source.cells)
        hidden = {t["id"] for t in tests if HIDDEN.search(t["source"])}
        # The hidden tests' calls run in a sandbox of their own: nothing the visible calls'
        # code can reach holds a hidden test's inputs, and their output is never shown.
        phases = [("answers", first)]
        collected: dict = {}
        problems: dict[str, str] = {}
        for name, group in (("calls", [t for t in tests if t["id"] not in hidden]),
                            ("hidden calls", [t for t in tests if t["id"] in hidden])):
            ids = {t["id"] for t in group}
            calls = [c for c in plan.calls if c["cell"] in ids]
            if not calls or first.over_limit:
                continue
            outcome = sandbox.run(self.isolation, {
                "phase": "calls", "setup": setup, "answers": answers, "values": values,
                "calls": calls, "budgets": {t["id"]: t["timeout"] for t in group},
                "spawn_allowed": spawn}, limits, self._wall(setup + group))
            phases.append((name, outcome))
            asked = {c["index"] for c in calls}
            for r in outcome.of("collected"):  # the first record of each call counts
                if r.get("index") in asked and r.get("index") not in collected:
                    collected[r.get("index")] = r
            # a crash's message is the student's text: not for a hidden test's feedback
            crash = "" if ids & hidden else _crash(outcome)
            problems.update(dict.fromkeys(ids, outcome.problem or crash or "the call did not run"))
        over = next((p.over_limit for _, p in phases if p.over_limit), "")
        for test in tests:
            cell = by_id.get(test["id"])
            if cell is None:
                continue
            if over:
                # Over a limit the whole submission scores 0: nothing it sent is judged.
                record = {"status": "error", "ename": "LimitExceeded", "evalue": over}
            else:
                record = verdict(plan, planned[test["id"]], test["id"], collected,
                                 problems.get(test["id"], "the call did not run"),
                                 show_student_output=test["id"] not in hidden,
                                 seconds=test["timeout"])
            cell.outputs = _outputs(record, hidden=test["id"] in hidden)
        self._record_integrity(root, assignment, student, notebook, limits, phases)
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
                          limits: sandbox.Limits,
                          phases: list[tuple[str, sandbox.Outcome]]) -> None:
        folder = root / INTEGRITY_DIR / assignment
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{student}.json"
        data = json.loads(path.read_text()) if path.exists() else {}
        data[notebook] = {
            "isolation": sandbox.describe(self.isolation, limits),
            "phases": [dict(sandbox.outcome_dict(p), phase=name,
                            evidence=[e for r in p.of("evidence") for e in r.get("items", [])],
                            crash=_crash(p))
                       for name, p in phases],
            "answers": {r["id"]: {"stdout": r.get("stdout", "")[:4000],
                                  "status": r.get("status"),
                                  "error": f"{r.get('ename')}: {str(r.get('evalue'))[:300]}"
                                  if r.get("status") != "ok" else ""}
                        for r in phases[0][1].of("cell") if r.get("role") == "answer"},
            "values": _bounded((phases[0][1].of("values") or [{}])[0]),
        }
        path.write_text(json.dumps(data, indent=1, sort_keys=True))


MAX_KEPT_VALUES = 64 * 1024


def _bounded(values: dict) -> dict:
    """The answers' values as the integrity record keeps them: large ones by digest only,
    so the record on disk stays small whatever a submission defines."""
    text = json.dumps(values, sort_keys=True)
    if len(text) <= MAX_KEPT_VALUES:
        return values
    import hashlib
    return {"digest": hashlib.sha256(text.encode()).hexdigest(), "bytes": len(text)}


class InstructorTimeouts(NbGraderPreprocessor):
    """For nbgrader's own Execute (--unsandboxed): every cell's "minikafka" metadata (its
    time limit) replaced by the instructor's cell of the same grade_id in source/, and
    dropped from cells the source does not have, so no submission sets its own limit."""

    course_root = Unicode("", help="the course directory (source/)").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict):
        info = resources.get("nbgrader", {})
        source_nb = (Path(self.course_root or ".") / "source" / info.get("assignment", "")
                     / f"{info.get('notebook', '')}.ipynb")
        asked = {}
        if source_nb.exists():
            for cell in nbformat.read(source_nb, as_version=4).cells:
                if _meta(cell).get("grade_id") and "minikafka" in cell.get("metadata", {}):
                    asked[_meta(cell)["grade_id"]] = cell.metadata["minikafka"]
        for cell in nb.cells:
            cell.metadata.pop("minikafka", None)
            if _meta(cell).get("grade_id") in asked:
                cell.metadata["minikafka"] = asked[_meta(cell)["grade_id"]]
        return nb, resources


# -- the grader's side: plan the test cells, then judge what came back ---------------------------

def grader_setup(cells: list) -> list[str]:
    """The instructor's setup cells the grading process runs before the test cells: all but
    those marked "minikafka": {"grader": false} (a Spark session only the sandbox needs)."""
    return [c.source for c in cells if role(c) == "setup"
            and c.get("metadata", {}).get("minikafka", {}).get("grader", True) is not False]


def plan_tests(setup: list[dict], tests: list[dict], values: dict,
               source_cells: list) -> tuple[autograde.Plan, dict[str, dict]]:
    """Run the instructor's setup and test cells here, in the grading process, with collect()
    and judge() recording instead of running: the calls for the sandbox and the judges for
    afterwards. Returns the plan and, per test cell, its own output or the error it raised."""
    from IPython.core.inputtransformer2 import TransformerManager

    answers = {}
    for name, data in values.items():
        with contextlib.suppress(autograde.NotPlain, RecursionError):
            answers[name] = autograde.decode(data)
    plan = autograde.Plan(answers=answers)
    ns: dict = {"__name__": "__main__"}
    planned: dict[str, dict] = {}
    autograde.planning(plan)
    try:
        for source in grader_setup(source_cells):
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(TransformerManager().transform_cell(source), "setup", "exec"), ns)
        for test in tests:
            plan.cell = test["id"]
            out = io.StringIO()
            try:
                with contextlib.redirect_stdout(out), time_limit(test["timeout"]):
                    exec(compile(test["source"], test["id"], "exec"), ns)
                planned[test["id"]] = {"status": "ok", "stdout": out.getvalue()}
            except Exception as exc:
                plan.drop(test["id"])
                planned[test["id"]] = {"status": "timeout" if isinstance(exc, GraderTimeout)
                                       else "error", "ename": type(exc).__name__,
                                       "evalue": str(exc)[:2000]}
    except Exception as exc:
        why = {"status": "error", "ename": "GraderSetupError", "evalue": f"{type(exc).__name__}: {exc}"}
        planned = {t["id"]: planned.get(t["id"], why) for t in tests}
    finally:
        autograde.planning(None)
    return plan, planned


class GraderTimeout(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds: float):
    """Stop the grader's own work on one test cell after its time limit (the judges run
    the instructor's code on the student's values, e.g. a producer built from the student's
    settings). Only the main thread can take a signal; elsewhere there is no limit."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise GraderTimeout("the test ran longer than its time limit")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, max(float(seconds), 0.1))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class _Failed(Exception):
    def __init__(self, record: dict):
        self.record = record


def _resolve(value, collected: dict, problem: str):
    """value with every Collected handle (also inside lists, tuples and dicts) replaced by
    the plain data that came back, decoded with exact types."""
    if isinstance(value, autograde.Collected):
        record = collected.get(value.index)
        if record is None:
            raise _Failed({"status": "error", "ename": "SandboxError", "evalue": problem})
        if record.get("status") != "ok":
            status = "timeout" if record.get("status") == "timeout" else "error"
            raise _Failed({"status": status, "ename": str(record.get("ename") or "Error"),
                           "evalue": f"{value.call}(...): {record.get('evalue', '')}"})
        try:
            return autograde.decode(record.get("value"))
        except (autograde.NotPlain, RecursionError, ValueError, TypeError) as exc:
            raise _Failed({"status": "error", "ename": "NotPlain",
                           "evalue": f"{value.call}(...): {exc}"}) from None
    if type(value) in (list, tuple):
        return type(value)(_resolve(v, collected, problem) for v in value)
    if type(value) is dict:
        return {k: _resolve(v, collected, problem) for k, v in value.items()}
    return value


def verdict(plan: autograde.Plan, planned: dict, cell: str, collected: dict, problem: str,
            show_student_output: bool = True, seconds: float = 30) -> dict:
    """One test cell's record: its judges run here on the collected plain data."""
    if planned.get("status") != "ok":
        return planned
    student_out = "".join(collected[c["index"]].get("stdout", "") for c in plan.calls
                          if c["cell"] == cell and c["index"] in collected)
    out = io.StringIO()
    record = {"status": "ok"}
    try:
        with contextlib.redirect_stdout(out), time_limit(seconds):
            for check, args, kwargs in plan.judges.get(cell, []):
                check(*_resolve(args, collected, problem), **_resolve(kwargs, collected, problem))
    except _Failed as failed:
        record = failed.record
    except Exception as exc:
        record = {"status": "timeout" if isinstance(exc, GraderTimeout) else "error",
                  "ename": type(exc).__name__, "evalue": str(exc)[:2000]}
    if not show_student_output:
        # a hidden test: neither the student's output nor what the test printed or passed
        record["stdout"] = ""
        return record
    shown = student_out + out.getvalue()
    record["stdout"] = shown + (planned.get("stdout", "") if record["status"] == "ok" else "")
    return record


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
        if not _ENAME.fullmatch(ename):  # the student names their exceptions: no markup
            ename = "Error"
        evalue = str(record.get("evalue") or "")
        if record.get("status") == "timeout" or ename == "CellTimeout":
            ename, evalue = "CellTimeoutError", evalue or "the cell ran longer than its limit"
        if hidden and ename not in ("SandboxError", "LimitExceeded"):
            evalue = "a hidden test failed"
        out.append(new_output("error", ename=ename, evalue=evalue,
                              traceback=[f"{ename}: {evalue}"]))
    return out
