"""A class-data sharing archive of Kafka's classes (JDK CDS), made once per Kafka release
and Java runtime, so that every later JVM on Kafka's jars maps them instead of loading,
parsing and verifying each one again.

A Kafka node loads thousands of classes while it starts (the archive holds about 5,300
of Kafka's and its libraries'); on two cores that is most of its start-up. The archive is
a dynamic one (`-XX:ArchiveClassesAtExit`, Java 13 and newer): a throwaway one-node
cluster starts, answers one request and stops, and the JVM writes what it loaded. A JVM
given `-XX:SharedArchiveFile` and the same classpath (or one that extends it) then starts
from it; with any other Java build or jars it is ignored
(`-Xshare:auto`), so a stale archive costs nothing but its own benefit.

    class_archive(java, libs, log4j)    # the archive's path; None when it cannot be made
    shared_classes(java, libs)          # ["-XX:SharedArchiveFile=..."] once it exists
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

__all__ = ["archive_path", "class_archive", "shared_classes"]

# The node's settings: one combined broker and controller, nothing replicated.
ONE_NODE = {"node.id": "1", "process.roles": "broker,controller",
            "controller.listener.names": "CONTROLLER", "inter.broker.listener.name": "INTERNAL",
            "listener.security.protocol.map": "INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "offsets.topic.replication.factor": "1", "offsets.topic.num.partitions": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1", "share.coordinator.state.topic.num.partitions": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "num.network.threads": "1", "num.io.threads": "1", "background.threads": "1"}
CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qg"  # any will do: the cluster lives for a few seconds
BUILD_TIMEOUT_S = 180


def archive_path(java: str, libs: Path) -> Path:
    """Where the archive for this Java runtime (its real path and mtime) and these jars is."""
    runtime = Path(java).resolve()
    key = f"{runtime}|{runtime.stat().st_mtime_ns}|{libs.resolve()}".encode()
    return libs.parent / f"classes-{hashlib.sha256(key).hexdigest()[:12]}.jsa"


def shared_classes(java: str, libs: Path) -> list[str]:
    """The JVM option that maps the archive of LIBS, when one has been made."""
    archive = archive_path(java, libs)
    return [f"-XX:SharedArchiveFile={archive}"] if archive.exists() else []


def class_archive(java: str, libs: Path, log4j: Path) -> Path | None:
    """The archive for Kafka's jars in LIBS, made now if missing (about 10 s, once; the
    lock keeps two processes from making it together). None when it could not be made:
    the nodes then start without it."""
    archive = archive_path(java, libs)
    if archive.exists():
        return archive
    with open(libs.parent / "classes.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not archive.exists():
            with tempfile.TemporaryDirectory(prefix="kafka-cds-") as work:
                _build(java, libs, log4j, Path(work), archive)
    return archive if archive.exists() else None


def _build(java: str, libs: Path, log4j: Path, work: Path, archive: Path) -> None:
    internal, controller = _free_port(), _free_port()
    config = work / "server.properties"
    config.write_text("".join(f"{k}={v}\n" for k, v in {
        **ONE_NODE, "controller.quorum.voters": f"1@127.0.0.1:{controller}",
        "listeners": f"INTERNAL://127.0.0.1:{internal},CONTROLLER://127.0.0.1:{controller}",
        "advertised.listeners": f"INTERNAL://127.0.0.1:{internal}",
        "log.dirs": str(work / "data")}.items()))
    base = [java, "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            f"-Dlog4j2.configurationFile=file:{log4j}", "-cp", f"{libs}/*"]
    formatted = subprocess.run([*base, "kafka.tools.StorageTool", "format", "-c", str(config),
                                "-t", CLUSTER_ID],
                               capture_output=True, timeout=BUILD_TIMEOUT_S)
    if formatted.returncode != 0:
        return
    partial = work / "classes.jsa"
    log = work / "kafka.log"
    with open(log, "wb") as out:
        node = subprocess.Popen([*base[:1], f"-XX:ArchiveClassesAtExit={partial}", *base[1:],
                                 "kafka.Kafka", str(config)],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + BUILD_TIMEOUT_S
        while node.poll() is None and time.monotonic() < deadline:
            if b"Kafka Server started" in log.read_bytes() and _answers(internal):
                break
            time.sleep(0.2)
        node.send_signal(signal.SIGTERM)  # the JVM writes the archive as it exits
        node.wait(BUILD_TIMEOUT_S)
    finally:
        if node.poll() is None:
            node.kill()
            node.wait()
    if partial.exists() and partial.stat().st_size > 0:
        shutil.move(partial, archive)


def _answers(port: int) -> bool:
    """One ApiVersions and Metadata round trip, so request handling is in the archive too."""
    from kafka import KafkaAdminClient
    from kafka.errors import KafkaError

    from ..quiet import kafka_python_quiet

    with kafka_python_quiet(), contextlib.suppress(KafkaError, OSError, ValueError):
        admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{port}", request_timeout_ms=5000)
        try:
            return bool(admin.describe_cluster()["brokers"])
        finally:
            admin.close()
    return False


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
