"""Whether minikafka runs in the browser edition (Pyodide in a tab: no sockets, no
subprocesses, no threads, no Java), and the one exception a feature raises there to say what
it needs. ``minikafka.course.browser`` turns that exception into a one-line skip."""
from __future__ import annotations

import sys

__all__ = ["BROWSER", "NotInTheBrowser", "require"]

BROWSER = sys.platform == "emscripten"


class NotInTheBrowser(Exception):
    """What a cell needs and the browser edition lacks."""


def require(what: str) -> None:
    """In the browser, stop the caller with one line saying it needs `what`."""
    if BROWSER:
        raise NotInTheBrowser(f"this cell needs {what}, which a browser tab cannot provide; "
                              "it runs after ./setup.sh")
