"""How long the browser edition's kernel takes to start: Pyodide with every wheel of the
site, then the imports a lesson's first cell makes (the kernel's IPython, ipywidgets,
graphviz, kafka-python, minikafka, a three-broker cluster), in Node's Pyodide.

The peer is the same site with the bytecode taken out of its wheels (what a kernel compiled
from source at every start before `minikafka lite build` compiled it); rounds alternate.

    python tests/benchmarks/lite_kernel_start.py [--site DIR] [--rounds 5]

Without --site the site is built into a temporary folder first (`minikafka lite build`).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

RUNNER = """
import { loadPyodide } from %(module)s;
import fs from "node:fs";
const dir = %(dir)s;
const lock = JSON.parse(fs.readFileSync(dir + "pyodide-lock.json"));
const started = performance.now();
const py = await loadPyodide({indexURL: dir, lockFileURL: dir + "pyodide-lock.json",
                              packages: Object.keys(lock.packages)});
const loaded = performance.now();
py.runPython(`
import pyodide_kernel, IPython, ipywidgets, graphviz, kafka, minikafka
from minikafka import Cluster
from minikafka.course.pictures import show
from minikafka.viz import cluster_view
Cluster(brokers=3, seed=7).create_topic("orders", partitions=3, replication_factor=3)
`);
const done = performance.now();
console.log(JSON.stringify({load: (loaded - started) / 1000, imports: (done - loaded) / 1000}));
"""


def without_bytecode(site: Path, out: Path) -> Path:
    """A copy of the site's pyodide folder whose wheels have no __pycache__ entries."""
    src = site / "static" / "pyodide"
    shutil.copytree(src, out)
    lock = json.loads((out / "pyodide-lock.json").read_text())
    for entry in lock["packages"].values():
        wheel = out / entry["file_name"]
        with zipfile.ZipFile(src / entry["file_name"]) as z, \
                zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as stripped:
            for info in z.infolist():
                if "__pycache__/" not in info.filename:
                    stripped.writestr(info, z.read(info))
        entry["sha256"] = hashlib.sha256(wheel.read_bytes()).hexdigest()
    (out / "pyodide-lock.json").write_text(json.dumps(lock))
    return out


def start(node: str, pyodide_dir: Path, work: Path) -> dict[str, float]:
    script = work / "start.mjs"
    script.write_text(RUNNER % {"module": json.dumps(str(pyodide_dir / "pyodide.mjs")),
                                "dir": json.dumps(str(pyodide_dir) + "/")})
    done = subprocess.run([node, str(script)], capture_output=True, text=True, timeout=300)
    if done.returncode:
        sys.exit(done.stderr[-3000:])
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="a built site (default: build one)")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    node = shutil.which("node") or sys.exit("node is needed")
    with tempfile.TemporaryDirectory(prefix="lite-start-") as tmp:
        work = Path(tmp)
        site = args.site
        if site is None:
            from minikafka.lite.build import build
            site = build(work / "site")
        peers = {"compiled": site / "static" / "pyodide",
                 "from source": without_bytecode(site, work / "source")}
        times: dict[str, list[float]] = {name: [] for name in peers}
        for r in range(args.rounds):
            for name, directory in peers.items():
                t = start(node, directory, work)
                times[name].append(t["load"] + t["imports"])
                print(f"round {r + 1}  {name:<12} load {t['load']:5.2f} s  "
                      f"imports {t['imports']:5.2f} s", flush=True)
    med = {name: statistics.median(v) for name, v in times.items()}
    print(f"\nkernel start to a cluster, median of {args.rounds}: compiled {med['compiled']:.2f} s,"
          f" from source {med['from source']:.2f} s, ratio {med['from source'] / med['compiled']:.2f}x")


if __name__ == "__main__":
    main()
