"""A class of adversarial students against the grading pipeline (the exchange, the LMS
import, malformed notebooks, output limits, report injection, hidden tests, evidence, cell
time limits, assignment 3's harness).

Each test states the attack and what the grader must do instead: refuse it and say so, or
give the submission 0 with a finding, while the rest of the class is graded as before.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import resource
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest
from grading_helpers import grade_as_source, nbgrader_cell
from nbformat.v4 import new_markdown_cell, new_notebook

from grading import course, integrity, pipeline, sandbox, sandboxed, scores
from grading.cli import main as cli_main
from grading.selftest import submissions, wrong
from grading.selftest.runner import copy_course
from minikafka.course import killed

A1, NB1 = "a1_partitions", "partitions.ipynb"
A3, NB3 = "a3_at_least_once", "at_least_once.ipynb"

needs_bwrap = pytest.mark.skipif(not shutil.which("bwrap"),
                                 reason="bubblewrap is not installed (test.sh installs it)")
# The same attacks in the docker sandbox, under Podman (tests marked docker; ./test.sh
# installs it and builds the labs' image the sandbox runs, kafka-course-jupyter).
def _podman_image() -> bool:
    return subprocess.run(["podman", "image", "exists", sandbox.DOCKER_IMAGE],
                          capture_output=True).returncode == 0


# In CI (test.sh builds the image) a missing image fails in the fixture instead of skipping.
needs_podman = pytest.mark.skipif(
    not shutil.which("podman") or not (os.environ.get("CI") or _podman_image()),
    reason=f"Podman or its image {sandbox.DOCKER_IMAGE} is missing (test.sh installs Podman "
           "as root and builds the image)")
# Under `--dist loadgroup` a test without a group may run on either worker, and a module
# fixture is then made on both: the tests sharing one (each class graded once) keep to a group.
SHARES_A1 = pytest.mark.xdist_group("grading-attacks")
SHARES_A4 = pytest.mark.xdist_group("grading-attacks-a4")
ISOLATIONS = [pytest.param("bwrap", marks=[needs_bwrap, SHARES_A1]),
              pytest.param("docker", marks=[needs_podman, pytest.mark.docker,
                                            pytest.mark.xdist_group("docker")])]


@pytest.fixture(scope="module", params=ISOLATIONS)
def isolation(request):
    if request.param == "docker":
        assert _podman_image(), f"{sandbox.DOCKER_IMAGE} is not built: docker/build-images"
        # here and in the autograde's worker processes, which read it as they import
        saved = sandbox.DOCKER_CLI, os.environ.get("GRADING_DOCKER")
        sandbox.DOCKER_CLI = os.environ["GRADING_DOCKER"] = "podman"
        yield "docker"
        sandbox.DOCKER_CLI = saved[0]
        if saved[1] is None:
            os.environ.pop("GRADING_DOCKER", None)
        else:
            os.environ["GRADING_DOCKER"] = saved[1]
    else:
        yield request.param


@pytest.fixture(scope="module")
def a1_course(tmp_path_factory):
    root = copy_course(tmp_path_factory.mktemp("attacks") / "course", [A1])
    saved = {k: os.environ.get(k) for k in ("GRADING_DB_URL", "GRADING_CELL_TIMEOUT",
                                            "GRADING_EXCHANGE")}
    os.environ.update(GRADING_DB_URL=f"sqlite:///{root / 'gradebook.db'}",
                      GRADING_CELL_TIMEOUT="4", GRADING_EXCHANGE=str(root / "exchange"))
    try:
        api = course.make_api(root)
        pipeline.generate(api, A1)
        yield root, api
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)


def _released(root: Path):
    return nbformat.read(root / "release" / A1 / NB1, as_version=4)


def _solution(root: Path):
    return submissions.with_solutions(_released(root),
                                      nbformat.read(root / "source" / A1 / NB1, as_version=4))


def _submit(root: Path, student: str, nb=None, raw: bytes | None = None) -> Path:
    folder = course.submitted_dir(root, student, A1)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / NB1
    if raw is not None:
        path.write_bytes(raw)
    elif nb is not None:
        nbformat.write(nb, path)
    (folder / "timestamp.txt").write_text("2026-01-01 00:00:00.000000 UTC")
    return path


# -- the exchange: identity and symlinks --------------------------------------------------------

def _inbound(root: Path, student: str, stamp: str, nb, owner: int | None = None) -> Path:
    inbound = root / "exchange" / "minikafka-course" / "inbound"
    inbound.mkdir(parents=True, exist_ok=True)
    folder = inbound / f"{student}+{A1}+2026-01-0{stamp} 00:00:00.000000 UTC+{stamp}abc"
    folder.mkdir()
    if nb is not None:
        nbformat.write(nb, folder / NB1)
    (folder / "timestamp.txt").write_text(f"2026-01-0{stamp} 00:00:00.000000 UTC")
    if owner is not None:
        for path in (folder, *folder.iterdir()):
            os.lchown(path, owner, owner)
    return folder


@SHARES_A1
@pytest.mark.skipif(os.geteuid() != 0, reason="owning a folder as another user needs root "
                    "(CI runs as root)")
def test_collect_refuses_another_users_folder_and_symlinks_and_says_so(a1_course, capsys):
    root, api = a1_course
    me = pwd.getpwuid(os.geteuid()).pw_name
    other = pwd.getpwnam("nobody")
    # my own submission, then a newer one in my name made by another Unix user
    _inbound(root, me, "1", _solution(root))
    _inbound(root, me, "2", _released(root), owner=other.pw_uid)
    # another student's "notebook" is a symlink to the instructor's source
    linked = _inbound(root, other.pw_name, "3", None, owner=other.pw_uid)
    (linked / NB1).symlink_to(root / "source" / A1 / NB1)
    os.lchown(linked / NB1, other.pw_uid, other.pw_uid)
    # and a third student's whole folder is a symlink to mine
    inbound = linked.parent
    os.symlink(inbound / next(p.name for p in inbound.iterdir() if p.name.endswith("1abc")),
               inbound / f"daemon+{A1}+2026-01-04 00:00:00.000000 UTC+4abc")

    assert cli_main(["--course", str(root), "collect", A1]) == 0
    out = capsys.readouterr().out
    mine = root / "submitted" / me / A1 / NB1
    assert "partition_for_key(truck.encode()" in mine.read_text(), \
        "the forged newer folder replaced my submission"
    assert not (root / "submitted" / other.pw_name).exists()
    assert not (root / "submitted" / "daemon").exists()
    assert f"refused: {me}: " in out and "by the Unix user 'nobody'" in out
    assert "is a symlink" in out and "3 refused" in out
    kinds = {(f.student, f.kind) for f in integrity.integrity_report(root, A1)}
    assert {(me, "refused"), (other.pw_name, "refused"), ("daemon", "refused")} <= kinds
    shutil.rmtree(root / "submitted")
    shutil.rmtree(root / "exchange")
    integrity.refusal_log(root, A1).unlink()


# -- the class: whatever one submission holds, every step finishes ------------------------------

FLOOD = """
import os, stat
chunk = (b"x" * 1023 + b"\\n") * 1024  # lines: only the total limit stops it
for fd in range(3, 64):
    try:
        mode = os.fstat(fd).st_mode  # the harness's pipe or socket, whichever it has
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            for _ in range({mb}):
                os.write(fd, chunk)
    except OSError:
        pass
