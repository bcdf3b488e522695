"""The installed environment is the one every student gets: pins, codecs, tools, scripts."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _requirement(name: str, extra: str | None = None) -> str:
    project = PYPROJECT["project"]
    reqs = project["optional-dependencies"][extra] if extra else project["dependencies"]
    for req in reqs:
        if re.match(rf"{re.escape(name)}\b(?![-.])", req, re.IGNORECASE):
            return req
    raise AssertionError(f"{name} is not a {f'[{extra}]' if extra else 'runtime'} dependency")


def test_project_metadata() -> None:
    project = PYPROJECT["project"]
    assert project["name"] == "minikafka"
    assert project["requires-python"] == ">=3.11"
    assert project["scripts"]["minikafka"] == "minikafka.cli:main"
    assert _requirement("kafka-python") == "kafka-python==3.0.12"
    assert _requirement("nbgrader", "grading") == "nbgrader==0.9.6"
    _requirement("crc32c")  # hard dependency, see test_crc32c_is_the_c_one


@pytest.mark.parametrize(
    "dist, expected",
    [
        ("kafka-python", "3.0.12"),
        ("nbgrader", "0.9.6"),
        ("pyspark", "4.2.0"),  # the newest pyspark whose Kafka connector Maven Central has
        ("ipywidgets", "8.1."),
    ],
)
def test_installed_versions_match_the_pins(dist: str, expected: str) -> None:
    assert metadata.version(dist).startswith(expected)


def test_console_script_is_registered() -> None:
    eps = metadata.entry_points(group="console_scripts", name="minikafka")
    assert [ep.value for ep in eps] == ["minikafka.cli:main"], "reinstall: ./setup.sh --no-launch"


def test_minikafka_is_installed_from_this_tree() -> None:
    import minikafka

    assert Path(minikafka.__file__).resolve().is_relative_to(ROOT), minikafka.__file__


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_kafka_python_codecs_work(codec: str) -> None:
    from kafka import codec as c

    assert getattr(c, f"has_{codec}")(), f"kafka-python cannot use {codec}"
    data = b"truck-7 " * 4096
    encoded = getattr(c, f"{codec}_encode")(data)
    assert len(encoded) < len(data)
    assert getattr(c, f"{codec}_decode")(encoded) == data


def test_crc32c_is_the_c_one() -> None:
    from kafka.record import util

    assert util.crc32c_c is not None, "the crc32c package is missing: CRCs ~4000x slower"
    # Known answer: CRC-32C("123456789") = 0xE3069283.
    assert util.calc_crc32c(memoryview(b"123456789")) == 0xE3069283


# Java client's UtilsTest.testMurmur2 (signed ints there; unsigned 32-bit here).
MURMUR2_JAVA = {
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
}


@pytest.mark.parametrize("key, expected", sorted(MURMUR2_JAVA.items()))
def test_murmur2_matches_the_java_client(key: bytes, expected: int) -> None:
    from kafka.partitioner.default import murmur2
    from murmurhash2 import murmurhash2

    assert murmur2(key) == expected & 0xFFFFFFFF
    assert murmurhash2(key, 0x9747B28C) == expected & 0xFFFFFFFF


def test_widgets_extension_is_available_to_jupyterlab() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "jupyter", "labextension", "list"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "@jupyter-widgets/jupyterlab-manager" in out.stdout + out.stderr


def test_graphviz_renders() -> None:
    assert shutil.which("dot") is not None, "Graphviz's dot is missing (test.sh installs it)"
    import graphviz

    g = graphviz.Digraph()
    g.edge("producer", "broker-1")
    assert b"<svg" in g.pipe(format="svg")


@pytest.mark.parametrize("script", ["setup.sh", "test.sh", ".ci/run"])
def test_scripts_are_executable_bash(script: str) -> None:
    path = ROOT / script
    assert os.access(path, os.X_OK), f"{script} is not executable"
    subprocess.run(["bash", "-n", str(path)], check=True, timeout=30)


def test_setup_help_does_not_install_anything() -> None:
    out = subprocess.run(
        ["bash", str(ROOT / "setup.sh"), "--help"], capture_output=True, text=True, timeout=30
    )
    assert out.returncode == 0
    assert "--no-launch" in out.stdout


def test_readme_gives_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "./setup.sh\n" in readme
    assert "./test.sh\n" in readme
    assert "--no-launch" in readme
    assert "<!-- perf -->" in readme


def _readme_example() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## minikafka in 10 lines", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


def test_readme_example_is_short() -> None:
    lines = [line for line in _readme_example().splitlines() if line.strip()]
    assert len(lines) <= 10


@pytest.mark.timeout(120)
def test_readme_example_runs() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _readme_example()],
        capture_output=True,
        text=True,
        timeout=110,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[0].split()
    assert first[0] == "trucks" and first[1].isdigit() and first[2] == "0", out.stdout


# -------------------------------------------- dependencies in layers: the core and the extras

from minikafka.extras import EXTRAS  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_import_rules import STDLIB, find_imports, package_modules  # noqa: E402

# Modules Pyodide itself provides (minikafka.viz.wasm uses them in the browser edition).
PYODIDE_RUNTIME = {"js", "pyodide"}


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _closure(requirements: list[str]) -> set[str]:
    """The distributions these requirements pull in, as installed here (markers honoured,
    a requirement's own extras included)."""
    from packaging.requirements import Requirement

    seen: set[str] = set()
    todo = [(Requirement(r), "") for r in requirements]
    while todo:
        req, extra = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        name = _canonical(req.name)
        if name == "minikafka":  # the [dev] extra names the other extras
            for e in req.extras:
                todo += [(Requirement(r), "") for r in PYPROJECT["project"][
                    "optional-dependencies"][e]]
            continue
        key = name + "[" + ",".join(sorted(req.extras)) + "]"
        if key in seen:
            continue
        seen.add(key)
        try:
            requires = metadata.requires(req.name) or []
        except metadata.PackageNotFoundError:
            continue
        for r in requires:
            sub = Requirement(r)
            todo += [(sub, e) for e in ("", *req.extras)]
    return {k.split("[")[0] for k in seen}


def _gates(sources: dict[str, str]) -> dict[str, set[str]]:
    """{module: the extras its top-level ``require(extra, ...)`` calls check}."""
    import ast

    out: dict[str, set[str]] = {}
    for module, source in sources.items():
        for node in ast.parse(source).body:
            call = node.value if isinstance(node, ast.Expr) else None
            if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                    and call.func.id == "require" and call.args
                    and isinstance(call.args[0], ast.Constant)):
                out.setdefault(module, set()).add(call.args[0].value)
    return out


