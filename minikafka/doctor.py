"""`minikafka doctor`: does this machine have what the labs need, and if not, what to fix.

Each check returns a Check (ok, warn, fail or skip) with one line of detail and, when
something is wrong, the commands that fix it:

    broker reachable       a TCP connection to a bootstrap server
    advertised listeners   every broker's advertised host:port, dialled from here
    versions               ApiVersions: kafka-python and the broker share a version of
                           every API the labs use
    Java                   a Java 17+ runtime for Spark
    PySpark                pyspark 4 and pyarrow importable
    Spark Kafka source     the JVM connector (a matching spark-sql-kafka jar, in Spark's jars/
                           or fetched from Maven) or minikafka's Python source, and Spark's
                           Python workers can import it
    real Kafka             Apache Kafka's jars for `minikafka kafka up` (the native cluster),
                           and if they are missing how to get real Kafka (Maven or Docker)
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from .java import find_java, java_major

__all__ = ["DEFAULT_BOOTSTRAP", "Check", "check_all", "render"]

DEFAULT_BOOTSTRAP = "localhost:9092,localhost:9093,localhost:9094"
ENV = "KAFKA_BOOTSTRAP_SERVERS"
MIN_JAVA = 17

_START_A_BROKER = ("start one: `minikafka serve` (3 brokers on localhost:9092-9094) in another "
                   "terminal, real Apache Kafka with `minikafka kafka up` (after ./setup.sh "
                   "--real-kafka), or `docker compose -f docker/compose.yaml up -d`")


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # "ok" | "warn" | "fail" | "skip"
    detail: str
    fix: str = ""


def check_all(bootstrap: str | None = None, timeout_s: float = 5.0) -> list[Check]:
    """Every check, in order; broker checks are skipped when no broker answers."""
    env = os.environ.get(ENV, "").strip()
    if bootstrap:
        servers, source = bootstrap, "--bootstrap-server"
    elif env:
        servers, source = env, ENV
    else:
        servers, source = DEFAULT_BOOTSTRAP, None
    reach = check_reachable(servers, source, timeout_s)
    checks = [reach]
    if reach.status == "ok":
        checks += check_cluster(servers, timeout_s)
    else:
        checks += [Check("advertised listeners", "skip", "no broker to ask"),
                   Check("versions", "skip", "no broker to ask")]
    return checks + [check_java(), check_pyspark(), check_spark_source(), check_real_kafka()]


# -- brokers ----------------------------------------------------------------------------------

def _address(server: str) -> tuple[str, int]:
    host, _, port = server.strip().rpartition(":")
    return host.strip("[]") or "localhost", int(port)


def _dial(host: str, port: int, timeout_s: float) -> str | None:
    """None when a TCP connection opens, else why not."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return None
    except OSError as exc:
        return exc.strerror or exc.__class__.__name__


def check_reachable(servers: str, source: str | None, timeout_s: float) -> Check:
    """source: where `servers` came from (None: the default, nobody asked for them)."""
    failures = []
    for server in servers.split(","):
        try:
            host, port = _address(server)
        except ValueError:
            return Check("broker reachable", "fail", f"{server!r} is not host:port",
                         f"write bootstrap servers as host:port[,host:port...], e.g. {DEFAULT_BOOTSTRAP}")
        error = _dial(host, port, timeout_s)
        if error is None:
            return Check("broker reachable", "ok",
                         f"{host}:{port} answers ({source or 'default bootstrap'})")
        failures.append(f"{host}:{port} ({error})")
    if source is None:
        return Check("broker reachable", "warn",
                     f"nothing answers on {', '.join(failures)}; {ENV} is unset, so the labs "
                     "start minikafka's embedded 3-broker server inside the notebook",
                     f"nothing to do for the embedded server. To use a cluster of your own, "
                     f"{_START_A_BROKER}, and set {ENV}")
    return Check("broker reachable", "fail",
                 f"nothing answers on {', '.join(failures)} (from {source})",
                 f"{_START_A_BROKER}; or correct {source} (now {servers!r}); or leave {ENV} "
                 "unset and the labs use the embedded server")


# The requests the labs send, by what needs them.
_LAB_APIS = {
    "MetadataRequest": "everything", "ProduceRequest": "producing", "FetchRequest": "consuming",
    "ListOffsetsRequest": "offsets, Spark", "CreateTopicsRequest": "creating topics",
    "FindCoordinatorRequest": "consumer groups", "JoinGroupRequest": "consumer groups",
    "SyncGroupRequest": "consumer groups", "HeartbeatRequest": "consumer groups",
    "OffsetCommitRequest": "committing offsets", "OffsetFetchRequest": "committed offsets",
}


