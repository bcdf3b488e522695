"""`minikafka lite build --output DIR`: the lessons as a static JupyterLite site.

Everything the site loads is in DIR, so it works from any static host with no other host
reachable: JupyterLite's app (jupyterlite-core), the Pyodide kernel
(jupyterlite-pyodide-kernel) and the ipywidgets labextension, Pyodide's runtime from npm,
@viz-js/viz (Graphviz compiled to WebAssembly) from npm, and every Python wheel the kernel
and the lessons import, with a pyodide-lock.json that names them all and preloads them, so
`import minikafka` works in the first cell as it does on CPython.

Pyodide's own package CDN is never used: its npm package ships only the runtime, so micropip,
IPython and the rest are pure-Python wheels downloaded from PyPI at build time (or, for the
kernel's own packages, taken from the kernel's labextension). Packages with C extensions and
no Pyodide build (crc32c, murmurhash2, the compression codecs, numpy, pyspark, nbgrader) are
left out; minikafka has pure-Python fallbacks or refuses the feature with a message.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from email.parser import Parser
from pathlib import Path

from ..extras import require
from .bytecode import compile_wheels
from .errors import BuildError

require("lite", what="minikafka lite build (the browser edition)")

from packaging.requirements import Requirement  # noqa: E402
from packaging.utils import canonicalize_name  # noqa: E402

__all__ = ["PYODIDE_VERSION", "VIZ_VERSION", "BuildError", "build", "repo_root"]

# jupyterlite-pyodide-kernel 0.8.6 is built against Pyodide 314.0.6 (its PYODIDE_VERSION and
# default pyodideUrl), so the npm runtime is pinned to that, not to the newest 314.0.x.
PYODIDE_VERSION = "314.0.6"
VIZ_VERSION = "3.31.0"
PYTHON_VERSION = "3.14"  # Pyodide 314's Python

# The pure-Python wheels from PyPI, with their dependencies: the kernel's (IPython, jedi,
# comm), micropip's, and the lessons' (kafka-python, graphviz's DOT builder, ipywidgets).
PYPI_REQUIREMENTS = [
    "micropip==0.11.1",
    "packaging",
    "ipython",
    "jedi",
    "comm",
    "kafka-python==3.0.12",
    "graphviz>=0.20",
    "ipywidgets~=8.1",
]
# Provided instead by the kernel's labextension (a stub widgetsnbextension) or not needed in
# the kernel (jupyterlab_widgets is the labextension itself, installed into the site).
SKIP = {"widgetsnbextension", "jupyterlab-widgets"}

# Files outside lessons/ that a lesson reads, put beside the lessons in the site.
LESSON_FILES = ["docs/server-sasl.properties"]

# The site's labextensions, from this environment (ipywidgets' comes with jupyterlab_widgets).
LABEXTENSIONS = ["@jupyterlite/pyodide-kernel-extension", "@jupyter-widgets/jupyterlab-manager",
                 "jupyterlab_pygments"]

# Pyodide's environment markers, for the dependencies each wheel declares.
MARKERS = {"sys_platform": "emscripten", "platform_system": "Emscripten", "os_name": "posix",
           "platform_machine": "wasm32", "python_version": PYTHON_VERSION,
           "python_full_version": f"{PYTHON_VERSION}.2", "implementation_name": "cpython",
           "platform_python_implementation": "CPython", "extra": ""}


def repo_root() -> Path:
    """The course's checkout: minikafka's source and the lessons."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "pyproject.toml").exists() or not (root / "lessons").is_dir():
        raise BuildError(f"{root} is not a checkout of the course (no pyproject.toml and "
                         "lessons/): build the site from the repository")
    return root


def _run(cmd: list[str], what: str, cwd: Path | None = None) -> None:
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if done.returncode:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise BuildError(f"{what} failed ({' '.join(cmd[:4])} ...):\n{tail}")


