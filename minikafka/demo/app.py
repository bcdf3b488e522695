"""`minikafka demo`: build the show (a scenario, or live mode), serve the page, open it."""

from __future__ import annotations

import argparse
import sys
import threading
import webbrowser

from .presenter import Presenter
from .scenarios import SCENARIOS, get, listing
from .server import DemoServer, Show


def scenario_list() -> list[dict[str, str]]:
    return [{"name": s.name, "title": s.title, "summary": s.summary}
            for s in SCENARIOS.values()]


def _switch(name: str) -> Show:
    try:
        return Presenter(get(name))
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None


def make_server(args: argparse.Namespace) -> DemoServer:
    """The server for parsed `minikafka demo` arguments (not started)."""
    if args.live:
        from .live import LiveView
        topics = args.topic or None
        show: Show = LiveView(args.bootstrap_server, topics=topics).start()
        return DemoServer(show, args.host, args.port)
    return DemoServer(_switch(args.scenario), args.host, args.port, switch=_switch,
                      scenarios=scenario_list(), interval_s=args.interval)


def run(args: argparse.Namespace) -> int:
    if args.list:
        print(listing())
        return 0
    if not args.live and args.scenario not in SCENARIOS:
        print(f"minikafka demo: no scenario {args.scenario!r}; try --list", file=sys.stderr)
        return 2
    try:
        server = make_server(args)
    except OSError as exc:
        print(f"minikafka demo: cannot listen on {args.host}:{args.port}: {exc}",
              file=sys.stderr)
        return 1
    with server:
        print(f"minikafka demo: {server.url}  (→/Space next, ← back, R reset, P pause; "
              "Ctrl-C to stop)", flush=True)
        if not args.no_browser:
            webbrowser.open(server.url)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            print("stopping")
    return 0
