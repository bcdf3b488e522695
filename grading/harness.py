"""The program that runs inside a grading sandbox (stdlib, IPython and minikafka's plain-data
codec; no grading imports).

It runs one of two phases of a submission, each in its own fresh sandbox:

    answers  the instructor's setup cells and the student's answer cells, in an IPython shell
             as in Jupyter; hands back the student's own output, the plain-data values the
             answers defined, and evidence of tampering. No test has entered this process.
    calls    a fresh process: the setup cells, only the *definitions* of the answer cells
             (def, class, import, assignments to plain names; other top-level statements
             are not run again), the plain values from the first phase, then the calls the
             grader's test cells asked for (minikafka.course.autograde.collect): a function
             name and plain arguments each. Before each call the harness names, minikafka's
             modules and the builtins are put back as setup left them; each result goes back
             as plain data with exact types. The test cells themselves, hidden tests and
             expected values never come here: the grading process judges the results.

The job comes on stdin (a per-run token on the first line, then JSON); results go back as JSON
lines carrying the token on a private copy of stdout, each as it happens. Token, channel and
job stay in the main process; the setup and the student's code run in a worker it forks
before reading them, which gets one cell or one call at a time over a socket. The main
process times each request, kills and replaces a worker past its limit, and alone writes
records (see Supervisor). The student's prints are captured per cell or call; anything
written to file descriptors 1 and 2 directly goes nowhere.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import ctypes
import gc
import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
import traceback
import types

from minikafka.course import killed
from minikafka.course.autograde import NotPlain, decode, encode

# -- what the harness watches -------------------------------------------------------------------

ALLOWED_READ = ("/harness/", "/submission", "/usr", "/etc", "/proc", "/dev", "/lib",
                "/bin", "/sys/devices/system/cpu", "/sys/fs/cgroup")
WRITABLE = ("/submission", "/tmp")
PR_SET_DUMPABLE = 4
PR_SET_PDEATHSIG = 1


class Evidence:
    """Audit events worth telling the instructor about, recorded by a hook that cannot be
    removed once added (sys.addaudithook). Each item leaves the sandbox when it happens
    (`send`): nothing is kept here for the student's code to empty before the end."""

    def __init__(self, allowed_roots: list[str], send=None):
        self.allowed = tuple(ALLOWED_READ) + tuple(allowed_roots)
        # the import system lists sys.path's folders themselves (not what is below them)
        self.path_dirs = {p.rstrip("/") for p in sys.path if p.startswith("/")}
        self.send = send
        self.sent = 0
        self.cell = None
        self.block_spawn = False
        self.restoring = False  # the harness itself clearing a hook
        self.spawn_allowed: tuple[str, ...] = ()
        # the one fork a test may make: assignment 3's loop in a process the graders kill
        self.fork_code = killed._fork.__code__

    def visible(self, path: str) -> bool:
        """A path the sandbox shows: under its own roots, or present and readable (the
        system's files); a course file, another submission or the gradebook is neither."""
        if path.startswith(self.allowed) or path.rstrip("/") in self.path_dirs:
            return True
        # /tmp is the sandbox's own tmpfs: a file in a folder it does not have was never
        # shown (a grader's course under /tmp, say); new files in its folders are fine
        return path.startswith("/tmp/") and os.path.isdir(os.path.dirname(path))

    def add(self, kind: str, detail: str) -> None:
        if self.sent < 200 and self.send is not None:
            self.sent += 1
            self.send({"kind": kind, "cell": self.cell, "detail": detail[:300]})

    def hook(self, event: str, args: tuple) -> None:
        if event in ("open", "os.listdir", "os.scandir"):
            path = args[0] if args else None
            if isinstance(path, bytes):
                path = os.fsdecode(path)
            if isinstance(path, str) and path.startswith("/") and not self.visible(path):
                self.add("file outside sandbox", f"{event} {path!r}")
        elif event in ("os.remove", "os.rmdir", "os.rename", "shutil.rmtree", "os.truncate",
                       "os.chmod", "os.chown"):
            path = args[0] if args else None
            if isinstance(path, bytes):
                path = os.fsdecode(path)
            if isinstance(path, str) and not os.path.abspath(path).startswith(WRITABLE):
                self.add("file outside sandbox", f"{event} {path!r}")
        elif event in ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
                       "os.fork", "os.forkpty"):
            if event == "os.fork" and sys._getframe(1).f_code is self.fork_code:
                return  # killed.run_killed: its child reports through the parent (see main)
            program = str(args[0]) if args and not isinstance(args[0], int) else ""
            if self.spawn_allowed and program.startswith(self.spawn_allowed):
                return  # Spark's launcher, started by the harness's own cells
            self.add("process", f"{event} {args[:2]!r}")
            if self.block_spawn:
                raise PermissionError(f"the grading sandbox does not allow {event} here")
        elif event == "socket.connect":
            address = args[1]
            host = address[0] if isinstance(address, tuple) else str(address)
            if host not in ("127.0.0.1", "localhost", "::1", "0.0.0.0"):
                self.add("network", f"connect {address!r}")
        elif event in ("sys.settrace", "sys.setprofile", "sys.addaudithook"):
            # (Python gives these events no arguments.) Once the setup has run, a hook would
            # run the student's code inside the harness's own helpers, between the kill of a
            # loop's process and the result: refused.
            if self.block_spawn and not self.restoring:
                self.add("harness tampering", f"{event} refused")
                raise PermissionError(f"the grading sandbox does not allow {event} here")
            if event != "sys.addaudithook" and not self.restoring:
                self.add("introspection", event)
        elif event in ("gc.get_objects", "gc.get_referrers", "gc.get_referents",
                       "sys._current_frames"):
            # Recorded, not refused: no expected value or verdict is in this process to find.
            self.add("introspection", f"{event}")


