"""docs/architecture.svg names every package and top-level module of minikafka, so the
picture the README links to cannot silently fall behind the code."""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_picture_names_every_part_of_the_package():
    drawn = (ROOT / "docs" / "architecture.dot").read_text()
    svg = (ROOT / "docs" / "architecture.svg").read_text()
    parts = sorted(p.stem if p.is_file() else p.name
                   for p in (ROOT / "minikafka").iterdir()
                   if (p.suffix == ".py" and p.stem != "__init__")
                   or (p.is_dir() and (p / "__init__.py").exists()))
    missing = [name for name in parts if name not in drawn]
    assert not missing, f"docs/architecture.dot does not draw {missing}"
    assert all(name in svg for name in parts), "architecture.svg is older than architecture.dot"


# Every module reaches the cluster through a typed port (core.api.port.ClusterPort,
# core.broker.BrokerHost, core.share.coordinator.ShareHost, core.groups.port,
# client.port, wire.serve.ServedCluster, ...) or, above the clients, Cluster itself: never
# `Any`, which would hide what a module takes of the cluster. No module leaves a `cluster`
# parameter unannotated either: what a client takes of the cluster is client.port's
# ClientHost or AdminHost, what a wire handler or core.api takes is ClusterPort.
UNTYPED = re.compile(r"\b(cluster|sim): Any\b")
PORT_PARAMETERS = ("cluster", "sim")


def untyped_cluster(package: Path) -> list[str]:
    return sorted(str(p.relative_to(package)) for p in package.rglob("*.py")
                  if UNTYPED.search(p.read_text(encoding="utf-8")))


def unannotated_cluster(package: Path) -> list[str]:
    """file:line of each function's `cluster` (or `sim`) parameter without a type."""
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            args = node.args
            found += [f"{path.relative_to(package)}:{node.lineno}"
                      for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]
                      if arg.arg in PORT_PARAMETERS and arg.annotation is None]
    return found


def test_every_module_types_the_cluster_through_a_port():
    assert untyped_cluster(ROOT / "minikafka") == []


def test_every_module_annotates_its_cluster():
    """KafkaProducer(cluster: ClientHost), describe_log_dirs(cluster: ClusterPort, ...)."""
    assert unannotated_cluster(ROOT / "minikafka") == []


def test_the_port_check_catches_an_untyped_cluster(tmp_path):
    (tmp_path / "client").mkdir()
    (tmp_path / "client" / "typed.py").write_text("def f(cluster: ClientHost) -> None: ...\n")
    (tmp_path / "client" / "loose.py").write_text("def f(cluster: Any, n: int) -> None: ...\n")
    (tmp_path / "client" / "bare.py").write_text(
        "class P:\n    def __init__(self, cluster, **configs: Any) -> None: ...\n"
        "g = lambda cluster: cluster\n")
    (tmp_path / "broker.py").write_text("class B:\n    def __init__(self, sim: Any): ...\n")
    assert untyped_cluster(tmp_path) == ["broker.py", "client/loose.py"]
    assert unannotated_cluster(tmp_path) == ["client/bare.py:2"]


def port_members(port: type) -> set[str]:
    """The public names a Protocol and the Protocols it extends declare."""
    names: set[str] = set()
    for klass in port.__mro__:
        if klass.__module__ in ("typing", "builtins"):
            continue
        names |= {n for n in [*vars(klass), *getattr(klass, "__annotations__", {})]
                  if not n.startswith("_")}
    return names


def test_a_cluster_has_what_the_client_ports_declare():
    """The in-process clients are typed through client.port; Cluster must be one."""
    from minikafka.client.port import AdminHost, ClientHost
    from minikafka.cluster import Cluster

    cluster = Cluster(brokers=1)
    for port in (ClientHost, AdminHost):
        assert {"clock", "now_ms", "groups"} <= port_members(port)
        assert sorted(n for n in port_members(port) if not hasattr(cluster, n)) == [], port


def test_a_cluster_has_what_the_api_ports_declare():
    """core.api and the wire handlers take ClusterPort, the server ServedCluster."""
    from minikafka.cluster import Cluster
    from minikafka.core.api.port import ClusterPort
    from minikafka.wire.serve import ServedCluster

    cluster = Cluster(brokers=1)
    for port in (ClusterPort, ServedCluster):
        assert {"clock", "lock", "log_dirs", "put_scram_credential"} <= port_members(port)
        assert sorted(n for n in port_members(port) if not hasattr(cluster, n)) == [], port
