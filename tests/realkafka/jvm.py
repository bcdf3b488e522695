"""Kafka's own JVM programs (its command-line tools, the Java client) run from the jars that
minikafka.realkafka.jars fetches, started as a student would start them after the course.

A small heap, the serial collector and the C1 compiler start a tool in about a second on two
cores; nothing here runs long enough for the full JIT to pay off. Inside `tools_jvm()`, the
tools `run_java` starts share one warm JVM (tests/java/ToolServer.java) instead, which spends
that second once: MINIKAFKA_FRESH_JVM=1 gives every tool its own JVM again, to compare.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import locale
import os
import socket
import struct
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

from minikafka.java import find_java
from minikafka.realkafka import KAFKA_VERSION
from minikafka.realkafka.class_data import shared_classes
from minikafka.realkafka.jars import fetch_kafka

REPO_CACHE = Path(__file__).resolve().parents[2] / ".cache"
# Kafka 4.4.0's tools that end with System.exit rather than Exit.exit (javap): in the warm
# JVM they would end the JVM itself, so they keep a JVM of their own.
OWN_JVM = frozenset(f"org.apache.kafka.tools.{name}" for name in (
    "VerifiableProducer", "VerifiableConsumer", "VerifiableShareConsumer",
    "ReplicaVerificationTool"))
JVM_OPTS = ("-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto",
            "-Djava.awt.headless=true")


def jvm_options() -> list[str]:
    """JVM_OPTS, and Kafka's class-data archive once a native cluster's start has made it
    (its classpath, Kafka's libs, begins every classpath here)."""
    return [*JVM_OPTS, *shared_classes(java(), fetch_kafka())]


def java() -> str:
    found = find_java()
    if found is None:
        raise RuntimeError("Java 17 or newer is needed (java not found; ./setup.sh installs it)")
    return found


def kafka_classpath(*extra: Path) -> str:
    """Kafka's libs (kafka-clients, kafka-tools, ...) and any compiled classes."""
    return ":".join([f"{fetch_kafka()}/*", *map(str, extra)])


def run_java(main_class: str, *args: str, classpath: str | None = None,
             input: str | None = None, timeout: float = 120,
             options: Sequence[str] = ()) -> subprocess.CompletedProcess:
    """One JVM: `java OPTIONS -cp <kafka libs>/* MAIN ARGS`; stdout and stderr kept apart.
    A tool on Kafka's own classpath runs in the warm JVM of `tools_jvm()` when one is open."""
    if _warm is not None and classpath is None and not options and main_class not in OWN_JVM:
        return _warm.run(main_class, args, input=input, timeout=timeout)
    return subprocess.run([java(), *jvm_options(), *options, "-cp", classpath or kafka_classpath(),
                           main_class, *args],
                          input=input, capture_output=True, text=True, timeout=timeout)


def compile_java(sources: Sequence[Path], *extra: Path) -> Path:
    """The classes of `sources`, compiled with javac against Kafka's libs (and `extra`
    classpath entries) once per content: they are cached under the repository's
    .cache/java-classes/<hash of the sources, the extras and the Kafka release>."""
    digest = hashlib.sha256(KAFKA_VERSION.encode() + "".join(map(str, extra)).encode())
    for source in sorted(sources):
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    out = REPO_CACHE / "java-classes" / digest.hexdigest()[:16]
    stamp = out / ".complete"
    if stamp.exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    javac = str(Path(java()).resolve().parent / "javac")
    done = subprocess.run([javac, "-nowarn", "-d", str(out), "-cp", kafka_classpath(*extra),
                           *map(str, sources)], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"javac failed:\n{done.stdout}{done.stderr}")
    stamp.write_text("\n".join(s.name for s in sources) + "\n")
    return out


def observe(main_class: str, classes: Path, bootstrap: str, prefix: str) -> dict:
    """Run one of tests/java's programs against `bootstrap` with a fresh topic/group prefix;
    it prints one JSON object of observations, returned as a dict."""
    done = run_java(main_class, bootstrap, f"{prefix}-{uuid.uuid4().hex[:8]}",
                    classpath=kafka_classpath(classes), timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    # Log4j's default configuration prints the client's ERROR lines on stdout too.
    [line] = [line for line in done.stdout.splitlines() if line.startswith("{")]
    return json.loads(line)


class ToolTimeout(subprocess.TimeoutExpired):
    """A tool call that did not finish in time; its message shows what the tool printed."""

    def __str__(self) -> str:
        return f"{super().__str__()}\nstdout:\n{self.stdout}\nstderr:\n{self.stderr}"


def _text(data: bytes) -> str:
    # What subprocess.run(text=True) makes of a pipe's bytes: locale encoding, universal newlines.
    return io.TextIOWrapper(io.BytesIO(data)).read()


class ToolsJvm:
    """One JVM running Kafka's tools one call at a time (tests/java/ToolServer.java), each
    answered as subprocess.run answers: exit code, stdout and stderr. The JVM starts on the
    first call and again after a call that timed out (that call's JVM is killed)."""

    def __init__(self, log: BinaryIO) -> None:
        self.process: subprocess.Popen | None = None
        self.connection: socket.socket | None = None
        self.log = log  # the JVM's own stdout and stderr: its start-up errors, if any
        self.lock = threading.Lock()
        self.classes = compile_java([Path(__file__).resolve().parents[1] / "java"
                                     / "ToolServer.java"])

    def start(self) -> None:
        with socket.create_server(("127.0.0.1", 0)) as listener:
            listener.settimeout(1)
            # stdin stays open: the server exits when this process closes it (or dies).
            self.process = subprocess.Popen(
                [java(), *jvm_options(), "-cp", kafka_classpath(self.classes), "ToolServer",
                 str(listener.getsockname()[1])],
                stdin=subprocess.PIPE, stdout=self.log, stderr=self.log)
            deadline = time.monotonic() + 120
            while self.connection is None:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"the tools' JVM did not start:\n{self.server_log()}")
                with contextlib.suppress(TimeoutError):
                    self.connection, _ = listener.accept()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def stop(self) -> None:
        """Close the connection (the server halts on it) and wait for the JVM, by pid."""
        if self.connection is not None:
            self.connection.close()
            self.connection = None
        if self.process is not None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None

    def server_log(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def run(self, main_class: str, args: Sequence[str], input: str | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess:
        with self.lock:
            if self.connection is None:
                self.start()
            frames = [(b"M", main_class.encode()), *((b"A", a.encode()) for a in args),
                      (b"I", (input or "").encode(locale.getpreferredencoding(False))),
                      (b"G", b"")]
            self.connection.sendall(b"".join(k + struct.pack(">i", len(p)) + p
                                             for k, p in frames))
            out, err = bytearray(), bytearray()
            deadline = time.monotonic() + timeout
            try:
                while True:
                    kind, payload = self._frame(deadline)
                    if kind == b"X":
                        code = int(payload)
                        break
                    (out if kind == b"O" else err).extend(payload)
            except (TimeoutError, ConnectionError) as lost:
                self.stop()
                cmd = [main_class, *args]
                if isinstance(lost, TimeoutError):
                    raise ToolTimeout(cmd, timeout, _text(out), _text(err)) from None
                raise RuntimeError(f"the tools' JVM died running {cmd}:\n{_text(out)}"
                                   f"\n{_text(err)}\n{self.server_log()}") from None
        return subprocess.CompletedProcess([main_class, *args], code, _text(out), _text(err))

    def _frame(self, deadline: float) -> tuple[bytes, bytes]:
        head = self._read(5, deadline)
        return head[:1], self._read(struct.unpack(">i", head[1:])[0], deadline)

    def _read(self, size: int, deadline: float) -> bytes:
        data = bytearray()
        while len(data) < size:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            self.connection.settimeout(left)
            chunk = self.connection.recv(size - len(data))
            if not chunk:
                raise ConnectionError("the tools' JVM closed the connection")
            data.extend(chunk)
        return bytes(data)


_warm: ToolsJvm | None = None


@contextlib.contextmanager
def tools_jvm() -> Iterator[ToolsJvm | None]:
    """Kafka's tools run by `run_java` inside this block share one warm JVM, stopped at the
    end (a module fixture opens it). With MINIKAFKA_FRESH_JVM=1, each keeps its own JVM."""
    global _warm
    if os.environ.get("MINIKAFKA_FRESH_JVM") == "1":
        yield None
        return
    with tempfile.TemporaryFile() as log:
        _warm = ToolsJvm(log)
        try:
            yield _warm
        finally:
            _warm.stop()
            _warm = None
