"""Structural checks of the Docker lab cluster: docker/compose.yaml and docker/jupyter/Dockerfile.

Nothing here starts a container (tests/test_docker_cluster.py runs the cluster). Instead
each property the labs rely on (three KRaft nodes, one quorum, one cluster id, listeners a
student can reach from the host and from containers, durable named volumes, RF 3 / min ISR 2,
pinned images, a Jupyter image whose Spark Kafka connector matches the course's pyspark) is a
small checker function that returns a list of problems. The tests run every checker on the real
file, and run each checker on a deliberately broken copy to show it can fail.
"""

from __future__ import annotations

import base64
import copy
import importlib.util
import re
import tomllib
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
DOCKER_DIR = ROOT / "docker"
COMPOSE_FILE = DOCKER_DIR / "compose.yaml"
DOCKERFILE = DOCKER_DIR / "jupyter" / "Dockerfile"
FETCH_SCRIPT = DOCKER_DIR / "jupyter" / "fetch_spark_kafka.py"
PYPROJECT = ROOT / "pyproject.toml"

KAFKA_NODES = ("kafka-1", "kafka-2", "kafka-3")
HOST_PORTS = {"kafka-1": 9092, "kafka-2": 9093, "kafka-3": 9094}
# apache/kafka's image writes to this directory unless KAFKA_LOG_DIRS says otherwise
# (docker/resources/common-scripts/configureDefaults in apache/kafka).
IMAGE_DEFAULT_LOG_DIRS = "/tmp/kraft-combined-logs"
FLOATING_TAGS = {"latest", "main", "master", "edge", "nightly", "snapshot", "dev"}
LOOPBACK = "127.0.0.1"

Problems = list[str]


# --------------------------------------------------------------------------- helpers


def load_compose(path: Path = COMPOSE_FILE) -> dict:
    with path.open(encoding="utf-8") as f:
        return yaml.safe_load(f)


def services(compose: dict) -> dict:
    return compose.get("services") or {}


def env_of(service: dict) -> dict[str, str]:
    """A service's environment as a str -> str dict (compose allows a mapping or a list)."""
    env = service.get("environment") or {}
    if isinstance(env, list):
        out = {}
        for item in env:
            key, _, value = str(item).partition("=")
            out[key] = value
        return out
    return {str(k): "" if v is None else str(v) for k, v in env.items()}


def parse_listeners(value: str) -> dict[str, tuple[str, int]]:
    """'INTERNAL://kafka-1:19092,EXTERNAL://:9092' -> {'INTERNAL': ('kafka-1', 19092), ...}."""
    out = {}
    for item in filter(None, (s.strip() for s in (value or "").split(","))):
        name, sep, rest = item.partition("://")
        if not sep:
            raise ValueError(f"not a listener: {item!r}")
        host, _, port = rest.rpartition(":")
        out[name] = (host, int(port))
    return out


def parse_port(spec) -> tuple[str | None, int | None, int]:
    """A compose port entry -> (host_ip, published, target); short or long syntax."""
    if isinstance(spec, dict):
        published = spec.get("published")
        return (
            spec.get("host_ip"),
            None if published is None else int(published),
            int(spec["target"]),
        )
    text = str(spec).split("/")[0]
    parts = text.rsplit(":", 2)
    if len(parts) == 3:
        return parts[0].strip("[]"), int(parts[1]), int(parts[2])
    if len(parts) == 2:
        return None, int(parts[0]), int(parts[1])
    return None, None, int(parts[0])


def ports_of(service: dict) -> list[tuple[str | None, int | None, int]]:
    return [parse_port(p) for p in service.get("ports") or []]


def parse_image(ref: str) -> tuple[str, str | None, str | None]:
    """'ghcr.io/kafbat/kafka-ui:v1.5.0' -> ('ghcr.io/kafbat/kafka-ui', 'v1.5.0', None)."""
    ref, _, digest = ref.partition("@")
    last = ref.rsplit("/", 1)[-1]
    if ":" in last:
        name, _, tag = ref.rpartition(":")
        return name, tag, digest or None
    return ref, None, digest or None


def image_problems(ref: str, where: str) -> Problems:
    name, tag, digest = parse_image(ref)
    if digest:
        return []
    if not tag:
        return [f"{where}: image {ref!r} has no tag (means 'latest')"]
    if tag.lower() in FLOATING_TAGS:
        return [f"{where}: image {ref!r} uses the floating tag {tag!r}"]
    if "${" in ref:
        return [f"{where}: image {ref!r} depends on a variable"]
    return []


def kafka_services(compose: dict) -> dict[str, dict]:
    return {
        name: svc
        for name, svc in services(compose).items()
        if parse_image(str(svc.get("image", "")))[0] in ("apache/kafka", "docker.io/apache/kafka")
    }


def volume_mounts(service: dict) -> list[tuple[str, str]]:
    """[(source, target)] for a service's volumes, short or long syntax."""
    out = []
    for v in service.get("volumes") or []:
        if isinstance(v, dict):
            out.append((str(v.get("source", "")), str(v["target"])))
        else:
            parts = str(v).split(":")
            if len(parts) == 1:
                out.append(("", parts[0]))
            else:
                out.append((parts[0], parts[1]))
    return out


