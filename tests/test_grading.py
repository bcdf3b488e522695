"""The nbgrader course and its pipeline (grading/).

One module-scoped run of the self-test (`python -m grading selftest`: generate, release,
fetch/submit/collect through the exchange, LMS zip import, autograde, feedback, CSV export,
on every assignment) backs the end-to-end tests; the pieces are also tested on small inputs.
"""

from __future__ import annotations

import csv
import json
import os
import socket
import subprocess
import time
import urllib.request
import zipfile
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from nbgrader.utils import compute_checksum, parse_utc

from grading import COURSE_DIR, course, integrity, leaks, lms
from grading.cli import formgrader_command
from grading.cli import main as cli_main
from grading.selftest import format_table, run, submissions, wrong

# One worker runs the whole module, so the self-test fixture runs once (under the first
# test that asks for it, the one with the long timeout) and not once per worker.
pytestmark = pytest.mark.xdist_group("grading-selftest")

ASSIGNMENTS = course.assignments()
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")


@pytest.fixture(scope="module")
def selftest(tmp_path_factory):
    work = tmp_path_factory.mktemp("selftest")
    started = time.monotonic()
    ok, rows = run(keep=work, jobs=2)
    print(format_table(rows), f"\nselftest took {time.monotonic() - started:.0f} s")
    return ok, rows, work


def _course_copies(work: Path) -> list[Path]:
    return sorted(p / "course" for p in work.glob("group-*"))


# -- the end-to-end self-test -------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.timeout(900)
def test_selftest_grades_every_assignment_as_expected(selftest):
    ok, rows, _ = selftest
    assert ok, format_table(rows)
    by = {(r.assignment, r.variant): r for r in rows}
    assert len(ASSIGNMENTS) >= 5
    assert {a for a, _ in by} == set(ASSIGNMENTS)
    for a in ASSIGNMENTS:
        solution, blank, bad, edited = (by[(a, v)] for v in ("solution", "blank", "wrong", "edited"))
        assert solution.score == solution.maximum > 0, a
        assert blank.score == 0, a
        assert 0 < bad.score < bad.maximum, a
        assert bad.score == wrong.for_assignment(a).EXPECTED_POINTS, a
        assert edited.score == bad.score, f"{a}: editing the tests earned points"
        assert edited.edits.endswith("reported") and solution.edits == "-", a
    assert any("stopped by the timeout" in n for r in rows for n in r.notes), \
        "no wrong answer exercised the cell timeout"


@pytest.mark.slow
@pytest.mark.spark
def test_released_notebooks_hold_no_solution_and_no_hidden_test(selftest):
    _, _, work = selftest
    released = {p.parent.name: p for root in _course_copies(work)
                for p in (root / "release").glob("*/*.ipynb")}
    assert set(released) == set(ASSIGNMENTS)
    for assignment, path in released.items():
        text = path.read_text()
        for marker in MARKERS:
            assert marker not in text, f"{path}: {marker}"
        source = COURSE_DIR / "source" / assignment / path.name
        assert leaks.find_leaks(source, path) == [], assignment
        nb = nbformat.read(path, as_version=4)
        stubs = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")]
        assert stubs and all("YOUR CODE HERE" in c.source or "YOUR ANSWER HERE" in c.source
                             for c in stubs), assignment
        tests = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")
                 and c.cell_type == "code"]
        assert tests and all(c.metadata.nbgrader.get("locked") for c in tests), assignment
        # no line of a solution or hidden-test region (one not also written elsewhere in
        # the source, such as a function's signature) survives in the release
        secret, public = set(), set()
        for cell in nbformat.read(source, as_version=4).cells:
            inside, outside = leaks.secret_lines(cell.source)
            secret |= inside
            public |= outside
        secret = {s for s in secret - public if len(s) >= leaks.MIN_LINE and not s.startswith("#")}
        assert secret, f"{assignment}: no solution lines to look for"
        shipped = {line.strip() for c in nb.cells for line in c.source.splitlines()}
        assert not secret & shipped, f"{assignment}: {sorted(secret & shipped)} leaked"


