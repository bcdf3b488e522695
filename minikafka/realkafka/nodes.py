"""Three Apache Kafka nodes as native JVMs: the Docker cluster of docker/compose.yaml, without Docker.

Each node is a combined broker and controller (`process.roles=broker,controller`) with the
compose file's node id, listener names, cluster id and broker settings. On one machine the
nodes cannot share ports, so where compose gives every container INTERNAL :19092 and
CONTROLLER :29093, node N here takes 19091+N and 29092+N (with the default --port 9092):

    node   EXTERNAL (clients)   INTERNAL (brokers)   CONTROLLER (Raft)
    1      localhost:9092       127.0.0.1:19092      127.0.0.1:29093
    2      localhost:9093       127.0.0.1:19093      127.0.0.1:29094
    3      localhost:9094       127.0.0.1:19094      127.0.0.1:29095

Everything a node has lives in DATA_DIR/node-N: server.properties, data/ (its log dirs,
formatted once with kafka-storage's format), kafka.log (what the JVM printed) and pid. The
directory is the user's: `down` keeps it, deleting it wipes the cluster.

With tiered_storage=True (`minikafka kafka up --tiered-storage`) the nodes run KIP-405's
tiered storage: Kafka's file-system RemoteStorageManager, LocalTieredStorage from
kafka-storage's test jar, keeps the remote tier in DATA_DIR/remote-storage (one store that all
three nodes share, as an object store would be), and the default
TopicBasedRemoteLogMetadataManager keeps the remote log metadata in the topic
__remote_log_metadata, reached over the INTERNAL listener. A topic then opts in with
remote.storage.enable=true.

    cluster = NativeKafka()          # DATA_DIR defaults to the course cache
    cluster.up()                     # returns when all three nodes answer Metadata
    cluster.kill(2); cluster.start(2)
    cluster.down()
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..quiet import kafka_python_quiet
from . import KAFKA_VERSION
from .class_data import class_archive, shared_classes
from .jars import cache_dir, fetch_kafka, fetch_tiered_storage

__all__ = ["BROKER_SETTINGS", "CLUSTER_ID", "DATA_DIR_ENV", "KafkaNodeError", "NativeKafka",
           "NodeStatus", "broker_overrides", "tiered_storage_settings"]

NODE_IDS = (1, 2, 3)
# Where `minikafka kafka up --data-dir` put the nodes, for the labs and `minikafka doctor`.
DATA_DIR_ENV = "MINIKAFKA_KAFKA_DATA_DIR"
# docker/compose.yaml's CLUSTER_ID: both clusters are "the course's cluster".
CLUSTER_ID = "fSYzIKPXRX6X_DKBM3RWfw"

# docker/compose.yaml's x-kafka-env, as server.properties keys (a test keeps them equal).
BROKER_SETTINGS: dict[str, str] = {
    "process.roles": "broker,controller",
    "listener.security.protocol.map": "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
    "inter.broker.listener.name": "INTERNAL",
    "controller.listener.names": "CONTROLLER",
    "offsets.topic.replication.factor": "3",
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "default.replication.factor": "3",
    "min.insync.replicas": "2",
    "group.initial.rebalance.delay.ms": "0",
}

# Only for three JVMs on a small machine: fewer partitions in the internal topics and
# fewer threads start faster; none of it changes what a lab or a client can observe.
FAST_START_SETTINGS: dict[str, str] = {
    "offsets.topic.num.partitions": "3",
    "transaction.state.log.num.partitions": "3",
    "share.coordinator.state.topic.num.partitions": "3",
    "log.cleaner.dedupe.buffer.size": "16777216",
    "num.network.threads": "2",
    "num.io.threads": "2",
    "background.threads": "2",
    "num.recovery.threads.per.data.dir": "1",
}

LOCAL_TIERED_STORAGE = "org.apache.kafka.server.log.remote.storage.LocalTieredStorage"


def tiered_storage_settings(remote_dir: Path | str) -> dict[str, str]:
    """Broker settings (RemoteLogManagerConfig's names) for tiered storage with
    LocalTieredStorage writing the remote tier under REMOTE_DIR/kafka-tiered-storage."""
    return {
        "remote.log.storage.system.enable": "true",
        "remote.log.storage.manager.class.name": LOCAL_TIERED_STORAGE,
        # remote.log.storage.manager.impl.prefix (rsm.config.) + LocalTieredStorage's "dir"
        "rsm.config.dir": str(remote_dir),
        # the metadata manager's clients reach the brokers where the brokers do
        "remote.log.metadata.manager.listener.name": "INTERNAL",
        # __remote_log_metadata: 3 partitions instead of 50 start faster; RF 3 is the default
        "rlmm.config.remote.log.metadata.topic.num.partitions": "3",
        # 2 threads each instead of 10: three JVMs on a small machine
        "remote.log.manager.copier.thread.pool.size": "2",
        "remote.log.manager.expiration.thread.pool.size": "2",
        "remote.log.reader.threads": "2",
    }


# Small heaps, the serial collector and the C1 compiler start a JVM in about a second;
# MINIKAFKA_KAFKA_JVM_OPTS replaces them (a benchmark wants the full JIT). Besides, the
# nodes and the storage format map Kafka's classes from a class-data sharing archive
# (class_data.py), made on the first `up`.
JVM_OPTS = ("-Xms128m -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto "
            "-XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true")

LOG4J2 = """\
# Kafka's INFO lines (started, shut down, elections), everything else at WARN.
status = warn
appender.out.type = Console
appender.out.name = STDOUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.out.ref = STDOUT
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.server.name = org.apache.kafka.server
logger.server.level = INFO
logger.controller.name = org.apache.kafka.controller
logger.controller.level = INFO
"""


# Keys that say which node this is and where it listens: the launcher sets them per node,
# so a course server.properties (written for one node, e.g. docker/server.properties)
# gives the three nodes its broker settings only.
NODE_KEYS = frozenset({
    "node.id", "broker.id", "process.roles", "listeners", "advertised.listeners",
    "listener.security.protocol.map", "inter.broker.listener.name", "controller.listener.names",
    "controller.quorum.voters", "controller.quorum.bootstrap.servers", "log.dirs", "log.dir",
})


FIXED_LISTENERS = ("INTERNAL", "EXTERNAL", "CONTROLLER")


def broker_overrides(settings: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """(the settings the three nodes share, the node-specific keys left out).

    A file whose client listener is secured (SASL_PLAINTEXT, SSL, SASL_SSL: the one
    `minikafka serve` serves) gives its security protocol to the nodes' EXTERNAL listener,
    and its listener.name.<listener>.* keys (JAAS, ssl.*) become listener.name.external.*.
    Each further client listener of the file (an SSL one beside a SASL_SSL one, say) keeps
    its name, protocol and listener.name.* keys; the nodes open it on ports of its own
    (NativeKafka.listener_port). INTERNAL and CONTROLLER stay PLAINTEXT on 127.0.0.1: with
    an authorizer their principal, User:ANONYMOUS, must be a super user, and is made one."""
    shared = {k: v for k, v in settings.items() if k not in NODE_KEYS}
    clients = _client_listeners(settings)
    first, extra = (clients[0], clients[1:]) if clients else (None, [])
    if (first is not None and first[1] != "PLAINTEXT") or extra:
        name, protocol = first
        shared["listener.security.protocol.map"] = ",".join(
            ["INTERNAL:PLAINTEXT", f"EXTERNAL:{protocol}", "CONTROLLER:PLAINTEXT",
             *(f"{n}:{p}" for n, p in extra)])
        prefix = f"listener.name.{name.lower()}."
        for key in [k for k in shared if k.startswith(prefix)]:
            shared["listener.name.external." + key[len(prefix):]] = shared.pop(key)
        if shared.get("authorizer.class.name"):
            supers = [p.strip() for p in shared.get("super.users", "").split(";") if p.strip()]
            if "User:ANONYMOUS" not in supers:
                shared["super.users"] = ";".join([*supers, "User:ANONYMOUS"])
    return shared, sorted(set(settings) - set(shared))


def _client_listeners(settings: Mapping[str, str]) -> list[tuple[str, str]]:
    """(name, protocol) of the file's client listeners: neither a controller listener nor,
    when there is another, the inter-broker one."""
    from ..core.security_config import DEFAULT_PROTOCOL_MAP, parse_listeners
    try:
        listeners = parse_listeners(settings.get("listeners", ""))
    except ValueError:
        return []
    controller = {n.strip().upper() for n in
                  settings.get("controller.listener.names", "CONTROLLER").split(",")}
    inter = settings.get("inter.broker.listener.name", "").strip().upper()
    names = [n for n, _, _ in listeners if n not in controller]
    names = [n for n in names if n != inter] or names
    protocols = dict(DEFAULT_PROTOCOL_MAP)
    for item in settings.get("listener.security.protocol.map", "").split(","):
        key, sep, value = item.partition(":")
        if sep:
            protocols[key.strip().upper()] = value.strip().upper()
    return [(n, protocols.get(n, "PLAINTEXT")) for n in names]


class KafkaNodeError(RuntimeError):
    """A node did not start, stop or answer; the message says which and why."""


@dataclass(frozen=True)
class NodeStatus:
    node_id: int
    running: bool
    pid: int | None
    port: int
    internal_port: int
    controller_port: int


class NativeKafka:
    """The course's three-node KRaft cluster, run from Kafka's jars."""

    def __init__(self, data_dir: str | os.PathLike | None = None, *, port: int | None = None,
                 version: str = KAFKA_VERSION, overrides: Mapping[str, str] | None = None,
                 tiered_storage: bool | None = None):
        self.data_dir = Path(data_dir) if data_dir else cache_dir() / "kafka-cluster"
        self.version = version
        saved = self._saved()
        self.port = port if port is not None else saved.get("port", 9092)
        # Broker settings over BROKER_SETTINGS (a server.properties, --override): kept in
        # cluster.json so `start N` later gives the node the same ones.
        self.overrides = dict(overrides) if overrides is not None else saved.get("overrides", {})
        self.tiered_storage = (tiered_storage if tiered_storage is not None
                               else saved.get("tiered_storage", False))

    # -- addresses -------------------------------------------------------------------------

    def client_port(self, node: int) -> int:
        return self.port + node - 1

    def internal_port(self, node: int) -> int:
        return self.port + 10000 + node - 1

    def controller_port(self, node: int) -> int:
        return self.port + 20001 + node - 1

    def extra_listeners(self) -> list[str]:
        """Client listeners besides EXTERNAL (broker_overrides keeps a file's further ones)."""
        mapping = self.overrides.get("listener.security.protocol.map", "")
        names = [item.partition(":")[0].strip().upper() for item in mapping.split(",") if ":" in item]
        return [n for n in names if n not in FIXED_LISTENERS]

    def listener_port(self, name: str, node: int) -> int:
        """Node N's port on client listener NAME: EXTERNAL's is client_port; the k-th
        further listener's follows it, k blocks of three ports up."""
        if name.upper() == "EXTERNAL":
            return self.client_port(node)
        return self.port + 3 * (self.extra_listeners().index(name.upper()) + 1) + node - 1

    def listener_bootstrap(self, name: str) -> str:
        return ",".join(f"localhost:{self.listener_port(name, n)}" for n in NODE_IDS)

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"localhost:{self.client_port(n)}" for n in NODE_IDS)

    @property
    def remote_storage_dir(self) -> Path:
        """With tiered storage: the remote tier's root (LocalTieredStorage's files)."""
        return self.data_dir / "remote-storage" / "kafka-tiered-storage"

    def node_dir(self, node: int) -> Path:
        _check_node(node)
        return self.data_dir / f"node-{node}"

    def log_path(self, node: int) -> Path:
        return self.node_dir(node) / "kafka.log"

    # -- the whole cluster -----------------------------------------------------------------

    def up(self, *, timeout_s: float = 180) -> float:
        """Start every node that is not running; seconds until all three answered Metadata."""
        libs = fetch_kafka(self.version)
        self._write_configs()
        self._archive(libs)
        started = time.monotonic()
        self._format(libs, [n for n in NODE_IDS if self._pid(n) is None])
        for node in NODE_IDS:
            if self._pid(node) is None:
                self._spawn(libs, node)
        self._wait_ready(NODE_IDS, started + timeout_s)
        return time.monotonic() - started

    def down(self, *, timeout_s: float = 60, kill: bool = False) -> None:
        """Stop every node: SIGTERM to all at once (so the last one does not wait for a
        quorum that is gone), SIGKILL to any still running after timeout_s. kill=True sends
        SIGKILL at once, for a cluster whose data is thrown away next (a test's): a clean
        stop costs the Raft leader 5 s waiting to hand its leadership to nodes stopping too."""
        pids = {n: p for n in NODE_IDS if (p := self._pid(n)) is not None}
        for pid in pids.values():
            _signal(pid, signal.SIGKILL if kill else signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        for node, pid in pids.items():
            if not _wait_exit(pid, deadline):
                _signal(pid, signal.SIGKILL)
                _wait_exit(pid, time.monotonic() + 10)
            self._forget(node)

    # -- one node --------------------------------------------------------------------------

    def stop(self, node: int, *, timeout_s: float = 60) -> None:
        """A clean shutdown (SIGTERM: Kafka moves leadership away first), as `docker compose stop`."""
        pid = self._require_pid(node)
        _signal(pid, signal.SIGTERM)
        if not _wait_exit(pid, time.monotonic() + timeout_s):
            raise KafkaNodeError(f"node {node} (pid {pid}) did not stop within {timeout_s:.0f} s; "
                                 f"`minikafka kafka kill {node}` ends it")
        self._forget(node)

    def kill(self, node: int) -> None:
        """SIGKILL: no shutdown at all, as a crash or `docker compose kill`."""
        pid = self._require_pid(node)
        _signal(pid, signal.SIGKILL)
        _wait_exit(pid, time.monotonic() + 10)
        self._forget(node)

    def start(self, node: int, *, timeout_s: float = 120) -> None:
        """Start one node again (or for the first time) and wait until it answers Metadata."""
        _check_node(node)
        if self._pid(node) is not None:
            return
        libs = fetch_kafka(self.version)
        self._write_configs()
        self._format(libs, [node])
        self._spawn(libs, node)
        self._wait_ready([node], time.monotonic() + timeout_s)

    def status(self) -> list[NodeStatus]:
        return [NodeStatus(n, (pid := self._pid(n)) is not None, pid, self.client_port(n),
                           self.internal_port(n), self.controller_port(n)) for n in NODE_IDS]

    def controller(self, *, timeout_s: float = 10) -> int | None:
        """The active controller: the leader of __cluster_metadata (DescribeQuorum)."""
        running = [s for s in self.status() if s.running]
        if not running:
            return None
        quorum = _ask(f"127.0.0.1:{running[0].internal_port}", "describe_metadata_quorum",
                      timeout_s)
        if quorum is None:
            return None
        return quorum["topics"][0]["partitions"][0]["leader_id"]

    # -- internals -------------------------------------------------------------------------

    def properties(self, node: int) -> dict[str, str]:
        """Node N's server.properties."""
        voters = ",".join(f"{n}@127.0.0.1:{self.controller_port(n)}" for n in NODE_IDS)

        def extra(host: str) -> str:
            return "".join(f",{name}://{host}:{self.listener_port(name, node)}"
                           for name in self.extra_listeners())

        props = {
            "node.id": str(node),
            "controller.quorum.voters": voters,
            "listeners": f"INTERNAL://127.0.0.1:{self.internal_port(node)},"
                         f"EXTERNAL://127.0.0.1:{self.client_port(node)},"
                         f"CONTROLLER://127.0.0.1:{self.controller_port(node)}"
                         + extra("127.0.0.1"),
            "advertised.listeners": f"INTERNAL://127.0.0.1:{self.internal_port(node)},"
                                    f"EXTERNAL://localhost:{self.client_port(node)}"
                                    + extra("localhost"),
            "log.dirs": str(self.node_dir(node) / "data"),
            **BROKER_SETTINGS,
            **FAST_START_SETTINGS,
            **(tiered_storage_settings(self.remote_storage_dir.parent)
               if self.tiered_storage else {}),
            **self.overrides,
        }
        return props

    def _saved(self) -> dict:
        path = self.data_dir / "cluster.json"
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):
            return {}

    def _write_configs(self) -> None:
        saved = self._saved()
        if saved.get("port", self.port) != self.port and any(
                self._pid(n) for n in NODE_IDS):
            raise KafkaNodeError(f"the cluster in {self.data_dir} runs on port {saved['port']}; "
                                 "stop it first (minikafka kafka down)")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        (self.data_dir / "cluster.json").write_text(json.dumps(
            {"port": self.port, "version": self.version, "cluster_id": CLUSTER_ID,
             "overrides": self.overrides, "tiered_storage": self.tiered_storage}) + "\n")
        (self.data_dir / "log4j2.properties").write_text(LOG4J2)
        for node in NODE_IDS:
            self.node_dir(node).mkdir(parents=True, exist_ok=True)
            text = "".join(f"{k}={v}\n" for k, v in self.properties(node).items())
            (self.node_dir(node) / "server.properties").write_text(text)

    def _format(self, libs: Path, nodes: Sequence[int]) -> None:
        """kafka-storage format, once per node (a formatted node has meta.properties); the
        nodes' formats run side by side."""
        todo = [n for n in nodes if not (self.node_dir(n) / "data" / "meta.properties").exists()]
        runs = {n: subprocess.Popen(
            [_java(), "-Xmx256m", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
             *shared_classes(_java(), libs),
             f"-Dlog4j2.configurationFile=file:{self.data_dir / 'log4j2.properties'}",
             "-cp", f"{libs}/*", "kafka.tools.StorageTool", "format",
             "-c", str(self.node_dir(n) / "server.properties"), "-t", CLUSTER_ID],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for n in todo}
        for node, run in runs.items():
            output, _ = run.communicate(timeout=120)
            if run.returncode != 0:
                raise KafkaNodeError(f"kafka-storage format failed for node {node}:\n"
                                     f"{output.strip()[-2000:]}")

    def _spawn(self, libs: Path, node: int) -> None:
        ports = [self.client_port(node), self.internal_port(node), self.controller_port(node),
                 *(self.listener_port(name, node) for name in self.extra_listeners())]
        for port in ports:
            if _port_busy(port):
                raise KafkaNodeError(f"port {port} (node {node}) is taken by another program; "
                                     "stop it, or start the cluster elsewhere with --port")
        opts = os.environ.get("MINIKAFKA_KAFKA_JVM_OPTS", JVM_OPTS).split()
        if "MINIKAFKA_KAFKA_JVM_OPTS" not in os.environ:
            opts += shared_classes(_java(), libs)
        cmd = [_java(), *opts,
               f"-Dlog4j2.configurationFile=file:{self.data_dir / 'log4j2.properties'}",
               f"-Dkafka.logs.dir={self.node_dir(node)}",
               "-cp", self._classpath(libs), "kafka.Kafka",
               str(self.node_dir(node) / "server.properties")]
        log = open(self.log_path(node), "ab")  # noqa: SIM115 (the child keeps it)
        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True,
                                    cwd=self.node_dir(node))
        finally:
            log.close()
        (self.node_dir(node) / "pid").write_text(f"{proc.pid}\n")
        _await_exec(proc.pid)

    def _archive(self, libs: Path) -> Path | None:
        """The class-data archive of these jars, made first if missing (once, ~10 s)."""
        if "MINIKAFKA_KAFKA_JVM_OPTS" in os.environ:
            return None
        return class_archive(_java(), libs, self.data_dir / "log4j2.properties")

    def _classpath(self, libs: Path) -> str:
        """Kafka's jars, and with tiered storage kafka-storage's test jar (LocalTieredStorage)."""
        extra = [f"{fetch_tiered_storage()}/*"] if self.tiered_storage else []
        return os.pathsep.join([f"{libs}/*", *extra])

    def _wait_ready(self, nodes: Sequence[int], deadline: float) -> None:
        waiting = list(nodes)
        while waiting:
            for node in list(waiting):
                if self._pid(node) is None:
                    raise KafkaNodeError(f"node {node} exited while starting; the end of its "
                                         f"log ({self.log_path(node)}):\n{self._tail(node)}")
                # INTERNAL: PLAINTEXT whatever security the client listener has
                if _answers_metadata(self.internal_port(node), set(nodes)):
                    waiting.remove(node)
            if waiting and time.monotonic() > deadline:
                raise KafkaNodeError(f"node(s) {waiting} did not answer Metadata in time; the "
                                     f"end of node {waiting[0]}'s log:\n{self._tail(waiting[0])}")
            if waiting:
                time.sleep(0.25)

    def _tail(self, node: int, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path(node).read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def _pid(self, node: int) -> int | None:
        """The node's pid while its JVM runs (and is this node's kafka.Kafka, not a reused pid)."""
        try:
            pid = int((self.node_dir(node) / "pid").read_text())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            stat = Path(f"/proc/{pid}/stat").read_text()
        except (OSError, ValueError):
            return None
        if stat.rpartition(")")[2].split()[0] == "Z":
            _reap(pid)
            return None
        if not any(cmdline):
            # A live process whose cmdline reads empty: the kernel could not lock its memory
            # map for a moment (a JVM starting up maps memory hard). Still ours and running.
            return pid
        config = str(self.node_dir(node) / "server.properties").encode()
        return pid if b"kafka.Kafka" in cmdline and config in cmdline else None

    def _require_pid(self, node: int) -> int:
        pid = self._pid(node)
        if pid is None:
            raise KafkaNodeError(f"node {node} is not running")
        return pid

    def _forget(self, node: int) -> None:
        (self.node_dir(node) / "pid").unlink(missing_ok=True)


# -- helpers ---------------------------------------------------------------------------------

def _check_node(node: int) -> None:
    if node not in NODE_IDS:
        raise KafkaNodeError(f"no node {node}: the cluster has nodes {', '.join(map(str, NODE_IDS))}")


def _java() -> str:
    from ..java import find_java

    java = find_java()
    if java is None:
        raise KafkaNodeError("Java 17 or newer is needed to run Kafka (java not found; "
                             "./setup.sh installs it where it can)")
    return java


def _await_exec(pid: int, timeout_s: float = 10) -> None:
    """Wait until the child's /proc/PID/cmdline shows its arguments. Popen returns once
    exec has begun, but until the kernel has set the new program's arguments up the file
    reads empty, and `_pid` would take a starting node for gone (seen on a busy machine)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes():
                return
        except OSError:
            return  # already gone: _wait_ready reports it with the node's log
        time.sleep(0.01)


def _port_busy(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


def _reap(pid: int) -> None:
    """Collect a child's exit status (a node started by this process)."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def _alive(pid: int) -> bool:
    _reap(pid)
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def _wait_exit(pid: int, deadline: float) -> bool:
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def _ask(bootstrap: str, method: str, timeout_s: float):
    """One admin call through kafka-python, or None when the node does not answer."""
    from kafka import KafkaAdminClient
    from kafka.errors import KafkaError

    admin = None
    with kafka_python_quiet():
        try:
            admin = KafkaAdminClient(bootstrap_servers=bootstrap,
                                     request_timeout_ms=int(timeout_s * 1000),
                                     client_id="minikafka-kafka")
            return getattr(admin, method)()
        except (KafkaError, OSError, ValueError):
            return None
        finally:
            if admin is not None:
                admin.close()


def _answers_metadata(port: int, brokers: set[int]) -> bool:
    """The node accepts connections and its Metadata lists every one of `brokers` unfenced."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            pass
    except OSError:
        return False
    cluster = _ask(f"localhost:{port}", "describe_cluster", 5)
    if cluster is None:
        return False
    live = {b["broker_id"] for b in cluster["brokers"] if not b.get("is_fenced")}
    return brokers <= live
