"""What the labs share: a cluster to talk to, a Spark session, and their data.

    from minikafka.labs import bootstrap_servers, spark_session
    servers = bootstrap_servers()   # KAFKA_BOOTSTRAP_SERVERS, or an embedded 3-broker cluster

With KAFKA_BOOTSTRAP_SERVERS set (the Docker labs' Jupyter container sets it) the labs
talk to that cluster. Without it, the first call starts minikafka's 3-broker server in
this process, on 127.0.0.1:9092-9094 when those ports are free and on free ports
otherwise, serving real Kafka clients (kafka-python, Spark, kcat) in the background
until the process ends. `embedded_cluster()` gives that Cluster, to stop a broker or
look inside; it is None when the labs run against another cluster.

When KAFKA_BOOTSTRAP_SERVERS names the ports of the native Apache Kafka cluster that
`minikafka kafka up` started on this machine (its data directory: MINIKAFKA_KAFKA_DATA_DIR,
else that command's default), `native_cluster()` gives it, and lab 4 stops, kills and
starts its nodes as `minikafka kafka stop|kill|start N` does. On Docker it asks you to.

The data generators are seeded: the same call gives the same bytes everywhere, so a
lab's numbers can be checked.
"""
from __future__ import annotations

import contextlib
import csv
import json
import math
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from .cluster import Cluster
    from .realkafka.nodes import NativeKafka
    from .wire.serve import ClusterServer

__all__ = ["CHECK_MARK", "CUSTOMERS_ROWS", "TruckPosition", "bars", "bootstrap_servers",
           "checked", "cli", "crash_broker", "customer_rows", "drop_topics", "embedded_cluster",
           "embedded_server", "fresh_topic", "lines", "live_brokers", "native_cluster", "parse_table",
           "partitions_table",
           "resend_batch", "spark_session", "start_broker", "stop_broker", "topic_bytes",
           "truck_positions",
           "work_dir", "write_customers_csv"]

ENV = "KAFKA_BOOTSTRAP_SERVERS"
DATA_DIR_ENV = "MINIKAFKA_KAFKA_DATA_DIR"  # where `minikafka kafka up --data-dir` put the nodes
EMBEDDED_PORT = 9092  # brokers 1-3 on 9092, 9093, 9094, like the Docker cluster
# Like the Docker cluster: three replicas unless a topic asks for fewer.
EMBEDDED_BROKER_CONFIG = {"default.replication.factor": 3, "num.partitions": 3}

_lock = threading.Lock()
_server: ClusterServer | None = None


# -- the cluster ---------------------------------------------------------------------------

def bootstrap_servers() -> str:
    """The cluster the labs use, as "host:port,host:port,..."."""
    configured = os.environ.get(ENV, "").strip()
    if configured:
        return configured
    return embedded_server().bootstrap_servers


def embedded_server() -> ClusterServer:
    """minikafka's 3-broker server in this process, started on first use."""
    global _server
    with _lock:
        if _server is None or not _server.running:
            from .cluster import Cluster

            cluster = Cluster(brokers=3, seed=0, broker_config=EMBEDDED_BROKER_CONFIG)
            try:
                _server = cluster.serve(port=EMBEDDED_PORT, host="127.0.0.1")
            except OSError:  # 9092-9094 taken (another Kafka, another notebook): any free ports
                _server = cluster.serve(port=0, host="127.0.0.1")
        return _server


def embedded_cluster() -> Cluster | None:
    """The embedded cluster when the labs run on it, else None (KAFKA_BOOTSTRAP_SERVERS set)."""
    if os.environ.get(ENV, "").strip():
        return None
    return embedded_server().cluster


def native_cluster() -> NativeKafka | None:
    """The native Apache Kafka cluster (`minikafka kafka up`) when the labs run on it, else None."""
    configured = os.environ.get(ENV, "").strip()
    if not configured:
        return None
    from .realkafka.nodes import NODE_IDS, NativeKafka

    cluster = NativeKafka(os.environ.get(DATA_DIR_ENV) or None)
    if not (cluster.data_dir / "cluster.json").exists():
        return None
    ports = set()
    for server in configured.split(","):
        host, _, port = server.strip().rpartition(":")
        if host.strip("[]") not in ("localhost", "127.0.0.1", "::1") or not port.isdigit():
            return None  # another machine's (or a container's) cluster
        ports.add(int(port))
    return cluster if ports <= {cluster.client_port(n) for n in NODE_IDS} else None