@pytest.mark.slow
@pytest.mark.spark
def test_exported_csv_has_a_column_per_question_and_the_max_row(selftest):
    _, _, work = selftest
    for root in _course_copies(work):
        for path in root.glob("scores-*.csv"):
            with open(path, newline="") as fh:
                rows = list(csv.DictReader(fh))
            assignment = path.stem.removeprefix("scores-")
            graded = [c for nb in course.source_notebooks(COURSE_DIR, assignment)
                      for c in nbformat.read(nb, as_version=4).cells
                      if c.metadata.get("nbgrader", {}).get("grade")]
            columns = {k for k in rows[0] if ":" in k}
            assert len(columns) == len(graded), assignment
            maximum = {r["student_id"]: r for r in rows}["(max points)"]
            solution = {r["student_id"]: r for r in rows}["s-solution"]
            assert float(maximum["total"]) == sum(float(c.metadata.nbgrader["points"]) for c in graded)
            assert solution["edited_locked_cells"] == ""
            assert {r["student_id"] for r in rows} == {"(max points)", "s-solution", "s-blank",
                                                       "s-wrong", "s-edited"}


@pytest.mark.slow
@pytest.mark.spark
def test_cli_export_and_check_on_a_graded_course(selftest, tmp_path, capsys):
    _, _, work = selftest
    root = next(r for r in _course_copies(work) if (r / "source" / "a1_partitions").is_dir())
    assert cli_main(["--course", str(root), "export", "a1_partitions", "-o", str(tmp_path)]) == 0
    with open(tmp_path / "scores-a1_partitions.csv", newline="") as fh:
        rows = {r["student_id"]: r for r in csv.DictReader(fh)}
    assert rows["s-solution"]["total"] == "8" and rows["s-solution"]["pending_manual"] == "1"
    assert rows["s-edited"]["edited_locked_cells"] and not rows["s-wrong"]["edited_locked_cells"]
    assert cli_main(["--course", str(root), "check", "a1_partitions"]) == 0
    out = capsys.readouterr().out
    edits = [line for line in out.splitlines() if line.startswith("  locked cell changed:")]
    assert any("s-edited: partitions cell 'test_order_visible' edited" in e for e in edits)
    assert not any("s-wrong" in e for e in edits)
    # the integrity report: the edits again, and the wrong and edited answers are the same
    assert "integrity: s-edited: locked cell: partitions cell 'test_order_visible' edited" in out
    assert "integrity: s-wrong: identical answers" in out
    assert "integrity: s-solution" not in out


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.timeout(120)
def test_formgrader_serves_the_graded_course(selftest):
    """JupyterLab started in a course directory (as `python -m grading formgrader` does)
    loads nbgrader's formgrader with this course's config and gradebook."""
    _, _, work = selftest
    root = _course_copies(work)[0]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = formgrader_command(["--no-browser", f"--port={port}", "--ServerApp.token=",
                                  "--ServerApp.password=", "--ServerApp.ip=127.0.0.1"])
    server = subprocess.Popen(command, cwd=root, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/formgrader/api/assignments",
                                            timeout=5) as response:
                    assignments = json.load(response)
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, "no formgrader"
                time.sleep(1)
    finally:
        server.terminate()
        server.wait(30)
    graded = {a["name"]: a for a in assignments}
    expected = {p.name for p in (root / "source").iterdir()}
    assert set(graded) == expected
    assert all(a["num_submissions"] == 4 and a["max_score"] > 0 for a in graded.values())


# -- the course's notebooks -------------------------------------------------------------------

