"""The examples in minikafka's docstrings run, so the examples that teach the API stay true.

Every module of the package whose source holds a `>>>` example is collected (a new example
anywhere is picked up without listing it here) and run with doctest.
"""
from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "minikafka"
MODULES = sorted(
    ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    for path in PACKAGE.rglob("*.py") if ">>>" in path.read_text(encoding="utf-8"))


def test_there_are_examples_to_run():
    assert "minikafka.core.api.topics" in MODULES and len(MODULES) >= 5


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name.removesuffix(".__init__"))
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has '>>>' but no example doctest found"
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
