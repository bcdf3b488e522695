"""The site's wheels with their bytecode: each module compiled once at build time by the
site's own Pyodide (run by Node), so a kernel does not compile IPython, jedi, kafka-python
and minikafka from source every time a lesson opens.

Pyodide writes no bytecode (its file system is memory, gone with the tab), so without this
every kernel start compiles them all again: about 3.5 s of each lesson's start, measured in
Node's Pyodide. The .pyc files are unchecked-hash ones (PEP 552): a wheel never changes
once built, so Python loads them without comparing source times, which an unpacked wheel
does not keep. Tracebacks still show the source, which stays in the wheel.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from .errors import BuildError

__all__ = ["compile_wheels"]

# Runs in Pyodide: every wheel in /in compiled into /out under the same name: the wheel as it
# is, with the __pycache__ entries appended, dated at the zip format's epoch so that a build
# is byte for byte the same.
COMPILE = r"""
import compileall, os, py_compile, shutil, sys, tempfile, zipfile
site = f"/lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages"
for name in sorted(os.listdir("/in")):
    tmp = tempfile.mkdtemp()
    with zipfile.ZipFile(f"/in/{name}") as src:
        src.extractall(tmp)
    compileall.compile_dir(tmp, ddir=site, quiet=2, workers=1,
                           invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    shutil.copyfile(f"/in/{name}", f"/out/{name}")
    with zipfile.ZipFile(f"/out/{name}", "a", zipfile.ZIP_DEFLATED) as out:
        for root, _, files in sorted(os.walk(tmp)):
            for file in sorted(files):
                if root.endswith("__pycache__") and file.endswith(".pyc"):
                    path = os.path.join(root, file)
                    info = zipfile.ZipInfo(os.path.relpath(path, tmp), (1980, 1, 1, 0, 0, 0))
                    info.compress_type = zipfile.ZIP_DEFLATED
                    with open(path, "rb") as f:
                        out.writestr(info, f.read())
"""

RUNNER = """
import { loadPyodide } from %(module)s;
const py = await loadPyodide({indexURL: %(index)s});
for (const [dir, root] of [["/in", %(inputs)s], ["/out", %(outputs)s]]) {
  py.FS.mkdir(dir);
  py.FS.mount(py.FS.filesystems.NODEFS, {root}, dir);
}
try {
  py.runPython(%(code)s);
} catch (e) {  // the Python traceback, without Node's dump of the minified runtime
  console.error(String(e.message || e));
  process.exit(1);
}
"""


def compile_wheels(runtime: Path, wheels: list[Path], cache: Path) -> list[Path]:
    """The wheels with bytecode for `runtime`'s Python, built with Node the first time a
    wheel is seen and kept in `cache` by the wheel's and the runtime's hashes (only this
    build's: the others are removed)."""
    node = shutil.which("node")
    if node is None:
        raise BuildError("node is needed to compile the site's wheels with Pyodide "
                         "(Debian: apt-get install nodejs npm)")
    runtime_id = hashlib.sha256((runtime / "package.json").read_bytes()).hexdigest()[:12]
    out_dir = cache / f"compiled-{runtime_id}"
    out_dir.mkdir(parents=True, exist_ok=True)
    compiled = {w: out_dir / hashlib.sha256(w.read_bytes()).hexdigest()[:16] / w.name
                for w in wheels}
    todo = [w for w, c in compiled.items() if not c.exists()]
    if todo:
        with tempfile.TemporaryDirectory(prefix="minikafka-pyc-") as tmp:
            inputs, outputs = Path(tmp) / "in", Path(tmp) / "out"
            inputs.mkdir()
            outputs.mkdir()
            for wheel in todo:
                shutil.copy2(wheel, inputs / wheel.name)
            script = Path(tmp) / "compile.mjs"
            script.write_text(RUNNER % {
                "module": json.dumps((runtime / "pyodide.mjs").as_posix()),
                "index": json.dumps(runtime.as_posix() + "/"),
                "inputs": json.dumps(inputs.as_posix()), "outputs": json.dumps(outputs.as_posix()),
                "code": json.dumps(COMPILE)})
            done = subprocess.run([node, str(script)], capture_output=True, text=True,
                                  timeout=600)
            if done.returncode:
                        raise BuildError("compiling the wheels with Pyodide failed:\n"
                                 + (done.stdout + done.stderr)[-3000:])
            for wheel in todo:
                compiled[wheel].parent.mkdir(parents=True, exist_ok=True)
                shutil.move(outputs / wheel.name, compiled[wheel])
    for old in set(out_dir.iterdir()) - {c.parent for c in compiled.values()}:
        shutil.rmtree(old)  # earlier builds' wheels (minikafka's changes with every edit)
    return [compiled[w] for w in wheels]
