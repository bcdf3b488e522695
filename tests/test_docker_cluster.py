"""docker/compose.yaml's three brokers, run for real (tests marked docker).

The engine is Podman (./test.sh installs it and builds apache/kafka:4.4.0 locally with
docker/build-images: no registry is in reach). The compose file runs as written, with two
changes so the test cannot collide with a student's cluster or another test: its own project
name, and the published client ports (and the EXTERNAL listeners advertising them) moved to
MINIKAFKA_TEST_DOCKER_PORT, +1, +2. The labs then run against localhost with
KAFKA_BOOTSTRAP_SERVERS, lab 04 stopping and killing broker containers itself
(MINIKAFKA_COMPOSE), and the cluster is taken down with nothing left behind.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
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


# -- the cluster -------------------------------------------------------------------------

@dataclass
class ComposeCluster:
    """What the labs need to know of the running cluster (like NativeKafka's)."""
    bootstrap_servers: str
    data_dir: Path
    command: list[str]


def compose_file(tmp_path_factory) -> Path:
    """compose.yaml's brokers with the test's project name and client ports."""
    spec = yaml.safe_load(COMPOSE.read_text())
    spec["name"] = PROJECT
    spec["services"] = {name: spec["services"][name] for name in BROKERS}
    for i, name in enumerate(BROKERS):
        svc, port = spec["services"][name], PORT + i
        svc["ports"] = [f"127.0.0.1:{port}:{9092 + i}"]
        env = svc["environment"]
        env["KAFKA_ADVERTISED_LISTENERS"] = env["KAFKA_ADVERTISED_LISTENERS"].replace(
            f"EXTERNAL://localhost:{9092 + i}", f"EXTERNAL://localhost:{port}")
    path = tmp_path_factory.mktemp("compose") / "compose.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def engine_state() -> dict[str, set[str]]:
    """Every container, network and volume on the engine, by id."""
    return {"containers": set(podman("ps", "-aq").split()),
            "networks": set(podman("network", "ls", "-q").split()),
            "volumes": set(podman("volume", "ls", "-q").split())}


@pytest.fixture(scope="module")
def compose_cluster(engine, tmp_path_factory):
    path = compose_file(tmp_path_factory)
    command = [*COMPOSE_CMD, "-f", str(path)]
    before = engine_state()
    started = time.monotonic()
    subprocess.run([*command, "up", "-d"], capture_output=True, check=True, timeout=300)
    cluster = ComposeCluster(",".join(f"localhost:{PORT + i}" for i in range(3)),
                             tmp_path_factory.mktemp("no-native-kafka"), command)
    try:
        wait_for_brokers(cluster.bootstrap_servers, 3, timeout_s=240)
        print(f"\ncompose cluster up in {time.monotonic() - started:.0f} s")
        yield cluster
    finally:
        containers = podman("ps", "-aq", "--filter",
                            f"label=io.podman.compose.project={PROJECT}").split()
        volumes = podman("inspect", "--format", "{{range .Mounts}}{{.Name}} {{end}}",
                         *containers).split() if containers else []
        stopping = time.monotonic()
        down = subprocess.run([*command, "down", "-v", "-t", "10"], capture_output=True,
                              text=True, timeout=300)
        assert down.returncode == 0, down.stderr[-2000:]
        print(f"\ncompose cluster down in {time.monotonic() - stopping:.0f} s")
        # podman-compose 1.5's `down -v` removes the named volumes but not the anonymous
        # ones the image's VOLUME lines made (/etc/kafka/secrets, /mnt/shared/config), which
        # `docker compose down -v` removes: remove this cluster's own, by id.
        left = set(volumes) & set(podman("volume", "ls", "-q").split())
        if left:
            podman("volume", "rm", *sorted(left))
    after = engine_state()
    # Containers, the network and the named and anonymous volumes are all gone. (Compare
    # with what was there before: other work on the machine may have its own.)
    assert {kind: after[kind] - before[kind] for kind in after} == {
        "containers": set(), "networks": set(), "volumes": set()}


def wait_for_brokers(bootstrap: str, count: int, *, timeout_s: float) -> None:
    from kafka.admin import KafkaAdminClient
    deadline = time.monotonic() + timeout_s
    while True:
        exited = podman("ps", "-a", "--filter", f"label=io.podman.compose.project={PROJECT}",
                        "--filter", "status=exited", "--format", "{{.Names}}").split()
        if exited:  # no point waiting: show why
            raise AssertionError(f"{exited} exited:\n" + podman("logs", "--tail", "30",
                                                                exited[0], check=False))
        try:
            admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5000)
            try:
                if len(admin.describe_cluster()["brokers"]) == count:
                    return
            finally:
                admin.close()
        except Exception:  # not up yet: any client error means "retry"
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"{count} brokers did not answer on {bootstrap}")
        time.sleep(2)