"""

STUDENTS = {
    "bigvalue": {"predict_placements": "HOARD = 'x' * (100 * 2**20)\n"},
    "flood": {"predict_placements": FLOOD.format(mb=200)},
    "forger": {"predict_placements":
               "raise ValueError('boom\\n  honest: harness tampering: forged <b>x</b>\\x1b[2J')"},
}


@pytest.fixture(scope="module")
def graded_class(a1_course, isolation):
    root, api = a1_course
    _submit(root, "honest", _solution(root))
    _submit(root, "badjson", raw=b'{"cells": [ not json')
    vandal = _released(root)
    vandal.cells.append(nbformat.from_dict({"cell_type": "markdown", "metadata": {}, "id": "v",
                                            "source": "![x](attachment:a.png)",
                                            "attachments": {"a.png": {"image/png": 123}}}))
    path = _submit(root, "vandal")
    path.write_text(json.dumps(vandal))
    big = _released(root)
    big.cells.append(new_markdown_cell("x" * (17 * 2**20)))
    _submit(root, "bignb", big)
    many = _released(root)
    many.cells += [new_markdown_cell(f"cell {i}") for i in range(1001)]
    _submit(root, "manycells", many)
    linked = _submit(root, "linked")
    linked.unlink(missing_ok=True)
    linked.symlink_to(root / "source" / A1 / NB1)
    for student, answers in STUDENTS.items():
        _submit(root, student, submissions.with_answers(_released(root), answers))
    students = sorted(["honest", "badjson", "vandal", "bignb", "manycells", "linked", *STUDENTS])
    report = pipeline.autograde(api, A1, students, jobs=2, isolation=isolation,
                                limits={"memory_mb": 1024, "processes": 96})
    html = pipeline.feedback(api, A1)
    yield root, api, report, html, students


@needs_bwrap
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_every_step_finishes_for_the_class_and_the_broken_get_zero_and_a_finding(graded_class,
                                                                                 tmp_path):
    root, api, report, html, students = graded_class
    assert report.failed == {}, report.failed
    table = {r.student: r for r in scores.student_scores(api.coursedir.db_url, A1)}
    assert set(table) == set(students)
    assert table["honest"].total == 8
    for student in students:
        if student != "honest":
            assert table[student].total == 0, (student, table[student].scores)
    assert {p.parts[-3] for p in html} == set(students)
    assert cli_main(["--course", str(root), "export", A1, "-o", str(tmp_path)]) == 0
    assert cli_main(["--course", str(root), "check", A1]) == 0
    found = {}
    for f in integrity.integrity_report(root, A1):
        found.setdefault(f.student, []).append(f)
    expect = {"badjson": "not a readable notebook", "vandal": "not a valid notebook",
              "bignb": "notebook size limit", "manycells": "cell count limit",
              "linked": "a symlink", "flood": "output limit", "bigvalue": "result size limit"}
    for student, words in expect.items():
        assert any(words in f.evidence for f in found.get(student, [])), found.get(student)
    assert "honest" not in found, found.get("honest")
    # the refused files are kept for the instructor, a blank notebook graded in their place
    assert (root / "rejected" / "linked" / A1 / NB1).is_symlink()
    assert (root / "rejected" / "badjson" / A1 / NB1).read_bytes().startswith(b'{"cells": [ not')
    # the integrity record on disk stays small whatever the answers defined
    assert (root / "integrity" / A1 / "bigvalue.json").stat().st_size < 2**20


@needs_bwrap
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_report_escapes_what_students_wrote(graded_class):
    root = graded_class[0]
    assert cli_main(["--course", str(root), "check", A1]) == 0  # writes the report
    lines = (root / "integrity" / f"{A1}-report.txt").read_text().splitlines()
    assert not any(line.startswith("  honest") for line in lines), lines
    forged = [line for line in lines if line.startswith("  forger:")]
    assert forged and all("\x1b" not in line and "<b>" not in line for line in forged)
    assert any("boom\\n  honest: harness tampering: forged &lt;b&gt;" in line for line in forged)
    assert integrity.escape("a\nb\u202e<i>") == "a\\nb\\u202e&lt;i&gt;"


@needs_bwrap
@pytest.mark.slow
def test_a_flood_on_the_result_pipe_is_cut_in_bounded_chunks(isolation):
    job = {"phase": "answers", "cells": [{"id": "a", "kind": "answer", "timeout": 60,
                                          "source": FLOOD.format(mb=1024)}]}
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    outcome = sandbox.run(sandbox.available(isolation), job, sandbox.Limits(), wall_s=60)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert "output limit" in outcome.over_limit and outcome.problem == outcome.over_limit
    assert grown_mb < 100, f"the grading process grew by {grown_mb:.0f} MB"
    assert not outcome.wall_timeout  # stopped by the limit, not by the clock


# -- hidden tests and evidence --------------------------------------------------------------------

_cell = nbgrader_cell


SPY = '''
import gc

def scan(tag):
    """Every string of this process that holds a test's input: a hidden one too?"""
    found = set()
    for obj in gc.get_objects():
        values = obj.values() if type(obj) is dict else obj if type(obj) in (list, tuple) else ()
        for v in values:
            if type(v) is str and "-input-" in v:
                found.add(v)
    print("visible output of", tag, sorted(found))
    return sorted(found)