class CellTimeout(BaseException):
    pass


def _on_alarm(signum, frame):
    raise CellTimeout("the cell ran longer than its time limit")


def _error(exc: BaseException) -> dict:
    return {"ename": type(exc).__name__, "evalue": str(exc)[:2000],
            "traceback": "".join(traceback.format_exception(exc))[-4000:]}


class Capture:
    """sys.stdout and sys.stderr of one cell, as text."""

    def __enter__(self):
        self.out, self.err = io.StringIO(), io.StringIO()
        self.saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = self.out, self.err
        return self

    def __exit__(self, *exc):
        sys.stdout, sys.stderr = self.saved
        return False

    def text(self, limit: int = 20_000) -> tuple[str, str]:
        return self.out.getvalue()[:limit], self.err.getvalue()[:limit]


# -- snapshots: what setup made, restored before each test -------------------------------------

def _module_state(prefixes: tuple[str, ...]) -> dict:
    state = {}
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith(prefixes):
            continue
        # Functions, classes and modules only: patching is about behaviour, while a module's
        # data (caches, counters) may change legitimately as the harness runs.
        attrs = {k: v for k, v in vars(module).items() if _behaviour(v)}
        state[name] = (module, attrs, _deep_state(attrs.values()))
    return state


def _behaviour(value) -> bool:
    return isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type,
                              types.ModuleType, types.MethodType))


def _deep_state(values) -> list:
    """Functions' code and defaults, classes' dicts: what `f.__code__ = ...` or
    `Cluster.producer = ...` would change without rebinding a module attribute."""
    out = []
    for value in values:
        if isinstance(value, types.FunctionType):
            out.append((value, value.__code__, value.__defaults__, value.__kwdefaults__))
        elif isinstance(value, type) and value.__module__ != "builtins":
            out.append((value, dict(value.__dict__)))
    return out


# Set on a class by Python itself when an instance is first copied or pickled (copyreg).
_LAZY_CLASS_ATTRS = {"__slotnames__"}


def _class_changed(cls: type, attrs: dict) -> bool:
    """A class's dict differs from `attrs`: an entry replaced, or one added, which shadows
    what the class inherits (`Cluster.producer = ...` where `producer` is a base's)."""
    now = cls.__dict__
    return (any(now.get(k) is not v for k, v in attrs.items())
            or bool(set(now) - set(attrs) - _LAZY_CLASS_ATTRS))


def _restore_deep(saved: list) -> list[str]:
    changed = []
    for entry in saved:
        if len(entry) == 4:
            fn, code, defaults, kwdefaults = entry
            if fn.__code__ is not code or fn.__defaults__ is not defaults:
                changed.append(f"{fn.__module__}.{fn.__qualname__}")
                fn.__code__, fn.__defaults__, fn.__kwdefaults__ = code, defaults, kwdefaults
        else:
            cls, attrs = entry
            now = cls.__dict__
            if _class_changed(cls, attrs):
                changed.append(f"{cls.__module__}.{cls.__qualname__}")
                for k in set(now) - set(attrs):
                    if k not in ("__dict__", "__weakref__"):
                        with contextlib.suppress(AttributeError, TypeError):
                            delattr(cls, k)
                for k, v in attrs.items():
                    if now.get(k) is not v and k not in ("__dict__", "__weakref__", "__doc__"):
                        with contextlib.suppress(AttributeError, TypeError):
                            setattr(cls, k, v)
    return changed


