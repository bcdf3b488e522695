"""The cluster a lab talks to: ``bootstrap_servers()`` is KAFKA_BOOTSTRAP_SERVERS when it
is set (the Docker labs' Jupyter container sets it), else minikafka's 3-broker server
started in this process on first use, on 127.0.0.1:9092-9094 when those ports are free
and on free ports otherwise, serving real Kafka clients (kafka-python, Spark, kcat) in the
background until the process ends. ``embedded_cluster()`` gives that Cluster, to stop a
broker or look inside; it is None when the labs run against another cluster.

When KAFKA_BOOTSTRAP_SERVERS names the ports of the native Apache Kafka cluster that
`minikafka kafka up` started on this machine (its data directory: MINIKAFKA_KAFKA_DATA_DIR,
else that command's default), ``native_cluster()`` gives it.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

from minikafka.realkafka.nodes import DATA_DIR_ENV

if TYPE_CHECKING:
    from minikafka.cluster import Cluster
    from minikafka.realkafka.nodes import NativeKafka
    from minikafka.wire.serve import ClusterServer

__all__ = ["DATA_DIR_ENV", "EMBEDDED_BROKER_CONFIG", "EMBEDDED_PORT", "ENV", "bootstrap_servers",
           "embedded_cluster", "embedded_server", "native_cluster"]


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
            from minikafka.cluster import Cluster

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
    from minikafka.realkafka.nodes import NODE_IDS, NativeKafka

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