def internal_bootstrap(compose: dict) -> set[str]:
    """host:port of every node's advertised inter-broker listener."""
    out = set()
    for svc in kafka_services(compose).values():
        env = env_of(svc)
        name = env.get("KAFKA_INTER_BROKER_LISTENER_NAME", "")
        adv = parse_listeners(env.get("KAFKA_ADVERTISED_LISTENERS", ""))
        if name in adv:
            out.add("{}:{}".format(*adv[name]))
    return out


def depends_on_healthy(service: dict, names) -> Problems:
    deps = service.get("depends_on") or {}
    problems = []
    for n in names:
        if isinstance(deps, list) or n not in deps:
            problems.append(f"does not depend on {n} being healthy")
        elif (deps[n] or {}).get("condition") != "service_healthy":
            problems.append(f"depends on {n} without condition: service_healthy")
    return problems


def expand_args(dockerfile_text: str) -> str:
    """Substitute ARG defaults (${NAME} and $NAME) so versions can be read from the text."""
    args = dict(re.findall(r"^\s*ARG\s+(\w+)=(\S+)", dockerfile_text, flags=re.M))
    text = dockerfile_text
    for name, value in args.items():
        text = text.replace("${" + name + "}", value)
        text = re.sub(r"\$" + name + r"\b", value, text)
    return text


def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """[(INSTRUCTION, arguments)] with line continuations joined and comments dropped."""
    joined = re.sub(
        r"\\\n",
        " ",
        "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")),
    )
    out = []
    for line in joined.splitlines():
        m = re.match(r"\s*([A-Za-z]+)\s+(.*)", line)
        if m:
            out.append((m.group(1).upper(), m.group(2).strip()))
    return out


# --------------------------------------------------------------------------- compose checks


def check_kafka_nodes(compose: dict) -> Problems:
    nodes = kafka_services(compose)
    problems = []
    if sorted(nodes) != list(KAFKA_NODES):
        problems.append(f"apache/kafka services are {sorted(nodes)}, expected {list(KAFKA_NODES)}")
    for i, name in enumerate(KAFKA_NODES, start=1):
        if name in nodes and env_of(nodes[name]).get("KAFKA_NODE_ID") != str(i):
            problems.append(
                f"{name}: KAFKA_NODE_ID is {env_of(nodes[name]).get('KAFKA_NODE_ID')!r}, expected {i}"
            )
    return problems


def check_process_roles(compose: dict) -> Problems:
    problems = []
    for name, svc in kafka_services(compose).items():
        roles = {r.strip() for r in env_of(svc).get("KAFKA_PROCESS_ROLES", "").split(",")}
        if roles != {"broker", "controller"}:
            problems.append(
                f"{name}: KAFKA_PROCESS_ROLES is {sorted(roles)}, expected broker,controller"
            )
    return problems


def controller_ports(compose: dict) -> dict[str, int]:
    out = {}
    for name, svc in kafka_services(compose).items():
        env = env_of(svc)
        listeners = parse_listeners(env.get("KAFKA_LISTENERS", ""))
        ctl = env.get("KAFKA_CONTROLLER_LISTENER_NAMES", "").split(",")[0]
        if ctl in listeners:
            out[name] = listeners[ctl][1]
    return out


def check_quorum_voters(compose: dict) -> Problems:
    nodes = kafka_services(compose)
    voters = {
        name: env_of(svc).get("KAFKA_CONTROLLER_QUORUM_VOTERS", "") for name, svc in nodes.items()
    }
    problems = []
    if len(set(voters.values())) != 1:
        return [f"KAFKA_CONTROLLER_QUORUM_VOTERS differs between nodes: {voters}"]
    value = next(iter(voters.values()), "")
    parsed = {}
    for item in filter(None, value.split(",")):
        m = re.fullmatch(r"(\d+)@([\w.-]+):(\d+)", item.strip())
        if not m:
            problems.append(f"unparseable voter {item!r}")
            continue
        parsed[int(m.group(1))] = (m.group(2), int(m.group(3)))
    ids = {int(env_of(svc).get("KAFKA_NODE_ID", "0") or 0): name for name, svc in nodes.items()}
    if set(parsed) != set(ids):
        problems.append(f"voters name node ids {sorted(parsed)}, nodes are {sorted(ids)}")
    ctl_ports = controller_ports(compose)
    for node_id, (host, port) in parsed.items():
        name = ids.get(node_id)
        if name is None:
            continue
        if host != name:
            problems.append(f"voter {node_id}@{host} does not name its service {name}")
        if ctl_ports.get(name) != port:
            problems.append(
                f"voter {node_id} port {port} is not {name}'s controller port {ctl_ports.get(name)}"
            )
    return problems