class Snapshot:
    def __init__(self, ns: dict, watched: tuple[str, ...]):
        self.ns = ns
        self.names = {k: v for k, v in ns.items() if not k.startswith("_") and k not in IPYTHON_NAMES}
        self.ns_deep = _deep_state(self.names.values())
        self.watched = watched
        self.modules = _module_state(watched)
        self.builtins = dict(vars(builtins))
        self.path_hooks = (list(sys.meta_path), list(sys.path_hooks))

    def changes(self) -> list[str]:
        """What differs from the snapshot, without restoring it."""
        out = [f"harness name {k!r} rebound" for k, v in self.names.items()
               if self.ns.get(k, _MISSING) is not v]
        for name, (module, attrs, _) in self.modules.items():
            now = vars(module)
            out += [f"{name}.{k} changed" for k, v in attrs.items() if now.get(k, _MISSING) is not v]
        out += [f"builtins.{k} changed" for k, v in self.builtins.items()
                if vars(builtins).get(k, _MISSING) is not v]
        for deep in [self.ns_deep] + [m[2] for m in self.modules.values()]:
            for entry in deep:
                if len(entry) == 4 and entry[0].__code__ is not entry[1]:
                    out.append(f"code of {entry[0].__qualname__} replaced")
                elif len(entry) == 2 and _class_changed(*entry):
                    out.append(f"class {entry[0].__qualname__} patched")
        return out

    def restore(self) -> list[str]:
        changed = self.changes()
        for k, v in self.names.items():
            self.ns[k] = v
        for name, (module, attrs, deep) in self.modules.items():
            sys.modules[name] = module
            vars(module).update(attrs)
            _restore_deep(deep)
        _restore_deep(self.ns_deep)
        b = vars(builtins)
        for k in set(b) - set(self.builtins):
            del b[k]
        b.update(self.builtins)
        sys.meta_path[:], sys.path_hooks[:] = self.path_hooks
        return changed


def _hooks() -> dict:
    """What makes the student's code run inside the harness's helpers at a moment of its
    choosing: signal handlers and their timers, gc callbacks, trace and profile functions."""
    out = {f"signal {s.name}": signal.getsignal(s) for s in signal.Signals
           if s not in (signal.SIGKILL, signal.SIGSTOP)}
    out.update({"gc.callbacks": list(gc.callbacks), "sys.gettrace": sys.gettrace(),
                "sys.getprofile": sys.getprofile(),
                "timer ITIMER_VIRTUAL": signal.getitimer(signal.ITIMER_VIRTUAL),
                "timer ITIMER_PROF": signal.getitimer(signal.ITIMER_PROF)})
    return out


def _restore_hooks(saved: dict, evidence: Evidence) -> list[str]:
    """Put the hooks back as `saved` (after the setup); what had changed."""
    changed = [f"{what} changed" for what, value in _hooks().items() if value != saved[what]]
    for what, value in saved.items():
        if what.startswith("signal ") and signal.getsignal(signal.Signals[what[7:]]) != value:
            with contextlib.suppress(OSError, ValueError, TypeError):
                signal.signal(signal.Signals[what[7:]], value)
    gc.callbacks[:] = saved["gc.callbacks"]
    for timer in (signal.ITIMER_VIRTUAL, signal.ITIMER_PROF):
        signal.setitimer(timer, 0)
    evidence.restoring = True
    try:
        sys.settrace(saved["sys.gettrace"])
        sys.setprofile(saved["sys.getprofile"])
    finally:
        evidence.restoring = False
    return changed


_MISSING = object()
IPYTHON_NAMES = ("In", "Out", "exit", "quit", "get_ipython")


