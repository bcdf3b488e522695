"""The browser edition (Pyodide in a tab: no sockets, no subprocesses, no Java): a cell that
needs a served cluster or a real tool says so in one line and is skipped, and Run All goes
on to the next cell."""
from __future__ import annotations

import sys
from typing import Any

__all__ = ["BROWSER", "NotInTheBrowser", "require"]

BROWSER = sys.platform == "emscripten"


class NotInTheBrowser(Exception):
    """What a cell needs and the browser edition lacks."""


def _skip(shell: Any, etype: type, value: BaseException, tb: Any,
          tb_offset: int | None = None) -> list[str]:
    print(f"Skipped in the browser edition: {value}")
    # A skip, not a failure: with no error recorded the kernel answers "ok" and Run All
    # goes on (IPython keeps the running cell's result on its displayhook).
    result = getattr(shell.displayhook, "exec_result", None)
    if result is not None:
        result.error_in_exec = None
    return []


def require(what: str, *, browser: bool | None = None) -> None:
    """In the browser, stop the calling cell with one line saying it needs `what`."""
    if not (BROWSER if browser is None else browser):
        return
    try:
        from IPython import get_ipython
        shell = get_ipython()
    except ImportError:
        shell = None
    if shell is not None:
        shell.set_custom_exc((NotInTheBrowser,), _skip)
    raise NotInTheBrowser(f"this cell needs {what}, which a browser tab cannot provide; "
                          "it runs after ./setup.sh")
