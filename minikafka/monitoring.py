"""Watching a cluster as an operations team does: the metrics over time, the alerts
they raise, and an HTTP endpoint a script or Prometheus can read.

- ``Watch(cluster)``: samples the metrics of ``minikafka.core.metrics`` while the
  simulated clock runs (``watch.run(30_000)``, one sample a second), with a label for
  what was done (``watch.mark("crash broker 2")``); ``watch.samples`` feeds
  ``minikafka.viz.metrics_view``.
- ``ALERTS`` and ``alerts()``: the rules a team sets on those metrics and what each
  means; ``alerts(totals)`` says which fire.
- ``MetricsServer``: ``minikafka serve --metrics-port`` serves every node's metrics on
  loopback, as JSON (``/metrics.json``) and as Prometheus text (``/metrics``), named
  with Kafka's MBean names; ``read_metrics(url)`` is the few lines a script needs.

A real Kafka node publishes the same names over JMX (a JMX exporter turns them into
Prometheus metrics).
"""
from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from .browser import require
from .core import metrics as m

if TYPE_CHECKING:
    from .cluster import Cluster


@dataclass(frozen=True)
class Alert:
    name: str
    metric: str  # the MBean name (or, for lag, the consumer attribute)
    rule: str
    severity: str  # "page" (wake someone) or "warn" (look at it today)
    meaning: str
    fires: Callable[[dict[str, Any]], bool]


ALERTS: tuple[Alert, ...] = (
    Alert("no active controller", m.ACTIVE_CONTROLLER, "sum over nodes != 1", "page",
          "no controller: no leader elections, no ISR changes, no topic changes; "
          "running leaders keep serving",
          lambda t: t.get(m.ACTIVE_CONTROLLER, 0) != 1),
    Alert("offline partitions", m.OFFLINE_PARTITIONS, "> 0", "page",
          "partitions without a leader: nobody can write or read them",
          lambda t: t.get(m.OFFLINE_PARTITIONS, 0) > 0),
    Alert("under min ISR", m.UNDER_MIN_ISR, "> 0", "page",
          "acks=all writes to these partitions are refused (NOT_ENOUGH_REPLICAS)",
          lambda t: t.get(m.UNDER_MIN_ISR, 0) > 0),
    Alert("under-replicated", m.URP, "> 0 for minutes", "warn",
          "a replica is missing from the ISR: one more failure from trouble; "
          "expected for a while during a restart",
          lambda t: t.get(m.URP, 0) > 0),
    Alert("consumer lag", m.RECORDS_LAG_MAX, "growing", "warn",
          "a consumer falls behind its partitions: slow processing or too few consumers",
          lambda t: t.get(m.RECORDS_LAG_MAX, 0) > t.get("lag threshold", 1_000)),
)


def alerts(totals: dict[str, Any]) -> list[str]:
    """The names of the alerts that fire on these cluster-wide numbers."""
    return [a.name for a in ALERTS if a.fires(totals)]


def alert_table() -> list[dict[str, str]]:
    return [{"alert": a.name, "metric": a.metric, "rule": a.rule, "severity": a.severity,
             "means": a.meaning} for a in ALERTS]


# -- metrics over time ---------------------------------------------------------------------

WATCHED = (m.URP, m.UNDER_MIN_ISR, m.OFFLINE_PARTITIONS, m.ACTIVE_CONTROLLER,
           m.requests_per_sec("Produce"), m.total_time_ms("Produce"), m.RECORDS_LAG_MAX)


@dataclass(frozen=True)
class MetricsSample:
    time_ms: int  # since the watch started
    label: str  # what was done just before ("" for a plain tick)
    values: dict[str, float]  # cluster totals of WATCHED
    nodes: int  # how many nodes answered
    fired: tuple[str, ...]