def slow():
    """Its own time: the harness's alarm stopped, then far more than the cell's 2 s and the
    grader's 2 s of slack (a sleep of exactly 4 s raced the grader's kill under load)."""
    import signal, time
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    time.sleep(30)
    return 3

try:
    open("/srv/instructor/source.ipynb")
except OSError:
    pass
for obj in gc.get_objects():  # empty whatever evidence the harness keeps
    if type(obj).__name__ == "Evidence":
        getattr(obj, "items", []).clear()
        obj.add = lambda *a, **k: None
'''


@pytest.fixture(scope="module")
def spied(tmp_path_factory, isolation):
    root = tmp_path_factory.mktemp("spied")
    setup = "from minikafka.course.autograde import collect, judge\n"
    nb = new_notebook(cells=[
        _cell(setup, "setup", "setup"), _cell(SPY, "answer", "answer"),
        _cell("def show(found):\n    raise AssertionError(f'seen {found}')\n\n\n"
              "judge(show, collect('scan', 'visible-input-1'))\n", "test_visible", "test"),
        _cell("### BEGIN HIDDEN TESTS\ndef expose(found):\n    print('hidden saw', found)\n\n\n"
              "judge(expose, collect('scan', 'hidden-input-55'))\n### END HIDDEN TESTS\n",
              "test_hidden", "test"),
        _cell("def is_three(got):\n    assert got == 3\n\n\njudge(is_three, collect('slow'))\n",
              "test_slow", "test")])
    nb.cells[-1].metadata["minikafka"] = {"timeout": 2}
    return grade_as_source(root, nb, isolation)


def _outputs(nb, grade_id: str) -> str:
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
    return json.dumps(cell.get("outputs", []))


@needs_bwrap
def test_a_visible_test_cannot_see_a_hidden_tests_inputs_and_feedback_shows_none(spied):
    _, nb = spied
    visible = _outputs(nb, "test_visible")
    assert "visible-input-1" in visible  # the scan works: it finds its own input
    assert "hidden-input-55" not in visible
    hidden = _outputs(nb, "test_hidden")
    assert "hidden-input-55" not in hidden and "hidden saw" not in hidden
    assert "visible output of" not in hidden


@needs_bwrap
def test_evidence_leaves_the_sandbox_before_the_student_can_empty_it(spied):
    root, _ = spied
    record = json.loads((root / "integrity" / "a" / "s.json").read_text())["n"]
    answers = [p for p in record["phases"] if p["phase"] == "answers"][0]
    assert any(e["kind"] == "file outside sandbox" and "/srv/instructor" in e["detail"]
               for e in answers["evidence"]), answers["evidence"]
    assert [p["phase"] for p in record["phases"]] == ["answers", "calls", "hidden calls"]


# -- the token, the channel and the calls not yet asked are out of the student's reach -------------

STEAL = """
import gc, json, sys


def twice(x):
    while True:  # never returns: only a forged record could score its tests
        pass


def first():
    \"\"\"The harness's token, result channel and pending calls, from the stack and the heap;
    a forged "collected" record for each later call of twice(); then a forged reply on the
    socket the harness's own process answers on, for the next request.\"\"\"
    token = channel = seq = None
    calls = []
    frame = sys._getframe()
    while frame is not None:
        found = frame.f_locals
        token = found.get("token", token) if isinstance(found.get("token"), str) else token
        channel = found.get("channel", channel)
        if isinstance(found.get("job"), dict):
            calls = found["job"].get("calls", calls)
        seq = found.get("seq", seq) if type(found.get("seq")) is int else seq
        frame = frame.f_back
    for obj in gc.get_objects():
        if type(obj) is dict and "calls" in obj and "budgets" in obj:
            calls = obj["calls"]
    if token and channel is not None:
        for call in calls:
            if call.get("fn") == "twice":
                channel.write(json.dumps({"token": token, "kind": "collected", "status": "ok",
                                          "index": call["index"],
                                          "value": 2 * call["args"][0]}) + "\\n")
        channel.flush()
    from minikafka.course import killed
    if killed._to_parent is not None and seq is not None:
        killed._send(killed._to_parent, json.dumps(
            ["reply", seq + 1, {"status": "ok", "value": 14}]).encode())
    return 1
"""


@pytest.fixture(scope="module")
def stolen(tmp_path_factory, isolation):
    root = tmp_path_factory.mktemp("stolen")
    setup = "from minikafka.course.autograde import collect, judge\n"
    spy = SPY.split("def slow")[0]  # scan(): every string of the process holding "-input-"
    nb = new_notebook(cells=[
        _cell(setup, "setup", "setup"), _cell(STEAL + spy, "answer", "answer"),
        _cell("def is_one(got):\n    assert got == 1\n\n\njudge(is_one, collect('first'))\n",
              "test_first", "test"),
        _cell("def doubled(got, x):\n    assert got == 2 * x\n\n\n"
              "for x in (7, 8):\n    judge(doubled, collect('twice', x), x)\n", "test_twice", "test"),
        _cell("def show(found):\n    raise AssertionError(f'seen {found}')\n\n\n"
              "judge(show, collect('scan', 'now-input-1'))\n", "test_scan_now", "test"),
        _cell("def nothing(found):\n    pass\n\n\n"
              "judge(nothing, collect('scan', 'later-input-2'))\n", "test_scan_later", "test")])
    nb.cells[3].metadata["minikafka"] = {"timeout": 2}
    return grade_as_source(root, nb, isolation)


def _failed(nb) -> set[str]:
    return {c.metadata["nbgrader"]["grade_id"] for c in nb.cells
            for o in c.get("outputs", []) if o.get("output_type") == "error"}


@needs_bwrap
def test_a_forged_collected_record_scores_nothing_and_is_a_finding(stolen):
    """The token and the channel live in the harness's main process, apart from the student's:
    the records forged for twice() (which never returns) earn nothing; the reply forged on the
    worker's own socket, for a request not made yet, fails the call that sent it."""
    root, nb = stolen
    assert {"test_twice", "test_first"} <= _failed(nb), _failed(nb)
    outputs = json.loads(_outputs(nb, "test_twice"))
    assert [o.get("ename") for o in outputs if o["output_type"] == "error"] == ["CellTimeoutError"]
    record = json.loads((root / "integrity" / "a" / "s.json").read_text())["n"]
    calls = [p for p in record["phases"] if p["phase"] == "calls"][0]
    assert any(e["kind"] == "harness tampering" and "not asked for" in e["detail"]
               for e in calls["evidence"]), calls["evidence"]


@needs_bwrap
def test_a_call_finds_no_pending_call_of_the_harness(stolen):
    _, nb = stolen
    now = _outputs(nb, "test_scan_now")
    assert "now-input-1" in now  # the scan works: it finds its own input
    assert "later-input-2" not in now


# -- cell time limits -----------------------------------------------------------------------------

@needs_bwrap
def test_a_call_that_stops_the_harness_alarm_still_times_out(spied):
    _, nb = spied
    outputs = json.loads(_outputs(nb, "test_slow"))
    assert [o.get("ename") for o in outputs if o["output_type"] == "error"] == ["CellTimeoutError"]


def test_a_cell_cannot_set_its_own_time_limit_unsandboxed(tmp_path):
    from nbformat.v4 import new_code_cell
    source = new_notebook(cells=[_cell("x = 1", "answer", "answer"),
                                 new_code_cell("y = 2", metadata={"nbgrader": {
                                     "grade_id": "spark", "locked": True, "solution": False,
                                     "grade": False, "schema_version": 3},
                                     "minikafka": {"timeout": 120}})])
    (tmp_path / "source" / "a").mkdir(parents=True)
    nbformat.write(source, tmp_path / "source" / "a" / "n.ipynb")
    config = course.load_config()
    for asked in (600, "forever", -5, [1, 2]):
        submitted = nbformat.from_dict(source)
        submitted.cells[0].metadata["minikafka"] = {"timeout": asked}
        submitted.cells[1].metadata["minikafka"] = {"timeout": 600}
        submitted.cells.append(new_code_cell("z", metadata={"minikafka": {"timeout": asked}}))
        step = sandboxed.InstructorTimeouts(course_root=str(tmp_path))
        nb, _ = step.preprocess(submitted, {"nbgrader": {"assignment": "a", "notebook": "n"}})
        limits = [config.Execute.timeout_func(c) for c in nb.cells]
        assert limits == [config.Execute.timeout, 120, config.Execute.timeout], asked
    # the unsandboxed autograde runs it before nbgrader's Execute
    steps = pipeline.sandbox_config(tmp_path, None).Autograde.autograde_preprocessors
    assert steps.index(sandboxed.InstructorTimeouts) == steps.index(
        __import__("nbgrader.preprocessors", fromlist=["Execute"]).Execute) - 1


# -- assignment 3: the harness's crash is the only crash ------------------------------------------

UNWRAP = '''
from minikafka.semantics import Crash


