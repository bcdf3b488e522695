"""docs/architecture.svg names every package and top-level module of minikafka, so the
picture the README links to cannot silently fall behind the code."""
from __future__ import annotations

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


# The modules that reach the cluster through a typed port (core.api.port.ClusterPort,
# core.broker.BrokerHost, core.share.coordinator.ShareHost, core.groups.port) instead of
# `Any`; the ones left use members no port has yet (private ones, the server's lifecycle).
UNTYPED_CLUSTER = {
    "core/metrics.py", "core/recovery.py", "core/txn_log.py", "wire/handlers/offset_fetch.py",
    "wire/listeners.py", "wire/server.py", "wire/serve.py",
}


def test_core_and_wire_type_the_cluster_through_a_port():
    package = ROOT / "minikafka"
    untyped = {str(p.relative_to(package)) for layer in ("core", "wire")
               for p in (package / layer).rglob("*.py")
               if re.search(r"\b(cluster|sim): Any\b", p.read_text(encoding="utf-8"))}
    assert untyped <= UNTYPED_CLUSTER, sorted(untyped - UNTYPED_CLUSTER)
