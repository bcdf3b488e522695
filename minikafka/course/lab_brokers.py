"""Lab 4's broker failures on whichever cluster the lab runs: the embedded cluster does
them here, the native Apache Kafka cluster as `minikafka kafka stop|kill|start N` does, and
on Docker the lab asks the student to run the command, or runs it when MINIKAFKA_COMPOSE
names the compose command to use (the notebook then runs where the engine is, as in the
tests marked docker: "podman-compose -p kafka-course -f docker/compose.yaml")."""

from __future__ import annotations

import os
import shlex
import subprocess
import time

from minikafka.course.lab_admin import live_brokers
from minikafka.course.lab_cluster import DATA_DIR_ENV, embedded_cluster, native_cluster


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
COMPOSE_ENV = "MINIKAFKA_COMPOSE"


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
    elif compose := os.environ.get(COMPOSE_ENV, "").strip():
        cmd = [*shlex.split(compose), _DOCKER[verb], f"kafka-{broker_id}"]
        print(f"$ {shlex.join(cmd)}")
        subprocess.run(cmd, check=True, capture_output=True, timeout=120)
        print(f"broker {broker_id} {_DONE[verb]} (container kafka-{broker_id})")
    else:
        print(f"In a terminal on your laptop, run:\n\n    docker compose -f docker/compose.yaml "
              f"{_DOCKER[verb]} kafka-{broker_id}\n\nWaiting for the cluster to see it ...")
    deadline = time.monotonic() + timeout_s
    while (broker_id in live_brokers()) != running:
        if time.monotonic() > deadline:
            raise TimeoutError(f"broker {broker_id} did not {verb} within {timeout_s} s")
        time.sleep(0.5)
