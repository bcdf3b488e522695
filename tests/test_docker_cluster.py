"""docker/compose.yaml's Kafka image, run for real (tests marked docker).

The engine is Podman (./test.sh installs it and builds apache/kafka:4.4.0 locally with
docker/build-images: no registry is in reach). The compose file runs as written, with two
changes so the test cannot collide with a student's cluster or another test: its own project
name, and the published client ports (and the EXTERNAL listeners advertising them) moved to
MINIKAFKA_TEST_DOCKER_PORT, +1, +2. The labs then run against localhost with
KAFKA_BOOTSTRAP_SERVERS, lab 04 stopping and killing broker containers itself
(MINIKAFKA_COMPOSE), and the cluster is taken down with nothing left behind.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = ROOT / "docker" / "compose.yaml"
IMAGE = "docker.io/apache/kafka:4.4.0"
PROJECT = "minikafka-docker-test"
BROKERS = ("kafka-1", "kafka-2", "kafka-3")
PORT = int(os.environ.get("MINIKAFKA_TEST_DOCKER_PORT", "19392"))
COMPOSE_CMD = [str(Path(sys.executable).with_name("podman-compose"))]

pytestmark = [pytest.mark.docker, pytest.mark.xdist_group("docker")]


def podman(*args: str, check: bool = True, timeout: float = 300) -> str:
    return subprocess.run(["podman", *args], capture_output=True, text=True, check=check,
                          timeout=timeout).stdout


@pytest.fixture(scope="module")
def engine():
    if shutil.which("podman") is None or not Path(COMPOSE_CMD[0]).exists():
        pytest.skip("no Podman here (./test.sh installs it as root)")
    if subprocess.run(["podman", "image", "exists", IMAGE]).returncode != 0:
        pytest.fail(f"{IMAGE} is not built: run docker/build-images")
    return "podman"


def broker_env(service: str) -> dict[str, str]:
    """A Kafka service's environment as compose gives it to the container."""
    env = yaml.safe_load(COMPOSE.read_text())["services"][service]["environment"]
    return {k: str(v) for k, v in env.items()}


def wrapper_output(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """server.properties as Kafka's KafkaDockerWrapper (the code behind the published
    image's scripts) writes it on this host from `env`, with Kafka's jars from Maven."""
    from minikafka.realkafka.jars import fetch_kafka
    for d in ("default", "mounted", "final"):
        (tmp_path / d).mkdir()
    env = dict(env, KAFKA_LOG_DIRS=str(tmp_path / "data"), PATH=os.environ["PATH"])
    subprocess.run(["java", "-cp", f"{fetch_kafka()}/*", "kafka.docker.KafkaDockerWrapper",
                    "setup", "--default-configs-dir", str(tmp_path / "default"),
                    "--mounted-configs-dir", str(tmp_path / "mounted"),
                    "--final-configs-dir", str(tmp_path / "final")],
                   env=env, capture_output=True, check=True, timeout=120)
    return properties((tmp_path / "final" / "server.properties").read_text())


def properties(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def test_local_image_writes_the_broker_config_kafkas_wrapper_writes(engine, tmp_path):
    env = broker_env("kafka-1")
    args = [f"--env={k}={v}" for k, v in env.items()]
    out = podman("run", "--rm", "--network=none", *args, "--entrypoint", "/bin/bash", IMAGE,
                 "-c", "/etc/kafka/docker/run --setup-only >/dev/null && "
                       "cat /opt/kafka/config/server.properties")
    in_image = properties(out)
    on_host = wrapper_output(env, tmp_path)
    # The host ran with its own log dir; everything else must be what the image wrote.
    assert on_host.pop("log.dirs") == str(tmp_path / "data")
    assert in_image.pop("log.dirs") == "/var/lib/kafka/data"
    assert in_image == on_host
    assert in_image["node.id"] == "1"
    assert in_image["controller.quorum.voters"] == "1@kafka-1:29093,2@kafka-2:29093,3@kafka-3:29093"
    assert in_image["advertised.listeners"] == "INTERNAL://kafka-1:19092,EXTERNAL://localhost:9092"
    assert in_image["min.insync.replicas"] == "2"
    # KAFKA_HEAP_OPTS is a JVM setting, never a broker property.
    assert not any(key.startswith("heap") for key in in_image)
