"""Where a submission's code runs: a throw-away sandbox per phase of each submission.

    bwrap   bubblewrap: new user (when not root), mount, pid, net, ipc and uts namespaces; the
            only files visible are the Python install, the minikafka package, system
            libraries (/usr, /etc) read-only and a small tmpfs as the working directory; no
            network but the sandbox's own loopback; as root the process then drops to an
            unprivileged uid of its own (no account, no files). When the harness exits or the wall time runs out the
            pid namespace dies, and every process the submission started dies with it.
    docker  the same harness in a throw-away container of the labs' image (--network none,
            read-only root, tmpfs working directory, --pids-limit, --memory, --cpus, uid
            nobody); at the wall time the container is killed by its name.
    none    a plain child process with the same limits and harness, no isolation: only for
            an instructor who passes --unsandboxed.

bwrap and none apply the resource limits with setrlimit (CPU seconds, data memory, processes,
file size) and kill the whole process group or namespace at the wall time; docker applies
the same numbers with its own flags.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

HARNESS = Path(__file__).with_name("harness.py")
NOBODY = 65534
UID_BASE, UID_RANGE = 200_000, 100_000  # uids no account uses: one per concurrent sandbox
MODES = ("bwrap", "docker", "none")
# The labs' JupyterLab + PySpark image (docker/jupyter/Dockerfile, built by docker/compose.yaml
# as project "kafka-course", service "jupyter"): the same Python, minikafka and Spark.
DOCKER_IMAGE = os.environ.get("GRADING_DOCKER_IMAGE", "kafka-course-jupyter")
# The engine's client: docker, or podman (the same `run` flags; CI grades under Podman).
DOCKER_CLI = os.environ.get("GRADING_DOCKER", "docker")
DOCKER_ENV = ("TMPDIR", "LANG", "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED", "MPLBACKEND",
              "SPARK_LOCAL_IP", "HADOOP_USER_NAME", "USER", "LOGNAME")


class SandboxUnavailable(RuntimeError):
    pass


@dataclass(frozen=True)
class Limits:
    cpu_s: int = 300          # CPU seconds of each process (RLIMIT_CPU)
    memory_mb: int = 3072     # data segment of each process (RLIMIT_DATA: heap, JVM heap)
    processes: int = 512      # processes and threads of the sandbox's uid (RLIMIT_NPROC)
    file_mb: int = 64         # largest file a process may write (RLIMIT_FSIZE)
    disk_mb: int = 256        # size of the tmpfs working directory and /tmp
    output_mb: int = 32       # all a phase may send back; more and the submission scores 0
    record_kb: int = 4096     # one record (a call's result, the answers' values), framed by a newline


@dataclass
class Outcome:
    """What came back from one sandboxed phase, as plain data."""
    isolation: str
    records: list[dict] = field(default_factory=list)
    returncode: int | None = None
    wall_timeout: bool = False
    seconds: float = 0.0
    problem: str = ""       # why the phase ended early, for the affected cells' reason
    over_limit: str = ""    # which output limit the phase broke: the submission scores 0

    def of(self, kind: str) -> list[dict]:
        return [r for r in self.records if r.get("kind") == kind]

    @property
    def finished(self) -> bool:
        return bool(self.of("done"))


def describe(mode: str, limits: Limits) -> str:
    """One line for the instructor: which isolation and limits were in force."""
    where = {
        "bwrap": "bubblewrap sandbox (user/mount/pid/net namespaces, loopback only, "
                 + ("own unprivileged uid" if os.geteuid() == 0
                    else "unprivileged user namespace")
                 + ", read-only system, tmpfs work dir)",
        "docker": f"docker container of {DOCKER_IMAGE} (--network none, read-only, uid nobody, "
                  "no capabilities)",
        "none": "NO SANDBOX (--unsandboxed): student code runs as the grading user",
    }[mode]
    return (f"{where}; limits: {limits.cpu_s} s CPU, {limits.memory_mb} MB memory, "
            f"{limits.processes} processes, {limits.file_mb} MB per file, {limits.disk_mb} MB disk")


def available(mode: str = "auto") -> str:
    """The isolation to use: `auto` picks bubblewrap when it works here. Raises
    SandboxUnavailable rather than quietly grading without one."""
    if mode == "none":
        return "none"
    if mode in ("auto", "bwrap"):
        if shutil.which("bwrap") and _bwrap_works():
            return "bwrap"
        if mode == "bwrap":
            raise SandboxUnavailable("bubblewrap is not installed or cannot create namespaces "
                                     "here (apt-get install bubblewrap)")
    if mode in ("auto", "docker") and shutil.which(DOCKER_CLI):
        return "docker"
    raise SandboxUnavailable(
        "no sandbox available: install bubblewrap (apt-get install bubblewrap) or Docker, or "
        "pass --unsandboxed to run students' code without isolation")


_BWRAP_OK: bool | None = None


def _bwrap_works() -> bool:
    global _BWRAP_OK
    if _BWRAP_OK is None:
        try:
            probe = subprocess.run(["bwrap", "--unshare-all", "--ro-bind", "/", "/", "true"],
                                   capture_output=True, timeout=20)
            _BWRAP_OK = probe.returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            _BWRAP_OK = False
    return _BWRAP_OK


def _readonly_roots() -> list[str]:
    """What the harness needs to see: this Python (the virtualenv and its base install) and
    the directories the grading process imports minikafka and pyspark from."""
    import minikafka

    roots = {os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix),
             str(Path(minikafka.__file__).resolve().parent)}
    try:
        import pyspark
        roots.add(str(Path(pyspark.__file__).resolve().parent))
    except ImportError:
        pass
    for extra in os.environ.get("GRADING_SANDBOX_READONLY", "").split(os.pathsep):
        if extra:
            roots.add(os.path.realpath(extra))
    cds = os.environ.get("GRADING_SPARK_CDS")
    if cds and os.path.exists(cds):
        roots.add(os.path.realpath(cds))
    # keep the narrowest: a root inside another is already visible
    ordered = sorted(roots, key=len)
    return [r for i, r in enumerate(ordered)
            if not any(r.startswith(o.rstrip("/") + "/") for o in ordered[:i])]


def python_path() -> str:
    import minikafka
    return str(Path(minikafka.__file__).resolve().parent.parent)


def environment(home: str) -> dict[str, str]:
    env = {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin",
                                 "/usr/bin", "/bin"]),
        "HOME": home, "TMPDIR": "/tmp", "LANG": "C.UTF-8", "PYTHONPATH": python_path(),
        "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0", "MPLBACKEND": "Agg",
        "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1",
        "HADOOP_USER_NAME": "student", "USER": "student", "LOGNAME": "student",
    }
    for name in ("JAVA_HOME", "SPARK_HOME", "GRADING_SPARK_CDS"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    return env


def _parents(path: str) -> list[str]:
    parts = Path(path).parts
    return [str(Path(*parts[:i])) for i in range(2, len(parts))]


def sandbox_uid() -> int:
    """An unprivileged uid for the sandbox this grading process runs now. RLIMIT_NPROC counts
    the processes of a uid machine-wide, so sandboxes graded side by side (--jobs) get
    distinct uids: one student's fork bomb cannot stop another's sandbox from starting. A
    grading process runs one sandbox at a time, so its pid makes the uid unique."""
    return UID_BASE + os.getpid() % UID_RANGE


def _account_files(folder: Path, uid: int) -> list[str]:
    """/etc/passwd and /etc/group naming the sandbox uid (home /submission): Java takes its
    user.home from there, and Spark's launcher needs one."""
    binds = []
    for name, line in (("passwd", f"student:x:{uid}:{uid}:student:/submission:/usr/sbin/nologin"),
                       ("group", f"student:x:{uid}:")):
        host = Path("/etc") / name
        text = host.read_text() if host.exists() else ""
        (folder / name).write_text(text.rstrip("\n") + "\n" + line + "\n")
        binds += ["--ro-bind", str(folder / name), str(host)]
    return binds


