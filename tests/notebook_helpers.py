"""Helpers shared by the notebook tests (test_lessons.py, test_labs.py).

Every lesson and lab ends with one cell tagged ``check`` that reports its outcomes as
display data students do not see (``minikafka.course.checks.CHECK_MIME``); these run a
notebook and read them back. A plain module: pytest's default ("prepend")
import mode puts tests/ on sys.path, so the test files import it by name.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

# What a notebook's run depends on besides its file: where the labs find Kafka, and Spark's.
RUN_ENV = ("KAFKA_BOOTSTRAP_SERVERS", "MINIKAFKA_KAFKA_DATA_DIR", "MINIKAFKA_SPARK_SOURCE",
           "MINIKAFKA_SPARK_UI")
# Runs that finished, by notebook and environment: the notebook's own test and the picture
# width test read the same run instead of executing the notebook twice (a notebook's tests
# share one xdist group, so they run in one worker, the width test last).
_RUNS: dict[tuple, str] = {}


def notebook_group(path: Path) -> pytest.MarkDecorator:
    """The xdist group of every test that runs this notebook the same way."""
    return pytest.mark.xdist_group(f"notebook-{path.parent.name}-{path.stem}")


def execute_notebook(path: Path, timeout: int, *, stderr_ok: bool = False
                     ) -> nbformat.NotebookNode:
    """Run the notebook as `pytest --nbmake` does: top to bottom in a fresh kernel of the
    notebook's own kernelspec, in its own folder, with the same `dot` (PATH's). Raise
    CellExecutionError on the first failing cell, and then, as nbmake does, fail on an
    error output even in a cell that finished: IPython reports a display that raised
    (a picture Graphviz refused) as an error output without failing the cell. Text on
    stderr fails too, unless stderr_ok: a student sees it in red. A run that passed is kept
    for this process: the same notebook in the same environment is not run again, and each
    caller's checks (stderr_ok) are applied to the kept run."""
    source = Path(path).read_bytes()  # the key holds it: a notebook rewritten runs again
    key = (Path(path).resolve(), source, *(os.environ.get(k) for k in RUN_ENV))
    if key not in _RUNS:
        _RUNS[key] = nbformat.writes(_execute(path, source, timeout))
    nb = nbformat.reads(_RUNS[key], as_version=4)
    problems = [p for p in output_problems(nb) if not (stderr_ok and "on stderr" in p)]
    assert not problems, f"{path.name}: " + "; ".join(problems)
    return nb


def _execute(path: Path, source: bytes, timeout: int) -> nbformat.NotebookNode:
    """Every cell of the notebook run in a fresh kernel; raises on the first failing cell."""
    nb = nbformat.reads(source.decode(), as_version=4)
    kernel = nb.metadata.get("kernelspec", {}).get("name", "python3")
    client = NotebookClient(nb, timeout=timeout, kernel_name=kernel,
                            resources={"metadata": {"path": str(path.parent)}})
    try:
        client.execute()
    except Exception as exc:
        # What the cells before the failing one printed: on a loaded CI machine that is often
        # the only record of why a check found what it did.
        exc.add_note(f"{path.name}, printed before it failed:\n" + printed_tail(nb))
        raise
    return nb


def printed_tail(nb: nbformat.NotebookNode, limit: int = 6000) -> str:
    """The text the notebook's cells printed, by cell, its last `limit` characters."""
    parts = []
    for i, cell in enumerate(nb.cells):
        text = "".join(out.get("text", "") for out in cell.get("outputs", [])
                       if out.get("output_type") == "stream")
        if text.strip():
            parts.append(f"[cell {i}]\n{text.rstrip()}")
    return "\n".join(parts)[-limit:]


# librdkafka logs from C straight to the process's stderr ("%4|1700000000.123|FAC|
# rdkafka#consumer-1| ..."): whether a lesson quiets it is the lessons' own check on
# third-party noise, not the harness's.
LIBRDKAFKA_LOG = re.compile(r"^%\d\|[\d.]+\|\w+\|rdkafka#")


def output_problems(nb: nbformat.NotebookNode) -> list[str]:
    """What a student would see in red: error outputs and stderr text, by cell."""
    found = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                found.append(f"cell {i} shows {out.get('ename')}: {out.get('evalue')}")
            elif out.get("output_type") == "stream" and out.get("name") == "stderr":
                text = "\n".join(line for line in out["text"].splitlines()
                                 if line.strip() and not LIBRDKAFKA_LOG.match(line))
                if text:
                    found.append(f"cell {i} prints on stderr: {text[:300]!r}")
    return found


def check_cells(nb: nbformat.NotebookNode) -> list:
    return [c for c in nb.cells if "check" in c.get("metadata", {}).get("tags", [])]


def outcomes_of(nb: nbformat.NotebookNode, mark: str) -> dict:
    """The outcomes the check cell reported (display data of CHECK_MIME): exactly one, and
    no `mark` line printed where students would see it."""
    from minikafka.course.checks import CHECK_MIME

    outputs = [out for cell in check_cells(nb) for out in cell.get("outputs", [])]
    printed = [line for out in outputs if out.get("output_type") == "stream"
               for line in out["text"].splitlines() if mark in line]
    assert not printed, f"the check cell printed {printed}"
    found = [out["data"] for out in outputs
             if out.get("output_type") == "display_data" and CHECK_MIME in out.get("data", {})]
    assert len(found) == 1, f"expected one {CHECK_MIME} output, got {found}"
    # Only the outcomes' own MIME type: no text/plain a front end would draw.
    assert set(found[0]) == {CHECK_MIME}, found[0]
    data = found[0][CHECK_MIME]
    return json.loads(data) if isinstance(data, str) else dict(data)


# Third-party log lines a student did not cause: librdkafka's ("%4|1700000000.123|FAC|..."
# on stderr) and its share consumer's "Preview" notice.
THIRD_PARTY_NOISE = ("rdkafka#", 'is in "Preview"')


def third_party_noise(nb: nbformat.NotebookNode) -> list[str]:
    """Lines of the notebook's outputs that third-party libraries logged."""
    return [line for cell in nb.cells for out in cell.get("outputs", [])
            if out.get("output_type") == "stream"
            for line in out["text"].splitlines() if any(n in line for n in THIRD_PARTY_NOISE)]