def check_cluster_id(compose: dict) -> Problems:
    ids = {name: env_of(svc).get("CLUSTER_ID", "") for name, svc in kafka_services(compose).items()}
    if len(set(ids.values())) != 1 or not next(iter(ids.values()), ""):
        return [f"CLUSTER_ID must be set and identical on every node: {ids}"]
    value = next(iter(ids.values()))
    try:
        raw = base64.urlsafe_b64decode(value + "==")
    except ValueError:
        raw = b""
    if len(value) != 22 or len(raw) != 16:
        return [
            f"CLUSTER_ID {value!r} is not a 22-character base64url UUID (kafka-storage.sh random-uuid)"
        ]
    return []


def check_listener_names(compose: dict) -> Problems:
    problems = []
    for name, svc in kafka_services(compose).items():
        env = env_of(svc)
        listeners = parse_listeners(env.get("KAFKA_LISTENERS", ""))
        protocol_map = dict(
            item.split(":", 1)
            for item in env.get("KAFKA_LISTENER_SECURITY_PROTOCOL_MAP", "").split(",")
            if ":" in item
        )
        inter = env.get("KAFKA_INTER_BROKER_LISTENER_NAME")
        ctl = env.get("KAFKA_CONTROLLER_LISTENER_NAMES")
        if not inter or inter not in listeners:
            problems.append(
                f"{name}: inter.broker.listener.name {inter!r} is not one of the listeners"
            )
        if not ctl or ctl not in listeners:
            problems.append(
                f"{name}: controller.listener.names {ctl!r} is not one of the listeners"
            )
        if inter and inter == ctl:
            problems.append(f"{name}: inter-broker and controller listeners must differ")
        missing = set(listeners) - set(protocol_map)
        if missing:
            problems.append(
                f"{name}: listeners {sorted(missing)} missing from the security protocol map"
            )
    return problems


def check_host_listeners(compose: dict) -> Problems:
    problems = []
    for name, svc in kafka_services(compose).items():
        env = env_of(svc)
        want = HOST_PORTS.get(name)
        adv = parse_listeners(env.get("KAFKA_ADVERTISED_LISTENERS", ""))
        listeners = parse_listeners(env.get("KAFKA_LISTENERS", ""))
        host_listeners = [ln for ln, (host, _) in adv.items() if host in ("localhost", LOOPBACK)]
        if len(host_listeners) != 1:
            problems.append(
                f"{name}: expected one listener advertised on localhost, found {host_listeners}"
            )
            continue
        ln = host_listeners[0]
        port = adv[ln][1]
        if port != want:
            problems.append(f"{name}: host listener advertised on port {port}, expected {want}")
        if listeners.get(ln, (None, None))[1] != port:
            problems.append(
                f"{name}: listener {ln} binds {listeners.get(ln)}, not the advertised port {port}"
            )
        if not any(pub == port and target == port for _, pub, target in ports_of(svc)):
            problems.append(
                f"{name}: advertised host port {port} is not published 1:1 ({port}:{port})"
            )
    return problems


def check_controller_not_published(compose: dict) -> Problems:
    problems = []
    for name, port in controller_ports(compose).items():
        svc = kafka_services(compose)[name]
        if port in HOST_PORTS.values():
            problems.append(f"{name}: controller port {port} collides with a host client port")
        if any(port in (pub, target) for _, pub, target in ports_of(svc)):
            problems.append(f"{name}: controller port {port} is published")
    if len(controller_ports(compose)) != len(kafka_services(compose)):
        problems.append("a node has no controller listener")
    return problems


def check_internal_listener(compose: dict) -> Problems:
    problems = []
    internal_ports = set()
    for name, svc in kafka_services(compose).items():
        env = env_of(svc)
        inter = env.get("KAFKA_INTER_BROKER_LISTENER_NAME", "")
        adv = parse_listeners(env.get("KAFKA_ADVERTISED_LISTENERS", ""))
        listeners = parse_listeners(env.get("KAFKA_LISTENERS", ""))
        if inter not in adv:
            problems.append(f"{name}: inter-broker listener {inter!r} is not advertised")
            continue
        host, port = adv[inter]
        internal_ports.add(port)
        if host != name:
            problems.append(
                f"{name}: internal listener advertised as {host}:{port}, expected {name}:{port}"
            )
        if svc.get("hostname", name) != name:
            problems.append(
                f"{name}: hostname {svc.get('hostname')!r} differs from the service name"
            )
        if listeners.get(inter, (None, None))[1] != port:
            problems.append(
                f"{name}: internal listener binds {listeners.get(inter)}, advertised port {port}"
            )
        if any(port in (pub, target) for _, pub, target in ports_of(svc)):
            problems.append(f"{name}: internal port {port} is published to the host")
    if len(internal_ports) > 1:
        problems.append(f"internal listener ports differ between nodes: {sorted(internal_ports)}")
    return problems


