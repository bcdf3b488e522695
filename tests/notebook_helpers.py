"""Helpers shared by the notebook tests (test_lessons.py, test_labs.py).

Every lesson and lab ends with one cell tagged ``check`` that prints its outcomes on one
line after a mark (``minikafka.course.checks.CHECK_MARK``); these
run a notebook and read that line back. A plain module: pytest's default ("prepend")
import mode puts tests/ on sys.path, so the test files import it by name.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def execute_notebook(path: Path, timeout: int) -> nbformat.NotebookNode:
    """Run the notebook top to bottom in a fresh kernel, in its own folder; raise
    CellExecutionError on the first failing cell."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    return nb


def check_cells(nb: nbformat.NotebookNode) -> list:
    return [c for c in nb.cells if "check" in c.get("metadata", {}).get("tags", [])]


def outcomes_of(nb: nbformat.NotebookNode, mark: str) -> dict:
    """The outcomes the check cell printed after `mark`: exactly one such line."""
    found = [line for cell in check_cells(nb) for out in cell.get("outputs", [])
             if out.get("output_type") == "stream"
             for line in out["text"].splitlines() if line.startswith(mark)]
    assert len(found) == 1, f"expected one {mark!r} line, got {found}"
    return json.loads(found[0][len(mark):])
