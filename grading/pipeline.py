"""Each step of the instructor pipeline, through nbgrader's own API (as the formgrader does).

A step that nbgrader reports as failed raises PipelineError with nbgrader's log, so a script
or the self-test stops at the first broken step instead of grading half a class.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.utils import capture_log, temp_attrs
from traitlets.config import Config

from . import integrity, leaks, sandbox, spark_cds, submission


class PipelineError(RuntimeError):
    pass


def _check(result: dict | None, what: str) -> str:
    if not result or not result.get("success"):
        result = result or {}
        raise PipelineError(f"{what} failed:\n{result.get('log', '')}{result.get('error', '')}")
    return result.get("log", "")


def course_root(api) -> Path:
    return Path(api.coursedir.root)


def generate(api, assignment: str) -> Path:
    """The student version in release/<assignment>/, refused if it leaks a solution."""
    _check(api.generate_assignment(assignment, force=True, create=True),
           f"generate_assignment {assignment}")
    root = course_root(api)
    problems = leaks.check_assignment(root, assignment)
    if problems:
        shutil.rmtree(root / "release" / assignment)  # nothing leaky left to release by mistake
        raise PipelineError(f"the release of {assignment} leaks (removed it):\n  "
                            + "\n  ".join(problems))
    return root / "release" / assignment


def ensure_exchange(api) -> Path:
    """The exchange directory, created if missing and writable by everyone (students
    submit into it under their own user in a shared setup)."""
    root = Path(api.exchange.ReleaseAssignment(coursedir=api.coursedir, parent=api).root)
    if not root.exists():
        root.mkdir(parents=True)
        os.chmod(root, 0o777)
    return root


def release(api, assignment: str, force: bool = False) -> None:
    """Copy release/<assignment> into the exchange, where students fetch it."""
    ensure_exchange(api)
    with temp_attrs(api.coursedir, assignment_id=assignment):
        app = api.exchange.ReleaseAssignment(coursedir=api.coursedir,
                                             authenticator=api.authenticator, parent=api)
        app.force = force
        _check(capture_log(app), f"release_assignment {assignment}")


@dataclass
class CollectReport:
    students: list[str] = field(default_factory=list)            # in submitted/
    refused: list[tuple[str, str]] = field(default_factory=list)  # (student, reason)


def collect(api, assignment: str, single_user: bool = False) -> CollectReport:
    """Copy the newest accepted exchange submission of each student into submitted/
    (exchange.CheckedCollect: the folder's Unix owner must be the student it names, nothing
    but regular files); each refusal is reported and recorded for the integrity report.
    single_user: the whole class shares the grader's Unix account (identities unchecked)."""
    from .exchange import CheckedCollect
    with temp_attrs(api.coursedir, assignment_id=assignment):
        app = CheckedCollect(coursedir=api.coursedir, authenticator=api.authenticator,
                             parent=api)
        app.update, app.single_user = True, single_user
        result = capture_log(app)
    _check(result, f"collect {assignment}")
    for student, reason in getattr(app, "refused", []):
        integrity.record_refusal(course_root(api), assignment, student, f"collect: {reason}")
    return CollectReport(submitted_students(api, assignment), list(getattr(app, "refused", [])))


def submitted_students(api, assignment: str) -> list[str]:
    root = course_root(api) / "submitted"
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / assignment).is_dir())


@dataclass
class AutogradeReport:
    graded: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    isolation: str = ""  # which isolation was in force, in words


def sandbox_config(root: Path, isolation: str | None, limits: dict | None = None) -> Config:
    """nbgrader's autograde with its Execute step replaced by the sandboxed two-phase run
    (grading/sandboxed.py); isolation None keeps nbgrader's own Execute (unsandboxed)."""
    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from nbgrader.preprocessors import (
        AssignLatePenalties,
        CheckCellMetadata,
        Execute,
        IgnorePattern,
        LimitOutput,
        SaveAutoGrades,
    )

    from .sandboxed import InstructorTimeouts, SandboxExecute
    config = Config()
    config.Autograde.autograde_preprocessors = [
        *([SandboxExecute] if isolation else [InstructorTimeouts, Execute]),
        IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades,
        AssignLatePenalties, CheckCellMetadata]
    if isolation is None:
        config.InstructorTimeouts.course_root = str(root)
        return config
    from .course import load_config
    config.SandboxExecute.timeout = int(load_config(root).Execute.timeout)
    config.SandboxExecute.isolation = isolation
    config.SandboxExecute.limits = dict(limits or {})
    config.SandboxExecute.course_root = str(root)
    return config


def _grade_one(api, assignment: str, student: str) -> tuple[str, bool, str]:
    result = api.autograde(assignment, student, force=True, create=True) or {}
    return student, bool(result.get("success")), result.get("log", "") + result.get("error", "")