def check_volumes(compose: dict) -> Problems:
    declared = set((compose.get("volumes") or {}).keys())
    problems = []
    used = []
    for name, svc in kafka_services(compose).items():
        log_dirs = env_of(svc).get("KAFKA_LOG_DIRS", IMAGE_DEFAULT_LOG_DIRS)
        if "," in log_dirs:
            problems.append(f"{name}: expected a single log dir, got {log_dirs!r}")
            continue
        mounts = [
            (src, tgt) for src, tgt in volume_mounts(svc) if tgt.rstrip("/") == log_dirs.rstrip("/")
        ]
        if not mounts:
            problems.append(f"{name}: nothing is mounted at its log dir {log_dirs}")
            continue
        src = mounts[0][0]
        if not src or src[0] in "./~$" or src not in declared:
            problems.append(
                f"{name}: {log_dirs} is mounted from {src!r}, not a declared named volume"
            )
        used.append(src)
    if len(used) != len(set(used)):
        problems.append(f"kafka nodes share a data volume: {used}")
    return problems


def check_images_pinned(compose: dict) -> Problems:
    problems = []
    for name, svc in services(compose).items():
        if "image" in svc:
            problems += image_problems(str(svc["image"]), name)
        elif "build" not in svc:
            problems.append(f"{name}: neither image nor build")
    for name, svc in kafka_services(compose).items():
        _, tag, _ = parse_image(str(svc["image"]))
        if not tag or not re.fullmatch(r"\d+\.\d+\.\d+", tag) or Version(tag).major != 4:
            problems.append(f"{name}: apache/kafka tag {tag!r} is not a 4.x.y release")
    return problems


REPLICATION_SETTINGS = {
    "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "3",
    "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "3",
    "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "2",
    "KAFKA_DEFAULT_REPLICATION_FACTOR": "3",
    "KAFKA_MIN_INSYNC_REPLICAS": "2",
}


def check_replication_settings(compose: dict) -> Problems:
    problems = []
    for name, svc in kafka_services(compose).items():
        env = env_of(svc)
        for key, want in REPLICATION_SETTINGS.items():
            if env.get(key) != want:
                problems.append(f"{name}: {key} is {env.get(key)!r}, expected {want}")
    return problems


def check_healthchecks(compose: dict) -> Problems:
    problems = []
    for name, svc in kafka_services(compose).items():
        hc = svc.get("healthcheck") or {}
        test = hc.get("test")
        text = " ".join(test) if isinstance(test, list) else str(test or "")
        if hc.get("disable") or not text or text.strip() in ("NONE", "[NONE]"):
            problems.append(f"{name}: no healthcheck")
            continue
        adv = parse_listeners(env_of(svc).get("KAFKA_ADVERTISED_LISTENERS", ""))
        inter = env_of(svc).get("KAFKA_INTER_BROKER_LISTENER_NAME", "")
        internal = "{}:{}".format(*adv[inter]) if inter in adv else None
        if "kafka-broker-api-versions" not in text or not internal or internal not in text:
            problems.append(
                f"{name}: healthcheck {text!r} does not query ApiVersions on {internal}"
            )
    return problems


def check_kafka_ui(compose: dict) -> Problems:
    uis = {
        name: svc
        for name, svc in services(compose).items()
        if parse_image(str(svc.get("image", "")))[0] == "ghcr.io/kafbat/kafka-ui"
    }
    if len(uis) != 1:
        return [f"expected one ghcr.io/kafbat/kafka-ui service, found {sorted(uis)}"]
    name, svc = next(iter(uis.items()))
    problems = []
    _, tag, digest = parse_image(str(svc["image"]))
    if not digest and not (tag and re.fullmatch(r"v\d+\.\d+\.\d+", tag)):
        problems.append(f"{name}: kafka-ui tag {tag!r} is not a release version (vX.Y.Z)")
    if not any(pub == 8080 and target == 8080 for _, pub, target in ports_of(svc)):
        problems.append(f"{name}: port 8080 is not published as 8080:8080")
    bootstrap = {
        s.strip()
        for s in env_of(svc).get("KAFKA_CLUSTERS_0_BOOTSTRAPSERVERS", "").split(",")
        if s.strip()
    }
    if not bootstrap or bootstrap != internal_bootstrap(compose):
        problems.append(
            f"{name}: bootstrap {sorted(bootstrap)} is not the internal listeners {sorted(internal_bootstrap(compose))}"
        )
    return problems


def check_jupyter(compose: dict, compose_dir: Path = DOCKER_DIR) -> Problems:
    svc = services(compose).get("jupyter")
    if not svc:
        return ["no jupyter service"]
    problems = []
    build = svc.get("build")
    if not isinstance(build, dict) or "context" not in build or "dockerfile" not in build:
        problems.append(f"jupyter: build must give context and dockerfile, got {build!r}")
    else:
        context = (compose_dir / build["context"]).resolve()
        if context != ROOT:
            problems.append(f"jupyter: build context {context} is not the repository root {ROOT}")
        if not (context / build["dockerfile"]).is_file():
            problems.append(
                f"jupyter: dockerfile {build['dockerfile']} does not exist in {context}"
            )
    bootstrap = env_of(svc).get("KAFKA_BOOTSTRAP_SERVERS", "")
    if bootstrap != "kafka-1:19092,kafka-2:19092,kafka-3:19092" or set(
        bootstrap.split(",")
    ) != internal_bootstrap(compose):
        problems.append(
            f"jupyter: KAFKA_BOOTSTRAP_SERVERS {bootstrap!r} is not the internal listeners"
        )
    if not any(pub == 8888 and target == 8888 for _, pub, target in ports_of(svc)):
        problems.append("jupyter: port 8888 is not published as 8888:8888")
    problems += [f"jupyter: {p}" for p in depends_on_healthy(svc, sorted(kafka_services(compose)))]
    return problems