@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_source_notebooks_are_nbgrader_assignments(assignment):
    paths = course.source_notebooks(COURSE_DIR, assignment)
    assert paths
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        meta = [c.metadata.get("nbgrader") for c in nb.cells if "nbgrader" in c.metadata]
        ids = [m["grade_id"] for m in meta]
        assert len(ids) == len(set(ids)), f"duplicate cell ids in {path.name}"
        solutions = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")]
        assert solutions and all("BEGIN SOLUTION" in c.source and "END SOLUTION" in c.source
                                 for c in solutions)
        tests = [m for m in meta if m["grade"] and not m["solution"]]
        assert tests and all(m["locked"] and m["points"] > 0 for m in tests)
        assert any("BEGIN HIDDEN TESTS" in c.source for c in nb.cells), "no hidden tests"
        assert not any(c.get("outputs") for c in nb.cells), "source notebooks are kept clean"
        assert nb.metadata.kernelspec.name == "python3"
        answered = set(wrong.for_assignment(assignment).CELLS)
        assert answered <= {c.metadata.nbgrader["grade_id"] for c in solutions}


def test_config_paths_timeouts_and_overrides(tmp_path, monkeypatch):
    monkeypatch.delenv("GRADING_EXCHANGE", raising=False)
    monkeypatch.delenv("GRADING_DB_URL", raising=False)
    config = course.load_config(COURSE_DIR)
    assert config.CourseDirectory.course_id == "minikafka-course"
    assert config.CourseDirectory.root == str(COURSE_DIR)
    assert config.CourseDirectory.db_url == f"sqlite:///{COURSE_DIR / 'gradebook.db'}"
    assert config.Exchange.root == str(COURSE_DIR / "exchange")
    assert config.Execute.interrupt_on_timeout is True
    timeout = config.Execute.timeout_func
    assert timeout(new_code_cell("while True: pass")) == 30 == config.Execute.timeout
    spark_cell = new_code_cell("spark = ...", metadata={"minikafka": {"timeout": 120}})
    assert timeout(spark_cell) == 120
    greedy = new_code_cell("x", metadata={"minikafka": {"timeout": 10**6}})
    assert timeout(greedy) == 600
    monkeypatch.setenv("GRADING_EXCHANGE", str(tmp_path / "shared"))
    monkeypatch.setenv("GRADING_CELL_TIMEOUT", "5")
    config = course.load_config(COURSE_DIR)
    assert config.Exchange.root == str(tmp_path / "shared")
    assert config.Execute.timeout_func(new_code_cell("x")) == 5


def test_cli_lists_every_assignment(capsys):
    assert cli_main(["list"]) == 0
    out = capsys.readouterr().out
    for assignment in ASSIGNMENTS:
        assert assignment in out


# -- the pieces on small inputs -----------------------------------------------------------------

def _graded_notebook(answer: str, test: str) -> nbformat.NotebookNode:
    sol = new_code_cell(answer)
    sol.metadata["nbgrader"] = {"grade": False, "grade_id": "answer", "locked": False,
                                "schema_version": 3, "solution": True, "task": False}
    check = new_code_cell(test)
    check.metadata["nbgrader"] = {"grade": True, "grade_id": "check", "locked": True,
                                  "points": 2, "schema_version": 3, "solution": False,
                                  "task": False}
    return new_notebook(cells=[new_markdown_cell("intro"), sol, check])


