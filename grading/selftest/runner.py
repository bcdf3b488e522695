"""`python -m grading selftest`: the whole pipeline on every assignment, in a temporary copy
of the course, with four students per assignment:

    solution  fetched from the exchange, submitted back through it: full autograded marks
    blank     the same route, nothing answered: zero
    wrong     imported from a Canvas-style zip with a roster: exactly the partial credit
              recorded in selftest/wrong/<assignment>.py
    edited    the wrong answers with every test cell rewritten to pass, from the same zip:
              the edits are reported and earn nothing (the same score as wrong)

It also checks that each release leaks nothing, that feedback is generated for every
submission, that the per-question CSV agrees with the gradebook and, where a wrong answer
loops forever, that the cell timeout stopped it and grading went on.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import shutil
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook
from nbgrader.utils import capture_log, temp_attrs
from traitlets.config import Config

from .. import COURSE_DIR, course, integrity, lms, pipeline, scores
from . import submissions, wrong

RUNAWAY_TIMEOUT = 5  # seconds; the course copy's source gives the runaway cell this limit
STUDENTS = {  # variant -> (student id, route)
    "solution": ("s-solution", "exchange"),
    "blank": ("s-blank", "exchange"),
    "wrong": ("s-wrong", "lms zip"),
    "edited": ("s-edited", "lms zip"),
}
LMS_IDS = {"wrong": "1001", "edited": "1002"}


@dataclass
class Row:
    assignment: str
    variant: str
    route: str
    score: float
    maximum: float
    expected: str
    edits: str
    ok: bool
    notes: list[str] = field(default_factory=list)


@contextlib.contextmanager
def _environment(**values: str | None) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    try:
        for key, value in values.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def copy_course(dest: Path, assignments: list[str]) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(COURSE_DIR / course.CONFIG_FILE, dest / course.CONFIG_FILE)
    for assignment in assignments:
        shutil.copytree(COURSE_DIR / "source" / assignment, dest / "source" / assignment,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    return dest


def limit_runaway_cells(root: Path, assignments: list[str]) -> None:
    """In the course copy's source notebooks, give each wrong answer's runaway cell a
    RUNAWAY_TIMEOUT limit, as an instructor sets a cell's limit ("minikafka": {"timeout"}):
    the sandboxed autograde takes limits from source/ only, and under the default 30 s the
    endless answer burned 30 s of CPU for each of the wrong and edited students."""
    for assignment in assignments:
        cell_id = wrong.for_assignment(assignment).RUNAWAY_CELL
        if not cell_id:
            continue
        for path in course.source_notebooks(root, assignment):
            nb = nbformat.read(path, as_version=4)
            cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == cell_id]
            for cell in cells:
                cell.metadata["minikafka"] = {"timeout": RUNAWAY_TIMEOUT}
            if cells:
                nbformat.write(nb, path)


def _exchange_step(api, kind: str, assignment: str, student: str, workdir: Path,
                   cache: Path) -> None:
    """A student's fetch or submit, as `nbgrader fetch_assignment` / `nbgrader submit`."""
    with temp_attrs(api.coursedir, assignment_id=assignment, student_id=student):
        app = getattr(api.exchange, kind)(coursedir=api.coursedir,
                                          authenticator=api.authenticator, parent=api)
        app.assignment_dir = str(workdir)
        app.cache = str(cache)
        result = capture_log(app)
    if not result.get("success"):
        raise pipeline.PipelineError(f"{kind} {assignment} as {student} failed:\n"
                                     f"{result.get('log', '')}{result.get('error', '')}")


def _variant_notebooks(root: Path, assignment: str, variant: str,
                       answers: dict[str, str]) -> tuple[dict[str, nbformat.NotebookNode], list[str]]:
    """notebook file name -> the student's notebook, and the test cells edited."""
    out, edited, used = {}, [], set()
    for source_path in course.source_notebooks(root, assignment):
        released = nbformat.read(root / "release" / assignment / source_path.name, as_version=4)
        if variant == "solution":
            nb = submissions.with_solutions(released, nbformat.read(source_path, as_version=4))
        elif variant == "blank":
            nb = released
        else:
            ids = {c.metadata.get("nbgrader", {}).get("grade_id") for c in released.cells}
            mine = {k: v for k, v in answers.items() if k in ids}
            used |= set(mine)
            nb = submissions.with_answers(released, mine)
            if variant == "edited":
                nb, cells = submissions.with_edited_tests(nb)
                edited += cells
        out[source_path.name] = nb
    if variant in ("wrong", "edited") and used != set(answers):
        raise KeyError(f"{assignment}: wrong answers for unknown cells {sorted(set(answers) - used)}")
    return out, edited


def _autograded_maximum(db_url: str, assignment: str) -> tuple[float, set[str]]:
    """Points of the autograded (code) test cells, and their columns."""
    with Gradebook(db_url) as gb:
        cells = [(nb.name, c) for nb in gb.find_assignment(assignment).notebooks
                 for c in nb.grade_cells if c.cell_type == "code"]
        return sum(c.max_score for _, c in cells), {f"{n}:{c.name}" for n, c in cells}