@dataclass
class Watch:
    """Samples a cluster's metrics on its simulated clock. `producer` sends
    `per_step` records to `topic` every step; each of `consumers` polls once a step,
    and their records-lag-max (the largest) is sampled, as a dashboard scrapes clients
    too."""

    cluster: Cluster
    producer: Any = None
    topic: str = ""
    per_step: int = 0
    consumers: list[Any] = field(default_factory=list)
    every_ms: int = 1_000
    samples: list[MetricsSample] = field(default_factory=list)
    sent: int = 0
    failed_sends: list[str] = field(default_factory=list)
    _start: int | None = None
    _label: str = ""

    def mark(self, label: str) -> None:
        """Label the next sample with what was just done."""
        self._label = f"{self._label}, {label}" if self._label else label

    def sample(self) -> MetricsSample:
        now = self.cluster.now_ms
        if self._start is None:
            self._start = now
        per_node = m.cluster_metrics(self.cluster)
        totals = m.totals(per_node)
        produce_time = [v[m.total_time_ms("Produce")]["Mean"] for v in per_node.values()
                        if m.total_time_ms("Produce") in v and v[m.total_time_ms("Produce")]["Count"]]
        values = {name: float(totals.get(name, 0)) for name in WATCHED}
        values[m.total_time_ms("Produce")] = max(produce_time, default=0.0)
        values[m.RECORDS_LAG_MAX] = float(max(
            (m.consumer_lag(c)[m.RECORDS_LAG_MAX] for c in self.consumers), default=0))
        sample = MetricsSample(now - self._start, self._label, values, len(per_node),
                               tuple(alerts(values)))
        self._label = ""
        self.samples.append(sample)
        return sample

    def run(self, ms: int) -> None:
        """Advance the clock `ms` in steps of `every_ms` with the traffic, sampling
        after each step. Sends that fail (a partition offline) are counted in
        `failed_sends`, as an application's callbacks would see them."""
        if not self.samples:
            self.sample()
        for _ in range(max(1, ms // self.every_ms)):
            step_end = self.cluster.now_ms + self.every_ms
            if self.producer is not None:
                for _ in range(self.per_step):
                    future = self.producer.send(self.topic, key=b"k%d" % (self.sent % 6),
                                                value=b"reading %d" % self.sent)
                    self.sent += 1
                    future.add_errback(self._failed)
            for consumer in self.consumers:
                consumer.poll(timeout_ms=100)
            if self.cluster.now_ms < step_end:
                self.cluster.advance(step_end - self.cluster.now_ms)
            self.sample()

    def _failed(self, exc: Exception) -> None:
        self.failed_sends.append(type(exc).__name__)

    def column(self, name: str) -> list[float]:
        return [s.values[name] for s in self.samples]


# -- the HTTP endpoint ---------------------------------------------------------------------

def _prometheus_name(mbean: str) -> tuple[str, dict[str, str]]:
    # kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions ->
    # kafka_server_ReplicaManager_UnderReplicatedPartitions, the JMX exporter's default.
    domain, _, props = mbean.partition(":")
    parts = dict(p.split("=", 1) for p in props.split(","))
    name = "_".join([domain.replace(".", "_"), parts.pop("type"), parts.pop("name", "")])
    return name.strip("_"), parts


def prometheus_text(per_node: dict[str, dict[str, Any]]) -> str:
    """Every gauge and rate as Prometheus text, one line per node, the node and the
    MBean name as labels."""
    lines = []
    for node, values in per_node.items():
        for mbean, value in values.items():
            name, labels = _prometheus_name(mbean)
            labels = {"node": node, **labels, "mbean": mbean}
            if isinstance(value, dict):  # TotalTimeMs: Mean, Max, Count
                for attribute, v in value.items():
                    text = ",".join(f'{k}="{x}"' for k, x in {**labels,
                                                             "attribute": attribute}.items())
                    lines.append(f"{name}{{{text}}} {v}")
                continue
            text = ",".join(f'{k}="{x}"' for k, x in labels.items())
            lines.append(f"{name}{{{text}}} {value}")
    return "\n".join(lines) + "\n"


class MetricsServer:
    """A small HTTP server for a cluster's metrics, on loopback only."""

    def __init__(self, cluster: Cluster, port: int = 0, host: str = "127.0.0.1") -> None:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError("the metrics endpoint listens on loopback only")
        require("a metrics endpoint served over HTTP (a listening socket)")
        self.cluster = cluster

        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                if path not in ("/metrics", "/metrics.json"):
                    self.send_error(404, "try /metrics or /metrics.json")
                    return
                with outer.cluster.lock:
                    per_node = m.cluster_metrics(outer.cluster)
                if path == "/metrics.json":
                    body = json.dumps({"nodes": per_node, "totals": m.totals(per_node)},
                                      sort_keys=True).encode()
                    kind = "application/json"
                else:
                    body = prometheus_text(per_node).encode()
                    kind = "text/plain; version=0.0.4"
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:  # quiet: serve prints its own lines
                pass

        self.httpd = ThreadingHTTPServer((host, port), Handler)
        self.port = self.httpd.server_address[1]
        self.url = f"http://{host}:{self.port}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True,
                                        name="minikafka-metrics")

    def __enter__(self) -> MetricsServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def read_metrics(url: str, names: Iterable[str] = (m.URP, m.UNDER_MIN_ISR,
                                                   m.OFFLINE_PARTITIONS, m.ACTIVE_CONTROLLER),
                 timeout_s: float = 5.0) -> dict[str, Any]:
    """What a monitoring script does: fetch /metrics.json and pick the cluster totals."""
    from urllib.request import urlopen

    with urlopen(f"{url.rstrip('/')}/metrics.json", timeout=timeout_s) as response:
        totals = json.load(response)["totals"]
    return {name: totals.get(name, 0) for name in names}
