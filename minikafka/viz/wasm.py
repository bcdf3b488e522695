"""Graphviz in the browser edition: @viz-js/viz (Graphviz compiled to WebAssembly), which
`minikafka lite build` puts in the site at static/viz/viz.js. It is loaded into the kernel's
worker, so a picture becomes SVG text in Python as `dot` makes it on a laptop, and the
panels' HTML widgets can show it.

Loading is asynchronous (the worker fetches and compiles the module while no cell runs):
`load()` starts it, `when_ready()` calls back once it is there, and until then `render()`
returns None."""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from minikafka.browser import BROWSER

__all__ = ["load", "ready", "render", "when_ready"]

_viz: Any = None
_loading = False
_waiting: list[Callable[[], None]] = []


def _site_url() -> str | None:
    """The site's root, from the worker's own address (…/extensions/<kernel>/static/…)."""
    import js

    location = getattr(js, "location", None)
    if location is None:  # Pyodide outside a page (Node) with no site to load from
        return None
    href = str(location.href)
    return href.split("/extensions/")[0] if "/extensions/" in href else href.rsplit("/", 1)[0]


def load() -> None:
    """Start loading @viz-js/viz into this worker (once; nothing outside the browser)."""
    global _loading
    if not BROWSER or _loading or _viz is not None:
        return
    site = _site_url()
    if site is None:
        return
    _loading = True
    from pyodide.code import run_js

    url = site + "/static/viz/viz.js"
    run_js(f"import({json.dumps(url)}).then(m => m.instance())").then(_loaded)


def _loaded(viz: Any) -> None:
    global _viz
    _viz = viz
    waiting, _waiting[:] = list(_waiting), []
    for callback in waiting:
        callback()


def ready() -> bool:
    return _viz is not None


def when_ready(callback: Callable[[], None]) -> None:
    """Call `callback` once the module is loaded (now, if it is)."""
    if _viz is not None:
        callback()
    else:
        _waiting.append(callback)
        load()


def render(source: str, engine: str = "dot") -> str | None:
    """SVG text for DOT source, or None while the module is loading. Raises ValueError
    with Graphviz's message for a graph it refuses."""
    if _viz is None:
        load()
        return None
    import js
    from pyodide.ffi import JsException, to_js

    options = to_js({"engine": engine, "format": "svg"}, dict_converter=js.Object.fromEntries)
    try:
        return str(_viz.renderString(source, options))
    except JsException as e:
        raise ValueError(str(e)) from None