def check_ports_loopback(compose: dict) -> Problems:
    problems = []
    for name, svc in services(compose).items():
        for host_ip, published, target in ports_of(svc):
            if published is None:
                problems.append(f"{name}: port {target} is published on a random host port")
            if host_ip != LOOPBACK:
                problems.append(
                    f"{name}: port {published}:{target} is bound to {host_ip or 'all interfaces'}, not {LOOPBACK}"
                )
    return problems


def check_default_network_only(compose: dict) -> Problems:
    problems = []
    if compose.get("networks"):
        problems.append(f"top-level networks declared: {sorted(compose['networks'])}")
    for name, svc in services(compose).items():
        if "networks" in svc or "network_mode" in svc:
            problems.append(f"{name}: sets networks/network_mode; use the default compose network")
    return problems


COMPOSE_CHECKS: dict[str, Callable[[dict], Problems]] = {
    "kafka_nodes": check_kafka_nodes,
    "process_roles": check_process_roles,
    "quorum_voters": check_quorum_voters,
    "cluster_id": check_cluster_id,
    "listener_names": check_listener_names,
    "host_listeners": check_host_listeners,
    "controller_not_published": check_controller_not_published,
    "internal_listener": check_internal_listener,
    "volumes": check_volumes,
    "images_pinned": check_images_pinned,
    "replication_settings": check_replication_settings,
    "healthchecks": check_healthchecks,
    "kafka_ui": check_kafka_ui,
    "jupyter": check_jupyter,
    "ports_loopback": check_ports_loopback,
    "default_network_only": check_default_network_only,
}


# --------------------------------------------------------------------------- Dockerfile checks


def pyspark_requirement(pyproject: Path = PYPROJECT) -> Requirement | None:
    """The pyspark requirement in pyproject.toml (dependencies or any extra), if any."""
    if not pyproject.is_file():
        return None
    project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    reqs = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        reqs += extra
    for r in reqs:
        req = Requirement(r)
        if req.name.lower() == "pyspark":
            return req
    return None


def check_dockerfile(text: str) -> Problems:
    problems = []
    instructions = dockerfile_instructions(expand_args(text))
    froms = [args for ins, args in instructions if ins == "FROM"]
    if not froms:
        return ["Dockerfile has no FROM"]
    for ref in froms:
        problems += image_problems(ref.split()[0], "FROM")
    if not re.match(r"python:3\.11[.\w-]*$", froms[-1].split()[0]):
        problems.append(f"final FROM {froms[-1]!r} is not a python:3.11 image")
    runs = " ".join(args for ins, args in instructions if ins == "RUN")
    for package in ("openjdk-17-jre-headless", "graphviz"):
        if package not in runs:
            problems.append(f"Dockerfile does not install {package}")
    if not re.search(r"pip install(\s+-\S+)*\s+/course(\[[\w,]*\])?/?(?=[\s;&]|$)", runs):
        problems.append("Dockerfile does not `pip install /course`")
    if not any(
        ins == "COPY" and re.fullmatch(r"(--\S+\s+)*\.\s+/course/?", args)
        for ins, args in instructions
    ):
        problems.append("Dockerfile does not COPY the build context (repository root) to /course")
    envs = " ".join(args for ins, args in instructions if ins == "ENV")
    if not re.search(r"(^|\s)PYSPARK_PYTHON[=\s]", envs):
        problems.append("Dockerfile does not set PYSPARK_PYTHON")
    cmd = next((args for ins, args in reversed(instructions) if ins == "CMD"), "")
    if not ("jupyter" in cmd and "lab" in cmd and "0.0.0.0" in cmd and "8888" in cmd):
        problems.append(f"CMD {cmd!r} does not start JupyterLab on 0.0.0.0:8888")
    return problems


def check_spark_versions(
    text: str, requirement: Requirement | None, installed: str | None
) -> Problems:
    """The connector must be spark-sql-kafka-0-10_2.13 at the exact pyspark version installed
    in the image, and that version must satisfy pyproject's pin (else the installed pyspark)."""
    expanded = expand_args(text)
    connectors = set(
        re.findall(r"org\.apache\.spark:spark-sql-kafka-0-10_(\d+\.\d+):([\w.-]+)", expanded)
    )
    pins = set(re.findall(r"pyspark(?:\[[\w,\s]*\])?==([\w.]+)", expanded))
    if len(connectors) != 1:
        return [f"expected one spark-sql-kafka-0-10 coordinate, found {sorted(connectors)}"]
    scala, version = next(iter(connectors))
    problems = []
    if scala != "2.13":
        problems.append(f"connector is built for Scala {scala}; pyspark 4 needs _2.13")
    if pins != {version}:
        problems.append(f"image installs pyspark {sorted(pins)} but the connector is {version}")
    if requirement is not None:
        if not requirement.specifier.contains(Version(version), prereleases=True):
            problems.append(f"connector {version} does not satisfy pyproject's {requirement}")
    elif installed is not None:
        if version != installed:
            problems.append(f"connector {version} != installed pyspark {installed}")
    else:
        problems.append("no pyspark pin in pyproject.toml and no installed pyspark to compare with")
    return problems


