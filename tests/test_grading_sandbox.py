"""Adversarial submissions against the sandboxed autograde (grading/sandbox.py, harness.py).

One grading run of assignment 1 with an honest student, a blank one and one student per
attack; each attack must score no more than the blank submission, the honest one full marks,
nobody else's files or grades may change, and the run must finish.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from pathlib import Path

import nbformat
import pytest
from grading_helpers import grade_as_source, nbgrader_cell

from grading import course, integrity, pipeline, sandbox, sandboxed, scores
from grading.selftest import submissions
from grading.selftest.runner import copy_course

ASSIGNMENT = "a1_partitions"
NOTEBOOK = "partitions.ipynb"
STUB = "raise NotImplementedError()"

pytestmark = [pytest.mark.skipif(not shutil.which("bwrap"),
                                 reason="bubblewrap is not installed (test.sh installs it)"),
              # one worker runs the module, so the class is graded once, not once per worker
              pytest.mark.xdist_group("grading-sandbox")]


def _attacks(root: Path) -> dict[str, dict[str, str]]:
    """student -> {answer cell: source}; every unlisted answer cell stays a stub."""
    gradebook = root / "gradebook.db"
    source = root / "source" / ASSIGNMENT / NOTEBOOK
    return {
        "rebind": {"truck_key": """
def truck_key(event):
    return event["event_time"].encode()  # scatters each truck over the partitions

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
        "stealer": {"predict_placements": STEALER + """
def predict_placements(truck_ids, num_partitions):
    # the expected placements: a dict of exactly these trucks -> partition numbers
    for value in loot():
        if type(value) is dict and value and set(value) == set(truck_ids) \\
                and all(type(v) is int for v in value.values()):
            return dict(value)
    return {}
""", "moved_trucks": STEALER + """
def moved_trucks(truck_ids, old_partitions, new_partitions):
    # the trucks the test's cluster moved: a set of some of these trucks
    for value in loot():
        if type(value) is set and value and value <= set(truck_ids):
            return set(value)
    return set()
""", "truck_key": STEALER + """
import types

def truck_key(event):
    # neuter whatever judges the order: every check_* function the process holds
    for value in loot():
        if isinstance(value, types.FunctionType) and value.__name__.startswith("check"):
            value.__code__ = (lambda *a, **k: None).__code__
    return event["event_time"].encode()
"""},
        "eqint": {"predict_placements": """
class Partition(int):
    def __eq__(self, other):
        return True
    __hash__ = int.__hash__

def predict_placements(truck_ids, num_partitions):
    return {t: Partition(0) for t in truck_ids}
""", "moved_trucks": """
class Trucks(frozenset):
    def __eq__(self, other):
        return True
    __hash__ = frozenset.__hash__

def moved_trucks(truck_ids, old_partitions, new_partitions):
    return Trucks()
"""},
        "fakepass": {"predict_placements": """
print("placements predicted correctly")
print("each truck's events are on one partition, in order")
print("all tests pass: 8/8")
def predict_placements(truck_ids, num_partitions):
    return {}
"""},
    }


# What a student function can reach from inside the process it runs in: every object the
# garbage collector tracks, every frame up the stack and every loaded module.
STEALER = """
import gc, sys

def loot():
    seen = []
    for obj in gc.get_objects():
        seen.append(obj)
        if type(obj) is dict:
            seen.extend(obj.values())
    frame = sys._getframe(1)
    while frame is not None:
        seen.extend(frame.f_locals.values())
        frame = frame.f_back
    for module in list(sys.modules.values()):
        seen.extend(vars(module).values() if hasattr(module, "__dict__") else ())
    return seen
"""


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
        graded_at: dict[str, float] = {}
        # Smaller memory and process limits than the defaults keep the bombs quick.
        report = pipeline.autograde(api, ASSIGNMENT, students, jobs=2, isolation="bwrap",
                                    limits={"memory_mb": 768, "processes": 96},
                                    progress=lambda s, ok: graded_at.setdefault(s, time.monotonic()))
        seconds = time.monotonic() - started
        # 3 s after the daemon student's grading ended, longer than its sleep (begun while it
        # was graded): it must not have survived
        time.sleep(max(0.0, graded_at["daemon"] + 3 - time.monotonic()))
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
    assert "introspection" in kinds("stealer")
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


