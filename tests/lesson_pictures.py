"""Each lesson's pictures, drawn by the lesson's own cells: the code cells up to the last
one that draws run in one namespace, with `minikafka.course.pictures.show` collecting the graphs
instead of displaying them, and every Panel contributing its current views. "Your turn"
exercise cells (ids NN-ex-...) are skipped: their answer cells wait for a student."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

import nbformat

DRAWS = re.compile(r"\bshow\(|\bPanel\(")


def picture_cells(path: Path) -> list[int]:
    """Indexes of the code cells that draw a picture or create a panel."""
    nb = nbformat.read(path, as_version=4)
    return [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and DRAWS.search(c.source)]


def lesson_graphs(path: Path) -> list[tuple[str, Any]]:
    """(name, graphviz.Digraph) for every picture the lesson draws, in order."""
    import minikafka.course.pictures as pictures
    from minikafka.viz.panels import Panel

    nb = nbformat.read(path, as_version=4)
    last = max(picture_cells(path))
    shown: list[tuple[str, Any]] = []
    real_show = pictures.show
    pictures.show = lambda *graphs: shown.extend((f"cell {i}", g) for g in graphs)
    ns: dict[str, Any] = {"__name__": "__lesson__"}
    try:
        for i, cell in enumerate(nb.cells[:last + 1]):
            if cell.cell_type != "code" or "-ex-" in str(cell.get("id", "")):
                continue
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(cell.source, f"{path.name}[{i}]", "exec"), ns)
    finally:
        pictures.show = real_show
    for name, value in ns.items():
        if isinstance(value, Panel):
            shown += [(f"{name}.{view}", g)
                      for view, g in value.graphs(value.history[-1]).items()]
    return shown