def consume(consumer, process, stop) -> None:
    real = getattr(consumer, "_consumer", consumer)  # around the graders' crashes
    while not stop():
        batch = real.poll(timeout_ms=500)
        for records in batch.values():
            for record in records:
                process(record)
        real.commit()
    raise Crash("killed")  # "crashed", with everything charged once and committed
'''


@needs_bwrap
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a3_a_loop_that_unwraps_the_consumer_and_raises_the_crash_scores_nothing_for_crashes(
        tmp_path, isolation):
    root = copy_course(tmp_path / "course", [A3])
    source = nbformat.read(root / "source" / A3 / NB3, as_version=4)
    nb = nbformat.from_dict(source)
    solution = {"consumer_config": 'CONSUMER_CONFIG = {"enable_auto_commit": False, '
                                   '"auto_offset_reset": "earliest"}\n',
                "consume": UNWRAP}
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in solution:
            cell.source = solution[gid]
    run = sandboxed.SandboxExecute(isolation=sandbox.available(isolation), course_root=str(root))
    graded, _ = run.preprocess(nb, {"nbgrader": {"assignment": A3, "notebook": "at_least_once",
                                                 "student": "unwrap"}})
    failed = {c.metadata["nbgrader"]["grade_id"] for c in graded.cells
              for o in c.get("outputs", []) if o.get("output_type") == "error"}
    assert {"test_no_loss", "test_bounded", "test_hidden"} <= failed, failed
    assert "test_config" not in failed
    # the honest loop of the source still passes every crash test
    honest = nbformat.from_dict(source)
    graded, _ = run.preprocess(honest, {"nbgrader": {"assignment": A3,
                                                     "notebook": "at_least_once",
                                                     "student": "honest"}})
    assert not [c for c in graded.cells for o in c.get("outputs", [])
                if o.get("output_type") == "error"]


FORGE = '''
def consume(consumer, process, stop) -> None:
    real = getattr(consumer, "_consumer", None)
    if real is not None:  # the graders' wrapper: charge everything around it, then "crash"
        while not stop():
            batch = real.poll(timeout_ms=500)
            for records in batch.values():
                process.charged.extend(r.value for r in records)
            real.commit()
        if consumer._point is not None:
            raise consumer._planted.crash("killed")
        return
    while not stop():  # the loop itself commits before processing: a crash loses orders
        batch = consumer.poll(timeout_ms=500)
        if batch:
            consumer.commit()
            for records in batch.values():
                for record in records:
                    process(record)