# -- verdicts outside the student's process ------------------------------------------------------

_cell = nbgrader_cell


LOOT = '''
import gc, sys, types

def strings_in(value, out, depth=0):
    if isinstance(value, str):
        out.add(value)
    elif depth < 3 and isinstance(value, (list, tuple, set, frozenset)):
        for v in list(value)[:5000]:
            strings_in(v, out, depth + 1)
    elif depth < 3 and isinstance(value, dict):
        for k, v in list(value.items())[:5000]:
            strings_in(k, out, depth + 1)
            strings_in(v, out, depth + 1)
    elif isinstance(value, types.FunctionType):
        strings_in(value.__code__.co_consts, out, depth + 1)
    elif isinstance(value, types.CodeType):
        strings_in(value.co_consts, out, depth + 1)

def loot(marker):
    """Every string this process holds that looks like the grader's: its expected value,
    its hidden test, its judge; and the marker (this call's own input)."""
    patterns = ["42" * 2, "HIDDEN" + " TESTS", "HIDDEN" + "_EXPECTED", "same_" + "as_three", marker[:12]]
    found = set()
    for obj in gc.get_objects():
        strings_in(obj, found)
    frame = sys._getframe()
    while frame is not None:
        strings_in(frame.f_code, found)
        strings_in(dict(frame.f_locals), found)
        strings_in(dict(frame.f_globals), found)
        frame = frame.f_back
    for module in list(sys.modules.values()):
        strings_in(dict(getattr(module, "__dict__", {})), found)
    return sorted(s for s in found if any(p in s for p in patterns) and s not in patterns)

class Three(int):
    def __eq__(self, other):
        return True
    __hash__ = int.__hash__

class Yes:
    def __eq__(self, other):
        return True

class Table(dict):
    def __eq__(self, other):
        return True

def three():
    return 3

def int_like():
    return Three(4)

def always_equal():
    return Yes()

def dict_like():
    return Table()

def nested():
    return [1, 2, Yes()]

def spin():
    while True:
        pass
'''


def _verdict_notebook():
    from nbformat.v4 import new_notebook
    setup = "from minikafka.course.autograde import collect, judge\n"
    equal = ("def same_as_three(got):\n"
             "    assert got == 3 and got == {'n': 3}.get('n'), f'expected 3, got {got!r}'\n")
    cells = [_cell(setup, "setup", "setup"), _cell(LOOT, "answer", "answer"),
             _cell("EXPECTED = 'expected-' + str(4242)\n\n\ndef report(found):\n"
                   "    raise AssertionError(f'found {found!r}')\n\n\n"
                   "judge(report, collect('loot', 'public-input-77'))\n", "test_loot", "test"),
             _cell("### BEGIN HIDDEN TESTS\nHIDDEN_EXPECTED = 'hidden-4242'\n"
                   "judge(report, collect('loot', 'hidden-input-55'))\n### END HIDDEN TESTS\n",
                   "test_loot_hidden", "test"),
             _cell(equal + "\n\njudge(same_as_three, collect('three'))\n", "test_three", "test")]
    for name in ("int_like", "always_equal", "dict_like", "nested"):
        cells.append(_cell(f"judge(same_as_three, collect({name!r}))\n", f"test_{name}", "test"))
    # two endless calls share their cell's 2 s; the next cell's call runs in its own time
    budget = _cell("judge(same_as_three, collect('spin'))\njudge(same_as_three, collect('spin'))\n",
                   "test_budget", "test")
    budget.metadata["minikafka"] = {"timeout": 2}
    cells += [budget, _cell("judge(same_as_three, collect('three'))\n", "test_after", "test")]
    return new_notebook(cells=cells)