def _function_gates(source: str) -> dict[int, set[str]]:
    """{line of an import inside a function: the extras a ``require(extra, ...)`` statement
    of that function checks before it} (a lazy import gated where it is made)."""
    import ast

    out: dict[int, set[str]] = {}
    for fn in ast.walk(ast.parse(source)):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        checks = [(node.lineno, node.value.args[0].value) for node in fn.body
                  if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                  and isinstance(node.value.func, ast.Name) and node.value.func.id == "require"
                  and node.value.args and isinstance(node.value.args[0], ast.Constant)]
        for node in ast.walk(fn):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                out.setdefault(node.lineno, set()).update(
                    extra for line, extra in checks if line < node.lineno)
    return out


def _guarded_imports(source: str) -> set[int]:
    """Lines of imports inside ``try: ... except ImportError``."""
    import ast

    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Try) and any(
                isinstance(h.type, ast.Name) and h.type.id in {"ImportError",
                                                               "ModuleNotFoundError"}
                for h in node.handlers):
            for inner in node.body:
                for sub in ast.walk(inner):
                    if isinstance(sub, ast.Import | ast.ImportFrom):
                        lines.add(sub.lineno)
    return lines


def optional_imports_without_their_extra() -> list[str]:
    """Imports in minikafka/ of a package `pip install minikafka` does not install, made
    where neither the module nor a package above it checks the extra that does."""
    extras = PYPROJECT["project"]["optional-dependencies"]
    core = _closure(PYPROJECT["project"]["dependencies"])
    by_extra = {e: _closure(reqs) for e, reqs in extras.items() if e in EXTRAS}
    dists = {m: {_canonical(d) for d in ds}
             for m, ds in metadata.packages_distributions().items()}
    modules = {name: (path.read_text(encoding="utf-8"), is_pkg)
               for name, path, is_pkg in package_modules()}
    gates = _gates({m: src for m, (src, _) in modules.items()})
    problems = []
    for module, (source, is_pkg) in sorted(modules.items()):
        parts = module.split(".")
        checked = set().union(*(gates.get(".".join(parts[:i]), set())
                                for i in range(1, len(parts) + 1)))
        guarded = _guarded_imports(source)
        in_function = _function_gates(source)
        for imp in find_imports(source, module, is_pkg):
            if imp.type_only or imp.top in STDLIB or imp.top in {"minikafka", ""}:
                continue
            if imp.top in PYODIDE_RUNTIME:  # the browser edition's own, imported there only
                continue
            provided_by = dists.get(imp.top, {_canonical(imp.top)})
            if provided_by & core or imp.line in guarded:
                continue
            if not any(provided_by & by_extra[e]
                       for e in checked | in_function.get(imp.line, set())):
                wanted = sorted(e for e, c in by_extra.items() if provided_by & c)
                problems.append(f"{module}:{imp.line} imports {imp.top} (extra {wanted}) "
                                f"without require() of its extra (checked: {sorted(checked)})")
    return sorted(set(problems))


