"""Every lesson in the browser edition's Python: the site `minikafka lite build` makes is
loaded into Pyodide by Node (the same runtime, wheels and lock file a browser tab loads),
and each lesson's code cells run in order in an IPython shell, from the site's own copy of
the lessons (its files/ folder, where a browser's kernel starts). Between cells the event
loop turns, as it does between cells in a tab, so the kernel's Graphviz (@viz-js/viz, from
the site) loads and pictures are drawn as SVG.

Cells that need what a tab lacks (a served cluster, a process, a C library) must say so in
one line and be skipped; anything else that fails is a failure. The Chromium test
(tests/test_lite_browser.py) runs lessons through JupyterLite's own page."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900), pytest.mark.xdist_group("lite")]

LESSONS = sorted((Path(__file__).resolve().parents[1] / "lessons").glob("[0-9][0-9]-*.ipynb"))

# Cells a tab cannot run, by lesson: what each needs.
SKIPPED = {
    "03": ["a cluster served over the network"],
    "05": ["a cluster served over the network"],
    "06": ["a cluster served over the network"],
    "07": ["snappy compression", "zstd compression", "zstd compression",
           "a cluster served over the network", "the lesson's check"],
    "08": ["a cluster served over the network"],
    "09": ["a cluster served over the network"],
    "10": ["a cluster served over the network"],
    "13": ["fastavro", "fastavro", "the lesson's check"],
    "14": ["a cluster served over the network", "the lesson's check"],
    "15": ["a metrics endpoint served over HTTP", "the lesson's check"],
    "16": ["a process of its own", "the lesson's check"],
    "17": ["confluent-kafka", "the lesson's check"],
    "18": ["confluent-kafka", "the lesson's check"],
    "19": ["`minikafka serve` run as a process", "the lesson's check"],
    "22": ["cryptography", *["a cluster served over the network"] * 7, "the lesson's check"],
    "23": ["a cluster served over the network", "the lesson's check"],
}

RUNNER = r"""
import { loadPyodide } from "%(site)s/static/pyodide/pyodide.mjs";
import fs from "node:fs";
const dir = "%(site)s/static/pyodide/";
const lock = JSON.parse(fs.readFileSync(dir + "pyodide-lock.json"));
// Where a kernel's worker lives in the site: minikafka.viz.wasm finds static/viz from it.
globalThis.location = {href: "file://%(site)s/extensions/kernel/static/worker.js"};
const py = await loadPyodide({indexURL: dir, lockFileURL: dir + "pyodide-lock.json",
                              packages: Object.keys(lock.packages)});
py.FS.mkdir("/drive");
py.FS.mount(py.FS.filesystems.NODEFS, {root: "%(site)s/files"}, "/drive");
py.runPython(%(helpers)s);
const tick = () => new Promise(r => setTimeout(r, 20));
for (const name of %(names)s) {
  const cells = py.runPython(`start(${JSON.stringify(name)})`);
  for (let i = 0; i < cells; i++) {
    py.runPython(`run(${i})`);
    for (let w = 0; w < 250 && py.runPython("loading()"); w++) await tick();
    await tick();
  }
  console.log("LESSON " + py.runPython("finish()"));
}
"""

HELPERS = r"""
import contextlib, io, json, os, time
from IPython.core.interactiveshell import InteractiveShell

CHECK_MIME = "application/vnd.minikafka.check+json"
state = {}

def start(name):
    InteractiveShell.clear_instance()
    shell = InteractiveShell.instance()
    os.chdir("/drive")
    import minikafka.course.browser
    minikafka.course.browser.install()
    shown = []
    shell.display_pub.publish = lambda data, metadata=None, **kw: shown.append(data)
    nb = json.load(open(name))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    state.update(name=name, shell=shell, shown=shown, code=code, errors=[], skips=[],
                 skipped_cells=[], started=time.time())
    return len(code)

def run(i):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        result = state["shell"].run_cell("".join(state["code"][i]["source"]))
    text = out.getvalue()
    skips = [line for line in text.splitlines() if line.startswith("Skipped in the browser")]
    state["skips"] += skips
    if skips:
        state["skipped_cells"].append(i)
    if not result.success or "Traceback" in text:
        state["errors"].append([i, repr(result.error_in_exec)[:300], text[-1500:]])

def loading():
    import sys
    wasm = sys.modules.get("minikafka.viz.wasm")
    return bool(wasm and wasm._loading and not wasm.ready())

def finish():
    shown = state["shown"]
    checks = [d[CHECK_MIME] for d in shown if CHECK_MIME in d]
    return json.dumps({"name": state["name"], "cells": len(state["code"]),
                       "seconds": round(time.time() - state["started"], 1),
                       "errors": state["errors"], "skips": state["skips"],
                       "skipped_cells": state["skipped_cells"],
                       "svg": sum("image/svg+xml" in d for d in shown),
                       "widgets": sum("application/vnd.jupyter.widget-view+json" in d
                                      for d in shown),
                       "check": checks[0] if checks else None})
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, lite_site: Path) -> dict[str, dict]:
    node = shutil.which("node")
    assert node, "node is needed (Debian: apt-get install nodejs npm; test.sh installs it)"
    work = tmp_path_factory.mktemp("lite-lessons")
    site = lite_site
    script = work / "lessons.mjs"
    script.write_text(RUNNER % {"site": site.as_posix(), "helpers": json.dumps(HELPERS),
                                "names": json.dumps([p.name for p in LESSONS])})
    done = subprocess.run([node, str(script)], capture_output=True, text=True, timeout=800)
    found = [json.loads(line.removeprefix("LESSON ")) for line in done.stdout.splitlines()
             if line.startswith("LESSON ")]
    assert done.returncode == 0 and len(found) == len(LESSONS), \
        done.stdout[-3000:] + done.stderr[-3000:]
    print("\nlesson  cells  skipped  pictures  seconds in Node's Pyodide")
    for run in found:
        print(f"{run['name'][:2]:>6}  {run['cells']:>5}  {len(run['skips']):>7}  "
              f"{run['svg']:>8}  {run['seconds']:>7}")
    return {run["name"][:2]: run for run in found}


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_lesson_runs_in_the_sites_python(runs: dict[str, dict], path: Path) -> None:
    run = runs[path.stem[:2]]
    assert run["errors"] == []
    expected = SKIPPED.get(path.stem[:2], [])
    assert len(run["skips"]) == len(expected), run["skips"]
    for line, what in zip(run["skips"], expected):
        assert what in line, (line, what)
    if "the lesson's check" not in expected:  # the check cell ran and reported its number
        assert run["check"] and run["check"]["notebook"] == path.stem[:2], run["check"]
    # A cell that ran and shows a picture or a panel drew it with the kernel's Graphviz.
    code = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    drawing = [i for i, source in enumerate(code) if "show(" in source or "Panel(" in source]
    if set(drawing) - set(run["skipped_cells"]):
        assert run["svg"] + run["widgets"] > 0, run