def drop_topics(*names: str, timeout_s: float = 60) -> None:
    """Delete topics left by an earlier run and wait until they are gone (Kafka deletes
    in the background), so a lab can create them again on a cluster that keeps its data."""
    from kafka import KafkaAdminClient
    from kafka.errors import UnknownTopicOrPartitionError

    admin = KafkaAdminClient(bootstrap_servers=bootstrap_servers(), client_id="lab-setup")
    try:
        present = [n for n in names if n in admin.list_topics()]
        if present:
            with contextlib.suppress(UnknownTopicOrPartitionError):  # deleted meanwhile
                admin.delete_topics(present)
        deadline = time.monotonic() + timeout_s
        while set(present) & set(admin.list_topics()):
            if time.monotonic() > deadline:
                raise TimeoutError(f"topics {present} still exist after {timeout_s} s")
            time.sleep(0.3)
    finally:
        admin.close()


def fresh_topic(name: str, partitions: int = 3, replication_factor: int = 3,
                config: dict[str, str] | None = None, *, timeout_s: float = 60) -> None:
    """Create `name` empty (deleting an earlier run's) and wait until every partition
    has a leader."""
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic
    from kafka.errors import TopicAlreadyExistsError

    drop_topics(name, timeout_s=timeout_s)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap_servers(), client_id="lab-setup")
    deadline = time.monotonic() + timeout_s
    try:
        while True:  # "marked for deletion" can outlive the name in the topic list
            try:
                admin.create_topics([NewTopic(name, partitions, replication_factor,
                                              topic_configs=dict(config or {}))])
                break
            except TopicAlreadyExistsError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        while time.monotonic() < deadline:
            parts = admin.describe_topics([name])[0].get("partitions") or []
            if len(parts) == partitions and all(p["leader_id"] >= 0 for p in parts):
                return
            time.sleep(0.2)
        raise TimeoutError(f"topic {name} has no leader for every partition after {timeout_s} s")
    finally:
        admin.close()


def _ask(question: Callable[[Any], Any], *, attempts: int = 20) -> Any:
    """question(admin) with a fresh KafkaAdminClient, again while brokers come and go: a
    crashed broker stays in the metadata until the controller notices (seconds), and a
    request sent to it fails with a connection error."""
    from kafka import KafkaAdminClient
    from kafka.errors import KafkaConnectionError, KafkaTimeoutError, NodeNotReadyError

    for attempt in range(attempts):
        admin = None
        try:
            admin = KafkaAdminClient(bootstrap_servers=bootstrap_servers(),
                                     client_id="lab-view", request_timeout_ms=5000)
            return question(admin)
        except (KafkaConnectionError, KafkaTimeoutError, NodeNotReadyError):
            if attempt == attempts - 1:
                raise
            time.sleep(0.5)
        finally:
            if admin is not None:
                admin.close()
    raise AssertionError("unreachable")


def partitions_table(topic: str) -> list[dict[str, Any]]:
    """Leader, replicas and ISR of each partition, as the admin API reports them."""
    parts = _ask(lambda admin: admin.describe_topics([topic])[0]["partitions"])
    return [{"partition": p["partition_index"],
             "leader": p["leader_id"] if p["leader_id"] >= 0 else None,
             "replicas": list(p["replica_nodes"]), "isr": sorted(p["isr_nodes"])}
            for p in sorted(parts, key=lambda p: p["partition_index"])]