def bwrap_command(limits: Limits, argv: list[str], account_dir: Path | None = None) -> list[str]:
    cmd = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
           "--unshare-cgroup-try", "--die-with-parent", "--new-session",
           "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for link in ("/bin", "/sbin", "/lib", "/lib32", "/lib64"):
        if os.path.islink(link):
            cmd += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            cmd += ["--ro-bind", link, link]
    size = str(limits.disk_mb * 1024 * 1024)
    # The empty /tmp first: a Python or a course checked out under /tmp (a CI clone) is
    # bound into it below, not hidden by it.
    cmd += ["--perms", "1777", "--size", size, "--tmpfs", "/tmp"]
    made = {"/tmp"}
    for root in _readonly_roots():
        if root.startswith(("/usr/", "/etc/")):
            continue
        for parent in _parents(root):
            if parent not in made:
                made.add(parent)
                cmd += ["--perms", "0755", "--dir", parent]
        cmd += ["--ro-bind", root, root]
    cmd += ["--proc", "/proc", "--dev", "/dev",
            "--perms", "0777", "--size", size, "--tmpfs", "/submission",
            "--chdir", "/submission", "--clearenv"]
    for k, v in environment("/submission").items():
        cmd += ["--setenv", k, v]
    if os.geteuid() == 0:
        # bwrap sets up the mounts with root's rights, then the harness drops to an
        # unprivileged uid of its own (see sandbox_uid).
        uid = sandbox_uid()
        if account_dir is not None:
            cmd += _account_files(account_dir, uid)
        argv = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                "--inh-caps=-all", "--bounding-set=-all", "--", *argv]
    else:
        cmd += ["--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY), "--cap-drop", "ALL"]
    return cmd + ["--", *argv]


def docker_command(limits: Limits, name: str, image: str | None = None,
                   harness: Path = HARNESS) -> list[str]:
    """`docker run` of the harness in a throw-away container of the labs' image: no network
    but the container's own loopback, read-only root, tmpfs working directory and /tmp, an
    unprivileged uid, no capabilities, and the memory, process and CPU limits. The host's
    paths and variables (JAVA_HOME, PYTHONPATH, ...) stay out: the image has its own.
    The tests marked docker run it under Podman (GRADING_DOCKER=podman)."""
    env = environment("/submission")
    cmd = [DOCKER_CLI, "run", "--rm", "-i", "--name", name,
           "--network", "none", "--read-only",
           "--user", f"{NOBODY}:{NOBODY}", "--cap-drop", "ALL",
           "--security-opt", "no-new-privileges",
           "--pids-limit", str(limits.processes),
           "--memory", f"{limits.memory_mb}m", "--memory-swap", f"{limits.memory_mb}m",
           "--cpus", "1", "--ulimit", f"cpu={limits.cpu_s}:{limits.cpu_s}",
           "--ulimit", "core=0",
           # Given any --ulimit, Podman also sets open files and processes to defaults a
           # host may not allow raising to: the grader's own open files (what bwrap's
           # sandbox inherits) and the process limit.
           "--ulimit", "nofile={}:{}".format(*resource.getrlimit(resource.RLIMIT_NOFILE)),
           "--ulimit", f"nproc={limits.processes}:{limits.processes}",
           "--tmpfs", f"/tmp:rw,nosuid,size={limits.disk_mb}m",
           "--tmpfs", f"/submission:rw,exec,nosuid,size={limits.disk_mb}m",
           "-w", "/submission", "-e", "HOME=/submission",
           "-v", f"{harness}:/harness/harness.py:ro"]
    for k in DOCKER_ENV:
        cmd += ["-e", f"{k}={env[k]}"]
    return cmd + [image or DOCKER_IMAGE, "python", "/harness/harness.py"]


def _limit(limits: Limits, isolated: bool):
    def apply() -> None:
        os.setsid()
        mb = 1024 * 1024
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s))
        resource.setrlimit(resource.RLIMIT_DATA, (limits.memory_mb * mb, limits.memory_mb * mb))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_mb * mb, limits.file_mb * mb))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if isolated or os.geteuid() != 0:
            # Counted per real uid: as root the sandbox's own uid (sandbox_uid), otherwise the
            # grading user's, whose processes then share the limit.
            resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
    return apply