def _runaway_stopped(root: Path, assignment: str, student: str, cell_id: str) -> bool:
    for path in (root / "autograded" / student / assignment).glob("*.ipynb"):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.metadata.get("nbgrader", {}).get("grade_id") == cell_id:
                return any(o.get("output_type") == "error" and
                           o.get("ename") in ("CellTimeoutError", "KeyboardInterrupt")
                           for o in cell.get("outputs", []))
    return False


def _hand_out(api, root: Path, work: Path, assignment: str,
              answers: dict[str, str]) -> tuple[Path, Path, list[str]]:
    """The four students do their work: two submit through the exchange, two land in a
    Canvas-style export. Returns (the export zip, its roster, the test cells edited)."""
    cache = work / "cache"
    archive = work / f"{assignment}-canvas-export.zip"
    roster = work / "roster.csv"
    roster.write_text("lms_id,name,student_id\n" + "".join(
        f"{LMS_IDS[v]},{v} student,{STUDENTS[v][0]}\n" for v in LMS_IDS))
    expected_edits: list[str] = []
    with zipfile.ZipFile(archive, "w") as zf:
        for variant, (student, route) in STUDENTS.items():
            notebooks, edited = _variant_notebooks(root, assignment, variant, answers)
            expected_edits += edited
            if route == "exchange":
                home = work / "students" / student
                _exchange_step(api, "FetchAssignment", assignment, student, home, cache)
                for name, nb in notebooks.items():
                    nbformat.write(nb, home / assignment / name)
                _exchange_step(api, "Submit", assignment, student, home, cache)
            else:
                for name, nb in notebooks.items():
                    # Canvas: login_userid_submissionid_file, "-1" on a resubmission
                    stem = Path(name).stem + ("-1" if variant == "edited" else "")
                    zf.writestr(f"{variant}student_{LMS_IDS[variant]}_50{LMS_IDS[variant]}_"
                                f"{stem}.ipynb", nbformat.writes(nb))
    return archive, roster, expected_edits


def _judge(assignment: str, table: dict, auto_columns: set[str], maximum: float,
           graded: list[str], edits: list, html: list[Path], expected_edits: list[str],
           runaway: bool | None) -> list[Row]:
    """One row per student: the score against what that student must get."""
    answers = wrong.for_assignment(assignment)

    def auto_score(student: str) -> float:
        row = table.get(student, {})
        return sum(float(row[c]) for c in auto_columns if row.get(c) not in (None, ""))

    rows = []
    wrong_score = auto_score(STUDENTS["wrong"][0])
    for variant, (student, route) in STUDENTS.items():
        score = auto_score(student)
        found = sorted(e.cell for e in edits if e.student == student)
        problems, info = [], []
        if student not in graded:
            problems.append("not autograded")
        if student not in table:
            problems.append("missing from the scores CSV")
        if not any(p.parts[-3] == student for p in html):
            problems.append("no feedback generated")
        if variant == "solution":
            expected, right = f"{maximum:g}", score == maximum
        elif variant == "blank":
            expected, right = "0", score == 0
        elif variant == "wrong":
            expected = f"{answers.EXPECTED_POINTS:g}"
            right = score == answers.EXPECTED_POINTS and 0 < score < maximum
            if runaway is not None:
                cell = answers.RUNAWAY_CELL
                if runaway:
                    info.append(f"runaway cell {cell!r} stopped by the timeout")
                else:
                    problems.append(f"runaway cell {cell!r} was not stopped")
        else:
            expected, right = f"{wrong_score:g} (= wrong)", score == wrong_score
            if not found or found != sorted(expected_edits):
                problems.append(f"edited {sorted(expected_edits)}, reported {found}")
        if variant != "edited" and found:
            problems.append(f"edits reported where there were none: {found}")
        rows.append(Row(assignment, variant, route, score, maximum, expected,
                        f"{len(found)} reported" if found else "-",
                        right and not problems, problems + info))
    return rows