def definitions(source: str) -> ast.Module:
    """Only the def, class and import statements of an answer cell, and assignments to plain
    names (constants, lambdas, compiled patterns the functions use): no bare calls, no
    attribute or item assignments, no loops. What these still run (decorators, default
    values, right-hand sides) cannot outlast the restore that follows them."""
    from IPython.core.inputtransformer2 import TransformerManager
    tree = ast.parse(TransformerManager().transform_cell(source))
    keep = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)

    def kept(node) -> bool:
        if isinstance(node, ast.Assign):
            return all(isinstance(t, ast.Name) for t in node.targets)
        if isinstance(node, ast.AnnAssign):
            return isinstance(node.target, ast.Name) and node.value is not None
        return isinstance(node, keep)
    tree.body = [node for node in tree.body if kept(node)]
    return tree


def os_threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 0


# -- the two phases -----------------------------------------------------------------------------

def _timed(seconds: float):
    signal.setitimer(signal.ITIMER_REAL, max(float(seconds), 0.1))


def _untimed():
    signal.setitimer(signal.ITIMER_REAL, 0)


# -- the worker: the setup and the student's code, one request at a time -------------------------

class Answers:
    """The answers phase in the worker: one cell per request, all in one IPython shell."""

    def __init__(self, start: dict, evidence: Evidence) -> None:
        from IPython.core.interactiveshell import InteractiveShell

        self.shell = InteractiveShell.instance(colors="NoColor")
        self.shell.showtraceback = lambda *a, **k: None  # errors are reported as data below
        self.shell.showsyntaxerror = lambda *a, **k: None
        self.watched = tuple(start.get("watched_modules", ["minikafka"]))
        self.evidence = evidence
        self.snapshot: Snapshot | None = None
        self.transformers: list | None = None
        self.reported: set = set()

    def cell(self, request: dict) -> dict:
        cell, shell, evidence = request["cell"], self.shell, self.evidence
        evidence.cell = cell["id"]
        if cell["kind"] == "answer" and self.snapshot is None:
            self.snapshot = Snapshot(shell.user_ns, self.watched)
            self.transformers = [list(shell.input_transformers_cleanup),
                                 list(shell.input_transformers_post), list(shell.ast_transformers)]
        record = {"status": "ok"}
        with Capture() as cap:
            try:
                _timed(cell["timeout"])
                result = shell.run_cell(cell["source"], store_history=False)
                _untimed()
                exc = result.error_in_exec or result.error_before_exec
                if exc is not None:
                    timeout = isinstance(exc, CellTimeout)
                    record.update(status="timeout" if timeout else "error", **_error(exc))
            except CellTimeout as exc:
                record.update(status="timeout", **_error(exc))
            finally:
                _untimed()
        record["stdout"], record["stderr"] = cap.text()
        if cell["kind"] == "answer" and self.snapshot is not None:
            for what in self.snapshot.changes():
                if what not in self.reported:
                    self.reported.add(what)
                    evidence.add("harness tampering", what)
            now = [shell.input_transformers_cleanup, shell.input_transformers_post,
                   shell.ast_transformers]
            for before, after, name in zip(self.transformers, now,
                                           ("input_transformers_cleanup",
                                            "input_transformers_post", "ast_transformers")):
                for t in after:
                    if t not in before and id(t) not in self.reported:
                        self.reported.add(id(t))
                        evidence.add("input transformer", f"{name} += {t!r:.120}")
        evidence.cell = None
        return record

    def values(self, request: dict) -> dict:
        harness = self.snapshot.names if self.snapshot else {}
        values, skipped = {}, {}
        for name, value in list(self.shell.user_ns.items()):
            if name.startswith("_") or name in IPYTHON_NAMES or harness.get(name, _MISSING) is value:
                continue
            if isinstance(value, (types.FunctionType, type, types.ModuleType)):
                continue
            try:
                values[name] = encode(value)
            except NotPlain as exc:
                skipped[name] = str(exc)
            except RecursionError:
                skipped[name] = "too deeply nested"
        return {"values": values, "skipped": skipped}


