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
lines carrying the token on a private copy of stdout, each as it happens: a call's result when
the call returns, each piece of evidence when it is seen. The student's prints are captured per
cell or call; anything written to file descriptors 1 and 2 directly goes nowhere.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import ctypes
import io
import json
import os
import signal
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
        elif event in ("sys.settrace", "sys.setprofile") and args and args[0] is not None:
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
            if any(now.get(k) is not v for k, v in attrs.items()) or set(now) - set(attrs):
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
                elif len(entry) == 2 and any(entry[0].__dict__.get(k) is not v
                                             for k, v in entry[1].items()):
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


def run_answers(job: dict, emit, evidence: Evidence) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance(colors="NoColor")
    shell.showtraceback = lambda *a, **k: None  # errors are reported as data below
    shell.showsyntaxerror = lambda *a, **k: None
    watched = tuple(job.get("watched_modules", ["minikafka"]))
    snapshot = None
    transformers = None
    reported: set = set()
    evidence.spawn_allowed = tuple(job.get("spawn_allowed", []))
    for cell in job["cells"]:
        evidence.cell = cell["id"]
        if cell["kind"] == "answer" and snapshot is None:
            snapshot = Snapshot(shell.user_ns, watched)
            transformers = [list(shell.input_transformers_cleanup),
                            list(shell.input_transformers_post), list(shell.ast_transformers)]
        record = {"id": cell["id"], "role": cell["kind"], "status": "ok"}
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
        if cell["kind"] == "answer" and snapshot is not None:
            for what in snapshot.changes():
                if what not in reported:
                    reported.add(what)
                    evidence.add("harness tampering", what)
            now = [shell.input_transformers_cleanup, shell.input_transformers_post,
                   shell.ast_transformers]
            for before, after, name in zip(transformers, now, ("input_transformers_cleanup",
                                                              "input_transformers_post",
                                                              "ast_transformers")):
                for t in after:
                    if t not in before and id(t) not in reported:
                        reported.add(id(t))
                        evidence.add("input transformer", f"{name} += {t!r:.120}")
        emit("cell", **record)
    evidence.cell = None
    harness = snapshot.names if snapshot else {}
    values, skipped = {}, {}
    for name, value in list(shell.user_ns.items()):
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
    emit("values", values=values, skipped=skipped)


def run_calls(job: dict, emit, evidence: Evidence) -> None:
    """The collections the grader asked for, in a fresh process: the setup cells, only the
    definitions of the answer cells, the answers' plain values, then each call with the
    harness put back as setup left it. Results go back as plain data; no test code, hidden
    test or expected value is in this process."""
    from IPython.core.inputtransformer2 import TransformerManager

    ns: dict = {"__name__": "__main__", "__builtins__": builtins}
    evidence.spawn_allowed = tuple(job.get("spawn_allowed", []))
    for cell in job["setup"]:
        evidence.cell = cell["id"]
        _timed(cell["timeout"])
        try:
            exec(compile(TransformerManager().transform_cell(cell["source"]), cell["id"], "exec"), ns)
        finally:
            _untimed()
    watched = tuple(job.get("watched_modules", ["minikafka"]))
    snapshot = Snapshot(ns, watched)
    evidence.block_spawn = True
    threads = os_threads()
    for cell in job["answers"]:
        evidence.cell = cell["id"]
        try:
            exec(compile(definitions(cell["source"]), cell["id"], "exec"), ns)
        except Exception as exc:
            emit("definitions", id=cell["id"], **_error(exc))
    evidence.cell = None
    if os_threads() > threads:
        # A thread could keep changing the harness while the calls run: none runs.
        evidence.add("harness tampering", "the answers' definitions started a thread")
        raise RuntimeError("the answers' definitions started a thread; no test can be trusted")
    # A definition that shadows a harness name, or a decorator that patched minikafka while
    # the definitions ran, is undone here; the student's own new names stay.
    for what in snapshot.restore():
        evidence.add("harness tampering", f"definitions: {what}")
    for name, data in job["values"].items():
        if name not in snapshot.names:
            with contextlib.suppress(NotPlain):
                ns[name] = decode(data)
    budget = dict(job.get("budgets", {}))  # seconds left per test cell
    emit("ready")  # the grader times each call from here, by when its result arrives
    for call in job["calls"]:
        evidence.cell = call["cell"]
        for what in snapshot.restore():
            evidence.add("harness tampering", f"during tests: {what}")
        record = {"index": call["index"], "status": "ok"}
        left = budget.get(call["cell"], 30)
        if left <= 0:  # the cell's earlier calls used up its time
            record.update(status="timeout", ename="CellTimeout",
                          evalue="the cell ran longer than its time limit")
            emit("collected", **record)
            continue
        started = time.monotonic()
        with Capture() as cap:
            try:
                fn = ns.get(call["fn"])
                if not callable(fn):
                    raise NameError(f"{call['fn']!r} is not defined")
                args, kwargs = decode(call["args"]), decode(call["kwargs"])
                _timed(left)
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
        budget[call["cell"]] = left - (time.monotonic() - started)
        record["stdout"], record["stderr"] = cap.text(4000)
        emit("collected", **record)


def main() -> None:
    token = sys.stdin.readline().strip()
    job = json.loads(sys.stdin.read())
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", buffering=0), write_through=True)
    sys.stderr = sys.stdout

    main_pid = os.getpid()
    # Not dumpable: no other process of the sandbox's uid (a forked child running the
    # student's loop) can open this one's descriptors in /proc or ptrace it, so none can
    # write to the channel below, token or not.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)

    def emit(kind: str, **data) -> None:
        if os.getpid() != main_pid:
            os._exit(0)  # a child the submission forked never reports
        channel.write(json.dumps({"token": token, "kind": kind, **data}) + "\n")
        channel.flush()

    def send_evidence(item: dict) -> None:
        if os.getpid() == main_pid:  # a forked child's events were seen by its parent's fork
            emit("evidence", items=[item])

    evidence = Evidence(job.get("allowed_roots", []), send_evidence)

    def in_child() -> None:
        # A forked child never writes to the channel: its events go to its parent, which
        # reports them (killed.run_killed); any other child's go nowhere.
        with contextlib.suppress(OSError):
            os.close(channel.fileno())
        evidence.send = lambda item: killed.to_parent("evidence", item)
    os.register_at_fork(after_in_child=in_child)
    killed.evidence_sink = send_evidence
    sys.addaudithook(evidence.hook)
    signal.signal(signal.SIGALRM, _on_alarm)
    try:
        (run_answers if job["phase"] == "answers" else run_calls)(job, emit, evidence)
    except BaseException as exc:
        emit("crash", **_error(exc))
    finally:
        emit("done")
        channel.flush()
        os._exit(0)  # Spark's or a student's threads must not keep the sandbox alive


if __name__ == "__main__":
    main()