def check_cluster(servers: str, timeout_s: float) -> list[Check]:
    """Ask the cluster through kafka-python: its brokers' advertised addresses and API versions."""
    import kafka
    from kafka.errors import IncompatibleBrokerVersion, KafkaError
    from kafka.net.compat import KafkaNetClient

    timeout_ms = int(timeout_s * 1000)
    client = KafkaNetClient(bootstrap_servers=servers.split(","), request_timeout_ms=timeout_ms,
                            client_id="minikafka-doctor")
    try:
        client.check_version(timeout_ms=timeout_ms)
        client.poll(future=client.cluster.request_update(), timeout_ms=timeout_ms)
        brokers = sorted(client.cluster.brokers(), key=lambda b: b.node_id)
        versions = client._manager.broker_version_data
    except KafkaError as exc:
        return [Check("advertised listeners", "fail", f"the bootstrap server accepted a TCP "
                      f"connection but no Kafka answer came back: {exc}",
                      "is it a Kafka broker on that port? Check the port numbers (9092-9094 for "
                      "the course's clusters)"),
                Check("versions", "skip", "no Kafka answer")]
    finally:
        client.close()

    unreachable = [f"broker {b.node_id} at {b.host}:{b.port} ({error})" for b in brokers
                   if (error := _dial(b.host, b.port, timeout_s)) is not None]
    listed = ", ".join(f"{b.node_id}={b.host}:{b.port}" for b in brokers)
    if not brokers:
        listeners = Check("advertised listeners", "fail", "the cluster listed no brokers",
                          "wait for the brokers to start (docker compose ps: healthy)")
    elif unreachable:
        listeners = Check(
            "advertised listeners", "fail",
            f"the bootstrap server answers, but clients are sent on to {'; '.join(unreachable)}",
            "this machine cannot reach the addresses the brokers advertise. From your laptop "
            "use bootstrap localhost:9092,localhost:9093,localhost:9094; inside a compose "
            "container use kafka-1:19092,kafka-2:19092,kafka-3:19092 (docker/README.md, "
            "'Connecting')")
    else:
        listeners = Check("advertised listeners", "ok", f"brokers {listed}, all reachable from here")

    missing = []
    chosen = []
    for name, needed_for in _LAB_APIS.items():
        request = _request_class(name)
        try:
            chosen.append(f"{name.removesuffix('Request')} v{versions.api_version(request)}")
        except IncompatibleBrokerVersion:
            key = request.API_KEY
            broker = versions.api_versions.get(key)
            offer = f"v{broker[0]}-v{broker[1]}" if broker else "not at all"
            missing.append(f"{name.removesuffix('Request')} (for {needed_for}: broker offers "
                           f"{offer}, kafka-python {request.min_version}-{request.max_version})")
    broker_version = ".".join(map(str, versions.broker_version or ()))
    head = f"broker looks like Kafka {broker_version or '?'}; kafka-python {kafka.__version__}"
    if missing:
        versions_check = Check("versions", "fail", f"{head}; no common version of "
                               f"{'; '.join(missing)}",
                               "use the course's pinned client (pip install -e . installs "
                               "kafka-python 3.0.12) and a Kafka 4.x broker (the compose "
                               "file's apache/kafka image, or minikafka serve)")
    else:
        versions_check = Check("versions", "ok", f"{head}; agreed on {', '.join(chosen)}")
    return [listeners, versions_check]


def _request_class(name: str):
    import kafka.protocol.admin as admin
    import kafka.protocol.consumer as consumer
    import kafka.protocol.metadata as meta
    import kafka.protocol.producer as producer

    for module in (consumer, producer, meta, admin):
        if hasattr(module, name):
            return getattr(module, name)
    raise LookupError(name)


# -- Java and Spark ------------------------------------------------------------------------------

def check_java() -> Check:
    fix = ("install a Java 17 runtime: Debian/Ubuntu `sudo apt-get install "
           "openjdk-17-jre-headless`, macOS `brew install openjdk@17`, Windows the Temurin 17 "
           "installer; then open a new terminal (or set JAVA_HOME)")
    java = find_java()
    if java is None:
        return Check("Java", "fail", "no `java` on PATH and JAVA_HOME unset: Spark cannot start",
                     fix)
    major = java_major(java)
    if major is None:
        return Check("Java", "fail", f"{java} -version did not say its version", fix)
    if major < MIN_JAVA:
        return Check("Java", "fail", f"{java} is Java {major}; Spark 4 needs {MIN_JAVA} or newer",
                     fix)
    return Check("Java", "ok", f"Java {major} at {java}")


def check_pyspark() -> Check:
    fix = "pip install -e . from the repository root (it installs pyspark[sql] 4.2 and pyarrow)"
    try:
        version = metadata.version("pyspark")
    except metadata.PackageNotFoundError:
        return Check("PySpark", "fail", "pyspark is not installed in this Python "
                     f"({sys.executable})", fix)
    try:
        arrow = metadata.version("pyarrow")
    except metadata.PackageNotFoundError:
        return Check("PySpark", "fail", f"pyspark {version} but no pyarrow", fix)
    if int(version.split(".")[0]) < 4:
        return Check("PySpark", "fail", f"pyspark {version}; the labs need 4.x", fix)
    return Check("PySpark", "ok", f"pyspark {version}, pyarrow {arrow}")


