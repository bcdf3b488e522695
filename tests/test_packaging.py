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


def _requirement(name: str) -> str:
    for req in PYPROJECT["project"]["dependencies"]:
        if re.match(rf"{re.escape(name)}\b(?![-.])", req, re.IGNORECASE):
            return req
    raise AssertionError(f"{name} is not a runtime dependency")


def test_project_metadata() -> None:
    project = PYPROJECT["project"]
    assert project["name"] == "minikafka"
    assert project["requires-python"] == ">=3.11"
    assert project["scripts"]["minikafka"] == "minikafka.cli:main"
    assert _requirement("kafka-python") == "kafka-python==3.0.12"
    assert _requirement("nbgrader") == "nbgrader==0.9.6"
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
