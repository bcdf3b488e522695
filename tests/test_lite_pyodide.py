"""The browser edition's Python, run by Node: the site `minikafka lite build` makes holds a
Pyodide runtime and a pyodide-lock.json whose wheels all load (the kernel's too), minikafka
imports without its C extensions, and a seeded cluster gives the same partitions, offsets
and CRCs as on CPython (the pure-Python murmur2 and CRC-32C)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from minikafka import Cluster
from minikafka.core.hashing import crc32c

# The lite tests share one xdist group: one worker builds the site (conftest's lite_site).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900), pytest.mark.xdist_group("lite")]

KEYS = [f"truck-{i}" for i in range(40)]
SCRIPT = """
from minikafka import Cluster
from minikafka.core import hashing
from minikafka.course.pictures import _Picture
from minikafka.viz import cluster_view
import IPython, ipywidgets, pyodide_kernel, kafka
cluster = Cluster(brokers=3, seed=7)
cluster.create_topic("orders", partitions=6, replication_factor=3)
producer = cluster.producer(acks="all")
placed = [producer.send("orders", key=k.encode(), value=b"v").get().partition for k in KEYS]
bundle = _Picture(cluster_view(cluster.snapshot()))._repr_mimebundle_()
# Every module imported from the wheels has the bytecode the build compiled for this Python
# (its magic number, unchecked hash), so no kernel start compiles it again.
import importlib.util, site
loaded = [m.__file__ for m in list(sys.modules.values()) if getattr(m, "__file__", None)
          and m.__file__.startswith(tuple(site.getsitepackages())) and m.__file__.endswith(".py")]
def compiled(path):
    try:
        with open(importlib.util.cache_from_source(path), "rb") as f:
            head = f.read(8)
    except OSError:
        return False
    return head[:4] == importlib.util.MAGIC_NUMBER and int.from_bytes(head[4:], "little") == 1
json.dumps({"platform": sys.platform, "native": hashing.NATIVE, "placed": placed,
            "crc": hashing.crc32c(b"123456789" * 50), "picture": sorted(bundle),
            "modules": len(loaded), "without_bytecode": [p for p in loaded if not compiled(p)]})
"""

NODE = """
import { loadPyodide } from "%(site)s/static/pyodide/pyodide.mjs";
import fs from "node:fs";
const dir = "%(site)s/static/pyodide/";
const lock = JSON.parse(fs.readFileSync(dir + "pyodide-lock.json"));
const py = await loadPyodide({indexURL: dir, lockFileURL: dir + "pyodide-lock.json",
                              packages: Object.keys(lock.packages)});
py.globals.set("KEYS", py.toPy(%(keys)s));
console.log("RESULT " + await py.runPythonAsync("import json, sys\\n" + %(script)s));
"""


def test_site_python_runs_minikafka_like_cpython(tmp_path: Path, lite_site: Path) -> None:
    node = shutil.which("node")
    assert node, "node is needed (Debian: apt-get install nodejs npm; test.sh installs it)"
    site = lite_site
    packages = json.loads((site / "static/pyodide/pyodide-lock.json").read_text())["packages"]
    assert {"minikafka", "kafka-python", "ipython", "ipywidgets", "pyodide-kernel",
            "micropip"} <= set(packages)
    assert not {"crc32c", "murmurhash2", "numpy", "pyspark"} & set(packages)
    config = json.loads((site / "jupyter-lite.json").read_text())
    kernel = config["jupyter-config-data"]["litePluginSettings"][
        "@jupyterlite/pyodide-kernel-extension:kernel"]
    assert sorted(kernel["loadPyodideOptions"]["packages"]) == sorted(packages)
    assert (site / "static/viz/viz.js").exists()
    assert sorted((site / "files").glob("*.ipynb")) and all(
        (site / "files" / p.name).read_bytes() == p.read_bytes()
        for p in (Path(__file__).resolve().parents[1] / "lessons").glob("*.ipynb"))
    # Each lesson's closing "Next: **Lesson N**" names a notebook the site has (lesson 21's,
    # lesson 22).
    nexts = {}
    for notebook in sorted((site / "files").glob("[0-9][0-9]-*.ipynb")):
        markdown = "\n".join("".join(c["source"]) for c in json.loads(notebook.read_text())[
            "cells"] if c["cell_type"] == "markdown")
        for number in re.findall(r"Next: \*\*Lesson (\d+)\*\*", markdown):
            found = sorted((site / "files").glob(f"{int(number):02d}-*.ipynb"))
            assert len(found) == 1, f"{notebook.name} points on to lesson {number}: {found}"
            nexts[notebook.name[:2]] = found[0].name
    assert nexts["21"] == "22-authentication.ipynb" and len(nexts) >= 23

    script = tmp_path / "probe.mjs"
    script.write_text(NODE % {"site": site.as_posix(), "keys": json.dumps(KEYS),
                              "script": json.dumps(SCRIPT)})
    done = subprocess.run([node, str(script)], capture_output=True, text=True, timeout=600)
    lines = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stdout[-2000:] + done.stderr[-2000:]
    result = json.loads(lines[0].removeprefix("RESULT "))

    cluster = Cluster(brokers=3, seed=7)
    cluster.create_topic("orders", partitions=6, replication_factor=3)
    producer = cluster.producer(acks="all")
    placed = [producer.send("orders", key=k.encode(), value=b"v").get().partition for k in KEYS]
    assert result["platform"] == "emscripten" and result["native"] is False
    assert result["placed"] == placed
    assert result["crc"] == crc32c(b"123456789" * 50)
    assert result["picture"] == ["text/html", "text/plain"]  # drawn by the page's viz.js
    assert result["modules"] > 300 and result["without_bytecode"] == [], result