class Calls:
    """The calls phase in the worker: the setup cells, only the definitions of the answer
    cells, the answers' plain values; then one call per request with the harness put back as
    setup left it. Results go back as plain data; no test code, hidden test, expected value,
    or call not yet asked is in this process."""

    def __init__(self, start: dict, evidence: Evidence) -> None:
        from IPython.core.inputtransformer2 import TransformerManager

        self.evidence = evidence
        ns: dict = {"__name__": "__main__", "__builtins__": builtins}
        for cell in start["setup"]:
            evidence.cell = cell["id"]
            _timed(cell["timeout"])
            try:
                exec(compile(TransformerManager().transform_cell(cell["source"]), cell["id"],
                             "exec"), ns)
            finally:
                _untimed()
        watched = tuple(start.get("watched_modules", ["minikafka"]))
        self.snapshot = snapshot = Snapshot(ns, watched)
        self.hooks = _hooks()
        evidence.block_spawn = True
        threads = os_threads()
        self.definitions = []
        for cell in start["answers"]:
            evidence.cell = cell["id"]
            try:
                exec(compile(definitions(cell["source"]), cell["id"], "exec"), ns)
            except Exception as exc:
                self.definitions.append({"id": cell["id"], **_error(exc)})
        evidence.cell = None
        if os_threads() > threads:
            # A thread could keep changing the harness while the calls run: none runs.
            evidence.add("harness tampering", "the answers' definitions started a thread")
            raise RuntimeError("the answers' definitions started a thread; no test can be trusted")
        # A definition that shadows a harness name, or a decorator that patched minikafka
        # while the definitions ran, is undone here; the student's own new names stay.
        for what in snapshot.restore():
            evidence.add("harness tampering", f"definitions: {what}")
        gc.collect()  # a finalizer the definitions left to the collector runs now, not in a call
        for what in _restore_hooks(self.hooks, evidence):
            evidence.add("harness tampering", f"definitions: {what}")
        for name, data in start["values"].items():
            if name not in snapshot.names:
                with contextlib.suppress(NotPlain):
                    ns[name] = decode(data)
        self.ns = ns
        # Before the first call: a killed loop's process is forked from this spawner, whose
        # memory never holds a call's arguments (a crash point and its count among them).
        killed.start_spawner(ns)

    def call(self, call: dict) -> dict:
        self.evidence.cell = call["cell"]
        for what in self.snapshot.restore() + _restore_hooks(self.hooks, self.evidence):
            self.evidence.add("harness tampering", f"during tests: {what}")
        record = {"status": "ok"}
        with Capture() as cap:
            try:
                fn = self.ns.get(call["fn"])
                if not callable(fn):
                    raise NameError(f"{call['fn']!r} is not defined")
                args, kwargs = decode(call["args"]), decode(call["kwargs"])
                _timed(call["timeout"])
                result = fn(*args, **kwargs)
                _untimed()
                record["value"] = encode(result)
            except CellTimeout as exc:
                record.update(status="timeout", **_error(exc))
            except RecursionError:
                record.update(status="error", ename="NotPlain", evalue="too deeply nested")
            except BaseException as exc:
                record.update(status="error", **_error(exc))
            finally:
                _untimed()
        record["stdout"], record["stderr"] = cap.text(4000)
        return record


def serve(sock: socket.socket) -> None:
    """The worker's loop: a request from the main process, the reply, the next request.
    Its audit events go to the main process on the same socket as they happen."""
    evidence, phase = None, None
    while True:
        data = killed._recv(sock)
        if data is None:
            os._exit(0)  # the main process is gone
        seq, request = json.loads(data)
        try:
            if request["do"] == "start":
                evidence = Evidence(request.get("allowed_roots", []),
                                    lambda item: killed.to_parent("evidence", item))
                evidence.spawn_allowed = tuple(request.get("spawn_allowed", []))
                sys.addaudithook(evidence.hook)
                phase = (Answers if request["phase"] == "answers" else Calls)(request, evidence)
                reply = {"definitions": getattr(phase, "definitions", [])}
            elif request["do"] == "end":
                reply = {}
            else:
                reply = getattr(phase, request["do"])(request)
        except BaseException as exc:
            reply = {"crash": _error(exc)}
        try:
            frame = json.dumps(["reply", seq, reply]).encode()
        except (TypeError, ValueError) as exc:
            frame = json.dumps(["reply", seq, {"crash": _error(exc)}]).encode()
        killed._send(sock, frame)
        if request["do"] == "end":
            os._exit(0)


