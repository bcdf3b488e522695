"""The browser edition (Pyodide in a tab: no sockets, no subprocesses, no Java): a cell that
needs a served cluster or a real tool says so in one line and is skipped, and Run All goes
on to the next cell."""
from __future__ import annotations

import hashlib
from typing import Any

from kafka.errors import UnsupportedCodecError

from minikafka.browser import BROWSER, NotInTheBrowser
from minikafka.browser import require as _require
from minikafka.core.scram import pbkdf2_hmac

__all__ = ["BROWSER", "NO_BROWSER_BUILD", "NotInTheBrowser", "install", "require", "say_skipped"]

# Packages the labs' cells import that have no Pyodide build (C, Rust or Java underneath),
# so the site leaves them out.
NO_BROWSER_BUILD = {"confluent_kafka": "confluent-kafka (librdkafka, a C library)",
                    "pyspark": "PySpark (Java)", "fastavro": "fastavro (a C extension)",
                    "numpy": "numpy", "matplotlib": "matplotlib", "nbgrader": "nbgrader"}


def _skip(shell: Any, etype: type, value: BaseException, tb: Any,
          tb_offset: int | None = None) -> list[str]:
    if isinstance(value, ModuleNotFoundError):
        top = (value.name or "").split(".")[0]
        if top not in NO_BROWSER_BUILD:  # a real mistake: the ordinary traceback
            shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
            return []
        value = NotInTheBrowser(f"this cell needs {NO_BROWSER_BUILD[top]}, which has no "
                                "build for the browser; it runs after ./setup.sh")
    elif isinstance(value, OSError):
        if "does not support processes" not in str(value):  # subprocess's own words
            shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
            return []
        value = NotInTheBrowser("this cell runs a program in a process of its own, which a "
                                "browser tab cannot start; it runs after ./setup.sh")
    say_skipped(str(value))
    # A skip, not a failure: with no error recorded the kernel answers "ok" and Run All
    # goes on (IPython keeps the running cell's result on its displayhook).
    result = getattr(shell.displayhook, "exec_result", None)
    if result is not None:
        result.error_in_exec = None
    return []


def say_skipped(what: str) -> None:
    """The one line a student sees for what the browser edition skips."""
    print(f"Skipped in the browser edition: {what}")


def install() -> None:
    """Skip, in one line, the cells that stop on NotInTheBrowser, import a package the
    browser has no build of, start a process, or compress with a codec it lacks; done
    once, when a lesson first imports minikafka.course. Also gives hashlib the PBKDF2
    that Pyodide's lacks (no OpenSSL), which kafka-python's SCRAM client calls."""
    if not hasattr(hashlib, "pbkdf2_hmac"):
        hashlib.pbkdf2_hmac = pbkdf2_hmac
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None:
        shell.set_custom_exc(
            (NotInTheBrowser, ModuleNotFoundError, UnsupportedCodecError, OSError), _skip)


def require(what: str) -> None:
    """In the browser, stop the calling cell with one line saying it needs `what`."""
    if BROWSER:
        install()
        _require(what)