def run_assignment(api, root: Path, work: Path, assignment: str,
                   log: Callable[[str], None]) -> list[Row]:
    """The pipeline on one assignment, from generate to the CSV; the table's rows."""
    started = time.monotonic()
    steps: dict[str, float] = {}

    def lap(step: str) -> None:
        steps[step] = time.monotonic() - started - sum(steps.values())

    db_url = api.coursedir.db_url
    answers = wrong.for_assignment(assignment)
    pipeline.generate(api, assignment)           # refuses a release that leaks
    pipeline.release(api, assignment, force=True)
    lap("generate+release")
    archive, roster, expected_edits = _hand_out(api, root, work, assignment, answers.CELLS)
    lap("students")
    # one Unix account plays every student here
    collected = pipeline.collect(api, assignment, single_user=True).students
    imported = lms.import_submissions(root, assignment, archive, "canvas", roster=roster)
    lap("collect+import")
    # Spark assignments grade two submissions at a time: their kernels wait on the JVM a lot.
    report = pipeline.autograde(api, assignment, [s for s, _ in STUDENTS.values()],
                                jobs=2 if _weight(assignment) > 1 else 1)
    lap("autograde")
    edits = integrity.edited_locked_cells(root, assignment)
    html = pipeline.feedback(api, assignment)
    lap("feedback")
    maximum, auto_columns = _autograded_maximum(db_url, assignment)
    edited_by: dict[str, list[str]] = {}
    for e in edits:
        edited_by.setdefault(e.student, []).append(e.cell)
    csv_path = scores.write_csv(root / f"scores-{assignment}.csv",
                                scores.questions(root, db_url, assignment),
                                scores.student_scores(db_url, assignment), edited_by)
    runaway = None if not answers.RUNAWAY_CELL else _runaway_stopped(
        root, assignment, STUDENTS["wrong"][0], answers.RUNAWAY_CELL)
    rows = _judge(assignment, scores.read_csv(csv_path), auto_columns, maximum, report.graded,
                  edits, html, expected_edits, runaway)
    lap("export+check")
    rows[0].notes[:0] = [f"collected {len(collected)} from the exchange, imported "
                         f"{len(imported.imported)} from the LMS zip"] + [
        f"autograde failed for {s}: {why.strip().splitlines()[-1:]}"
        for s, why in report.failed.items()]
    log(f"{assignment}: {time.monotonic() - started:.1f} s ("
        + ", ".join(f"{k} {v:.1f}" for k, v in steps.items()) + ")")
    return rows


def format_table(rows: list[Row]) -> str:
    header = ("assignment", "submission", "route", "score", "expected", "locked-cell edits", "ok")
    body = [(r.assignment, r.variant, r.route, f"{r.score:g}/{r.maximum:g}", r.expected, r.edits,
             "yes" if r.ok else "NO") for r in rows]
    widths = [max(len(str(x[i])) for x in [header, *body]) for i in range(len(header))]
    lines = ["  ".join(str(v).ljust(w) for v, w in zip(line, widths)).rstrip()
             for line in [header, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    notes = [f"  {r.assignment}/{r.variant}: {n}" for r in rows for n in r.notes]
    return "\n".join(lines + (["", "notes:", *notes] if notes else []))


def _weight(assignment: str) -> int:
    """Rough cost of an assignment's self-test: notebooks whose cells ask for a long
    timeout start Spark (about 20 s per submission), the others take a few seconds."""
    for path in course.source_notebooks(COURSE_DIR, assignment):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.metadata.get("minikafka", {}).get("timeout"):
                return 5
    return 1


def plan(assignments: list[str], jobs: int) -> list[list[str]]:
    """Assignments split into `jobs` groups of similar cost (longest first, greedy)."""
    groups: list[list[str]] = [[] for _ in range(max(1, min(jobs, len(assignments))))]
    load = [0] * len(groups)
    for assignment in sorted(assignments, key=_weight, reverse=True):
        i = load.index(min(load))
        groups[i].append(assignment)
        load[i] += _weight(assignment)
    return [sorted(g) for g in groups if g]


def run_group(assignments: list[str], work: Path) -> list[Row]:
    """Some assignments in their own copy of the course (own gradebook and exchange)."""
    root = copy_course(work / "course", assignments)
    limit_runaway_cells(root, assignments)
    overrides = Config()
    overrides.Exchange.cache = str(work / "cache")
    with _environment(GRADING_DB_URL=None, GRADING_EXCHANGE=None, GRADING_CELL_TIMEOUT=None):
        api = course.make_api(root, overrides)
        rows = []
        for assignment in assignments:
            rows.extend(run_assignment(api, root, work, assignment,
                                       lambda line: print(line, flush=True)))
    return rows


def run(assignments: list[str] | None = None, keep: Path | None = None,
        jobs: int = 2) -> tuple[bool, list[Row]]:
    """Run the self-test, `jobs` groups of assignments in parallel processes;
    (all as expected, the table's rows in assignment order)."""
    assignments = assignments or course.assignments()
    with tempfile.TemporaryDirectory(prefix="grading-selftest-") as tmp:
        work = Path(keep) if keep else Path(tmp)
        groups = plan(assignments, jobs)
        if len(groups) == 1:
            rows = run_group(groups[0], work / "group-0")
        else:
            context = multiprocessing.get_context("spawn")  # no forked nbgrader/zmq state
            with ProcessPoolExecutor(len(groups), mp_context=context) as pool:
                futures = [pool.submit(run_group, g, work / f"group-{i}")
                           for i, g in enumerate(groups)]
                rows = [row for f in futures for row in f.result()]
    order = {a: i for i, a in enumerate(assignments)}
    rows.sort(key=lambda r: order[r.assignment])
    return all(r.ok for r in rows), rows