_worker_api = None


def _worker_start(root: str, isolation: str | None, limits: dict | None) -> None:
    global _worker_api
    from .course import make_api
    _worker_api = make_api(Path(root), sandbox_config(Path(root), isolation, limits))


def _worker_grade(assignment: str, student: str) -> tuple[str, bool, str]:
    return _grade_one(_worker_api, assignment, student)


def autograde(api, assignment: str, students: list[str] | None = None,
              progress: Callable[[str, bool], None] | None = None,
              jobs: int = 1, isolation: str | None = "auto",
              limits: dict | None = None) -> AutogradeReport:
    """Run every submission and record the scores in the gradebook.

    isolation: "auto", "bwrap" or "docker" run each submission in sandboxes (sandboxed.py);
    None runs it in a plain nbgrader kernel as the grading user (the instructor asked for
    --unsandboxed). "auto" raises sandbox.SandboxUnavailable when no sandbox works here.
    limits overrides fields of sandbox.Limits (e.g. {"memory_mb": 1024}).
    One broken submission (a dead kernel, a malformed notebook) does not stop the rest.
    With jobs > 1, that many worker processes grade in parallel (the gradebook is shared,
    its writes are short; only these grading processes write it)."""
    students = students or submitted_students(api, assignment)
    root = course_root(api)
    if isolation is not None:
        isolation = sandbox.available(isolation)
    report = AutogradeReport(isolation=sandbox.describe(isolation, sandbox.Limits())
                             if isolation else sandbox.describe("none", sandbox.Limits()))
    for student in students:
        screen(root, assignment, student)
    config = sandbox_config(root, isolation, limits)
    api.update_config(config)
    spark_cds.share_with_kernels(sorted((root / "source" / assignment).glob("*.ipynb")))
    if jobs > 1 and len(students) > 1:
        context = multiprocessing.get_context("spawn")  # no forked zmq/asyncio state
        with ProcessPoolExecutor(min(jobs, len(students)), mp_context=context,
                                 initializer=_worker_start,
                                 initargs=(str(root), isolation, limits)) as pool:
            results = pool.map(_worker_grade, [assignment] * len(students), students)
            outcomes = list(_progress(results, progress))
    else:
        outcomes = list(_progress((_grade_one(api, assignment, s) for s in students), progress))
    for student, ok, log in outcomes:
        if ok:
            report.graded.append(student)
        else:
            report.failed[student] = log
    return report


def screen(root: Path, assignment: str, student: str) -> list[integrity.Finding]:
    """Refuse what no step may read in submitted/<student>/<assignment>: symlinks, special
    files, notebooks that are not valid JSON or are over the size or cell-count limits.
    Each refused file moves to rejected/<student>/<assignment>/ (kept for the instructor); a
    refused notebook is replaced by the blank release, so it scores 0 and every later step
    (autograde, feedback, export) has a notebook to read. Returns the findings."""
    folder = root / "submitted" / student / assignment
    release = root / "release" / assignment
    notebooks = sorted(p.name for p in release.glob("*.ipynb"))
    refused = submission.screen(folder, notebooks + sorted(
        p.name for p in folder.glob("*.ipynb") if p.name not in notebooks))
    if not refused:
        return []
    submission.quarantine(folder, refused, root / "rejected" / student / assignment,
                          {n: release / n for n in notebooks})
    return [integrity.record_refusal(root, assignment, student, f"autograde: {rel}: {why}; "
                                     "graded as blank (0 points)" if rel in notebooks
                                     else f"autograde: {rel}: {why}; removed")
            for rel, why in sorted(refused.items())]


def _progress(outcomes, progress):
    for student, ok, log in outcomes:
        if progress is not None:
            progress(student, ok)
        yield student, ok, log


def feedback(api, assignment: str, release_to_exchange: bool = False) -> list[Path]:
    """HTML feedback per autograded submission in feedback/<student>/<assignment>/;
    optionally released into the exchange for `nbgrader fetch_feedback`. One student at a
    time: a submission whose feedback fails is recorded for the integrity report and the
    rest of the class still gets theirs."""
    root = course_root(api)
    graded = sorted(p.parent.name for p in (root / "autograded").glob(f"*/{assignment}"))
    for student in graded:
        for step, run in (("generate_feedback", api.generate_feedback),
                          ("release_feedback", api.release_feedback)):
            if step == "release_feedback":
                if not release_to_exchange:
                    continue
                ensure_exchange(api)
            result = run(assignment, student) or {}
            if not result.get("success"):
                why = (result.get("error") or result.get("log") or "failed").strip()
                integrity.record_refusal(root, assignment, student,
                                         f"{step} failed: {why.splitlines()[-1][:300]}")
                break
    return sorted((root / "feedback").glob(f"*/{assignment}/*.html"))