def test_leak_check_finds_a_pasted_solution_and_a_left_marker(tmp_path):
    source = tmp_path / "source.ipynb"
    nbformat.write(_graded_notebook(
        "def f(x):\n    ### BEGIN SOLUTION\n    return sorted(x, key=abs)[::-1]\n    ### END SOLUTION",
        "assert f([1]) == [1]\n### BEGIN HIDDEN TESTS\nassert f([-3, 2]) == [-3, 2]\n"
        "### END HIDDEN TESTS"), source)
    clean = tmp_path / "clean.ipynb"
    nbformat.write(_graded_notebook("def f(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()",
                                    "assert f([1]) == [1]"), clean)
    assert leaks.find_leaks(source, clean) == []
    pasted = tmp_path / "pasted.ipynb"
    nbformat.write(_graded_notebook("def f(x):\n    return sorted(x, key=abs)[::-1]",
                                    "assert f([1]) == [1]"), pasted)
    assert any("sorted(x, key=abs)" in p for p in leaks.find_leaks(source, pasted))
    hidden = tmp_path / "hidden.ipynb"
    nbformat.write(_graded_notebook("pass", "assert f([1]) == [1]\n### BEGIN HIDDEN TESTS"), hidden)
    problems = leaks.find_leaks(source, hidden)
    assert any("BEGIN HIDDEN TESTS" in p for p in problems)
    typo = tmp_path / "typo.ipynb"
    nbformat.write(_graded_notebook("pass", "assert f([1])\n## begin hidden test\nassert f([])"), typo)
    assert any("misspelt marker 'begin hidden test'" in p for p in leaks.find_leaks(typo, clean))


def test_edited_and_deleted_locked_cells_are_reported(tmp_path):
    nb = _graded_notebook("x = 1", "assert x == 1")
    for cell in nb.cells[1:]:
        cell.metadata.nbgrader["checksum"] = compute_checksum(cell)
    (tmp_path / "release" / "a").mkdir(parents=True)
    nbformat.write(nb, tmp_path / "release" / "a" / "n.ipynb")

    def submitted(student: str, notebook: nbformat.NotebookNode) -> None:
        (tmp_path / "submitted" / student / "a").mkdir(parents=True)
        nbformat.write(notebook, tmp_path / "submitted" / student / "a" / "n.ipynb")

    honest = nbformat.from_dict(nb)
    honest.cells[1].source = "x = 2"  # answering is not editing a locked cell
    submitted("honest", honest)
    cheat = nbformat.from_dict(nb)
    cheat.cells[2].source = "pass"
    submitted("cheat", cheat)
    gone = nbformat.from_dict(nb)
    del gone.cells[2]
    submitted("gone", gone)
    found = {(e.student, e.cell, e.change) for e in integrity.edited_locked_cells(tmp_path, "a")}
    assert found == {("cheat", "check", "edited"), ("gone", "check", "deleted")}


def _release(root: Path, assignment: str, *names: str) -> None:
    (root / "release" / assignment).mkdir(parents=True)
    for name in names:
        nbformat.write(new_notebook(), root / "release" / assignment / f"{name}.ipynb")


def test_canvas_zip_import_with_roster_newest_upload_and_timestamps(tmp_path):
    _release(tmp_path, "a1", "partitions")
    roster = tmp_path / "roster.csv"
    roster.write_text("lms_id,name,student_id\n1001,Jane Smith,jsmith\n1002,John Doe,jdoe\n")
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(zipfile.ZipInfo("smithjane_1001_5001_partitions.ipynb", (2026, 3, 1, 9, 0, 0)),
                    json.dumps({"first": True}))
        zf.writestr(zipfile.ZipInfo("smithjane_1001_5002_partitions-1.ipynb", (2026, 3, 2, 9, 0, 0)),
                    json.dumps({"second": True}))
        zf.writestr(zipfile.ZipInfo("doejohn_late_1002_5003_partitions.ipynb", (2026, 3, 3, 9, 0, 0)),
                    "{}")
        zf.writestr("stranger_9999_5004_partitions.ipynb", "{}")
        zf.writestr("smithjane_1001_5005_notes.txt", "hi")
    report = lms.import_submissions(tmp_path, "a1", archive, "canvas", roster=roster)
    assert sorted(report.imported) == ["jdoe", "jsmith"]
    jane = tmp_path / "submitted" / "jsmith" / "a1"
    assert json.loads((jane / "partitions.ipynb").read_text()) == {"second": True}
    stamp = (jane / "timestamp.txt").read_text()
    assert stamp.endswith(" UTC") and "." in stamp.split()[1]
    assert parse_utc(stamp).date().isoformat() == "2026-03-02"
    skipped = "\n".join(report.skipped)
    assert "stranger" in skipped and "notes.txt" in skipped and "5001" in skipped