def worker(sock: socket.socket) -> None:
    """The process that runs the setup and the student's code. It never holds the token,
    the result channel or a call the main process has not asked yet."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", buffering=0), write_through=True)
    sys.stderr = sys.stdout
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        # A replacement worker is a new interpreter, dumpable again: not so, or a loop's
        # process could read the crash point from this one's memory in /proc.
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    killed._to_parent = sock
    # a killed loop's events (killed.run_killed, in this process) go the same way
    killed.evidence_sink = lambda item: killed.to_parent("evidence", item)

    def in_child() -> None:
        # A forked child never writes to the main process: a killed loop reports to this
        # process (killed.run_killed), any other child's events go nowhere. Detached, so a
        # grandchild (forked by the spawner) does not close that number again, reused by then.
        fd = sock.detach()
        if fd >= 0:
            os.close(fd)
        killed._to_parent = None
    os.register_at_fork(after_in_child=in_child)
    signal.signal(signal.SIGALRM, _on_alarm)
    try:
        serve(sock)
    finally:
        os._exit(0)


# -- the main process: token, channel, the job, the clock and every verdict on the worker --------

TIME_SLACK = 2.0   # seconds past a limit before the worker is killed: its own alarm comes first
START_S = 120.0    # the worker's imports, beyond its setup cells' own limits
MAX_EVIDENCE = 200
MAX_PER_KIND = 20  # so one flood (the same tampering in a loop) cannot hide other findings


class Stopped(Exception):
    """The worker gave no acceptable reply: `status` (timeout or error) and why."""

    def __init__(self, status: str, why: str) -> None:
        super().__init__(why)
        self.status, self.why = status, why


class OverLimit(Exception):
    pass


class Supervisor:
    """The worker as the main process sees it: one request at a time, each timed here; a
    reply counts only when it answers the request just made. A reply to a request not made
    yet, a second reply to one, or unreadable framing is a finding, and that request fails.
    A worker that ran out of time or died is killed and replaced for the next request."""

    def __init__(self, emit, job: dict, pid: int, sock: socket.socket) -> None:
        self.emit, self.pid, self.sock = emit, pid, sock
        limits = job.get("limits", {})
        self.max_frame = int(limits.get("record", 4096 * 1024))
        self.max_total = int(limits.get("output", 32 * 2**20))
        self.total = self.seq = 0
        self.cell: str | None = None
        self.forged: set[int] = set()
        self.listed: set[tuple] = set()
        self.per_kind: dict[str, int] = {}
        self.left_out: dict[str, int] = {}  # kind -> findings not listed (repeats, over a cap)

    def finding(self, kind: str, detail: str, cell=None) -> None:
        """One finding for the report, listed once: a repeat, or one past its kind's cap or
        the sandbox's, is only counted, and report_left_out gives the counts at the end."""
        item = {"kind": kind, "cell": self.cell or cell, "detail": detail[:300]}
        key = (item["kind"], item["cell"], item["detail"])
        if key in self.listed or self.per_kind.get(kind, 0) >= MAX_PER_KIND \
                or len(self.listed) >= MAX_EVIDENCE:
            if kind in self.left_out or len(self.left_out) < MAX_EVIDENCE:
                self.left_out[kind] = self.left_out.get(kind, 0) + 1
            return
        self.listed.add(key)
        self.per_kind[kind] = self.per_kind.get(kind, 0) + 1
        self.emit("evidence", items=[item])

    def report_left_out(self) -> None:
        """One line per kind of finding that was counted but not listed."""
        if self.left_out:
            self.emit("evidence", items=[
                {"kind": kind, "cell": None,
                 "detail": f"{n} more finding(s) of this kind not listed (repeats, or past "
                           f"the {MAX_PER_KIND} listed per kind or {MAX_EVIDENCE} per sandbox)"}
                for kind, n in self.left_out.items()])

    def start(self, request: dict, seconds: float) -> dict:
        if self.pid is None:
            self._spawn()
        return self.ask(request, seconds)

    def _spawn(self) -> None:
        """A fresh worker after one was killed: a new interpreter (a fork of this process
        would copy the token), given its end of a new socket as stdin."""
        ours, theirs = socket.socketpair()
        proc = subprocess.Popen([sys.executable, os.path.abspath(sys.argv[0]), "--worker"],
                                stdin=theirs, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, close_fds=True)
        theirs.close()
        self.pid, self.sock = proc.pid, ours

    def ask(self, request: dict, seconds: float) -> dict:
        self.seq += 1
        deadline = time.monotonic() + seconds
        try:
            killed._send(self.sock, json.dumps([self.seq, request]).encode())
        except OSError:
            raise self._died() from None
        while True:
            frame = self._frame(deadline)
            if frame[0] == "evidence" and len(frame) == 2 and isinstance(frame[1], dict):
                item = frame[1]
                self.finding(str(item.get("kind", ""))[:60], str(item.get("detail", "")),
                             cell=item.get("cell") if isinstance(item.get("cell"), str) else None)
                continue
            if frame[0] == "reply" and len(frame) == 3 and frame[1] == self.seq \
                    and isinstance(frame[2], dict):
                return frame[2]
            if frame[0] == "reply" and len(frame) == 3 and type(frame[1]) is int \
                    and 0 < frame[1] < self.seq:
                self.forged.add(frame[1])  # a second reply to an earlier request
                self.finding("harness tampering", "the student's process sent a second "
                             f"result for an earlier call ({frame[1]})")
                continue
            self.forged.add(self.seq)
            self.finding("harness tampering", f"the student's process sent a record it was "
                         f"not asked for: {json.dumps(frame)[:200]}")
            self.kill()
            raise Stopped("error", "the call's process sent a result it was not asked for")

    def _frame(self, deadline: float) -> list:
        try:
            head = killed._exactly(self.sock, killed._HEADER.size, deadline)
            if head is None:
                raise self._died()
            (size,) = killed._HEADER.unpack(head)
            self.total += size + len(head)
            if size > self.max_frame and killed._exactly(self.sock, 1, deadline) == b"[":
                raise OverLimit(f"one result of the submission is larger than "
                                f"{self.max_frame >> 10} KB (result size limit)")
            if self.total > self.max_total or size > self.max_frame:  # not a frame: a flood
                raise OverLimit(f"the submission sent more than {self.max_total >> 20} MB back "
                                "to the grader (output limit)")
            body = killed._exactly(self.sock, size, deadline)
            if body is None:
                raise self._died()
        except TimeoutError:
            self.kill()
            raise Stopped("timeout", "the cell ran longer than its time limit") from None
        except OSError:
            raise self._died() from None
        try:
            frame = json.loads(body)
        except ValueError:
            frame = None
        if type(frame) is not list or not frame:
            self.forged.add(self.seq)
            self.finding("harness tampering", "the student's process wrote something "
                         "unreadable to the harness")
            self.kill()
            raise Stopped("error", "the call's process sent something unreadable")
        return frame

    def _died(self) -> Stopped:
        status = self.kill()
        if os.WIFSIGNALED(status):
            name = signal.Signals(os.WTERMSIG(status)).name
            hint = {"SIGXCPU": " (CPU time limit)", "SIGKILL": " (killed: memory limit)",
                    "SIGSEGV": " (crashed)"}.get(name, "")
            return Stopped("error", f"the process running the code died of {name}{hint}")
        return Stopped("error", "the process running the code exited during the call "
                       f"(exit status {os.WEXITSTATUS(status) if os.WIFEXITED(status) else '?'})")

    def kill(self) -> int:
        """End the worker (by its pid); its exit status."""
        if self.pid is None:
            return 0
        pid, self.pid = self.pid, None
        with contextlib.suppress(OSError):
            self.sock.close()
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        try:
            return os.waitpid(pid, 0)[1]
        except ChildProcessError:
            return 0


