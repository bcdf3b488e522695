"""The browser edition (Pyodide in a tab: no sockets, no subprocesses, no Java): a cell that
needs a served cluster or a real tool says so in one line and is skipped, and Run All goes
on to the next cell."""
from __future__ import annotations

import sys
from typing import Any

__all__ = ["BROWSER", "NO_BROWSER_BUILD", "NotInTheBrowser", "install", "require"]

BROWSER = sys.platform == "emscripten"
# Packages the labs' cells import that have no Pyodide build (C, Rust or Java underneath),
# so the site leaves them out.
NO_BROWSER_BUILD = {"confluent_kafka": "confluent-kafka (librdkafka, a C library)",
                    "pyspark": "PySpark (Java)", "fastavro": "fastavro (a C extension)",
                    "numpy": "numpy", "matplotlib": "matplotlib", "nbgrader": "nbgrader"}


class NotInTheBrowser(Exception):
    """What a cell needs and the browser edition lacks."""


def _skip(shell: Any, etype: type, value: BaseException, tb: Any,
          tb_offset: int | None = None) -> list[str]:
    if isinstance(value, ModuleNotFoundError):
        top = (value.name or "").split(".")[0]
        if top not in NO_BROWSER_BUILD:  # a real mistake: the ordinary traceback
            shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
            return []
        value = NotInTheBrowser(f"this cell needs {NO_BROWSER_BUILD[top]}, which has no "
                                "build for the browser; it runs after ./setup.sh")
    print(f"Skipped in the browser edition: {value}")
    # A skip, not a failure: with no error recorded the kernel answers "ok" and Run All
    # goes on (IPython keeps the running cell's result on its displayhook).
    result = getattr(shell.displayhook, "exec_result", None)
    if result is not None:
        result.error_in_exec = None
    return []


def install() -> None:
    """Skip, in one line, the cells that stop on NotInTheBrowser or import a package the
    browser has no build of (done once, when a lesson first imports minikafka.course)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None:
        shell.set_custom_exc((NotInTheBrowser, ModuleNotFoundError), _skip)


def require(what: str) -> None:
    """In the browser, stop the calling cell with one line saying it needs `what`."""
    if not BROWSER:
        return
    install()
    raise NotInTheBrowser(f"this cell needs {what}, which a browser tab cannot provide; "
                          "it runs after ./setup.sh")
