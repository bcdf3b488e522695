"""Graphviz pictures (the ``minikafka.viz`` renderers) drawn in a notebook, or named in
words when Graphviz's ``dot`` is missing."""

from __future__ import annotations

import shutil
from typing import Any

_DOT: bool | None = None


def _has_dot() -> bool:
    global _DOT
    if _DOT is None:
        _DOT = shutil.which("dot") is not None
    return _DOT


class _Picture:
    def __init__(self, graph: Any) -> None:
        self.graph = graph

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        name = getattr(self.graph, "name", None) or "picture"
        text = f"<{name}: a graphviz picture>"
        if not _has_dot():
            return {"text/plain": text + " (not drawn: install Graphviz's `dot`, "
                                         "e.g. apt-get install graphviz)"}
        from minikafka.viz.svg import PictureError, to_svg

        try:
            svg = to_svg(self.graph)
        except PictureError as e:  # one line in the picture's place, not a traceback
            return {"text/plain": f"<{name}: {e}>"}
        return {"image/svg+xml": svg, "text/plain": text}


def show(*graphs: Any) -> None:
    """Draw each graphviz picture in the notebook (in words, if `dot` is missing)."""
    from IPython.display import display

    for graph in graphs:
        display(_Picture(graph))