def test_moodle_import_tells_students_apart_by_lms_id_never_by_name(tmp_path):
    _release(tmp_path, "a2", "durability")
    export = tmp_path / "moodle"
    # two students called the same: only the LMS's id tells them apart
    for person, pid, stamp in (("Ada Lovelace", 31, 1_700_000_000), ("Alan Turing", 32, 1_700_000_100),
                               ("Ada Lovelace", 33, 1_700_000_200)):
        folder = export / f"{person}_{pid}_assignsubmission_file_"
        folder.mkdir(parents=True)
        (folder / "durability.ipynb").write_text(json.dumps({"by": pid}))
        os.utime(folder / "durability.ipynb", (stamp, stamp))
    with pytest.raises(lms.RosterError, match="roster is needed"):
        lms.import_submissions(tmp_path, "a2", export, "moodle")
    roster = tmp_path / "roster.csv"
    roster.write_text("lms_id,name,student_id\n31,Ada Lovelace,ada1\n32,Alan Turing,alan\n"
                      "33,Ada Lovelace,ada2\n")
    report = lms.import_submissions(tmp_path, "a2", export, "moodle", roster=roster)
    assert sorted(report.imported) == ["ada1", "ada2", "alan"]
    for student, pid in (("ada1", 31), ("ada2", 33)):
        path = tmp_path / "submitted" / student / "a2" / "durability.ipynb"
        assert json.loads(path.read_text()) == {"by": pid}
    stamp = (tmp_path / "submitted" / "ada1" / "a2" / "timestamp.txt").read_text()
    assert stamp == "2023-11-14 22:13:20.000000 UTC"
    # a roster keyed by display names, or giving one id twice, is refused
    (tmp_path / "names.csv").write_text("name,student_id\nAda Lovelace,ada1\n")
    twice = tmp_path / "twice.csv"
    twice.write_text("lms_id,student_id\n31,ada1\n33,ada1\n")
    for bad in (tmp_path / "names.csv", twice):
        with pytest.raises(lms.RosterError):
            lms.import_submissions(tmp_path, "a2", export, "moodle", roster=bad)


def test_import_skips_symlinks_in_an_export(tmp_path):
    _release(tmp_path, "a2", "durability")
    secret = tmp_path / "source.ipynb"
    secret.write_text('{"solutions": true}')
    export = tmp_path / "folders"
    (export / "ada").mkdir(parents=True)
    (export / "ada" / "durability.ipynb").symlink_to(secret)
    (export / "bob").symlink_to(tmp_path / "release")  # a folder that is a symlink
    roster = tmp_path / "roster.csv"
    roster.write_text("lms_id,student_id\nada,ada\nbob,bob\n")
    report = lms.import_submissions(tmp_path, "a2", export, "folders", roster=roster)
    assert report.imported == {}
    assert any("ada/durability.ipynb: refused: a symlink" in s for s in report.skipped)
    assert not (tmp_path / "submitted").exists()


def test_selftest_students_are_built_from_the_release():
    source = nbformat.read(course.source_notebooks(COURSE_DIR, "a1_partitions")[0], as_version=4)
    released = nbformat.from_dict(source)
    for cell in released.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = "# YOUR CODE HERE\nraise NotImplementedError()"
    solved = submissions.with_solutions(released, source)
    code = "\n".join(c.source for c in solved.cells)
    assert "BEGIN SOLUTION" not in code and "partition_for_key(truck.encode()" in code
    edited, ids = submissions.with_edited_tests(solved)
    assert ids and all(c.source == submissions.EDITED_TEST for c in edited.cells
                       if c.metadata.get("nbgrader", {}).get("grade_id") in ids)
    with pytest.raises(KeyError):
        submissions.with_answers(released, {"no_such_cell": "x = 1"})


