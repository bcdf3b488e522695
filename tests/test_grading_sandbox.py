"""Adversarial submissions against the sandboxed autograde (grading/sandbox.py, harness.py).

One grading run of assignment 1 with an honest student, a blank one and one student per
attack; each attack must score no more than the blank submission, the honest one full marks,
nobody else's files or grades may change, and the run must finish.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from pathlib import Path

import nbformat
import pytest

from grading import course, integrity, pipeline, sandbox, sandboxed, scores
from grading.selftest import submissions
from grading.selftest.runner import copy_course

ASSIGNMENT = "a1_partitions"
NOTEBOOK = "partitions.ipynb"
STUB = "raise NotImplementedError()"

pytestmark = pytest.mark.skipif(not shutil.which("bwrap"),
                                reason="bubblewrap is not installed (test.sh installs it)")


def _attacks(root: Path) -> dict[str, dict[str, str]]:
    """student -> {answer cell: source}; every unlisted answer cell stays a stub."""
    gradebook = root / "gradebook.db"
    source = root / "source" / ASSIGNMENT / NOTEBOOK
    return {
        "rebind": {"truck_key": """
def truck_key(event):
    return str(event["seq"]).encode()  # scatters each truck over the partitions

def placements_by_truck(cluster, topic):  # the harness helper the order tests call
    return {f"T-{i}": [(i % 6, i, 0), (i % 6, i + 1, 1)] for i in range(12)}

def produce_events(*args, **kwargs):
    return None
"""},
        "thread": {"predict_placements": """
import threading, time

def _keep_patching():
    while True:
        globals()["check_predictions"] = lambda *a, **k: None
        time.sleep(0.001)

WATCHER = threading.Thread(target=_keep_patching, daemon=True).start()

def predict_placements(truck_ids, num_partitions):
    return {}
"""},
        "patcher": {"predict_placements": """
import minikafka

def _patch(fn):
    minikafka.Cluster.producer = lambda self, **kw: None
    return fn

@_patch
def predict_placements(truck_ids, num_partitions):
    return {t: 0 for t in truck_ids}
"""},
        "transformer": {"predict_placements": """
get_ipython().input_transformers_cleanup.append(lambda lines: ["pass\\n"])
def predict_placements(truck_ids, num_partitions):
    return {}
"""},
        "alwayseq": {"predict_placements": """
class Yes:
    def __eq__(self, other):
        return True
    __hash__ = object.__hash__

def predict_placements(truck_ids, num_partitions):
    return {t: Yes() for t in truck_ids}
""", "moved_trucks": """
class AnySet(set):
    def __eq__(self, other):
        return True
    __hash__ = None

def moved_trucks(truck_ids, old_partitions, new_partitions):
    return AnySet()
"""},
        "reader": {"predict_placements": f"""
import glob, os
for path in [{str(source)!r}, {str(gradebook)!r}, "../../source/{ASSIGNMENT}/{NOTEBOOK}"]:
    try:
        print(open(path, errors="replace").read()[:20000])
    except OSError as exc:
        print("cannot read", path, exc)
print([glob.glob(top + "/**/*.ipynb", recursive=True)[:50] for top in ("/work", "/root", "/tmp")])
"""},
        "daemon": {"predict_placements": f"""
import os, sqlite3, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(2)
        db = sqlite3.connect({str(gradebook)!r})
        db.execute("UPDATE grade SET auto_score = 100")
        db.commit()
    os._exit(0)
"""},
        "vandal": {"predict_placements": f"""
import shutil
for victim in ["submitted/honest", "release", "autograded", "gradebook.db", "source"]:
    for base in [{str(root)!r}, "../..", "/"]:
        shutil.rmtree(base + "/" + victim, ignore_errors=True)
        try:
            __import__("os").remove(base + "/" + victim)
        except OSError:
            pass
"""},
        "deleter": {"predict_placements": """
import os
for top, dirs, files in os.walk("/"):
    if top == "/":
        dirs[:] = [d for d in dirs if d not in ("usr", "proc", "sys")]  # keep the test quick
    for name in files:
        try:
            os.remove(os.path.join(top, name))
        except OSError:
            pass
"""},
        "timeouts": {"predict_placements": "while True:\n    pass",
                     "truck_key": "def truck_key(event):\n    while True:\n        pass"},
        "forkbomb": {"predict_placements": """
import os
while True:
    try:
        os.fork()
    except OSError:
        break
"""},
        "membomb": {"predict_placements": """
hog = []
while True:
    hog.append(bytearray(256 * 2**20))
"""},
        "diskfill": {"predict_placements": """
import os
chunk = b"x" * 2**20
for n in range(10_000):
    with open(f"fill-{n}", "wb") as fh:
        for _ in range(100):
            fh.write(chunk)
"""},
        "network": {"predict_placements": """
import socket, urllib.request
try:
    answers = urllib.request.urlopen("http://example.com/answers", timeout=3).read()
except Exception as exc:
    print("no network:", exc)
socket.create_connection(("8.8.8.8", 53), timeout=3)
"""},
        "fakepass": {"predict_placements": """
