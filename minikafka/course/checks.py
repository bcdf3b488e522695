"""The check cells: every lesson and lab ends with a cell tagged ``check`` that asserts its
key outcomes (a lesson's assertions are in ``lesson_outcomes``), then reports them with ``checked()`` for the test suite to read back
(tests/notebook_helpers.py), so a check cell that stopped checking is caught too.

In a notebook the outcomes go out as display data of a MIME type of their own
(``CHECK_MIME``): saved in the cell's outputs, where the tests read them, but drawn by no
front end, so students see nothing. Outside IPython they are printed on one line after
``CHECK_MARK``."""

from __future__ import annotations

import json
from typing import Any

CHECK_MARK = "NOTEBOOK-CHECK "
CHECK_MIME = "application/vnd.minikafka.check+json"


def checked(notebook: str, **outcomes: Any) -> None:
    """Report a notebook's key outcomes; ``notebook`` is its number ("05" for lesson 5 or
    lab 5: the test knows which folder it ran)."""
    text = json.dumps({"notebook": notebook, **outcomes}, sort_keys=True, default=str)
    from IPython import get_ipython

    if get_ipython() is None:
        print(CHECK_MARK + text)
        return
    from IPython.display import display

    display({CHECK_MIME: json.loads(text)}, raw=True)