def run(mode: str, job: dict, limits: Limits, wall_s: float) -> Outcome:
    """Run the harness on `job` in a fresh sandbox; kill everything it started after
    `wall_s` seconds. Only records that carry this run's token are believed."""
    token = secrets.token_hex(16)
    argv = [sys.executable, str(HARNESS)]
    job = dict(job, allowed_roots=_readonly_roots(),
               limits={"record": limits.record_kb * 1024, "output": limits.output_mb * 2**20})
    outcome = Outcome(isolation=mode)
    container = f"grading-{token[:16]}"
    with tempfile.TemporaryDirectory(prefix="grading-sbx-") as tmp:
        preexec = _limit(limits, mode != "none")
        if mode == "bwrap":
            argv = [sys.executable, "/harness/harness.py"]
            cmd = bwrap_command(limits, argv, Path(tmp))
            cmd[1:1] = ["--perms", "0755", "--dir", "/harness",
                        "--ro-bind", str(HARNESS), "/harness/harness.py"]
        elif mode == "docker":
            # the container has its own limits; the docker client only needs its own session
            cmd, preexec = docker_command(limits, container), os.setsid
        else:
            cmd = argv
        started = time.monotonic()
        env = environment(tmp) if mode == "none" else {"PATH": os.environ.get("PATH", "")}
        proc = subprocess.Popen(cmd, cwd=tmp, env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE,
                                stderr=None if os.environ.get("GRADING_SANDBOX_DEBUG")
                                else subprocess.DEVNULL,
                                preexec_fn=preexec)

        def stop() -> None:
            if mode == "docker":
                # killing the client would leave the container running
                subprocess.run([DOCKER_CLI, "kill", container], capture_output=True, timeout=60)
            _kill_group(proc)
        reader = RecordReader(proc.stdout, token, limits, stop)
        threads = [threading.Thread(target=reader.run, daemon=True),
                   threading.Thread(target=_send, daemon=True, args=(
                       proc.stdin, (token + "\n" + json.dumps(job)).encode()))]
        for thread in threads:
            thread.start()
        try:
            proc.wait(timeout=wall_s)
        except subprocess.TimeoutExpired:
            outcome.wall_timeout = True
            stop()
            proc.wait()
        finally:
            _kill_group(proc)
            threads[0].join(30)
            proc.stdout.close()
        outcome.seconds = time.monotonic() - started
        outcome.returncode = proc.returncode
    outcome.records, outcome.over_limit = reader.records, reader.over_limit
    outcome.problem = _problem(outcome, wall_s)
    return outcome