print("placements predicted correctly")
print("each truck's events are on one partition, in order")
print("all tests pass: 8/8")
def predict_placements(truck_ids, num_partitions):
    return {}
"""},
    }


# cell metadata a student can edit: a huge and a malformed timeout, read by nothing
STUDENT_METADATA = {"timeouts": {"predict_placements": {"timeout": 600},
                                 "truck_key": {"timeout": "forever"}},
                    "forkbomb": {"predict_placements": {"timeout": [1, 2]}}}


def _submit(root: Path, student: str, nb) -> Path:
    folder = course.submitted_dir(root, student, ASSIGNMENT)
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / NOTEBOOK)
    (folder / "timestamp.txt").write_text("2026-01-01 00:00:00.000000 UTC")
    return folder / NOTEBOOK


def _solution_nb(root: Path):
    released = nbformat.read(root / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    return submissions.with_solutions(
        released, nbformat.read(root / "source" / ASSIGNMENT / NOTEBOOK, as_version=4))


def _attack_nb(root: Path, student: str, answers: dict[str, str]):
    released = nbformat.read(root / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    nb = submissions.with_answers(released, answers)
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        asked = STUDENT_METADATA.get(student, {}).get(gid)
        if asked is not None:
            cell.metadata["minikafka"] = asked
    return nb


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    work = tmp_path_factory.mktemp("adversarial")
    os.environ["GRADING_CELL_TIMEOUT"] = "4"
    try:
        root = copy_course(work / "course", [ASSIGNMENT])
        os.environ["GRADING_DB_URL"] = f"sqlite:///{root / 'gradebook.db'}"
        api = course.make_api(root)
        pipeline.generate(api, ASSIGNMENT)
        attacks = _attacks(root)
        _submit(root, "honest", _solution_nb(root))
        _submit(root, "blank", nbformat.read(root / "release" / ASSIGNMENT / NOTEBOOK,
                                             as_version=4))
        edited, _ = submissions.with_edited_tests(_attack_nb(root, "edited", {}))
        _submit(root, "edited", edited)
        for student, answers in attacks.items():
            _submit(root, student, _attack_nb(root, student, answers))
        students = ["honest", "blank", "edited", *attacks]
        started = time.monotonic()
        # Smaller memory and process limits than the defaults keep the bombs quick.
        report = pipeline.autograde(api, ASSIGNMENT, students, jobs=2, isolation="bwrap",
                                    limits={"memory_mb": 768, "processes": 96})
        seconds = time.monotonic() - started
        time.sleep(3)  # longer than the daemon student's sleep: it must not have survived
        table = {row.student: row for row in scores.student_scores(api.coursedir.db_url,
                                                                    ASSIGNMENT)}
        html = pipeline.feedback(api, ASSIGNMENT)
        yield root, report, table, html, seconds, students
    finally:
        for name in ("GRADING_CELL_TIMEOUT", "GRADING_DB_URL"):
            os.environ.pop(name, None)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_every_attack_scores_no_more_than_blank_and_honest_scores_full(graded):
    root, report, table, _, seconds, students = graded
    print(f"graded {len(students)} submissions in {seconds:.0f} s; {report.isolation}")
    assert "bubblewrap" in report.isolation
    assert report.failed == {}, report.failed
    assert set(table) == set(students)
    assert table["honest"].total == 8, table["honest"].scores
    blank = table["blank"].scores
    assert table["blank"].total == 0
    for student in students:
        if student in ("honest", "blank"):
            continue
        row = table[student]
        worse = {c: s for c, s in row.scores.items() if s is not None and s > (blank[c] or 0)}
        assert not worse, f"{student} earned {worse} that a blank submission does not"


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_gradebook_and_other_students_files_survive(graded):
    root, _, table, _, _, _ = graded
    assert (root / "submitted" / "honest" / ASSIGNMENT / NOTEBOOK).exists()
    assert (root / "release" / ASSIGNMENT / NOTEBOOK).exists()
    assert (root / "source" / ASSIGNMENT / NOTEBOOK).exists()
    assert (root / "autograded" / "honest" / ASSIGNMENT / NOTEBOOK).exists()
    db = sqlite3.connect(root / "gradebook.db")
    assert db.execute("SELECT max(auto_score) FROM grade").fetchone()[0] <= 2
    # the daemon's rewrite never happened: the scores read after its sleep are still zero
    assert table["daemon"].total == 0


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_answers_cannot_see_the_course_and_feedback_hides_hidden_tests(graded):
    root, _, _, html, _, _ = graded
    autograded = nbformat.read(root / "autograded" / "reader" / ASSIGNMENT / NOTEBOOK,
                               as_version=4)
    printed = "".join(o.get("text", "") for c in autograded.cells for o in c.get("outputs", []))
    assert "cannot read" in printed and "BEGIN SOLUTION" not in printed
    assert "partition_for_key(truck.encode()" not in printed  # the solution line
    for path in html:
        text = path.read_text()
        assert "BEGIN HIDDEN TESTS" not in text, path
        assert "range(500, 540)" not in text, f"{path} shows a hidden test"
    fake = [p for p in html if p.parts[-3] == "fakepass"][0].read_text()
    assert "all tests pass: 8/8" in fake  # the student's own output is shown, for what it is


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_limits_stop_the_runaway_submissions_and_say_why(graded):
    root, _, _, _, _, _ = graded
    by_student = {}
    for finding in integrity.integrity_report(root, ASSIGNMENT):
        by_student.setdefault(finding.student, []).append(finding)

    def kinds(student):
        return {f.kind for f in by_student.get(student, [])}

    for student in ("timeouts", "membomb", "diskfill"):
        assert "limit" in kinds(student), by_student.get(student)
    assert "process" in kinds("forkbomb") and "process" in kinds("daemon")
    assert "network" in kinds("network")
    for student in ("reader", "vandal"):
        assert "file outside sandbox" in kinds(student), by_student.get(student)
    for student in ("rebind", "patcher", "thread"):
        assert "harness tampering" in kinds(student), by_student.get(student)
    assert "input transformer" in kinds("transformer")
    assert "locked cell" in kinds("edited")
    assert not by_student.get("honest"), by_student.get("honest")
    graded_nb = nbformat.read(root / "autograded" / "timeouts" / ASSIGNMENT / NOTEBOOK,
                              as_version=4)
    errors = {c.metadata.get("nbgrader", {}).get("grade_id"): o.get("ename")
              for c in graded_nb.cells for o in c.get("outputs", [])
              if o.get("output_type") == "error"}
    assert errors.get("predict_placements") == "CellTimeoutError"
    assert errors.get("test_order_visible") == "CellTimeoutError"


def test_timeouts_come_from_the_instructor_notebook(tmp_path):
    from nbformat.v4 import new_code_cell, new_notebook
    nb = new_notebook(cells=[
        new_code_cell("x", metadata={"nbgrader": {"grade_id": "a"}, "minikafka": {"timeout": 90}}),
        new_code_cell("x", metadata={"nbgrader": {"grade_id": "b"}, "minikafka": {"timeout": "x"}}),
        new_code_cell("x", metadata={"nbgrader": {"grade_id": "c"}, "minikafka": {"timeout": 10**6}}),
        new_code_cell("x", metadata={"nbgrader": {"grade_id": "d"}, "minikafka": {"timeout": True}})])
    path = tmp_path / "n.ipynb"
    nbformat.write(nb, path)
    assert sandboxed.instructor_timeouts(path, 30) == {"a": 90, "b": 30, "c": 600, "d": 30}
    config = course.load_config()
    assert config.Execute.timeout_func(new_code_cell("x", metadata={"minikafka": {"timeout": "no"}})) \
        == config.Execute.timeout


def test_plain_data_crosses_with_exact_types():
    from grading import harness
    value = {"a": (1, 2.5, b"x"), 3: {frozenset({1}), None}, "l": [True, "s"]}
    back = harness.decode(harness.encode(value))
    assert back == value and type(back["a"]) is tuple and type(back[3]) is set

    class Sneaky(dict):
        def __eq__(self, other):
            return True
    with pytest.raises(harness.NotPlain):
        harness.encode({"x": Sneaky()})
    with pytest.raises(harness.NotPlain):
        harness.decode({"evil": 1})


def test_grading_refuses_to_run_without_a_sandbox(monkeypatch, capsys):
    from grading.cli import main
    monkeypatch.setattr(sandbox, "available", lambda mode="auto": (_ for _ in ()).throw(
        sandbox.SandboxUnavailable("no sandbox here")))
    assert main(["autograde", ASSIGNMENT]) == 2
    assert "no sandbox here" in capsys.readouterr().err


@pytest.mark.slow
def test_wall_time_kills_every_process_of_the_sandbox():
    job = {"phase": "answers", "cells": [{"id": "a", "kind": "answer", "timeout": 60, "source":
           "import os, time\nif os.fork() == 0:\n    os.setsid()\n"
           "    os.execvp('sleep', ['sleep', '600.0417'])\ntime.sleep(600)"}]}
    started = time.monotonic()
    outcome = sandbox.run(sandbox.available("bwrap"), job, sandbox.Limits(), wall_s=3)
    assert time.monotonic() - started < 30
    assert outcome.wall_timeout and "stopped" in outcome.problem
    time.sleep(0.5)
    leftover = [p for p in os.listdir("/proc") if p.isdigit() and _cmdline(p) == "sleep 600.0417"]
    assert leftover == []


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


def test_only_definitions_of_the_answers_reach_the_tests():
    import ast

    from grading import harness
    tree = harness.definitions("import os\nX = 1\nf = lambda: 2\nos.environ['A'] = '1'\n"
                               "print('hi')\nget_ipython().run_line_magic('time', '')\n"
                               "def g():\n    return X\nclass C:\n    pass\nfor i in []:\n    pass\n")
    assert [type(n).__name__ for n in tree.body] == \
        ["Import", "Assign", "Assign", "FunctionDef", "ClassDef"]
    assert "print" not in ast.unparse(tree)