def topic_bytes(topic: str) -> int:
    """Bytes the topic's batches take in the brokers' logs (each partition counted once,
    at its largest replica), from DescribeLogDirs: what compression saves on disk."""
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap_servers(), client_id="lab-view")
    try:
        sizes: dict[int, int] = {}
        for broker in admin.describe_log_dirs():
            for log_dir in broker["log_dirs"]:
                for t in log_dir["topics"]:
                    if t["name"] == topic:
                        for p in t["partitions"]:
                            i = p["partition_index"]
                            sizes[i] = max(sizes.get(i, 0), p["partition_size"])
        return sum(sizes.values())
    finally:
        admin.close()


def live_brokers() -> list[int]:
    """Ids of the brokers the cluster's metadata lists now."""
    brokers = _ask(lambda admin: admin.describe_cluster()["brokers"])
    return sorted(b["broker_id"] for b in brokers if not b.get("is_fenced"))


def stop_broker(broker_id: int, *, timeout_s: float = 300) -> None:
    """Stop a broker cleanly: the embedded cluster does it here, the native cluster as
    `minikafka kafka stop N`; with Docker, say the command to run on the laptop. Then
    wait until the cluster no longer lists the broker."""
    _broker_change(broker_id, running=False, timeout_s=timeout_s)


def start_broker(broker_id: int, *, timeout_s: float = 300) -> None:
    """Start a stopped broker again (embedded, `minikafka kafka start N`, or ask for
    `docker compose start`)."""
    _broker_change(broker_id, running=True, timeout_s=timeout_s)


def crash_broker(broker_id: int, *, timeout_s: float = 300) -> None:
    """Kill a broker without a clean shutdown (a power cut; `minikafka kafka kill N`
    sends SIGKILL; `docker compose kill`)."""
    _broker_change(broker_id, running=False, timeout_s=timeout_s, crash=True)


_DONE = {"stop": "stopped", "start": "started", "crash": "crashed"}
_DOCKER = {"stop": "stop", "start": "start", "crash": "kill"}  # also `minikafka kafka`'s


def _broker_change(broker_id: int, *, running: bool, timeout_s: float,
                   crash: bool = False) -> None:
    cluster = embedded_cluster()
    verb = "crash" if crash else "start" if running else "stop"
    if cluster is not None:
        with cluster.lock:
            getattr(cluster, f"{verb}_broker")(broker_id)
        print(f"broker {broker_id} {_DONE[verb]} (embedded cluster)")
    elif (native := native_cluster()) is not None:
        action = _DOCKER[verb]
        where = f" --data-dir {native.data_dir}" if os.environ.get(DATA_DIR_ENV) else ""
        print(f"$ minikafka kafka {action} {broker_id}{where}")
        getattr(native, action)(broker_id)
        print(f"broker {broker_id} {_DONE[verb]} (Apache Kafka, native)")
    else:
        print(f"In a terminal on your laptop, run:\n\n    docker compose -f docker/compose.yaml "
              f"{_DOCKER[verb]} kafka-{broker_id}\n\nWaiting for the cluster to see it ...")
    deadline = time.monotonic() + timeout_s
    while (broker_id in live_brokers()) != running:
        if time.monotonic() > deadline:
            raise TimeoutError(f"broker {broker_id} did not {verb} within {timeout_s} s")
        time.sleep(0.5)