def npm_packages(cache: Path) -> tuple[Path, Path]:
    """Pyodide's runtime and @viz-js/viz, installed with npm into the cache (once)."""
    npm = shutil.which("npm")
    if npm is None:
        raise BuildError("npm is needed to fetch Pyodide's runtime and @viz-js/viz "
                         "(Debian: apt-get install npm)")
    prefix = cache / f"npm-pyodide-{PYODIDE_VERSION}-viz-{VIZ_VERSION}"
    modules = prefix / "node_modules"
    if not (modules / "pyodide" / "pyodide.asm.wasm").exists() or \
            not (modules / "@viz-js" / "viz" / "dist" / "viz.js").exists():
        prefix.mkdir(parents=True, exist_ok=True)
        _run([npm, "install", "--prefix", str(prefix), "--no-save", "--no-audit", "--no-fund",
              "--ignore-scripts", f"pyodide@{PYODIDE_VERSION}", f"@viz-js/viz@{VIZ_VERSION}"],
             "npm install")
    return modules / "pyodide", modules / "@viz-js" / "viz"


def pypi_wheels(cache: Path) -> list[Path]:
    """Pure-Python wheels (py3-none-any) of PYPI_REQUIREMENTS and their dependencies."""
    dest = cache / f"wheels-py{PYTHON_VERSION}"
    stamp = dest / "requirements.txt"
    wanted = "\n".join(PYPI_REQUIREMENTS)
    if not stamp.exists() or stamp.read_text() != wanted:
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        _run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
              "--only-binary=:all:", "--platform", "any", "--implementation", "py",
              "--abi", "none", "--python-version", PYTHON_VERSION, "--dest", str(dest),
              *PYPI_REQUIREMENTS], "pip download (pure-Python wheels from PyPI)")
        stamp.write_text(wanted)
    return [w for w in sorted(dest.glob("*.whl"))
            if canonicalize_name(w.name.split("-")[0]) not in SKIP]


def minikafka_wheel(root: Path, dest: Path) -> Path:
    """A wheel of this checkout's minikafka (its dependencies are resolved by the lock),
    built from a copy of its sources: setuptools' build/ folder in the checkout would keep
    modules deleted since, and two builds at once would share it."""
    with tempfile.TemporaryDirectory(prefix="minikafka-src-") as tmp:
        src = Path(tmp)
        shutil.copytree(root / "minikafka", src / "minikafka",
                        ignore=shutil.ignore_patterns("__pycache__"))
        for name in ("pyproject.toml", "README.md"):
            shutil.copy(root / name, src / name)
        _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check",
              "--no-deps", "--wheel-dir", str(dest), str(src)], "pip wheel minikafka")
    return next(dest.glob("minikafka-*.whl"))


def kernel_wheels() -> list[Path]:
    """The kernel's own wheels (pyodide_kernel, piplite, ipykernel and widgetsnbextension
    stubs), shipped in its labextension."""
    from jupyterlite_pyodide_kernel.constants import PYODIDE_VERSION as KERNEL_PYODIDE

    if KERNEL_PYODIDE != PYODIDE_VERSION:
        raise BuildError(f"jupyterlite-pyodide-kernel expects Pyodide {KERNEL_PYODIDE}, this "
                         f"build pins {PYODIDE_VERSION}: pin the pair together")
    share = Path(sys.prefix) / "share" / "jupyter" / "labextensions"
    pypi = share / "@jupyterlite" / "pyodide-kernel-extension" / "static" / "pypi"
    wheels = [w for w in sorted(pypi.glob("*.whl")) if "widgetsnbextension-3" not in w.name]
    if not wheels:
        raise BuildError(f"no kernel wheels in {pypi}: is jupyterlite-pyodide-kernel installed?")
    return wheels


def lock_entry(wheel: Path) -> dict:
    """A pyodide-lock.json package entry for a pure-Python wheel."""
    with zipfile.ZipFile(wheel) as z:
        meta_name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(z.read(meta_name).decode("utf-8"))
        tops = sorted({n.split("/")[0].removesuffix(".py") for n in z.namelist()
                       if not n.split("/")[0].endswith((".dist-info", ".data"))
                       and (n.endswith(".py") or "/" in n)})
    depends = []
    for text in meta.get_all("Requires-Dist") or []:
        req = Requirement(text)
        if req.marker is None or req.marker.evaluate(MARKERS):
            depends.append(canonicalize_name(req.name))
    return {"name": canonicalize_name(meta["Name"]), "version": meta["Version"],
            "file_name": wheel.name, "install_dir": "site",
            "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
            "package_type": "package", "imports": tops, "depends": depends,
            "unvendored_tests": False, "shared_library": False}


