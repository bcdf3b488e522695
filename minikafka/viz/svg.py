"""Turning a Digraph into SVG, with a small cache.

The replay slider redraws states it has drawn before; the same DOT source always gives
the same SVG, so the second time costs a dictionary lookup instead of a `dot` run.
"""

from __future__ import annotations

import shutil
from collections import OrderedDict

import graphviz

_CACHE: OrderedDict[tuple[str, str], str] = OrderedDict()
_CACHE_SIZE = 256


def has_dot() -> bool:
    """Is Graphviz's `dot` on PATH? (Debian package graphviz.)"""
    return shutil.which("dot") is not None


def to_svg(graph: graphviz.Digraph, *, cache: bool = True) -> str:
    """The graph drawn by its engine (dot unless the graph says otherwise) as SVG text."""
    key = (graph.engine, graph.source)
    if cache and key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    svg = graph.pipe(format="svg", encoding="utf-8")
    if cache:
        _CACHE[key] = svg
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return svg


def clear_cache() -> None:
    _CACHE.clear()
