"""What the labs share: a cluster to talk to, a Spark session, and their data.

    from minikafka.labs import bootstrap_servers, spark_session
    servers = bootstrap_servers()   # KAFKA_BOOTSTRAP_SERVERS, or an embedded 3-broker cluster

With KAFKA_BOOTSTRAP_SERVERS set (the Docker labs' Jupyter container sets it) the labs
talk to that cluster. Without it, the first call starts minikafka's 3-broker server in
this process, on 127.0.0.1:9092-9094 when those ports are free and on free ports
otherwise, serving real Kafka clients (kafka-python, Spark, kcat) in the background
until the process ends. `embedded_cluster()` gives that Cluster, to stop a broker or
look inside; it is None when the labs run against another cluster.

The data generators are seeded: the same call gives the same bytes everywhere, so a
lab's numbers can be checked.
"""
from __future__ import annotations

import csv
import json
import math
import os
import random
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from .cluster import Cluster
    from .wire.serve import ClusterServer

__all__ = ["CUSTOMERS_ROWS", "TruckPosition", "bootstrap_servers", "customer_rows",
           "embedded_cluster", "embedded_server", "spark_session", "truck_positions",
           "write_customers_csv"]

ENV = "KAFKA_BOOTSTRAP_SERVERS"
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


# -- Spark ---------------------------------------------------------------------------------

def spark_session(app_name: str = "kafka-lab", *, cores: int = 2, ui: bool | None = None,
                  conf: dict[str, str] | None = None) -> SparkSession:
    """A local Spark session for the labs (local[cores], UTC, few shuffle partitions).

    Spark's Python workers must import minikafka, so they run this interpreter. Off
    Docker, Spark binds to 127.0.0.1 only. ui=None keeps Spark's web UI on unless
    MINIKAFKA_SPARK_UI=0 (the tests turn it off)."""
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