def installed_pyspark() -> str | None:
    try:
        return metadata.version("pyspark")
    except metadata.PackageNotFoundError:
        return None


# --------------------------------------------------------------------------- tests


@pytest.fixture(scope="module")
def compose() -> dict:
    return load_compose()


@pytest.fixture(scope="module")
def dockerfile_text() -> str:
    return DOCKERFILE.read_text(encoding="utf-8")


@pytest.mark.parametrize("check", COMPOSE_CHECKS, ids=str)
def test_compose_file_passes(compose, check):
    assert COMPOSE_CHECKS[check](compose) == []


def test_dockerfile_passes(dockerfile_text):
    assert check_dockerfile(dockerfile_text) == []


def test_spark_connector_matches_course_pyspark(dockerfile_text):
    problems = check_spark_versions(dockerfile_text, pyspark_requirement(), installed_pyspark())
    assert problems == []


def test_compose_yaml_uses_only_documented_top_level_keys(compose):
    # "x-" extension fields hold the YAML anchors; anything else (networks, configs, a typo) is
    # not part of this design.
    assert {k for k in compose if not k.startswith("x-")} <= {"name", "services", "volumes"}


# Each mutation breaks exactly one property; its checker must notice. Mutations edit a deep
# copy of the real compose dict (with YAML merges already resolved, so per-node edits stay local).


def _env(d, svc):
    return d["services"][svc]["environment"]


def _set_env(svc, key, value):
    def mutate(d):
        _env(d, svc)[key] = value

    return mutate


def _del_env(svc, key):
    def mutate(d):
        del _env(d, svc)[key]

    return mutate


def _set(path, value):
    def mutate(d):
        node = d
        for p in path[:-1]:
            node = node[p]
        node[path[-1]] = value

    return mutate


def _del(path):
    def mutate(d):
        node = d
        for p in path[:-1]:
            node = node[p]
        del node[path[-1]]

    return mutate


