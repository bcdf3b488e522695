"""`minikafka lite build --output DIR`: the browser edition's static site (minikafka.lite.build)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["add_parser"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "lite", help="build the lessons as a static JupyterLite site (the browser edition)",
        description="Build the course's lessons as a static JupyterLite site that runs "
                    "minikafka in the browser with Pyodide: serve DIR from any static host "
                    "(python -m http.server -d DIR). Needs npm and PyPI at build time only; "
                    "the site requests nothing from other hosts.")
    p.add_argument("action", choices=["build"], help="build the site")
    p.add_argument("--output", "-o", required=True, metavar="DIR",
                   help="where to write the site (replaced if it exists)")
    p.add_argument("--cache", metavar="DIR", default=None,
                   help="npm packages and wheels, kept between builds "
                        "(default: .cache/lite in the repository)")
    p.set_defaults(run=run, parser=p)


def run(args: argparse.Namespace) -> int:
    try:
        from .build import BuildError, build
    except ModuleNotFoundError as e:  # without the [lite] extra: its message names it
        print(f"minikafka lite build: {e}", file=sys.stderr)
        return 1
    try:
        site = build(Path(args.output), Path(args.cache) if args.cache else None)
    except BuildError as e:
        print(f"minikafka lite build: {e}", file=sys.stderr)
        return 1
    print(f"built {site}: serve it with `python -m http.server -d {site} --bind 127.0.0.1` "
          f"and open http://127.0.0.1:8000/lab/index.html")
    return 0
