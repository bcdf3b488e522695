"""Kafka's own JVM programs (its command-line tools, the Java client) run from the jars that
minikafka.realkafka.jars fetches, started as a student would start them after the course.

A small heap, the serial collector and the C1 compiler start a tool in about a second on two
cores; nothing here runs long enough for the full JIT to pay off.
"""
from __future__ import annotations

import hashlib
import json
import subprocess
import uuid
from collections.abc import Sequence
from pathlib import Path

from minikafka.java import find_java
from minikafka.realkafka import KAFKA_VERSION
from minikafka.realkafka.jars import fetch_kafka

REPO_CACHE = Path(__file__).resolve().parents[2] / ".cache"
JVM_OPTS = ("-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto",
            "-Djava.awt.headless=true")


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
    """One JVM: `java OPTIONS -cp <kafka libs>/* MAIN ARGS`; stdout and stderr kept apart."""
    return subprocess.run([java(), *JVM_OPTS, *options, "-cp", classpath or kafka_classpath(),
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