MUTATIONS = [
    ("kafka_nodes", "two nodes with id 1", _set_env("kafka-2", "KAFKA_NODE_ID", 1)),
    ("kafka_nodes", "kafka-3 removed", _del(["services", "kafka-3"])),
    ("process_roles", "broker only", _set_env("kafka-1", "KAFKA_PROCESS_ROLES", "broker")),
    (
        "quorum_voters",
        "one node's voters differ",
        _set_env("kafka-3", "KAFKA_CONTROLLER_QUORUM_VOTERS", "1@kafka-1:29093"),
    ),
    (
        "quorum_voters",
        "voters on the wrong port",
        lambda d: [
            _env(d, n).__setitem__(
                "KAFKA_CONTROLLER_QUORUM_VOTERS", "1@kafka-1:9093,2@kafka-2:9093,3@kafka-3:9093"
            )
            for n in KAFKA_NODES
        ],
    ),
    (
        "cluster_id",
        "CLUSTER_ID differs",
        _set_env("kafka-2", "CLUSTER_ID", "AAAAAAAAAAAAAAAAAAAAAA"),
    ),
    ("cluster_id", "CLUSTER_ID missing", _del_env("kafka-1", "CLUSTER_ID")),
    (
        "listener_names",
        "no inter.broker.listener.name",
        _del_env("kafka-1", "KAFKA_INTER_BROKER_LISTENER_NAME"),
    ),
    (
        "listener_names",
        "no controller.listener.names",
        _del_env("kafka-2", "KAFKA_CONTROLLER_LISTENER_NAMES"),
    ),
    (
        "host_listeners",
        "kafka-2 advertises 9092",
        _set_env(
            "kafka-2",
            "KAFKA_ADVERTISED_LISTENERS",
            "INTERNAL://kafka-2:19092,EXTERNAL://localhost:9092",
        ),
    ),
    (
        "host_listeners",
        "host port remapped 19093:9093",
        _set(["services", "kafka-2", "ports"], ["127.0.0.1:19093:9093"]),
    ),
    (
        "controller_not_published",
        "controller port published",
        _set(["services", "kafka-1", "ports"], ["127.0.0.1:9092:9092", "127.0.0.1:29093:29093"]),
    ),
    (
        "controller_not_published",
        "controller on 9093",
        _set_env(
            "kafka-1", "KAFKA_LISTENERS", "INTERNAL://:19092,EXTERNAL://:9092,CONTROLLER://:9093"
        ),
    ),
    (
        "internal_listener",
        "internal advertised as localhost",
        _set_env(
            "kafka-3",
            "KAFKA_ADVERTISED_LISTENERS",
            "INTERNAL://localhost:19092,EXTERNAL://localhost:9094",
        ),
    ),
    (
        "volumes",
        "data on a bind mount",
        _set(["services", "kafka-1", "volumes"], ["./data1:/var/lib/kafka/data"]),
    ),
    (
        "volumes",
        "log dir not on the volume",
        _set_env("kafka-2", "KAFKA_LOG_DIRS", "/tmp/kraft-combined-logs"),
    ),
    # Without KAFKA_LOG_DIRS the image writes to /tmp/kraft-combined-logs, off the volume.
    ("volumes", "image default log dir", _del_env("kafka-1", "KAFKA_LOG_DIRS")),
    ("volumes", "volume not declared", _del(["volumes", "kafka-3-data"])),
    (
        "images_pinned",
        "kafka :latest",
        _set(["services", "kafka-1", "image"], "apache/kafka:latest"),
    ),
    ("images_pinned", "kafka 3.x", _set(["services", "kafka-2", "image"], "apache/kafka:3.9.1")),
    (
        "images_pinned",
        "kafka-ui untagged",
        _set(["services", "kafka-ui", "image"], "ghcr.io/kafbat/kafka-ui"),
    ),
    ("replication_settings", "min ISR 1", _set_env("kafka-1", "KAFKA_MIN_INSYNC_REPLICAS", 1)),
    (
        "replication_settings",
        "offsets RF missing",
        _del_env("kafka-3", "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR"),
    ),
    ("healthchecks", "no healthcheck", _del(["services", "kafka-2", "healthcheck"])),
    (
        "healthchecks",
        "healthcheck on the wrong host",
        _set(["services", "kafka-1", "healthcheck", "test"], ["CMD", "true"]),
    ),
    (
        "kafka_ui",
        "kafka-ui on localhost bootstrap",
        _set_env("kafka-ui", "KAFKA_CLUSTERS_0_BOOTSTRAPSERVERS", "localhost:9092"),
    ),
    (
        "kafka_ui",
        "kafka-ui on 8081",
        _set(["services", "kafka-ui", "ports"], ["127.0.0.1:8081:8080"]),
    ),
    (
        "kafka_ui",
        "kafka-ui :main",
        _set(["services", "kafka-ui", "image"], "ghcr.io/kafbat/kafka-ui:main"),
    ),
    (
        "jupyter",
        "jupyter on localhost bootstrap",
        _set_env("jupyter", "KAFKA_BOOTSTRAP_SERVERS", "localhost:9092"),
    ),
    (
        "jupyter",
        "missing Dockerfile",
        _set(["services", "jupyter", "build", "dockerfile"], "docker/nope/Dockerfile"),
    ),
    (
        "jupyter",
        "not waiting for health",
        _set(["services", "jupyter", "depends_on"], ["kafka-1", "kafka-2", "kafka-3"]),
    ),
    (
        "ports_loopback",
        "published on all interfaces",
        _set(["services", "kafka-3", "ports"], ["9094:9094"]),
    ),
    (
        "default_network_only",
        "custom network",
        _set(["networks"], {"kafka-net": {"external": True}}),
    ),
]


@pytest.mark.parametrize(
    ("check", "label", "mutate"), MUTATIONS, ids=[f"{c}-{label}" for c, label, _ in MUTATIONS]
)
def test_checker_rejects_broken_compose(compose, check, label, mutate):
    broken = copy.deepcopy(compose)
    mutate(broken)
    assert COMPOSE_CHECKS[check](broken), f"{check} accepted a compose file with: {label}"


def test_every_compose_checker_has_a_failing_case():
    assert {c for c, _, _ in MUTATIONS} == set(COMPOSE_CHECKS)


@pytest.mark.parametrize(
    ("label", "old", "new"),
    [
        ("FROM latest", "FROM python:3.11-slim-bookworm", "FROM python:latest"),
        ("FROM python 3.12", "FROM python:3.11-slim-bookworm", "FROM python:3.12-slim-bookworm"),
        ("no Java", "openjdk-17-jre-headless", "curl"),
        ("no graphviz", "openjdk-17-jre-headless graphviz", "openjdk-17-jre-headless"),
        ("project not installed", "pip install /course[course,labs,grading];", "true;"),
        ("no PYSPARK_PYTHON", "ENV PYSPARK_PYTHON=", "ENV NOT_PYSPARK_PYTHON="),
        ("CMD not jupyter", 'CMD ["jupyter", "lab"', 'CMD ["python", "-m", "http.server"'),
    ],
)
def test_dockerfile_checker_rejects(dockerfile_text, label, old, new):
    assert old in dockerfile_text, f"mutation {label!r} no longer applies; update the test"
    assert check_dockerfile(dockerfile_text.replace(old, new))


def _connector_version(dockerfile_text: str) -> Version:
    m = re.search(r"spark-sql-kafka-0-10_2\.13:(\d+\.\d+\.\d+)", expand_args(dockerfile_text))
    assert m, "no spark-sql-kafka-0-10_2.13 coordinate in the Dockerfile"
    return Version(m.group(1))