def test_the_core_install_is_light() -> None:
    core = {_canonical(r.split("[")[0].split("=")[0].split(">")[0].split("~")[0])
            for r in PYPROJECT["project"]["dependencies"]}
    assert core == {"kafka-python", "crc32c", "murmurhash2", "python-snappy", "cramjam", "lz4",
                    "zstandard"}
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert {"course", "labs", "grading", "test", "dev"} <= set(extras)
    assert any(r.startswith("pyspark") for r in extras["labs"])
    assert any(r.startswith("nbgrader") for r in extras["grading"])
    assert any(r.startswith("jupyterlab") for r in extras["course"])
    # setup.sh installs [dev]: the course's full set, so its two commands stay the same.
    assert "minikafka[course,labs,grading,tls,test]" in extras["dev"]
    assert '-e ".[dev]"' in (ROOT / "setup.sh").read_text(encoding="utf-8")
    # minikafka.extras names the modules each extra brings; they are what it installs.
    dists = metadata.packages_distributions()
    for extra, modules in EXTRAS.items():
        installs = _closure(extras[extra])
        for module in modules:
            assert {_canonical(d) for d in dists[module]} & installs, (extra, module)


def test_every_optional_import_checks_its_extra_first() -> None:
    assert optional_imports_without_their_extra() == []


def test_the_optional_import_checker_rejects_an_unchecked_import(tmp_path: Path,
                                                                 monkeypatch) -> None:
    pkg = tmp_path / "minikafka"
    (pkg / "viz").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "viz" / "__init__.py").write_text(
        'from ..extras import require\n\nrequire("course", what="pictures")\n')
    (pkg / "viz" / "draw.py").write_text("import graphviz\n")  # behind the package's gate
    (pkg / "cluster.py").write_text("import pyspark\n")  # no gate: a plain ImportError
    (pkg / "spark.py").write_text(
        'from .extras import require\n\nrequire("course", what="x")\nimport pyspark\n')
    (pkg / "tls.py").write_text("try:\n    import cryptography\nexcept ImportError:\n"
                                "    cryptography = None\n")
    # A lazy import is gated by a require() of the same function made before it, not after.
    (pkg / "certs.py").write_text(
        'from .extras import require\n\n\ndef make():\n    require("labs", what="x")\n'
        '    import pyspark\n\n\ndef late():\n    import pyspark\n'
        '    require("labs", what="x")\n')
    import test_import_rules

    real = test_import_rules.package_modules
    monkeypatch.setitem(globals(), "package_modules", lambda: real(pkg))
    problems = optional_imports_without_their_extra()
    assert [p.split(" ")[0] for p in problems] == \
        ["minikafka.certs:10", "minikafka.cluster:1", "minikafka.spark:4"]
    assert "extra ['labs']" in problems[0]