def pyodide_dir(runtime: Path, wheels: list[Path], out: Path) -> list[str]:
    """Pyodide's runtime plus the wheels, with a lock naming exactly those wheels.
    Returns the package names, all of which the kernel preloads."""
    out.mkdir(parents=True, exist_ok=True)
    for name in ("pyodide.mjs", "pyodide.js", "pyodide.asm.mjs", "pyodide.asm.wasm",
                 "python_stdlib.zip", "package.json"):
        shutil.copy2(runtime / name, out / name)
    upstream = json.loads((runtime / "pyodide-lock.json").read_text())
    packages = {}
    for wheel in wheels:
        entry = lock_entry(wheel)
        packages[entry["name"]] = entry
        shutil.copy2(wheel, out / wheel.name)
    for entry in packages.values():  # dependencies the browser does without (pexpect...)
        entry["depends"] = sorted(d for d in entry["depends"] if d in packages)
    lock = {"info": upstream["info"], "packages": dict(sorted(packages.items()))}
    (out / "pyodide-lock.json").write_text(json.dumps(lock, indent=1, sort_keys=True))
    return sorted(packages)


def viz_dir(viz: Path, out: Path) -> None:
    """@viz-js/viz's ES module (Graphviz in WebAssembly, inlined): pictures in the browser."""
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy2(viz / "dist" / "viz.js", out / "viz.js")
    shutil.copy2(viz / "package.json", out / "package.json")


def configure(site: Path, packages: list[str]) -> None:
    """Point the kernel at the site's own Pyodide, preloading every wheel, with no PyPI."""
    config_path = site / "jupyter-lite.json"
    config = json.loads(config_path.read_text())
    data = config.setdefault("jupyter-config-data", {})
    settings = data.setdefault("litePluginSettings", {}).setdefault(
        "@jupyterlite/pyodide-kernel-extension:kernel", {})
    settings.update({
        "pyodideUrl": "./static/pyodide/pyodide.mjs",
        "disablePyPIFallback": True,
        "loadPyodideOptions": {"packages": packages,
                               "lockFileURL": "./static/pyodide/pyodide-lock.json"},
    })
    config_path.write_text(json.dumps(config, indent=2, sort_keys=True))


def build(output: Path, cache: Path | None = None, lessons: Path | None = None) -> Path:
    """Build the site into output (replaced if it exists) and return it."""
    root = repo_root()
    cache = cache or root / ".cache" / "lite"
    lessons = lessons or root / "lessons"
    cache.mkdir(parents=True, exist_ok=True)
    runtime, viz = npm_packages(cache)
    wheels = pypi_wheels(cache) + kernel_wheels()
    output = output.resolve()
    with tempfile.TemporaryDirectory(prefix="minikafka-lite-") as tmp:
        work = Path(tmp)
        wheels.append(minikafka_wheel(root, work / "dist"))
        contents = work / "files"
        shutil.copytree(lessons, contents, ignore=shutil.ignore_patterns(
            ".ipynb_checkpoints", "__pycache__"))
        for name in LESSON_FILES:
            (contents / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / name, contents / name)
        # The students' JupyterLab settings (line wrapping; every cell laid out, so the
        # page's Find sees the whole lesson), the same in the site.
        shutil.copy2(root / "minikafka" / "course" / "jupyterlab-overrides.json",
                     work / "overrides.json")
        if output.exists():
            shutil.rmtree(output)
        # Only the labextensions the lessons use: not whatever else the environment has
        # (nbgrader's, which needs a Jupyter server).
        share = Path(sys.prefix) / "share" / "jupyter" / "labextensions"
        extensions = [str(share / name) for name in LABEXTENSIONS]
        (work / "jupyter_lite_config.json").write_text(json.dumps({"LiteBuildConfig": {
            "ignore_sys_prefix": ["federated_extensions"],
            "federated_extensions": extensions}}))
        lite = Path(sys.executable).with_name("jupyter-lite")
        _run([str(lite), "build", "--lite-dir", str(work), "--contents", str(contents),
              "--output-dir", str(output), "--no-sourcemaps", "--no-unused-shared-packages"],
             "jupyter lite build", cwd=work)
        wheels = compile_wheels(runtime, wheels, cache)
        packages = pyodide_dir(runtime, wheels, output / "static" / "pyodide")
    viz_dir(viz, output / "static" / "viz")
    configure(output, packages)
    return output