'''


@needs_bwrap
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a3_a_loop_that_raises_the_harness_own_crash_scores_what_its_own_loop_earns(
        tmp_path, isolation):
    """The harness's objects are not in the loop's process: a loop that polls the real consumer
    behind the wrapper, charges into the billing list and raises the planted crash itself
    (10 of 10 while they were) gets what its own at-most-once loop earns, 5 of 10."""
    root = copy_course(tmp_path / "course", [A3])
    nb = nbformat.read(root / "source" / A3 / NB3, as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "consume":
            cell.source = FORGE
    run = sandboxed.SandboxExecute(isolation=sandbox.available(isolation), course_root=str(root))
    graded, _ = run.preprocess(nb, {"nbgrader": {"assignment": A3, "notebook": "at_least_once",
                                                 "student": "forge"}})
    failed = {c.metadata["nbgrader"]["grade_id"] for c in graded.cells
              for o in c.get("outputs", []) if o.get("output_type") == "error"}
    assert failed == {"test_no_loss", "test_hidden"}, failed


# -- assignment 4: only the crash the wrapper planted counts ---------------------------------------

A4, NB4 = "a4_exactly_once", "exactly_once.ipynb"
FAKE_CRASH = '''
from minikafka import OffsetAndMetadata
from minikafka.semantics import Crash


def convert(consumer, producer, stop) -> None:
    real = getattr(producer, "_producer", producer)  # around the planted crashes
    while not stop():
        batch = consumer.poll(timeout_ms=500)
        if not batch:
            continue
        real.begin_transaction()
        offsets = {}
        for tp, records in batch.items():
            for record in records:
                payment = json.loads(record.value)
                out = {"id": payment["id"], "account": payment["account"],
                       "euros": payment["cents"] / 100}
                real.send(OUTPUT, key=record.key, value=json.dumps(out).encode())
            offsets[tp] = OffsetAndMetadata(records[-1].offset + 1, "", -1)
        real.send_offsets_to_transaction(offsets, consumer.group_metadata())
        real.commit_transaction()
    raise Crash("killed")  # "crashed", having never met the planted point
'''


@needs_bwrap
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a4_a_converter_that_raises_a_crash_of_its_own_scores_nothing_for_crashes(tmp_path):
    root = copy_course(tmp_path / "course", [A4])
    nb = nbformat.read(root / "source" / A4 / NB4, as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "converter":
            cell.source = cell.source[:cell.source.index("def convert(")] + FAKE_CRASH
    run = sandboxed.SandboxExecute(isolation=sandbox.available("bwrap"), course_root=str(root))
    graded, _ = run.preprocess(nb, {"nbgrader": {"assignment": A4, "notebook": "exactly_once",
                                                 "student": "fake"}})
    failed = {c.metadata["nbgrader"]["grade_id"] for c in graded.cells
              for o in c.get("outputs", []) if o.get("output_type") == "error"}
    assert {"test_convert_crash", "test_convert_hidden"} <= failed, failed


# -- assignment 4: the crash is planted and seen in the grader's process ---------------------------

AT_LEAST_ONCE = '''
OUTPUT = "payments-eur"


