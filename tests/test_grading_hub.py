"""A class on JupyterHub: real Unix users, nbgrader's exchange between them, the course's
grading pipeline, and the attempts a student can make on a shared server.

Run as root (as CI is), the test creates an instructor and two students as local Unix users,
a temporary exchange root and course directory, and starts JupyterHub (with npm's
configurable-http-proxy) on 127.0.0.1. Each student acts the way a student on the hub does:
their single-user server is started through the Hub's REST API, and the Assignments tab's
requests (fetch, submit, fetch feedback) and the notebook's save go through the Hub's proxy
with the student's own token. The instructor runs `python -m grading` as their own user.
Everything the test creates (users, their processes, the hub, files) is removed afterwards,
also on failure.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest

from grading.selftest import submissions
from grading.selftest.runner import copy_course

REPO = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
CHP = REPO / ".cache" / "npm" / "node_modules" / ".bin" / "configurable-http-proxy"
A1, NB1 = "a1_partitions", "partitions.ipynb"
COURSE_ID = "minikafka-course"

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0,
                       reason="creates local Unix users: runs as root only (CI runs as root)"),
    pytest.mark.skipif(not (VENV_BIN / "jupyterhub").exists(),
                       reason="JupyterHub is not installed (the [grading] extra installs it)"),
    pytest.mark.skipif(not CHP.exists(),
                       reason="configurable-http-proxy is not installed (test.sh installs it)"),
    pytest.mark.skipif(not shutil.which("bwrap"),
                       reason="bubblewrap is not installed (test.sh installs it)"),
    pytest.mark.slow,
    pytest.mark.timeout(900),
    pytest.mark.xdist_group("jupyterhub"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def traversable(*paths: Path):
    """Let other users reach these files: add search (o+x) to every folder above them that
    lacks it (this machine's Python lives under /root), and put the modes back afterwards."""
    changed: dict[Path, int] = {}
    try:
        for path in paths:
            for folder in Path(os.path.realpath(path)).parents:
                mode = folder.stat().st_mode
                if folder not in changed and not mode & stat.S_IXOTH:
                    changed[folder] = stat.S_IMODE(mode)
                    os.chmod(folder, stat.S_IMODE(mode) | stat.S_IXOTH)
        yield
    finally:
        for folder, mode in changed.items():
            os.chmod(folder, mode)


def processes_of(uid: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == uid:
                    pids.append(int(entry.name))
    return pids


@dataclass
class Users:
    """Local Unix users made for the test; remove() ends their processes and deletes them."""
    home_root: Path
    made: list[str] = field(default_factory=list)

    def add(self, name: str) -> Path:
        home = self.home_root / name
        subprocess.run(["useradd", "--create-home", "--home-dir", str(home), "--shell",
                        "/bin/bash", "--user-group", name], check=True, timeout=60)
        self.made.append(name)
        os.chmod(home, 0o700)   # what the instructor guide asks for: no one reads another's home
        return home

    def remove(self) -> None:
        for name in self.made:
            uid = pwd.getpwnam(name).pw_uid
            for pid in processes_of(uid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + 10
            while processes_of(uid) and time.monotonic() < deadline:
                time.sleep(0.2)
            subprocess.run(["userdel", name], check=False, timeout=60)


def env_for(name: str, **extra: str) -> list[str]:
    home = pwd.getpwnam(name).pw_dir
    pairs = {"HOME": home, "USER": name, "LOGNAME": name, "LANG": "C.UTF-8",
             "PATH": f"{VENV_BIN}:/usr/local/bin:/usr/bin:/bin", **extra}
    return ["env", "-i", *(f"{k}={v}" for k, v in pairs.items())]


def run_as(name: str, argv: list[str], cwd: Path | None = None, timeout: float = 300,
           **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(["runuser", "-u", name, "--", *env_for(name, **extra), *argv],
                          cwd=cwd, capture_output=True, text=True, timeout=timeout)


def attempt(name: str, code: str) -> str:
    """Run `code` in Python as the user; what it raised (class name and message), or "ok"."""
    program = (f"try:\n{textwrap.indent(textwrap.dedent(code), '    ')}\n"
               "except Exception as exc:\n    print(type(exc).__name__, exc)\n"
               "else:\n    print('ok')\n")
    done = run_as(name, [sys.executable, "-c", program], cwd=Path("/"), timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


class Hub:
    """JupyterHub on 127.0.0.1 with its proxy, started and stopped by pid."""

    def __init__(self, folder: Path, users: list[str]):
        self.folder = folder
        self.port, self.hub_port, self.api_port = free_port(), free_port(), free_port()
        self.token = secrets.token_hex(32)
        self.url = f"http://127.0.0.1:{self.port}"
        # Readable by the students (the hub's own folder is root's alone).
        jupyter_config = folder.parent / "jupyter-config"
        (folder / "jupyterhub_config.py").write_text(textwrap.dedent(f"""\
            c = get_config()  # noqa: F821
            c.JupyterHub.ip = "127.0.0.1"
            c.JupyterHub.port = {self.port}
            c.JupyterHub.hub_ip = "127.0.0.1"
            c.JupyterHub.hub_port = {self.hub_port}
            c.JupyterHub.db_url = "sqlite:///{folder / 'jupyterhub.sqlite'}"
            c.JupyterHub.cookie_secret_file = "{folder / 'cookie_secret'}"
            c.ConfigurableHTTPProxy.command = ["{CHP}"]
            c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{self.api_port}"
            c.ConfigurableHTTPProxy.pid_file = "{folder / 'proxy.pid'}"
            c.Authenticator.allowed_users = {set(users)!r}
            c.JupyterHub.services = [{{"name": "course-test", "api_token": "{self.token}"}}]
            c.JupyterHub.load_roles = [{{"name": "course-test",
                "scopes": ["admin:users", "admin:servers", "tokens"],
                "services": ["course-test"]}}]
            c.Spawner.cmd = ["{VENV_BIN / 'jupyterhub-singleuser'}"]
            c.Spawner.ip = "127.0.0.1"
            c.Spawner.notebook_dir = "~"
            c.Spawner.environment = {{"JUPYTER_CONFIG_PATH": "{jupyter_config}",
                                      "PATH": "{VENV_BIN}:/usr/bin:/bin"}}
            c.Spawner.start_timeout = 180
            c.Spawner.http_timeout = 180
            """))
        # The students' nbgrader configuration, as /etc/jupyter/nbgrader_config.py would be.
        jupyter_config.mkdir()
        (jupyter_config / "nbgrader_config.py").write_text(textwrap.dedent(f"""\
            c = get_config()  # noqa: F821
            c.CourseDirectory.course_id = "{COURSE_ID}"
            c.Exchange.root = "{folder.parent / 'exchange'}"
            """))
        self.log = open(folder / "jupyterhub.log", "wb")  # noqa: SIM115 (closed in stop())
        self.process = subprocess.Popen(
            [str(VENV_BIN / "jupyterhub"), "-f", str(folder / "jupyterhub_config.py")],
            cwd=folder, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "PATH": f"{VENV_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}"})
        self.wait(lambda: self.api("GET", "/hub/api/")[0] == 200, 120, "the hub to answer")

    def request(self, method: str, url: str, token: str, body: bytes | None = None,
                content_type: str = "application/json") -> tuple[int, bytes]:
        req = urllib.request.Request(url, data=body, method=method,
                                     headers={"Authorization": f"token {token}",
                                              "Content-Type": content_type})
        try:
            with urllib.request.urlopen(req, timeout=120) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()
        except (urllib.error.URLError, ConnectionError):
            return 0, b""

    def api(self, method: str, path: str, token: str | None = None,
            body: dict | None = None) -> tuple[int, dict]:
        status, data = self.request(method, self.url + path, token or self.token,
                                    None if body is None else json.dumps(body).encode())
        try:
            return status, json.loads(data or b"{}")
        except ValueError:
            return status, {"raw": data.decode(errors="replace")}

    def wait(self, ready, seconds: float, what: str) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"JupyterHub exited ({self.process.returncode}):\n"
                                     + self.tail())
            if ready():
                return
            time.sleep(0.5)
        raise AssertionError(f"timed out waiting for {what}:\n{self.tail()}")

    def tail(self) -> str:
        self.log.flush()
        return (self.folder / "jupyterhub.log").read_text(errors="replace")[-4000:]

    def user_token(self, name: str) -> str:
        status, body = self.api("POST", f"/hub/api/users/{name}/tokens",
                                body={"note": "course test", "expires_in": 3600})
        assert status == 201, (status, body)
        return body["token"]

    def start_server(self, name: str, token: str) -> None:
        status, body = self.api("POST", f"/hub/api/users/{name}/server", token)
        assert status in (201, 202), (status, body)
        self.wait(lambda: self.api("GET", f"/hub/api/users/{name}", token)[1]
                  .get("servers", {}).get("", {}).get("ready"), 240, f"{name}'s server")

    def server(self, name: str, token: str, method: str, path: str, form: dict | None = None,
               body: dict | None = None) -> tuple[int, dict]:
        """A request to the user's single-user server, through the Hub's proxy."""
        url = f"{self.url}/user/{name}/{urllib.parse.quote(path, safe='/?=&')}"
        if form is not None:
            status, data = self.request(method, url, token, urllib.parse.urlencode(form).encode(),
                                        "application/x-www-form-urlencoded")
        else:
            status, data = self.request(method, url, token,
                                        None if body is None else json.dumps(body).encode())
        return status, json.loads(data or b"{}")

    def assignment_action(self, name: str, token: str, action: str) -> dict:
        """What the Assignments tab sends: fetch, submit or fetch_feedback."""
        status, result = self.server(name, token, "POST", f"assignments/{action}",
                                     form={"assignment_id": A1, "course_id": COURSE_ID})
        assert status == 200 and result.get("success"), (action, name, status, result)
        return result

    def stop(self) -> None:
        """Stop the hub (it stops the servers and the proxy), by pid; kill what is left."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        pid_file = self.folder / "proxy.pid"
        if pid_file.exists():
            with contextlib.suppress(ValueError, ProcessLookupError, PermissionError):
                os.kill(int(pid_file.read_text().strip()), signal.SIGKILL)
        self.log.close()


@dataclass
class HubClass:
    root: Path
    course: Path
    exchange: Path
    hub: Hub
    instructor: str
    students: tuple[str, str]
    tokens: dict[str, str]
    attempts: dict[str, str] = field(default_factory=dict)
    steps: dict[str, subprocess.CompletedProcess] = field(default_factory=dict)


def grade(cls: HubClass, *args: str) -> subprocess.CompletedProcess:
    """`python -m grading ARGS` as the instructor."""
    db = f"sqlite:///{cls.course / 'gradebook.db'}"
    done = run_as(cls.instructor, [sys.executable, "-m", "grading", "--course", str(cls.course),
                                   *args, A1], cwd=cls.course,
                  PYTHONPATH=str(REPO), GRADING_DB_URL=db, GRADING_EXCHANGE=str(cls.exchange),
                  GRADING_CELL_TIMEOUT="30")
    assert done.returncode == 0, f"grading {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    cls.steps[args[0]] = done
    return done


def the_notebook(cls: HubClass, name: str, answers: bool):
    """The released notebook, with the solutions written in when `answers`."""
    released = nbformat.read(cls.course / "release" / A1 / NB1, as_version=4)
    if not answers:
        return released
    source = nbformat.read(cls.course / "source" / A1 / NB1, as_version=4)
    return submissions.with_solutions(released, source)


@pytest.fixture(scope="module")
def hub_class():
    tag = secrets.token_hex(2)
    instructor, alice, bob = f"mkteach{tag}", f"mkalice{tag}", f"mkbob{tag}"
    root = Path(tempfile.mkdtemp(prefix="minikafka-hub-"))
    os.chmod(root, 0o755)
    users = Users(root / "home")
    (root / "home").mkdir()
    hub = None
    with traversable(Path(sys.executable), REPO / "grading", CHP):
        try:
            for name in (instructor, alice, bob):
                users.add(name)
            # The exchange every user reaches, as nbgrader expects (inbound is made -wx+t).
            exchange = root / "exchange"
            exchange.mkdir()
            os.chmod(exchange, 0o777)
            # The course directory: the instructor's alone.
            course = copy_course(root / "course", [A1])
            teacher = pwd.getpwnam(instructor)
            for top, dirs, files in os.walk(course):
                for entry in [top, *(os.path.join(top, f) for f in dirs + files)]:
                    os.chown(entry, teacher.pw_uid, teacher.pw_gid)
            os.chmod(course, 0o700)
            (root / "hub").mkdir(mode=0o700)
            hub = Hub(root / "hub", [instructor, alice, bob])
            tokens = {name: hub.user_token(name) for name in (alice, bob)}
            cls = HubClass(root, course, exchange, hub, instructor, (alice, bob), tokens)

            grade(cls, "generate")
            grade(cls, "release")
            for name in (alice, bob):
                hub.start_server(name, tokens[name])
            yield cls
        finally:
            if hub is not None:
                hub.stop()
            users.remove()
            shutil.rmtree(root, ignore_errors=True)


def bob_forges_a_submission_for(cls: HubClass, victim: str, attacker: str) -> str:
    """The attacker writes an inbound folder named for the victim, newer than the victim's
    own, holding the attacker's notebook (what `nbgrader submit` would write, by hand)."""
    inbound = cls.exchange / COURSE_ID / "inbound"
    later = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(time.time() + 3600))
    folder = inbound / f"{victim}+{A1}+{later}.000000 UTC+forged"
    notebook = nbformat.writes(the_notebook(cls, attacker, answers=False))
    return attempt(attacker, f"""
        import os
        os.mkdir({str(folder)!r})
        open(os.path.join({str(folder)!r}, {NB1!r}), "w").write({notebook!r})
        open(os.path.join({str(folder)!r}, "timestamp.txt"), "w").write({later + '.000000 UTC'!r})
        """)


@pytest.fixture(scope="module")
def graded(hub_class: HubClass) -> HubClass:
    """The class's term: fetch, work, submit (students, through the hub), the attempts of a
    student, collect, autograde, feedback and export (the instructor), fetch feedback."""
    cls, hub = hub_class, hub_class.hub
    alice, bob = cls.students
    for name in cls.students:
        cls.attempts[f"fetch {name}"] = json.dumps(
            hub.assignment_action(name, cls.tokens[name], "fetch"))
    # Alice writes the solutions and saves from JupyterLab; Bob hands in the blank notebook.
    status, saved = hub.server(alice, cls.tokens[alice], "PUT",
                               f"api/contents/{A1}/{NB1}",
                               body={"type": "notebook", "format": "json",
                                     "content": the_notebook(cls, alice, answers=True)})
    assert status == 200, (status, saved)
    for name in cls.students:
        cls.attempts[f"submit {name}"] = json.dumps(
            hub.assignment_action(name, cls.tokens[name], "submit"))
    # Alice submits again: this newer folder is the one Bob will be told the name of.
    cls.attempts[f"resubmit {alice}"] = json.dumps(
        hub.assignment_action(alice, cls.tokens[alice], "submit"))

    # Bob, before the deadline, at the shell of his own server (as his own Unix user).
    inbound = cls.exchange / COURSE_ID / "inbound"
    alice_home = Path(pwd.getpwnam(alice).pw_dir)
    cls.attempts["read source"] = attempt(
        bob, f"open({str(cls.course / 'source' / A1 / NB1)!r}).read()")
    cls.attempts["list inbound"] = attempt(bob, f"import os; os.listdir({str(inbound)!r})")
    cls.attempts["read alice's copy"] = attempt(
        bob, f"open({str(alice_home / A1 / NB1)!r}).read()")
    cls.attempts["read alice's cache"] = attempt(
        bob, f"import os; os.listdir({str(alice_home / '.local')!r})")
    cls.attempts["forge"] = bob_forges_a_submission_for(cls, alice, bob)
    # nbgrader leaves each submission folder writable by everyone, hidden by its name alone:
    # told the name of Alice's newest one, Bob swaps her notebook for his.
    newest = max((p for p in inbound.iterdir() if p.name.startswith(f"{alice}+")
                  and not p.name.endswith("+forged")), key=lambda p: p.name.split("+")[2])
    blank = nbformat.writes(the_notebook(cls, bob, answers=False))
    cls.attempts["swap"] = attempt(bob, f"""
        import os
        os.unlink({str(newest / NB1)!r})
        open({str(newest / NB1)!r}, "w").write({blank!r})
        """)

    grade(cls, "collect")
    grade(cls, "autograde")
    grade(cls, "feedback", "--release")
    grade(cls, "export")

    # Bob, after grading: at everything that holds or makes a grade.
    feedback = cls.exchange / COURSE_ID / "feedback"
    cls.attempts["write gradebook"] = attempt(
        bob, f"open({str(cls.course / 'gradebook.db')!r}, 'r+b').write(b'x')")
    cls.attempts["write alice's graded copy"] = attempt(
        bob, f"open({str(cls.course / 'autograded' / alice / A1 / NB1)!r}, 'w')")
    cls.attempts["list feedback"] = attempt(bob, f"import os; os.listdir({str(feedback)!r})")
    cls.attempts["write feedback"] = attempt(
        bob, f"open({str(feedback / 'forged.html')!r}, 'w').write('<p>Score: 8/8</p>')")
    cls.attempts["replace the release"] = attempt(
        bob, f"open({str(cls.exchange / COURSE_ID / 'outbound' / A1 / NB1)!r}, 'w')")
    for name in cls.students:
        cls.attempts[f"fetch_feedback {name}"] = json.dumps(
            hub.assignment_action(name, cls.tokens[name], "fetch_feedback"))
    return cls


def scores_csv(cls: HubClass) -> dict[str, dict[str, str]]:
    with open(cls.course / "grades" / f"scores-{A1}.csv", newline="") as fh:
        return {row["student_id"]: row for row in csv.DictReader(fh)}


def test_students_fetch_and_submit_through_the_hub_and_fetch_their_feedback(graded):
    alice, bob = graded.students
    for name in graded.students:
        for step in ("fetch", "submit", "fetch_feedback"):
            assert json.loads(graded.attempts[f"{step} {name}"])["success"], \
                (step, name, graded.attempts[f"{step} {name}"])
    # Each submission in the exchange is owned by the Unix user who submitted it.
    inbound = graded.exchange / COURSE_ID / "inbound"
    owners = {p.name.split("+")[0]: pwd.getpwuid(p.stat().st_uid).pw_name
              for p in inbound.iterdir() if not p.name.endswith("+forged")}
    assert owners == {alice: alice, bob: bob}
    # The feedback arrived in each student's own folder, read through their own server.
    status, listing = graded.hub.server(alice, graded.tokens[alice], "GET",
                                        f"api/contents/{A1}/feedback")
    assert status == 200, listing
    html_paths = [item["path"] for stamp in listing["content"]
                  for item in graded.hub.server(alice, graded.tokens[alice], "GET",
                                                f"api/contents/{stamp['path']}")[1]["content"]
                  if item["name"].endswith(".html")]
    assert html_paths, listing
    status, page = graded.hub.server(alice, graded.tokens[alice], "GET",
                                     f"api/contents/{html_paths[0]}?type=file&format=text")
    # 8 autograded points of 10 (assignment 1's explanation waits for a person).
    assert status == 200 and "(Score: 8.0 / 10.0)" in page["content"], page.get("content", "")


def test_the_instructor_grades_the_class_as_their_own_user(graded):
    alice, bob = graded.students
    rows = scores_csv(graded)
    assert (rows[alice]["total"], rows[alice]["max"], rows[alice]["pending_manual"]) == \
        ("8", "10", "1")
    assert (rows[bob]["total"], rows[bob]["max"]) == ("0", "10")
    assert "isolation: bubblewrap sandbox" in graded.steps["autograde"].stdout, \
        graded.steps["autograde"].stdout


def test_a_student_cannot_read_the_instructors_source_or_another_students_work(graded):
    for what in ("read source", "list inbound", "read alice's copy", "read alice's cache"):
        assert graded.attempts[what].startswith("PermissionError"), (what, graded.attempts[what])


def test_a_student_cannot_submit_as_someone_else(graded):
    alice, bob = graded.students
    # The forged folder could be written (the inbound folder is writable by every student),
    # but collect refuses it, says so, and Alice's own submission is the one graded.
    assert graded.attempts["forge"] == "ok"
    collected = graded.steps["collect"].stdout
    assert f"refused: {alice}: " in collected and f"by the Unix user {bob!r}" in collected, \
        collected
    assert f"integrity: {alice}: refused: collect: " in graded.steps["autograde"].stdout
    # Told the name of Alice's newest submission, Bob could swap her notebook in it (nbgrader
    # makes it writable by everyone); collect refuses that folder and takes her previous one.
    assert graded.attempts["swap"] == "ok"
    assert f"{NB1} was written by the Unix user {bob!r}, not by the submitter" in collected, \
        collected
    assert scores_csv(graded)[alice]["total"] == "8"


def test_a_student_cannot_change_anyones_grade(graded):
    for what in ("write gradebook", "write alice's graded copy", "list feedback",
                 "write feedback", "replace the release"):
        assert graded.attempts[what].startswith("PermissionError"), (what, graded.attempts[what])

