"""Graphviz pictures (the ``minikafka.viz`` renderers) drawn in a notebook, or named in
words when Graphviz's ``dot`` is missing. In the browser edition (Pyodide, where there is no
``dot`` to run) the page draws the DOT source with @viz-js/viz, Graphviz in WebAssembly,
which ``minikafka lite build`` puts in the site."""

from __future__ import annotations

import json
import shutil
import uuid
from typing import Any

from .browser import BROWSER

# From a notebook page (lab/, notebooks/) to the site's copy of @viz-js/viz.
VIZ_URL = "../static/viz/viz.js"

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
        if BROWSER:
            from minikafka.viz import wasm

            if not wasm.ready():  # the page draws it, with its own copy of Graphviz
                wasm.load()
                return {"text/html": browser_html(self.graph.source), "text/plain": text}
        elif not _has_dot():
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


def browser_html(source: str) -> str:
    """HTML that draws DOT source in the page with @viz-js/viz (a module script: JupyterLab
    runs scripts in the outputs of code it has just executed)."""
    node = f"minikafka-picture-{uuid.uuid4().hex}"
    return (f'<div id="{node}" class="minikafka-picture"></div>\n<script type="module">\n'
            f'const {{instance}} = await import(new URL("{VIZ_URL}", document.baseURI).href);\n'
            f'const svg = (await instance()).renderSVGElement({json.dumps(source)});\n'
            f'document.getElementById("{node}").replaceChildren(svg);\n</script>')


def _load_browser_graphviz() -> None:
    from minikafka.viz import wasm

    wasm.load()


if BROWSER:  # the kernel's own Graphviz loads while the lesson's first cell finishes
    _load_browser_graphviz()
