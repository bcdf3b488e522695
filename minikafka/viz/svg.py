"""Turning a Digraph into SVG fast enough to redraw after every click.

Starting `dot` costs tens of milliseconds (loading plugins and fonts) before it lays
out anything, more than our graphs take to lay out. So `to_svg` keeps `dot`
processes running and feeds them one graph after another on stdin: `dot` answers each
graph with one SVG document as soon as it has read it. If a process dies or does not
answer in time it is dropped, and the graph is drawn by a fresh `dot`.

Every picture is drawn here, and dot's stderr never reaches a notebook: it is read
into the same pipe as the SVG (its messages come before the graph's document), so
`render()` returns a graph's warnings beside its SVG and raises `PictureError`, one line,
on an error. A view that warns is a view to fix (tests render every lesson's pictures
and assert no message); a student sees the picture, or the one line.

The replay slider redraws states it has drawn before; the same DOT source always gives
the same SVG, so the second time costs a dictionary lookup.
"""

from __future__ import annotations

import atexit
import html
import logging
import queue
import re
import shutil
import subprocess
import threading
from collections import OrderedDict

import graphviz

from minikafka.browser import BROWSER

_CACHE: OrderedDict[tuple[str, str], str] = OrderedDict()
_CACHE_SIZE = 256
_LOCK = threading.Lock()  # panels draw several views at once, on threads
_END = b"</svg>\n"
_LOG = logging.getLogger(__name__)
# A dot that has drawn several graphs names the top group "page0,1_graph0" instead of
# "graph0"; normalise so the SVG does not depend on which process drew it.
_PAGE_ID = re.compile(r'<g id="page[0-9,]*_graph0" class="graph"')


def has_dot() -> bool:
    """Is Graphviz's `dot` on PATH? (Debian package graphviz.)"""
    return shutil.which("dot") is not None