def check_spark_source() -> Check:
    from .spark.connector import ENV as SOURCE_ENV
    from .spark.connector import PYTHON_FORMAT, connector_jars, fetched_connector

    try:
        spark_version = metadata.version("pyspark")
    except metadata.PackageNotFoundError:
        return Check("Spark Kafka source", "skip", "no pyspark")
    forced = os.environ.get(SOURCE_ENV, "auto").strip().lower()
    jars = connector_jars()
    matching = [j for j in jars if j.name.endswith(f"_{_scala()}-{spark_version}.jar")
                or f"-{spark_version}.jar" in j.name]
    if jars and not matching:
        return Check("Spark Kafka source", "fail",
                     f"{jars[0].name} does not match pyspark {spark_version}: Spark would fail "
                     "with NoSuchMethodError or ClassNotFoundException",
                     f"remove {jars[0]} or replace it with spark-sql-kafka-0-10_2.13-"
                     f"{spark_version}.jar (and its dependencies); in Docker rebuild the image: "
                     "docker compose -f docker/compose.yaml build --no-cache jupyter")
    if (matching and forced != "python") or forced == "jvm":
        if not matching:
            return Check("Spark Kafka source", "fail", f'format("kafka") forced by '
                         f"{SOURCE_ENV}=jvm, but Spark's connector is not there",
                         f"fetch it: `minikafka kafka fetch` (needs Maven; ./setup.sh "
                         f"--real-kafka installs Maven and fetches it), or unset {SOURCE_ENV}")
        fetched = fetched_connector()
        where = (f"fetched from Maven into {fetched}, put on spark.jars by spark_session()"
                 if fetched is not None and matching[0].parent == fetched
                 else f"in {matching[0].parent}")
        return Check("Spark Kafka source", "ok",
                     f"format(\"kafka\"): Spark's JVM connector {matching[0].name} ({where})")
    worker = os.environ.get("PYSPARK_PYTHON")
    if worker and Path(worker).resolve() != Path(sys.executable).resolve():
        try:
            probe = subprocess.run([worker, "-c", "import minikafka.spark.source"],
                                   capture_output=True, timeout=60)
            ok = probe.returncode == 0
        except (OSError, subprocess.SubprocessError):
            ok = False
        if not ok:
            return Check("Spark Kafka source", "fail",
                         f"Spark's Python workers run PYSPARK_PYTHON={worker}, which cannot "
                         "import minikafka: every read would fail on the workers",
                         f"unset PYSPARK_PYTHON (the labs then use {sys.executable}), or "
                         "install the course into that Python")
    why = (f"{SOURCE_ENV}=python" if forced == "python" else
           "Spark's connector is not fetched; `minikafka kafka fetch` (needs Maven) gets it")
    return Check("Spark Kafka source", "ok",
                 f'format("{PYTHON_FORMAT}"): minikafka\'s Python source ({why}); '
                 "minikafka.spark.kafka_format(spark) picks it for the labs")


def check_real_kafka() -> Check:
    """Real Apache Kafka without Docker: its jars fetched, and the native cluster if it runs."""
    from .realkafka import KAFKA_VERSION
    from .realkafka.jars import STAMP, kafka_libs
    from .realkafka.nodes import DATA_DIR_ENV, NativeKafka

    cluster = NativeKafka(os.environ.get(DATA_DIR_ENV) or None)
    running = [n.node_id for n in cluster.status() if n.running]
    if running:
        return Check("real Kafka", "ok",
                     f"Apache Kafka {KAFKA_VERSION} runs natively (nodes {running}, data in "
                     f"{cluster.data_dir}): {ENV}={cluster.bootstrap_servers} points the labs "
                     "at it")
    if (kafka_libs().parent / STAMP).exists():
        return Check("real Kafka", "ok",
                     f"Apache Kafka {KAFKA_VERSION}'s jars are fetched; `minikafka kafka up` "
                     "starts three nodes on localhost:9092-9094")
    maven = "" if shutil.which("mvn") else " (Maven is not installed: it installs it)"
    return Check("real Kafka", "warn",
                 f"Apache Kafka {KAFKA_VERSION} is not fetched: the labs run on minikafka, which "
                 "is fine; to try them on the real thing, get it",
                 f"without Docker: ./setup.sh --real-kafka{maven} fetches Kafka's jars and "
                 "Spark's connector from Maven Central, then `minikafka kafka up` and "
                 f"{ENV}={DEFAULT_BOOTSTRAP}; with Docker: docker compose -f "
                 "docker/compose.yaml up -d")


def _scala() -> str:
    return "2.13"  # Spark 4 is built for Scala 2.13 only


# -- output --------------------------------------------------------------------------------------

_MARK = {"ok": "ok", "warn": "WARN", "fail": "FAIL", "skip": "skip"}


def render(checks: Sequence[Check]) -> str:
    width = max(len(c.name) for c in checks)
    lines = []
    for c in checks:
        lines.append(f"  {_MARK[c.status]:<5} {c.name:<{width}}  {c.detail}")
        if c.fix and c.status in ("fail", "warn"):
            lines.append(f"  {'':<5} {'':<{width}}  fix: {c.fix}")
    failed = sum(c.status == "fail" for c in checks)
    lines.append("")
    lines.append("all set for the labs" if not failed else
                 f"{failed} problem{'s' if failed > 1 else ''}: see the fix lines above")
    return "\n".join(lines)
