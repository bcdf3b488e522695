"""The presenter page's HTTP server: standard library only, loopback by default.

    GET  /                     the page (static/index.html, demo.css, demo.js)
    GET  /api/state[?since=V[&wait=S]]  the current state as JSON; {"unchanged": true}
                               if it is still version V after waiting up to S seconds
    GET  /api/scenarios        [{"name", "title", "summary"}]
    GET  /svg/cluster.svg      the current cluster picture
    GET  /svg/log.svg          the current log strips (404 in live mode)
    POST /api/next | /api/back | /api/reset                 scenario steps
    POST /api/play    {"playing": bool}                     autoplay (live: refreshing)
    POST /api/fault   {"kind": "crash", "broker": 2}        an extra fault
    POST /api/scenario {"name": "acks"}                     switch scenario

The state lives here, not in the page, so a reload (or a second window on the
presenter's laptop) shows the same step. POSTs need the header X-Demo: 1, which a
cross-site form cannot send, so another web page cannot drive the demo.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

STATIC = {"/": ("index.html", "text/html; charset=utf-8"),
          "/static/demo.css": ("demo.css", "text/css; charset=utf-8"),
          "/static/demo.js": ("demo.js", "text/javascript; charset=utf-8")}
MAX_WAIT_S = 25.0


class ReadOnly(Exception):
    """A command the show does not take (live mode watches, it does not act)."""


class Show(Protocol):
    """What the server drives: a scenario Presenter or a LiveView."""

    version: int
    playing: bool

    def state(self) -> dict[str, Any]: ...
    def next(self) -> bool: ...
    def back(self) -> bool: ...
    def reset(self) -> None: ...
    def inject(self, kind: str, broker: int | None = None) -> bool: ...
    def set_playing(self, playing: bool) -> None: ...


class DemoServer:
    """Serves one show on host:port (port 0: an ephemeral one) from a background thread.

    `switch(name)` builds the show for another scenario (None in live mode).
    `interval_s` is the autoplay period: while the show is playing, Next every so often.
    """

    def __init__(self, show: Show, host: str = "127.0.0.1", port: int = 8050, *,
                 switch: Callable[[str], Show] | None = None,
                 scenarios: list[dict[str, str]] | None = None,
                 interval_s: float = 6.0) -> None:
        self.show = show
        self.switch = switch
        self.scenarios = scenarios or []
        self.interval_s = interval_s
        # Tells the page a restarted server apart, whose versions start again from 0.
        self.token = f"{os.getpid()}-{time.monotonic_ns()}"
        self.httpd = ThreadingHTTPServer((host, port), _handler(self))
        self.httpd.daemon_threads = True
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/"

    def start(self) -> DemoServer:
        for target, name in ((self.httpd.serve_forever, "demo-http"),
                             (self._autoplay, "demo-autoplay")):
            t = threading.Thread(target=target, name=name, daemon=True)
            t.start()
            self._threads.append(t)
        return self

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def stop(self) -> None:
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        for t in self._threads:
            t.join(timeout=5)
        close = getattr(self.show, "close", None)
        if close is not None:
            close()

    def __enter__(self) -> DemoServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _autoplay(self) -> None:
        while not self._stop.wait(self.interval_s):
            show = self.show
            if getattr(show, "autoplay", True) and show.playing and not show.next():
                show.set_playing(False)

    def state(self) -> dict[str, Any]:
        return {**self.show.state(), "server": self.token}

    # -- commands (called from handler threads) ------------------------------------------
    def command(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        show = self.show
        if name == "next":
            show.next()
        elif name == "back":
            show.back()
        elif name == "reset":
            show.reset()
        elif name == "play":
            show.set_playing(bool(body.get("playing", not show.playing)))
        elif name == "fault":
            broker = body.get("broker")
            show.inject(str(body.get("kind")), int(broker) if broker is not None else None)
        elif name == "scenario":
            if self.switch is None:
                raise ReadOnly("live mode has no scenarios")
            old = self.show
            self.show = self.switch(str(body.get("name")))
            self.show.version = old.version + 1  # the page must see a new version
        else:
            raise LookupError(name)
        return self.state()


def _read_static(name: str) -> bytes:
    return resources.files("minikafka.demo").joinpath("static", name).read_bytes()


def _handler(server: DemoServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "minikafka-demo"

        def log_message(self, format: str, *args: Any) -> None:  # quiet console
            pass

        def _send(self, status: int, body: bytes, ctype: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            try:
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the page went away mid long poll

        def _json(self, status: int, data: Any) -> None:
            self._send(status, json.dumps(data).encode(), "application/json")

        def do_GET(self) -> None:
            try:
                self._get(urlsplit(self.path))
            except Exception as exc:  # a broken page must say why, not drop the socket
                self._json(500, {"error": f"{type(exc).__name__}: {exc}"})

        def _get(self, url: Any) -> None:
            if url.path in STATIC:
                name, ctype = STATIC[url.path]
                self._send(200, _read_static(name), ctype)
            elif url.path == "/api/state":
                query = parse_qs(url.query)
                since = query.get("since", [None])[0]
                wait_s = min(float(query.get("wait", ["0"])[0]), MAX_WAIT_S)
                # A long poll: the page hears of a step, an autoplay tick or a live
                # change at once, not at its next poll.
                deadline = time.monotonic() + wait_s
                while (since == str(server.show.version) and time.monotonic() < deadline
                       and not server.stopping):
                    time.sleep(0.05)
                show = server.show
                if since is not None and since == str(show.version):
                    self._json(200, {"version": show.version, "unchanged": True})
                else:
                    self._json(200, server.state())
            elif url.path == "/api/scenarios":
                self._json(200, server.scenarios)
            elif url.path in ("/svg/cluster.svg", "/svg/log.svg"):
                svg = server.state().get(url.path[5:-4] + "_svg")
                if svg:
                    self._send(200, svg.encode(), "image/svg+xml")
                else:
                    self._json(404, {"error": "no such picture in this mode"})
            else:
                self._json(404, {"error": f"no page {url.path}"})

        def do_POST(self) -> None:
            url = urlsplit(self.path)
            if self.headers.get("X-Demo") != "1":
                self._json(403, {"error": "missing X-Demo header"})
                return
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
                if not isinstance(body, dict):
                    raise ValueError("the body must be a JSON object")
                if not url.path.startswith("/api/"):
                    raise LookupError(url.path)
                self._json(200, server.command(url.path[5:], body))
            except LookupError:
                self._json(404, {"error": f"no command {url.path}"})
            except ReadOnly as exc:
                self._json(HTTPStatus.CONFLICT, {"error": str(exc)})
            except (ValueError, TypeError) as exc:
                self._json(400, {"error": str(exc)})
            except Exception as exc:
                self._json(500, {"error": f"{type(exc).__name__}: {exc}"})

    return Handler