def test_selftest_judge_flags_every_kind_of_mismatch(monkeypatch):
    from grading.selftest import runner

    class Answers:
        EXPECTED_POINTS = 1
        RUNAWAY_CELL = None

    monkeypatch.setattr(runner.wrong, "for_assignment", lambda assignment: Answers)
    columns = {"nb:t1", "nb:t2"}
    good = {"s-solution": {"nb:t1": "1", "nb:t2": "1"}, "s-blank": {"nb:t1": "0", "nb:t2": "0"},
            "s-wrong": {"nb:t1": "1", "nb:t2": "0"}, "s-edited": {"nb:t1": "1", "nb:t2": "0"}}
    students = [s for s, _ in runner.STUDENTS.values()]
    html = [Path(f"feedback/{s}/a/nb.html") for s in students]
    edited = [integrity.EditedCell("s-edited", "nb", "t2", "edited")]

    def judge(table, edits=edited):
        rows = runner._judge("a", table, columns, 2.0, students, edits, html, ["t2"], None)
        return {r.variant: r.ok for r in rows}

    assert judge(good) == dict.fromkeys(runner.STUDENTS, True)
    assert judge({**good, "s-solution": {"nb:t1": "1", "nb:t2": "0"}})["solution"] is False
    assert judge({**good, "s-blank": {"nb:t1": "1", "nb:t2": "0"}})["blank"] is False
    assert judge({**good, "s-wrong": {"nb:t1": "1", "nb:t2": "1"}})["wrong"] is False
    assert judge({**good, "s-edited": {"nb:t1": "1", "nb:t2": "1"}})["edited"] is False
    assert judge(good, edits=[])["edited"] is False
    assert judge(good, edits=[*edited, integrity.EditedCell("s-blank", "nb", "t1", "edited")]
                 )["blank"] is False


def test_spark_archive_only_for_spark_assignments(monkeypatch, tmp_path):
    from grading import spark_cds

    monkeypatch.delenv(spark_cds.ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    a1 = course.source_notebooks(COURSE_DIR, "a1_partitions")
    a5 = course.source_notebooks(COURSE_DIR, "a5_spark_windows")
    assert not spark_cds.uses_spark(a1) and spark_cds.uses_spark(a5)
    assert spark_cds.share_with_kernels(a1) is None and spark_cds.ENV not in os.environ
    import pyspark
    path = spark_cds.archive_path()
    assert path.parent == tmp_path / "minikafka-grading" and pyspark.__version__ in path.name
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")  # an existing archive is reused, never rebuilt
    assert spark_cds.share_with_kernels(a5) == path and os.environ[spark_cds.ENV] == str(path)
    setup = "\n".join(c.source for c in nbformat.read(a5[0], as_version=4).cells
                      if c.metadata.get("nbgrader", {}).get("locked"))
    assert f'os.environ["{spark_cds.ENV}"]' in setup and "SharedArchiveFile" in setup


def test_generate_refuses_and_removes_a_release_that_leaks(tmp_path, monkeypatch):
    from grading import pipeline

    monkeypatch.delenv("GRADING_DB_URL", raising=False)
    root = tmp_path / "course"
    (root / "source" / "leaky").mkdir(parents=True)
    (root / course.CONFIG_FILE).write_text((COURSE_DIR / course.CONFIG_FILE).read_text())
    # a typo in the opening marker: nbgrader strips nothing and the hidden test ships
    nbformat.write(_graded_notebook(
        "### BEGIN SOLUTION\nanswer = 6 * 7\n### END SOLUTION",
        "assert answer == 42\n### BEGIN HIDDEN TEST\nassert answer % 7 == 0\n### END HIDDEN TESTS"),
        root / "source" / "leaky" / "n.ipynb")
    api = course.make_api(root)
    with pytest.raises(pipeline.PipelineError, match="BEGIN HIDDEN TEST'"):
        pipeline.generate(api, "leaky")
    assert not (root / "release" / "leaky").exists()