def resend_batch(topic: str, partition: int, values: list[bytes], *, idempotent: bool,
                 attempts: int = 2) -> list[int]:
    """Send one record batch `attempts` times, byte for byte, as a producer does when a
    produce response is lost and it retries; the base offset the broker answered each time.

    With idempotence the batch carries a producer id and sequence number (from
    InitProducerId) and the broker recognises the retry as a duplicate."""
    from kafka.net.compat import KafkaNetClient
    from kafka.protocol.producer import ProduceRequest
    from kafka.record.default_records import DefaultRecordBatchBuilder
    from kafka.structs import TopicPartition

    client = KafkaNetClient(bootstrap_servers=bootstrap_servers().split(","),
                            client_id="lab-resend")
    try:
        client.check_version()
        client.poll(future=client.cluster.add_topic(topic), timeout_ms=10_000)
        leader = client.cluster.leader_for_partition(TopicPartition(topic, partition))
        pid = epoch = sequence = -1
        if idempotent:
            pid, epoch = _init_producer_id(client, leader)
            sequence = 0
        builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False,
                                            producer_id=pid, producer_epoch=epoch,
                                            base_sequence=sequence, batch_size=1 << 20)
        now = time.time_ns() // 1_000_000
        for i, value in enumerate(values):
            builder.append(i, timestamp=now, key=None, value=value, headers=[])
        data = bytes(builder.build())
        request = ProduceRequest(transactional_id=None, acks=-1, timeout_ms=10_000, topic_data=[
            ProduceRequest.TopicProduceData(name=topic, partition_data=[
                ProduceRequest.TopicProduceData.PartitionProduceData(index=partition,
                                                                     records=data)])],
            max_version=12)  # v13+ names topics by id
        offsets = []
        for _ in range(attempts):
            answer = client.send_and_receive(leader, request)
            part = answer.responses[0].partition_responses[0]
            if part.error_code:
                from kafka.errors import for_code

                raise for_code(part.error_code)(f"produce to {topic}-{partition}")
            offsets.append(part.base_offset)
        return offsets
    finally:
        client.close()


def _init_producer_id(client: Any, node: int, *, timeout_s: float = 30) -> tuple[int, int]:
    """A producer id and epoch from InitProducerId, retried as producers do: a Kafka broker
    answers COORDINATOR_LOAD_IN_PROGRESS until its first block of ids has arrived from
    the controller (on a new cluster, the first idempotent producer it serves)."""
    from kafka.errors import NoError, for_code
    from kafka.protocol.producer import InitProducerIdRequest

    deadline = time.monotonic() + timeout_s
    while True:
        answer = client.send_and_receive(node, InitProducerIdRequest(
            transactional_id=None, transaction_timeout_ms=60_000, producer_id=-1,
            producer_epoch=-1))
        error = for_code(answer.error_code)
        if error is NoError:
            return answer.producer_id, answer.producer_epoch
        if not error.retriable or time.monotonic() > deadline:
            raise error("InitProducerId")
        time.sleep(0.1)


def parse_table(output: str) -> list[dict[str, str]]:
    """Rows of a Kafka tool's table (a header line of UPPER-CASE column names, then rows
    split on whitespace), e.g. kafka-consumer-groups --describe."""
    rows, header = [], None
    for line in output.splitlines():
        words = line.split()
        if not words:
            continue
        if header is None:
            if len(words) > 2 and all(w.isupper() or "-" in w for w in words):
                header = words
            continue
        if len(words) >= len(header):
            rows.append(dict(zip(header, words)))
    return rows


def work_dir(lab: str, *, fresh: bool = True) -> Path:
    """A lab's scratch directory (checkpoints, parquet, SQLite), emptied when `fresh`.
    Under the system's temp directory unless MINIKAFKA_LAB_DIR says where."""
    root = Path(os.environ.get("MINIKAFKA_LAB_DIR") or Path(tempfile.gettempdir()) / "kafka-labs")
    path = root / lab
    if fresh and path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True, exist_ok=True)
    return path


def cli(command: str, *, input: str | None = None, timeout_s: float = 120) -> str:
    """Run `minikafka <command>` (Kafka's tools: topics, console-producer, ...) like a shell
    would, print what it prints and return its output. Raises if it fails."""
    args = [sys.executable, "-m", "minikafka.cli", *shlex.split(command)]
    done = subprocess.run(args, input=input, capture_output=True, text=True, timeout=timeout_s)
    output = done.stdout + done.stderr
    print(f"$ minikafka {command}")
    print(output.rstrip())
    if done.returncode != 0:
        raise RuntimeError(f"minikafka {command.split()[0]} failed with exit code "
                           f"{done.returncode}")
    return output


# -- pictures -------------------------------------------------------------------------------