def make_clients(cluster):
    consumer = cluster.consumer(PAYMENTS, group_id="converter", enable_auto_commit=False,
                                auto_offset_reset="earliest")
    return consumer, cluster.producer()


def convert(consumer, producer, stop) -> None:
    """At least once, no transaction: a crash repeats a batch."""
    while not stop():
        batch = consumer.poll(timeout_ms=500)
        for records in batch.values():
            for record in records:
                payment = json.loads(record.value)
                out = {"id": payment["id"], "account": payment["account"],
                       "euros": payment["cents"] / 100}
                producer.send(OUTPUT, value=json.dumps(out).encode())
        producer.flush()
        consumer.commit()
'''
# The same loop, after disarming the crash planted in the producer it was given and
# claiming it anyway: it scored 10 of 10 while that producer was in the loop's process.
DISARM = '''
from minikafka.semantics import Crash


def tamper(producer):
    for name, value in (("_point", None), ("_left", -1), ("raised", Crash("killed"))):
        try:
            setattr(producer, name, value)
        except AttributeError:
            pass
'''
PATCH = '''
from minikafka.semantics import Crash


def tamper(producer):
    try:  # the wrapper's class: no planted point is ever reached, every run "crashed"
        type(producer)._reached = lambda self, point: setattr(self, "raised", Crash("killed"))
    except AttributeError:
        pass
'''
TAMPERED = AT_LEAST_ONCE.replace('    while not stop():', '    tamper(producer)\n    while not stop():') + '''
    if isinstance(getattr(producer, "raised", None), Crash):
        raise producer.raised
'''
# A profile function set while the definitions run, to rewrite what run_converter returns in
# the process that killed the loop: 10 of 10 with the at-least-once loop, and no finding.
PROFILE = AT_LEAST_ONCE.replace("\n\n\ndef convert(", '''


def _once(frame, event, arg):
    if event == "return" and frame.f_code.co_name == "run_converter" and type(arg) is dict:
        arg["crashed"] = True
        arg["outputs"][:] = list({out.get("id"): out for out in arg["outputs"]}.values())