def _text(value, limit: int) -> str:
    return value[:limit] if isinstance(value, str) else ""


def _outcome(got: dict, statuses=("ok", "error", "timeout")) -> dict:
    """The fields of the worker's reply that a record carries, as what they should be."""
    out = {"status": got.get("status") if got.get("status") in statuses else "error"}
    for key, limit in (("ename", 200), ("evalue", 2000), ("traceback", 4000),
                       ("stdout", 20_000), ("stderr", 20_000)):
        if key in got:
            out[key] = _text(got[key], limit)
    if "value" in got:
        out["value"] = got["value"]
    return out


def _start(job: dict, phase: str) -> dict:
    keys = ("watched_modules", "spawn_allowed", "allowed_roots", "setup", "answers", "values")
    return {"do": "start", "phase": phase, **{k: job[k] for k in keys if k in job}}


def supervise_answers(sv: Supervisor, job: dict) -> None:
    got = sv.start(_start(job, "answers"), START_S)
    if "crash" in got:
        return sv.emit("crash", **_outcome(got["crash"]))
    cells = job["cells"]
    for n, cell in enumerate(cells):
        sv.cell = cell["id"]
        record = {"id": cell["id"], "role": cell["kind"]}
        try:
            record.update(_outcome(sv.ask({"do": "cell", "cell": cell},
                                          cell["timeout"] + TIME_SLACK)))
        except Stopped as stop:
            # the shell is gone with its process: the later cells cannot run
            sv.emit("cell", **record, status=stop.status, ename="CellTimeout"
                    if stop.status == "timeout" else "SandboxError", evalue=stop.why)
            for later in cells[n + 1:]:
                sv.emit("cell", id=later["id"], role=later["kind"], status="error",
                        ename="SandboxError", evalue=f"not run: cell {cell['id']}: {stop.why}")
            return sv.emit("values", values={}, skipped={})
        sv.emit("cell", **record)
    sv.cell = None
    got = sv.ask({"do": "values"}, START_S)
    values, skipped = got.get("values"), got.get("skipped")
    sv.emit("values", values=values if isinstance(values, dict) else {},
            skipped=skipped if isinstance(skipped, dict) else {})