def _errors(nb) -> dict[str, tuple[str, str]]:
    return {c.metadata["nbgrader"]["grade_id"]: (o.get("ename"), o.get("evalue"))
            for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"}


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    root = tmp_path_factory.mktemp("verdicts")
    nb = _verdict_notebook()
    return grade_as_source(root, nb)


def test_a_student_function_finds_no_expected_value_hidden_test_or_judge_to_steal(judged):
    _, nb = judged
    ename, evalue = _errors(nb)["test_loot"]
    assert ename == "AssertionError"
    # The scan works (it finds its own input), and finds nothing of the grader's.
    assert "public-input-77" in evalue, evalue
    assert "4242" not in evalue and "HIDDEN" not in evalue and "same_as_three" not in evalue
    assert _errors(nb)["test_loot_hidden"] == ("AssertionError", "a hidden test failed")


def test_objects_with_their_own_eq_never_pass_as_plain_data(judged):
    root, nb = judged
    errors = _errors(nb)
    assert "test_three" not in errors and "test_after" not in errors  # a plain 3 passes
    assert errors["test_budget"] == ("CellTimeoutError", "spin(...): the cell ran longer than its time limit")
    for name in ("int_like", "always_equal", "dict_like", "nested"):
        ename, evalue = errors[f"test_{name}"]
        assert ename == "NotPlain" and "not plain data" in evalue, (name, evalue)
    record = json.loads((root / "integrity" / "a" / "s.json").read_text())["n"]
    calls = [p for p in record["phases"] if p["phase"] == "calls"][0]
    assert {"kind": "introspection", "cell": "test_loot", "detail": "gc.get_objects"} \
        in calls["evidence"]


def test_the_grader_plans_and_judges_without_running_student_code():
    from minikafka.course import autograde
    cells = [_cell("from minikafka.course.autograde import answer, collect, judge\nLIMIT = 5\n",
                   "setup", "setup")]
    tests = [{"id": "t1", "timeout": 30, "source":
              "seen = []\njudge(lambda got, n: seen.append((got, n)) or (got <= LIMIT) or "
              "(_ for _ in ()).throw(AssertionError(f'{got} > {LIMIT}')), collect('f', [1]), n=2)\n"
              "print('visible output')\n"},
             {"id": "t2", "timeout": 30, "source": "assert answer('X') == {'a': (1, 2)}\n"},
             {"id": "t3", "timeout": 30, "source": "answer('LIMIT')\n"}]
    plan, planned = sandboxed.plan_tests([], tests, {"X": autograde.encode({"a": (1, 2)}),
                                                    "LIMIT": 10**6}, cells)
    assert plan.calls == [{"index": 0, "cell": "t1", "fn": "f", "args": [[1]],
                           "kwargs": {"dict": []}}]
    assert planned["t2"]["status"] == "ok"
    # a student value cannot stand in for a name the setup defines, but answer() reads it
    assert planned["t3"]["status"] == "ok" and "t3" not in plan.judges
    ok = sandboxed.verdict(plan, planned["t1"], "t1", {0: {"status": "ok", "value": 4}}, "")
    assert ok == {"status": "ok", "stdout": "visible output\n"}
    bad = sandboxed.verdict(plan, planned["t1"], "t1", {0: {"status": "ok", "value": 9}}, "")
    assert bad["status"] == "error" and bad["evalue"] == "9 > 5"
    died = sandboxed.verdict(plan, planned["t1"], "t1", {}, "the submission ran too long")
    assert died["ename"] == "SandboxError" and "too long" in died["evalue"]
    forged = sandboxed.verdict(plan, planned["t1"], "t1",
                               {0: {"status": "ok", "value": {"evil": 1}}}, "")
    assert forged["ename"] == "NotPlain"


# -- the docker mode, built but not run here ----------------------------------------------------

def test_docker_command_isolates_like_the_bwrap_sandbox(monkeypatch):
    monkeypatch.setenv("JAVA_HOME", "/host/only/java")
    limits = sandbox.Limits(memory_mb=1024, processes=64, disk_mb=128, cpu_s=100)
    cmd = sandbox.docker_command(limits, "grading-abc")
    assert cmd[:3] == ["docker", "run", "--rm"]

    def value(flag):
        return [cmd[i + 1] for i, c in enumerate(cmd) if c == flag]
    assert value("--name") == ["grading-abc"]
    assert value("--network") == ["none"] and "--read-only" in cmd
    assert value("--user") == ["65534:65534"] and value("--cap-drop") == ["ALL"]
    assert value("--memory") == ["1024m"] and value("--memory-swap") == ["1024m"]
    assert value("--pids-limit") == ["64"] and value("--cpus") == ["1"]
    assert "cpu=100:100" in value("--ulimit")
    assert value("--tmpfs") == ["/tmp:rw,nosuid,size=128m", "/submission:rw,exec,nosuid,size=128m"]
    assert value("-w") == ["/submission"]
    assert value("-v") == [f"{sandbox.HARNESS}:/harness/harness.py:ro"]
    assert cmd[-3:] == ["kafka-course-jupyter", "python", "/harness/harness.py"]
    assert not any("/host/only" in c or c.startswith(("PYTHONPATH=", "JAVA_HOME=")) for c in cmd)
    assert sandbox.docker_command(limits, "x", image="other")[-3] == "other"


def test_docker_image_is_the_labs_image():
    compose = (Path(__file__).parents[1] / "docker" / "compose.yaml").read_text()
    assert "name: kafka-course" in compose and "\n  jupyter:\n" in compose
    assert os.environ.get("GRADING_DOCKER_IMAGE", "kafka-course-jupyter") == sandbox.DOCKER_IMAGE


def test_docker_run_sends_the_job_and_kills_the_container_at_the_wall_time(monkeypatch):
    import subprocess
    started, killed, sent = [], [], []

    class FakeDocker:
        pid = 999_999_999

        def __init__(self, cmd, **kwargs):
            started.append(cmd)
            self.returncode = None
            read, write = os.pipe()
            os.close(write)
            self.stdout = os.fdopen(read, "rb")
            self.stdin = self

        def write(self, data):
            sent.append(data)

        def close(self):
            pass

        def wait(self, timeout=None):
            if self.returncode is None and timeout is not None:
                raise subprocess.TimeoutExpired("docker", timeout)
            self.returncode = -9
            return self.returncode

    monkeypatch.setattr(subprocess, "Popen", FakeDocker)
    monkeypatch.setattr(subprocess, "run", lambda cmd, **kw: killed.append(cmd))
    outcome = sandbox.run("docker", {"phase": "answers", "cells": []}, sandbox.Limits(), 5)
    name = started[0][started[0].index("--name") + 1]
    assert started[0][:2] == ["docker", "run"] and killed == [["docker", "kill", name]]
    assert outcome.wall_timeout and "stopped" in outcome.problem
    assert b'"phase": "answers"' in b"".join(sent)


def test_a_flood_of_findings_cannot_hide_another_finding():
    """The same tampering in a loop, or many distinct findings of one kind, are listed once
    or up to a cap per kind and counted; a finding of another kind made after them still
    reaches the report."""
    from grading import harness
    emitted: list[dict] = []
    sv = harness.Supervisor(lambda kind, **data: emitted.append({"kind": kind, **data}),
                            {}, None, None)
    for _ in range(500):
        sv.finding("harness tampering", "a stand-in's attribute set in the loop's process")
    for n in range(500):
        sv.finding("file outside sandbox", f"open '/home/other/{n}'")
    sv.finding("exec of a program", "execve /bin/sh")
    sv.report_left_out()
    items = [i for e in emitted if e["kind"] == "evidence" for i in e["items"]]
    listed = [i for i in items if "not listed" not in i["detail"]]
    kinds = [i["kind"] for i in listed]
    assert kinds.count("harness tampering") == 1
    assert kinds.count("file outside sandbox") == harness.MAX_PER_KIND
    assert "exec of a program" in kinds
    counts = {i["kind"]: i["detail"] for i in items if "not listed" in i["detail"]}
    assert counts["harness tampering"].startswith("499 more")
    assert counts["file outside sandbox"].startswith(f"{500 - harness.MAX_PER_KIND} more")
    assert "exec of a program" not in counts