def lines(series: dict[str, list[tuple[float, float]]], *, title: str, xlabel: str = "",
          ylabel: str = "") -> None:
    """Line chart of (x, y) points per series with matplotlib, else one text sparkline each."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"{title}   (text chart: `pip install matplotlib` draws it)")
        ticks = " ▁▂▃▄▅▆▇█"
        top = max((y for points in series.values() for _, y in points), default=0) or 1
        width = max((len(name) for name in series), default=0)
        for name, points in series.items():
            spark = "".join(ticks[round(8 * y / top)] for _, y in points)
            print(f"  {name:>{width}} |{spark}|")
        xs = [x for points in series.values() for x, _ in points]
        if xs:
            print(f"  {'':>{width}}  {xlabel} {min(xs):g} .. {max(xs):g}; top = {top:g} {ylabel}")
        return
    fig, ax = plt.subplots(figsize=(7, 3.2))
    for name, points in series.items():
        ax.plot([x for x, _ in points], [y for _, y in points], label=name)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend()
    fig.tight_layout()
    plt.show()


def bars(values: dict[Any, float], *, title: str, xlabel: str = "", ylabel: str = "") -> None:
    """A bar chart with matplotlib when it is installed, else the same as text bars."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"{title}   (text chart: `pip install matplotlib` draws it)")
        width = max(len(str(k)) for k in values) if values else 0
        top = max(values.values(), default=0) or 1
        for key, value in values.items():
            print(f"  {str(key):>{width}} | {'█' * round(40 * value / top):<40} {value:,.4g}")
        return
    fig, ax = plt.subplots(figsize=(7, 3.2))
    ax.bar([str(k) for k in values], list(values.values()), color="#0072B2")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    fig.tight_layout()
    plt.show()


CHECK_MARK = "LAB-CHECK "


def checked(lab: str, **outcomes: Any) -> None:
    """Print a lab's key outcomes on one line for the test suite to read back (the
    check cell has asserted them already)."""
    print(CHECK_MARK + json.dumps({"lab": lab, **outcomes}, sort_keys=True, default=str))


# -- Spark ---------------------------------------------------------------------------------