def _send(stdin, data: bytes) -> None:
    with contextlib.suppress(OSError):  # BrokenPipeError: the sandbox died before reading it
        stdin.write(data)
        stdin.close()


class RecordReader:
    """The records of one phase, read from the sandbox's pipe in bounded chunks as they
    come: one JSON object per line, believed only with this run's token. The whole output
    is never held: past `output_mb` in all or `record_kb` in one line, the sandbox is
    stopped (`stop`) and `over_limit` says why."""

    CHUNK = 64 * 1024

    def __init__(self, stream, token: str, limits: Limits, stop) -> None:
        self.stream, self.token, self.stop = stream, token, stop
        self.max_total, self.max_record = limits.output_mb * 2**20, limits.record_kb * 1024
        self.records: list[dict] = []
        self.over_limit = ""

    def run(self) -> None:
        pending, total, fd = bytearray(), 0, self.stream.fileno()
        while True:
            try:
                chunk = os.read(fd, self.CHUNK)
            except OSError:
                return
            if not chunk:
                return
            total += len(chunk)
            if total > self.max_total:
                return self._over(f"the submission sent more than {self.max_total >> 20} MB "
                                  "back to the grader (output limit)")
            pending += chunk
            while (end := pending.find(b"\n")) >= 0:
                self._take(bytes(pending[:end]))
                del pending[:end + 1]
            if len(pending) > self.max_record:
                return self._too_large()

    def _over(self, why: str) -> None:
        self.over_limit = why
        self.stop()

    def _too_large(self) -> None:
        self._over(f"one result of the submission is larger than {self.max_record >> 10} KB "
                   "(result size limit)")

    def _take(self, line: bytes) -> None:
        if len(line) > self.max_record:
            return self._too_large()
        try:
            record = json.loads(line)
        except ValueError:
            return
        if isinstance(record, dict) and record.pop("token", None) == self.token:
            if record.get("kind") == "over_limit":  # the harness's main process saw it first
                return self._over(str(record.get("why"))[:300])
            record["arrived"] = time.monotonic()  # the grader's clock, not the sandbox's
            self.records.append(record)


def _kill_group(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _problem(outcome: Outcome, wall_s: float) -> str:
    if outcome.over_limit:
        return outcome.over_limit
    if outcome.finished:
        return ""
    if outcome.wall_timeout:
        return f"the submission ran longer than the {wall_s:g} s it was given and was stopped"
    code = outcome.returncode
    if code is not None and code < 0:
        name = signal.Signals(-code).name
        hint = {"SIGXCPU": " (CPU time limit)", "SIGKILL": " (killed: memory or time limit)",
                "SIGXFSZ": " (file size limit)", "SIGSEGV": " (crashed)"}.get(name, "")
        return f"the submission's process died of {name}{hint}"
    return f"the submission's process exited early (exit status {code})"


def outcome_dict(outcome: Outcome) -> dict:
    data = asdict(outcome)
    data.pop("records")
    return data
