"""The check cells: every lesson and lab ends with a cell tagged ``check`` that asserts its
key outcomes, then reports them with ``checked()`` on one line the test suite reads back
(tests/notebook_helpers.py), so a check cell that stopped checking is caught too."""

from __future__ import annotations

import json
from typing import Any

CHECK_MARK = "NOTEBOOK-CHECK "


def checked(notebook: str, **outcomes: Any) -> None:
    """Print a notebook's key outcomes on one line after ``CHECK_MARK``; ``notebook`` is
    its number ("05" for lesson 5 or lab 5: the test knows which folder it ran)."""
    print(CHECK_MARK + json.dumps({"notebook": notebook, **outcomes}, sort_keys=True,
                                  default=str))