def spark_session(app_name: str = "kafka-lab", *, cores: int = 2, ui: bool | None = None,
                  small_jobs: bool = True, conf: dict[str, str] | None = None) -> SparkSession:
    """A local Spark session for the labs (local[cores], UTC, few shuffle partitions).

    Spark's Python workers must import minikafka, so they run this interpreter. Off
    Docker, Spark binds to 127.0.0.1 only. ui=None keeps Spark's web UI on unless
    MINIKAFKA_SPARK_UI=0 (the tests turn it off). small_jobs keeps the JVM on its first JIT
    tier, which compiles sooner: the labs' jobs are over before the optimising tier pays
    off (pass False for long or heavy jobs). Spark's Kafka connector, when `minikafka kafka
    fetch` has fetched it, goes on spark.jars (minikafka.spark.connector.session_jars)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if not os.environ.get(ENV):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    if ui is None:
        ui = os.environ.get("MINIKAFKA_SPARK_UI", "1") != "0"
    builder = (SparkSession.builder.appName(app_name)
               .master(os.environ.get("SPARK_MASTER", f"local[{cores}]"))
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.shuffle.partitions", str(2 * cores))
               .config("spark.ui.enabled", str(ui).lower())
               .config("spark.ui.showConsoleProgress", "true"))
    if small_jobs:
        builder = builder.config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1")
    from .spark.connector import session_jars

    if jars := session_jars():
        builder = builder.config("spark.jars", ",".join(str(j) for j in jars))
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


# -- truck GPS -------------------------------------------------------------------------------

@dataclass(frozen=True)
class TruckPosition:
    truck_id: str
    event_time_ms: int  # when the truck measured it (event time)
    latitude: float
    longitude: float
    speed_kmh: float

    def key(self) -> bytes:
        return self.truck_id.encode()

    def value(self) -> bytes:
        return json.dumps({"truck_id": self.truck_id, "event_time": _iso(self.event_time_ms),
                           "latitude": self.latitude, "longitude": self.longitude,
                           "speed_kmh": self.speed_kmh}, separators=(",", ":")).encode()


def truck_positions(trucks: int = 10, minutes: int = 20, every_s: int = 10, *, seed: int = 7,
                    start: datetime = datetime(2024, 5, 6, 8, 0, tzinfo=UTC),
                    max_delay_s: int = 20) -> list[TruckPosition]:
    """Every truck reports its position every `every_s` seconds for `minutes` minutes.

    Returned in the order they reach Kafka: by event time, except that some reports
    arrive up to `max_delay_s` late (a truck in a tunnel), as real GPS feeds do."""
    rng = random.Random(seed)
    start_ms = int(start.timestamp() * 1000)
    events = []
    for t in range(trucks):
        truck = f"truck-{t + 1:02d}"
        lat, lon = 52.0 + rng.uniform(-0.5, 0.5), 5.0 + rng.uniform(-0.5, 0.5)
        cruise = rng.uniform(55, 95)  # each truck has its own typical speed
        heading = rng.uniform(0, 2 * math.pi)
        for i in range(minutes * 60 // every_s):
            at = start_ms + i * every_s * 1000 + rng.randrange(0, 1000)
            speed = max(0.0, rng.gauss(cruise, 8))
            heading += rng.gauss(0, 0.2)
            km = speed * every_s / 3600
            lat += km / 111 * math.cos(heading)
            lon += km / 111 * math.sin(heading) / math.cos(math.radians(lat))
            arrives = at + (rng.randrange(1, max_delay_s * 1000) if rng.random() < 0.05 else 0)
            events.append((arrives, at, truck, round(lat, 6), round(lon, 6), round(speed, 1)))
    events.sort()
    return [TruckPosition(truck, at, lat, lon, speed) for _, at, truck, lat, lon, speed in events]


# -- customers.csv ------------------------------------------------------------------------------

CUSTOMERS_ROWS = 12_434
CUSTOMER_FIELDS = ("customer_id", "first_name", "last_name", "email", "country", "city",
                   "signup_date", "lifetime_value")

_FIRST = ("Ada", "Ben", "Chloe", "Daan", "Emma", "Finn", "Grace", "Hugo", "Ines", "Jan", "Kim",
          "Lars", "Mila", "Noah", "Olga", "Pim", "Quinn", "Rosa", "Sam", "Tess", "Umar", "Vera",
          "Wim", "Xena", "Yara", "Zeno")
_LAST = ("Jansen", "de Vries", "Bakker", "Visser", "Smit", "Meijer", "Mulder", "Bos", "Vos",
         "Peters", "Hendriks", "Dekker", "Brouwer", "Dijkstra", "Kok", "Schouten")
_CITIES = {"NL": ("Amsterdam", "Rotterdam", "Utrecht", "Eindhoven"),
           "BE": ("Brussels", "Antwerp", "Ghent"),
           "DE": ("Berlin", "Hamburg", "Cologne", "Munich"),
           "FR": ("Paris", "Lyon", "Lille"),
           "GB": ("London", "Leeds", "Bristol")}


def customer_rows(rows: int = CUSTOMERS_ROWS, *, seed: int = 2024) -> Iterator[dict[str, str]]:
    """The rows of customers.csv: the same `rows` rows for the same seed, every time."""
    rng = random.Random(seed)
    countries = sorted(_CITIES)
    first_day = date(2019, 1, 1)
    for i in range(rows):
        first, last = rng.choice(_FIRST), rng.choice(_LAST)
        country = rng.choices(countries, weights=(2, 2, 3, 2, 6))[0]
        yield {
            "customer_id": f"C{i + 1:05d}",
            "first_name": first,
            "last_name": last,
            "email": f"{first}.{last.replace(' ', '')}.{i + 1}@example.com".lower(),
            "country": country,
            "city": rng.choice(_CITIES[country]),
            "signup_date": (first_day + timedelta(days=rng.randrange(5 * 365))).isoformat(),
            "lifetime_value": f"{rng.lognormvariate(5, 1):.2f}",
        }


def write_customers_csv(path: str | os.PathLike, rows: int = CUSTOMERS_ROWS, *,
                        seed: int = 2024) -> Path:
    """Write customers.csv (a header and `rows` rows) and return its path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=CUSTOMER_FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(customer_rows(rows, seed=seed))
    return path


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z")