class _DotProcess:
    """One long-running `<engine> -Tsvg`; a reader thread splits its output per graph
    (a thread rather than select(), which does not work on pipes on Windows)."""

    def __init__(self, engine: str) -> None:
        self.proc = subprocess.Popen([engine, "-Tsvg"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.answers: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True, name=f"{engine}-reader").start()

    def _read(self) -> None:
        lines: list[bytes] = []
        for line in self.proc.stdout:
            lines.append(line)
            if line == _END:
                self.answers.put(b"".join(lines))
                lines = []
        # The process ended: reap it at once. A Jupyter kernel that shuts down signals its
        # children and waits until none is left, and an unreaped `dot` is still its child:
        # the kernel waited 2.5 s for it, until its manager terminated it.
        self.proc.wait()
        self.answers.put(None)

    def render(self, source: str, timeout_s: float) -> tuple[str, list[str]] | None:
        try:
            self.proc.stdin.write(source.encode("utf-8") + b"\n")
            self.proc.stdin.flush()
            answer = self.answers.get(timeout=timeout_s)
        except (OSError, queue.Empty):
            return None
        if answer is None:
            return None
        svg, messages = _split(answer.decode("utf-8"))
        return _PAGE_ID.sub('<g id="graph0" class="graph"', svg, count=1), messages

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


class PictureError(Exception):
    """Graphviz could not draw a graph: the message is dot's, on one line."""


_DOCUMENT = re.compile(r"<\?xml|<!DOCTYPE|<svg")


def _split(output: str) -> tuple[str, list[str]]:
    """dot's output for one graph -> (the SVG document, dot's message lines before it)."""
    m = _DOCUMENT.search(output)
    head, svg = (output[:m.start()], output[m.start():]) if m else (output, "")
    return svg, [line for line in head.splitlines() if line.strip()]


def _one_line(messages: list[str]) -> str:
    return "Graphviz could not draw this picture: " + " ".join(" ".join(messages).split())


_IDLE: dict[str, list[_DotProcess]] = {}
_ALL: list[_DotProcess] = []


def _checkout(engine: str) -> _DotProcess | None:
    with _LOCK:
        idle = _IDLE.setdefault(engine, [])
        if idle:
            return idle.pop()
    if shutil.which(engine) is None:
        return None
    proc = _DotProcess(engine)
    with _LOCK:
        _ALL.append(proc)
    return proc


def _checkin(engine: str, proc: _DotProcess) -> None:
    with _LOCK:
        _IDLE.setdefault(engine, []).append(proc)


def shutdown() -> None:
    """Stop the long-running `dot` processes (they are restarted on demand)."""
    with _LOCK:
        procs = list(_ALL)
        _ALL.clear()
        _IDLE.clear()
    for proc in procs:
        proc.close()


atexit.register(shutdown)


def render(graph: graphviz.Digraph, *, reuse: bool = True,
           timeout_s: float = 10.0) -> tuple[str, list[str]]:
    """(SVG text, dot's warnings) for the graph, drawn by its engine (dot unless the
    graph says otherwise). Raises PictureError on an error (Graphviz 2.43 refuses some
    HTML labels newer ones accept) and when the engine is missing or hangs.

    reuse=False starts a fresh `dot` for this graph. In the browser edition Graphviz is
    WebAssembly (minikafka.viz.wasm) and draws without a process."""
    if BROWSER:
        return _render_in_browser(graph), []
    answer = None
    if reuse:
        proc = _checkout(graph.engine)
        if proc is not None:
            answer = proc.render(graph.source, timeout_s)
            if answer is None:
                with _LOCK:
                    if proc in _ALL:
                        _ALL.remove(proc)
                proc.close()
            else:
                _checkin(graph.engine, proc)
    if answer is None:
        try:
            done = subprocess.run([graph.engine, "-Tsvg"], input=graph.source.encode("utf-8"),
                                  capture_output=True, timeout=timeout_s)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise PictureError(f"Graphviz's {graph.engine} did not draw this picture: {e}") \
                from None
        messages = done.stderr.decode("utf-8", "replace").splitlines()
        messages = [line for line in messages if line.strip()]
        if done.returncode != 0:
            raise PictureError(_one_line(messages or [f"{graph.engine} exit {done.returncode}"]))
        answer = (done.stdout.decode("utf-8"), messages)
    svg, messages = answer
    if not svg or any(line.startswith("Error") for line in messages):
        raise PictureError(_one_line(messages or ["no SVG"]))
    return svg, messages


def _render_in_browser(graph: graphviz.Digraph) -> str:
    from . import wasm

    try:
        svg = wasm.render(graph.source, graph.engine)
    except ValueError as e:
        raise PictureError(_one_line(str(e).splitlines() or ["no SVG"])) from None
    if svg is None:
        raise PictureError("Graphviz for the browser is still loading: the picture comes "
                           "when it has loaded")
    return svg


def to_svg(graph: graphviz.Digraph, *, cache: bool = True, reuse: bool = True,
           timeout_s: float = 10.0) -> str:
    """The graph as SVG text (see `render`); warnings go to the log, never to stderr."""
    key = (graph.engine, graph.source)
    if cache:
        with _LOCK:
            if key in _CACHE:
                _CACHE.move_to_end(key)
                return _CACHE[key]
    svg, messages = render(graph, reuse=reuse, timeout_s=timeout_s)
    if messages:
        _LOG.debug("graphviz warned about %s: %s", graph.name, " ".join(messages))
    if cache:
        with _LOCK:
            _CACHE[key] = svg
            if len(_CACHE) > _CACHE_SIZE:
                _CACHE.popitem(last=False)
    return svg


def clear_cache() -> None:
    with _LOCK:
        _CACHE.clear()


_PROLOG = re.compile(r"^.*?(?=<svg)", re.S)


def svg_html(svg: str) -> str:
    """SVG text ready for an HTML widget: no XML prolog, scaled down to fit the width."""
    body = _PROLOG.sub("", svg, count=1)
    body = body.replace("<svg ", '<svg style="max-width:100%;height:auto" ', 1)
    return f'<div style="overflow:auto">{body}</div>'


def picture_html(graph: graphviz.Digraph) -> str:
    """The graph for an HTML widget, or dot's error on one line in its place."""
    try:
        return svg_html(to_svg(graph))
    except PictureError as e:
        return f"<p>{html.escape(str(e))}</p>"