@pytest.mark.parametrize("blocked, module, extra", [
    ("graphviz", "minikafka.viz", "course"),
    ("ipywidgets", "minikafka.viz.panels", "course"),
    ("graphviz", "minikafka.demo", "course"),
    ("matplotlib", "minikafka.course.charts", "course"),
    ("pyspark", "minikafka.spark.source", "labs"),
    ("numpy", "minikafka.spark.records", "labs"),
    ("pyspark", "minikafka.course.spark", "labs"),
])
def test_a_missing_extra_is_named(blocked: str, module: str, extra: str) -> None:
    code = (f"import sys; sys.modules[{blocked!r}] = None\n"
            f"import {module}\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert out.returncode != 0
    assert "ModuleNotFoundError: " in out.stderr, out.stderr
    assert f"needs {blocked}, from minikafka's [{extra}] extra: " \
           f"pip install 'minikafka[{extra}]'" in out.stderr, out.stderr


def test_the_core_runs_with_every_extra_missing() -> None:
    blocked = [m for modules in EXTRAS.values() for m in modules] + ["IPython", "confluent_kafka"]
    code = ("import sys\n"
            f"for m in {blocked!r}: sys.modules[m] = None\n"
            "import minikafka, minikafka.cli, minikafka.wire.server, minikafka.tools\n"
            "c = minikafka.Cluster(brokers=1)\n"
            "c.create_topic('t', partitions=1)\n"
            "p = c.producer(); p.send('t', b'v').get(); p.flush()\n"
            "print(sorted(m for m, v in sys.modules.items() if v is not None and m.split('.')[0] in "
            "{'pyspark', 'nbgrader', 'jupyterlab', 'graphviz', 'matplotlib'}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_pip_install_in_a_fresh_venv_is_light_and_serves(tmp_path: Path) -> None:
    """`pip install minikafka` (the source tree here, deps from pip's cache) installs no
    pyspark, nbgrader or JupyterLab, and its `minikafka serve` answers kafka-python."""
    import json

    from kafka import KafkaConsumer, KafkaProducer

    src = tmp_path / "src"
    shutil.copytree(ROOT / "minikafka", src / "minikafka",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--prefer-binary",
                              str(src)], capture_output=True, text=True, timeout=800)
    assert install.returncode == 0, install.stdout + install.stderr
    listed = subprocess.run([str(python), "-m", "pip", "list", "--format=json"],
                            capture_output=True, text=True, check=True, timeout=120)
    installed = {_canonical(d["name"]) for d in json.loads(listed.stdout)}
    assert {"minikafka", "kafka-python", "crc32c", "murmurhash2"} <= installed
    assert not installed & {"pyspark", "nbgrader", "jupyterlab", "notebook", "graphviz",
                            "matplotlib", "ipywidgets", "numpy"}, sorted(installed)

    viz = subprocess.run([str(python), "-c", "import minikafka.viz"], capture_output=True,
                         text=True, timeout=120, cwd=tmp_path)
    assert "pip install 'minikafka[course]'" in viz.stderr, viz.stderr

    proc = subprocess.Popen([str(venv / "bin" / "minikafka"), "serve", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path)
    try:
        bootstrap = None
        for line in proc.stdout:
            if line.startswith("bootstrap servers: "):
                bootstrap = line.split()[2]
                break
        assert bootstrap, proc.stderr.read()
        producer = KafkaProducer(bootstrap_servers=bootstrap)
        producer.send("trucks", key=b"truck-01", value=b'{"speed_kmh": 72}').get(timeout=30)
        producer.close()
        consumer = KafkaConsumer("trucks", bootstrap_servers=bootstrap,
                                 auto_offset_reset="earliest", consumer_timeout_ms=10_000)
        got = [(r.key, r.value) for r in consumer]
        consumer.close()
        assert got == [(b"truck-01", b'{"speed_kmh": 72}')]
    finally:
        proc.kill()
        proc.wait(timeout=30)


def test_setup_no_launch_prints_the_command_the_launch_runs() -> None:
    # The printed command must work as root too (JupyterLab refuses root without
    # --allow-root) and open the course at its first lesson.
    out = subprocess.run(["bash", str(ROOT / "setup.sh"), "--no-launch"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    command = out.stdout.strip().splitlines()[-1].split()
    assert command[:2] == [".venv/bin/jupyter", "lab"], command
    assert "--ServerApp.ip=127.0.0.1" in command
    assert command[-1] == "lessons/00-why-kafka.ipynb"
    assert ("--allow-root" in command) == (os.getuid() == 0), command