@pytest.mark.notebook
@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_labs_run_on_the_compose_cluster(compose_cluster, tmp_path, monkeypatch):
    from test_labs import PLAIN_LABS, printed, run_and_check

    monkeypatch.setenv("MINIKAFKA_COMPOSE", " ".join(compose_cluster.command))
    for path in PLAIN_LABS:
        started = time.monotonic()
        work = tmp_path / path.stem
        work.mkdir()
        nb = run_and_check(path, work, monkeypatch, timeout=300, cluster=compose_cluster)
        print(f"{path.stem}: {time.monotonic() - started:.0f} s")
        if path.stem.startswith("04"):  # the containers themselves were stopped and killed
            out = printed(nb)
            for action, done in (("stop kafka-2", "broker 2 stopped"),
                                 ("kill kafka-3", "broker 3 crashed"),
                                 ("start kafka-3", "broker 3 started")):
                assert f"{compose_cluster.command[-1]} {action}" in out
                assert f"{done} (container {action.split()[1]})" in out
            running = podman("ps", "--filter", f"label=io.podman.compose.project={PROJECT}",
                             "--filter", "status=running", "--format", "{{.Names}}").split()
            assert sorted(running) == [f"{PROJECT}_{name}_1" for name in BROKERS], running


JUPYTER_IMAGE = "localhost/kafka-course-jupyter:latest"
# Runs in the Jupyter image: executes the labs named on the command line as the image's
# student, each in a fresh kernel in the image's own /course/labs, and writes the executed
# notebooks to stdout as one JSON list.
IN_IMAGE = """
import json, sys
import nbformat
from nbclient import NotebookClient
done = []
for name in sys.argv[1:]:
    nb = nbformat.read(f"/course/labs/{name}.ipynb", as_version=4)
    try:
        NotebookClient(nb, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": "/course/labs"}}).execute()
    finally:
        done.append(nbformat.writes(nb))
print(json.dumps(done))
"""


@pytest.mark.notebook
@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_spark_labs_run_from_the_jupyter_image_on_the_compose_cluster(compose_cluster):
    """Labs 5 and 6 as a student runs them with Docker: in the course's Jupyter image (PySpark,
    Java and Spark's Kafka connector inside), on the compose network, reading the brokers'
    INTERNAL listeners by name."""
    import nbformat
    from notebook_helpers import outcomes_of, output_problems
    from test_labs import EXPECT, SPARK_PATHS, assert_charts_drawn

    from minikafka.course.checks import CHECK_MARK

    if subprocess.run(["podman", "image", "exists", JUPYTER_IMAGE]).returncode != 0:
        pytest.fail(f"{JUPYTER_IMAGE} is not built: run docker/build-images")
    names = [path.stem for path in SPARK_PATHS]
    started = time.monotonic()
    run = subprocess.run(
        ["podman", "run", "--rm", "-i", f"--network={PROJECT}_default",
         "--env=KAFKA_BOOTSTRAP_SERVERS=" + ",".join(f"{b}:19092" for b in BROKERS),
         "--env=MINIKAFKA_LAB_DIR=/tmp/labs", "--env=MINIKAFKA_SPARK_UI=0",
         JUPYTER_IMAGE, "python", "-", *names],
        input=IN_IMAGE, capture_output=True, text=True, timeout=1400)
    assert run.returncode == 0, run.stderr[-3000:]
    print(f"\nlabs {', '.join(names)} in the Jupyter image: {time.monotonic() - started:.0f} s")
    for name, text in zip(names, json.loads(run.stdout.splitlines()[-1]), strict=True):
        nb = nbformat.reads(text, as_version=4)
        assert output_problems(nb) == [], name
        assert_charts_drawn(nb)
        outcomes = outcomes_of(nb, CHECK_MARK)
        assert outcomes["notebook"] == name[:2]
        EXPECT[name[:2]](outcomes)