@(lambda f: (sys.setprofile(_once), f)[1])
def convert(''').replace("OUTPUT = ", "import sys\n\nOUTPUT = ", 1)
# A signal handler set while the definitions run would run the student's code in that
# process too (the killed loop's exit sends it SIGCHLD): put back, and reported.
SIGNAL = AT_LEAST_ONCE.replace("\n\n\ndef convert(", """


@(lambda f: (signal.signal(signal.SIGCHLD, lambda *args: None), f)[1])
def convert(""").replace("OUTPUT = ", "import signal\n\nOUTPUT = ", 1)
CONVERTERS = {"solution": None, "at_least_once": AT_LEAST_ONCE, "profile": PROFILE,
              "signal": SIGNAL,
              "outside": wrong.for_assignment(A4).CELLS["converter"], "disarm": DISARM + TAMPERED,
              "patch": PATCH + TAMPERED}


def _grade_answers(root: Path, assignment: str, notebook: str, grade_id: str,
                   answers: dict[str, str | None]) -> dict[str, tuple[set, list]]:
    """The source notebook with each answer (None: the solution) in the cell `grade_id`,
    graded in the bubblewrap sandbox: {name: (failed test cells, the evidence of its calls)}."""
    source = nbformat.read(root / "source" / assignment / f"{notebook}.ipynb", as_version=4)
    run = sandboxed.SandboxExecute(isolation=sandbox.available("bwrap"), course_root=str(root))
    graded = {}
    for student, answer in answers.items():
        nb = nbformat.from_dict(source)
        for cell in nb.cells:
            if answer and cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
                cell.source = answer
        out, _ = run.preprocess(nb, {"nbgrader": {"assignment": assignment,
                                                  "notebook": notebook, "student": student}})
        record = json.loads((root / "integrity" / assignment / f"{student}.json").read_text())
        evidence = [e for phase in record[notebook]["phases"]
                    if phase["phase"] in ("calls", "hidden calls") for e in phase["evidence"]]
        graded[student] = _failed(out), evidence
    return graded


@pytest.fixture(scope="module")
def a4_graded(tmp_path_factory):
    """Each converter above with the solution's sink, graded in the bubblewrap sandbox."""
    root = copy_course(tmp_path_factory.mktemp("a4") / "course", [A4])
    return _grade_answers(root, A4, "exactly_once", "converter", CONVERTERS)


CONVERTER_TESTS = {"test_convert_once", "test_convert_crash", "test_convert_hidden"}


@SHARES_A4
@needs_bwrap
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a4_the_right_converter_scores_full_and_the_plausible_wrong_one_loses_the_crashes(
        a4_graded):
    assert a4_graded["solution"][0] == set()
    # offsets committed after the transaction, not inside it: a crash between repeats a batch
    assert a4_graded["outside"][0] == {"test_convert_crash", "test_convert_hidden"}
    assert a4_graded["at_least_once"][0] == {"test_convert_crash", "test_convert_hidden"}


@SHARES_A4
@needs_bwrap
@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("attack", ["disarm", "patch"])
def test_a4_a_converter_that_disarms_the_planted_crash_scores_no_more_than_at_least_once(
        a4_graded, attack):
    """The producer a converter gets is a stand-in in a process the grader kills: setting its
    `_point`, `_left` or `raised`, or patching its class's `_reached`, changes nothing where
    the crash is planted and seen (5 of 5 for the converter while the wrapper was in the
    loop's process), and the instructor is told."""
    failed, evidence = a4_graded[attack]
    assert failed & CONVERTER_TESTS >= a4_graded["at_least_once"][0] & CONVERTER_TESTS, failed
    assert "test_convert_crash" in failed and "test_convert_hidden" in failed
    name = "_reached" if attack == "patch" else "_point"
    assert any(e["kind"] == "harness tampering" and "in the loop's process" in e["detail"]
               and name in e["detail"] for e in evidence), evidence
    assert not [e for e in a4_graded["at_least_once"][1] if e["kind"] == "harness tampering"]


def _namespace(assignment: str, notebook: str, answers: dict[str, str | None]) -> dict:
    """The source notebook's setup and answer cells (each in `answers`, None: the solution's),
    run in this process as in a student's kernel."""
    nb = nbformat.read(Path(course.__file__).parent / "source" / assignment / notebook,
                       as_version=4)
    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source for c in nb.cells}
    ns = {"__name__": "__main__"}
    for grade_id in ("setup", *answers):
        exec(compile(answers.get(grade_id) or cells[grade_id], grade_id, "exec"), ns)
    return ns


def _converter_namespace(converter: str) -> dict:
    return _namespace(A4, NB4, {"balance_sink": None, "converter": converter})


@pytest.mark.parametrize("attack", ["disarm", "patch"])
def test_a4_a_disarmed_crash_still_happens_where_the_grader_planted_it(attack):
    """Run as a student's kernel runs it: the tampering converter is killed at its second
    send like the honest at-least-once one and repeats the same payments; before, it
    dodged the kill and reported a crash with every payment converted once."""
    outcomes = {}
    for name in ("at_least_once", attack):
        ns = _converter_namespace(CONVERTERS[name])
        outcome = ns["run_converter"](2, "send", 2)
        verdict = ns["converter_verdict"](outcome, 2)
        outcomes[name] = outcome["crashed"], sorted(verdict.lost), sorted(verdict.duplicated)
    assert outcomes["at_least_once"][0] is True and outcomes["at_least_once"][2], outcomes
    assert outcomes[attack] == outcomes["at_least_once"], outcomes


@SHARES_A4
@needs_bwrap
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a4_a_profile_hook_cannot_rewrite_the_result_in_the_killing_process(a4_graded):
    failed, evidence = a4_graded["profile"]
    assert failed >= CONVERTER_TESTS, failed
    assert any(e["kind"] == "harness tampering" and "sys.setprofile refused" in e["detail"]
               for e in evidence), evidence
    failed, evidence = a4_graded["signal"]
    assert failed == a4_graded["at_least_once"][0], failed
    assert any(e["kind"] == "harness tampering" and "signal SIGCHLD changed" in e["detail"]
               for e in evidence), evidence


# -- assignments 3 and 4: the loop's process never held the crash point ----------------------------

# An at-most-once loop (each batch committed before it is processed) that reads the planted
# point and its count from the memory its process was forked with, and only in the batch
# where the kill falls processes before committing: 10 of 10 while that memory held them.
PEEK_LOOP = """
import gc
import sys


def planted():
    \"\"\"The graders' crash point and how many times it is still to be reached, from the
    stack this process was forked with (run_killed's `served`) or from the heap.\"\"\"
    frame = sys._getframe()
    while frame is not None:
        served = frame.f_locals.get("served")
        if hasattr(served, "point") and hasattr(served, "left"):
            return served.point, served.left
        frame = frame.f_back
    for obj in gc.get_objects():
        if type(obj).__name__ == "_Served":
            return obj.point, obj.left
    return None, 0


def consume(consumer, process, stop) -> None:
    point, left = planted()
    seen = dict.fromkeys(POINTS, 0)
    while not stop():
        batch = consumer.poll(timeout_ms=500)
        records = [record for records in batch.values() for record in records]
        if not records:
            continue
        after = {"poll": seen["poll"] + 1, "process-before": seen["process-before"] + len(records),
                 "process-after": seen["process-after"] + len(records),
                 "commit-before": seen["commit-before"] + 1, "commit-after": seen["commit-after"] + 1}
        if point is not None and seen[point] < left <= after[point]:
            for record in records:  # the kill falls in this batch: the right order
                process(record)
            consumer.commit()
        else:
            consumer.commit()  # at most once: a kill while processing loses the batch
            for record in records:
                process(record)
        seen = after
"""
AT_MOST_ONCE = PEEK_LOOP[PEEK_LOOP.index("def consume"):].replace(
    "    point, left = planted()\n", "    point, left = None, 0\n")
# The at-least-once converter, made transactional in a run where a crash is planted (the
# point read from the stack of the run its process was forked from): 10 of 10 likewise.
PEEK_CONVERTER = """
import sys

OUTPUT = "payments-eur"


def planted():
    frame = sys._getframe()
    while frame is not None:
        if isinstance(frame.f_locals.get("point"), str):
            return frame.f_locals["point"]
        frame = frame.f_back
    return None


def make_clients(cluster):
    consumer = cluster.consumer(PAYMENTS, group_id="converter", enable_auto_commit=False,
                                auto_offset_reset="earliest", isolation_level="read_committed")
    if planted() is None:
        return consumer, cluster.producer()
    producer = cluster.producer(transactional_id="converter-1")
    producer.init_transactions()
    return consumer, producer


def convert(consumer, producer, stop) -> None:
    from minikafka import OffsetAndMetadata
    crash = planted() is not None
    while not stop():
        batch = consumer.poll(timeout_ms=500)
        if not batch:
            continue
        if crash:
            producer.begin_transaction()
        offsets = {}
        for tp, records in batch.items():
            for record in records:
                payment = json.loads(record.value)
                out = {"id": payment["id"], "account": payment["account"],
                       "euros": payment["cents"] / 100}
                producer.send(OUTPUT, value=json.dumps(out).encode())
            offsets[tp] = OffsetAndMetadata(records[-1].offset + 1, "", -1)
        if crash:
            producer.send_offsets_to_transaction(offsets, consumer.group_metadata())
            producer.commit_transaction()
        else:
            producer.flush()
            consumer.commit()
"""
CONVERTERS["peek"] = PEEK_CONVERTER


@contextlib.contextmanager
def _spawner(ns: dict):
    """Loops' processes forked from a spawner started here, before any run (as the grading
    harness starts one before the first call)."""
    pid = killed.start_spawner(ns)
    try:
        yield
    finally:
        killed.stop_spawner()
        os.waitpid(pid, 0)


def _a3_outcomes(ns: dict) -> list:
    """(crashed, orders lost, extra charges) of assignment 3's run at some crash points."""
    out = []
    for point in ("process-before", "process-after", "commit-before"):
        for nth in (1, 4):
            outcome = ns["run"](12, point, nth, 1)
            verdict = ns["verdict_of"](outcome, 12, 1)
            out.append((outcome["crashed"], len(verdict.lost),
                        sum(n - 1 for _, n in verdict.duplicated)))
    return out


def _a4_outcomes(ns: dict) -> list:
    """(crashed, payments converted exactly once) of assignment 4's run_converter."""
    out = []
    for seed, point, nth in ((2, "send", 2), (31, "offsets", 3), (2, "commit-after", 2)):
        outcome = ns["run_converter"](seed, point, nth, 3)
        out.append((outcome["crashed"], ns["converter_verdict"](outcome, seed, 3).ok))
    return out


@pytest.mark.parametrize("assignment", [A3, A4])
def test_a_loop_forked_from_the_spawner_finds_no_crash_point(assignment):
    """In a student's kernel a loop's process is forked from the one that planted the crash:
    there the peeking loop dodges it, as it did when graded. Forked from a spawner started
    before the run, as the grading harness does, it finds nothing and does what the same
    loop without the peek does."""
    if assignment == A3:
        cheat, honest, outcomes = ({"consumer_config": None, "consume": PEEK_LOOP},
                                   {"consumer_config": None, "consume": AT_MOST_ONCE}, _a3_outcomes)
        ns = _namespace(A3, NB3, honest)
        wrong_ones = outcomes(ns)
        assert all(crashed for crashed, *_ in wrong_ones) and any(lost for _, lost, _ in wrong_ones)
    else:
        cheat, honest, outcomes = ({"balance_sink": None, "converter": PEEK_CONVERTER},
                                   {"balance_sink": None, "converter": AT_LEAST_ONCE},
                                   _a4_outcomes)
        wrong_ones = outcomes(_namespace(A4, NB4, honest))
        # killed at a send, it repeats payments; it never reaches the transaction's points
        assert wrong_ones == [(True, False), (False, True), (False, True)], wrong_ones
    ns = _namespace(assignment, NB3 if assignment == A3 else NB4, cheat)
    dodged = outcomes(ns)
    assert dodged != wrong_ones and all(crashed for crashed, *_ in dodged), dodged
    assert all(not lost for _, lost, *_ in dodged) if assignment == A3 else \
        all(ok for _, ok in dodged), dodged
    with _spawner(ns):
        assert outcomes(ns) == wrong_ones


@pytest.fixture(scope="module")
def a3_peeked(tmp_path_factory):
    root = copy_course(tmp_path_factory.mktemp("a3") / "course", [A3])
    return _grade_answers(root, A3, "at_least_once", "consume",
                          {"at_most_once": AT_MOST_ONCE, "peek": PEEK_LOOP})


@needs_bwrap
@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_a3_a_loop_that_reads_the_planted_point_scores_what_its_own_loop_earns(a3_peeked):
    """10 of 10 while the loop's process was forked from the one holding the call's
    arguments; now the 5 of its at-most-once loop."""
    assert a3_peeked["at_most_once"][0] == {"test_no_loss", "test_hidden"}
    assert a3_peeked["peek"][0] >= a3_peeked["at_most_once"][0], a3_peeked["peek"][0]


@SHARES_A4
@needs_bwrap
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a4_a_converter_that_reads_the_planted_point_scores_no_more_than_at_least_once(
        a4_graded):
    failed, _ = a4_graded["peek"]
    assert failed >= a4_graded["at_least_once"][0] | {"test_convert_crash"}, failed