def _other_version(v: Version) -> str:
    return f"{v.major}.{v.minor}.{v.micro + 1}"


@pytest.mark.parametrize(
    "label",
    [
        "Scala 2.12 connector",
        "connector from another Spark",
        "pyspark and connector differ",
        "no connector",
    ],
)
def test_spark_version_checker_rejects(dockerfile_text, label):
    v = _connector_version(dockerfile_text)
    old, new = {
        "Scala 2.12 connector": ("spark-sql-kafka-0-10_2.13:", "spark-sql-kafka-0-10_2.12:"),
        "connector from another Spark": (
            f"spark-sql-kafka-0-10_2.13:{v}",
            "spark-sql-kafka-0-10_2.13:3.5.1",
        ),
        "pyspark and connector differ": (
            f"ARG SPARK_VERSION={v}",
            f"ARG SPARK_VERSION={_other_version(v)}",
        ),
        "no connector": ("spark-sql-kafka-0-10_2.13", "spark-sql-avro_2.13"),
    }[label]
    assert old in dockerfile_text, f"mutation {label!r} no longer applies; update the test"
    broken = dockerfile_text.replace(old, new)
    assert check_spark_versions(broken, pyspark_requirement(), installed_pyspark())


def test_spark_version_checker_reads_pyproject_pin(dockerfile_text):
    v = _connector_version(dockerfile_text)
    # pyproject's pin decides when there is one: a pin the connector does not satisfy fails...
    assert check_spark_versions(dockerfile_text, Requirement(f"pyspark<{v}"), str(v))
    # ...and a satisfied wildcard pin passes, whatever is installed.
    assert (
        check_spark_versions(
            dockerfile_text, Requirement(f"pyspark[sql]=={v.major}.{v.minor}.*"), None
        )
        == []
    )
    # Without a pyproject pin, the installed pyspark must equal the connector's version.
    assert check_spark_versions(dockerfile_text, None, _other_version(v))
    assert check_spark_versions(dockerfile_text, None, str(v)) == []


# --------------------------------------------------------------------------- helper script


def _load_fetch_script():
    spec = importlib.util.spec_from_file_location("fetch_spark_kafka", FETCH_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("jar", "artifact"),
    [
        ("org.apache.spark_spark-sql-kafka-0-10_2.13-4.3.0.jar", "spark-sql-kafka-0-10_2.13"),
        (
            "org.apache.spark_spark-token-provider-kafka-0-10_2.13-4.3.0.jar",
            "spark-token-provider-kafka-0-10_2.13",
        ),
        ("org.apache.kafka_kafka-clients-3.9.1.jar", "kafka-clients"),
        ("org.apache.commons_commons-pool2-2.12.0.jar", "commons-pool2"),
        ("commons-pool-1.5.4.jar", "commons-pool"),
        ("com.github.luben_zstd-jni-1.5.6-4.jar", "zstd-jni"),
        ("zstd-jni-1.5.7-7.jar", "zstd-jni"),
        ("hadoop-client-runtime-3.5.0.jar", "hadoop-client-runtime"),
    ],
)
def test_fetch_script_names_artifacts(jar, artifact):
    assert _load_fetch_script().artifact_of(jar) == artifact


def test_fetch_script_copies_only_what_spark_lacks(tmp_path):
    fetch = _load_fetch_script()
    ivy, spark_jars = tmp_path / "ivy", tmp_path / "jars"
    ivy.mkdir()
    spark_jars.mkdir()
    for name in (
        "zstd-jni-1.5.7-7.jar",
        "commons-pool-1.5.4.jar",
        "hadoop-client-runtime-3.5.0.jar",
    ):
        (spark_jars / name).write_bytes(b"spark")
    resolved = []
    for name in (
        "org.apache.spark_spark-sql-kafka-0-10_2.13-4.3.0.jar",
        "org.apache.kafka_kafka-clients-3.9.1.jar",
        "org.apache.commons_commons-pool2-2.12.0.jar",
        "com.github.luben_zstd-jni-1.5.6-4.jar",
        "org.apache.hadoop_hadoop-client-runtime-3.4.1.jar",
    ):
        (ivy / name).write_bytes(b"ivy")
        resolved.append(ivy / name)
    copied, skipped = fetch.copy_missing_jars(resolved, spark_jars)
    assert sorted(p.name for p in spark_jars.glob("*.jar")) == [
        "commons-pool-1.5.4.jar",
        "commons-pool2-2.12.0.jar",
        "hadoop-client-runtime-3.5.0.jar",
        "kafka-clients-3.9.1.jar",
        "spark-sql-kafka-0-10_2.13-4.3.0.jar",
        "zstd-jni-1.5.7-7.jar",
    ]
    assert (
        spark_jars / "zstd-jni-1.5.7-7.jar"
    ).read_bytes() == b"spark"  # Spark's own version kept
    assert len(copied) == 3 and len(skipped) == 2