def supervise_calls(sv: Supervisor, job: dict) -> None:
    """Each call sent to the worker when its turn comes, timed here against what is left of
    its cell's limit. A call's record leaves only once the worker has answered the next
    request: a second result for it, sent meanwhile, fails it."""
    start = _start(job, "calls")
    start_s = sum(c["timeout"] for c in job["setup"]) + START_S

    def begin() -> None:
        got = sv.start(start, start_s)
        if "crash" in got:
            raise Stopped("error", "{ename}: {evalue}".format(**_outcome(got["crash"])))
        for item in got.get("definitions", []) if isinstance(got.get("definitions"), list) else []:
            if isinstance(item, dict):
                sv.emit("definitions", id=_text(item.get("id"), 100), **_outcome(item))
        sv.emit("ready")  # the grader's clock (sandboxed.py) starts here too

    held: list = []

    def release() -> None:
        for seq, record in held:
            if seq in sv.forged:
                record = {"index": record["index"], "status": "error", "ename": "SandboxError",
                          "evalue": "the call's process sent a second result for it"}
            sv.emit("collected", **record)
        held.clear()

    begin()
    budget = dict(job.get("budgets", {}))  # seconds left per test cell
    for call in job["calls"]:
        sv.cell = call["cell"]
        record, seq = {"index": call["index"]}, 0
        left = budget.get(call["cell"], 30)
        if left <= 0:  # the cell's earlier calls used up its time
            record.update(status="timeout", ename="CellTimeout",
                          evalue="the cell ran longer than its time limit")
        else:
            if sv.pid is None:
                begin()  # a new worker after the last one was killed
            started = time.monotonic()
            try:
                got = sv.ask({"do": "call", "cell": call["cell"], "fn": call["fn"],
                              "args": call["args"], "kwargs": call["kwargs"], "timeout": left},
                             left + TIME_SLACK)
                seq = sv.seq
                record.update(_outcome(got))
            except Stopped as stop:
                record.update(status=stop.status, ename="CellTimeout" if stop.status ==
                              "timeout" else "SandboxError", evalue=stop.why)
            budget[call["cell"]] = left - (time.monotonic() - started)
        release()
        held.append((seq, record))
    sv.cell = None
    if sv.pid is not None:
        with contextlib.suppress(Stopped):
            sv.ask({"do": "end"}, 10)
    release()


def main() -> None:
    if sys.argv[1:] == ["--worker"]:  # a replacement worker: its socket is its stdin
        worker(socket.socket(fileno=os.dup(0)))
    # Not dumpable: no other process of the sandbox's uid (the worker, or a child the
    # submission forked) can open this one's descriptors in /proc, read its memory or
    # ptrace it, so none can write to the channel below, token or not.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    # The worker first, before the token and the job are read: neither is ever in its memory.
    ours, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        ours.close()
        worker(theirs)
    theirs.close()
    token = sys.stdin.readline().strip()
    job = json.loads(sys.stdin.read())
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)

    def emit(kind: str, **data) -> None:
        channel.write(json.dumps({"token": token, "kind": kind, **data}) + "\n")
        channel.flush()

    sv = Supervisor(emit, job, pid, ours)
    try:
        (supervise_answers if job["phase"] == "answers" else supervise_calls)(sv, job)
    except OverLimit as over:
        emit("over_limit", why=str(over))
    except Stopped as stop:
        emit("crash", ename="SandboxError", evalue=stop.why, traceback="")
    except BaseException as exc:
        emit("crash", **_error(exc))
    finally:
        sv.kill()
        sv.report_left_out()
        emit("done")
        channel.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
