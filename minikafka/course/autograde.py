"""What an autograded test cell of the course's assignments calls: collect, judge, answer.

A test cell says *what to collect* from the student's code and *how to judge* it:

    def check_moves(answer, truck_ids, old, new, seed):          # runs in the grader
        ...assert answer == the trucks a seeded cluster moved...

    judge(check_moves, collect("moved_trucks", ids, 6, 8), ids, 6, 8, seed=5)

* ``collect(name, *args, **kwargs)`` calls the function ``name`` of the notebook (the
  student's, or a setup cell's helper that drives the student's code) and hands back its
  result as plain data: exact int, float, str, bytes, bool, None, list, tuple, dict, set.
  Anything else (a subclass, an object with its own ``__eq__``) is refused.
* ``judge(check, *args, **kwargs)`` runs ``check`` on those values; an assertion it raises
  fails the cell.
* ``answer(name)`` is the plain-data value the student's answer cells bound to ``name``.

In a student's notebook the three run at once, in the kernel. When the course is graded
(grading/sandboxed.py) the same cell runs in the grading process in two steps: the cell
itself records what to collect; a fresh sandbox holding only the student's definitions runs
the collections and returns JSON; then the judges run in the grading process, on values
decoded with exact types. The test cell's code, its hidden tests and the expected values it
computes never enter a process in which the student's code runs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

MAX_ITEMS = 200_000


class NotPlain(TypeError):
    """A value that is not exact builtin data, so cannot be judged."""


# -- plain data, exact types ---------------------------------------------------------------------

def encode(value: Any, _budget: list | None = None) -> Any:
    """A JSON-able form of value that keeps tuples, sets, bytes and non-str keys; NotPlain for
    anything but exact builtin data types (a dict subclass or an object with its own __eq__
    never passes as a dict)."""
    budget = _budget if _budget is not None else [MAX_ITEMS]
    budget[0] -= 1
    if budget[0] < 0:
        raise NotPlain("too large")
    kind = type(value)
    if kind is bool or kind is int or kind is str or value is None:
        return value
    if kind is float:
        return {"float": repr(value)}
    if kind is bytes:
        return {"bytes": value.hex()}
    if kind is list:
        return [encode(v, budget) for v in value]
    if kind is tuple:
        return {"tuple": [encode(v, budget) for v in value]}
    if kind in (set, frozenset):
        return {kind.__name__: [encode(v, budget) for v in value]}
    if kind is dict:
        return {"dict": [[encode(k, budget), encode(v, budget)] for k, v in value.items()]}
    raise NotPlain(f"a {kind.__module__}.{kind.__qualname__} object is not plain data "
                   "(int, float, str, bytes, bool, None, list, tuple, dict, set)")


def decode(data: Any) -> Any:
    """The inverse of encode, building only exact builtin types."""
    if data is None or type(data) in (bool, int, str):
        return data
    if type(data) is list:
        return [decode(v) for v in data]
    if type(data) is not dict or len(data) != 1:
        raise NotPlain(f"malformed value {data!r:.80}")
    (tag, v), = data.items()
    if tag == "float":
        return float(v)
    if tag == "bytes":
        return bytes.fromhex(v)
    if tag == "tuple":
        return tuple(decode(x) for x in v)
    if tag == "set":
        return {decode(x) for x in v}
    if tag == "frozenset":
        return frozenset(decode(x) for x in v)
    if tag == "dict":
        return {decode(k): decode(x) for k, x in v}
    raise NotPlain(f"unknown tag {tag!r}")


def plain(value: Any) -> Any:
    """value as exact builtin data (a copy), or NotPlain."""
    return decode(encode(value))


# -- the three calls a test cell makes -------------------------------------------------------------

@dataclass(frozen=True)
class Collected:
    """Stands for a collected value while the grader plans a test cell."""
    index: int
    call: str


@dataclass
class Plan:
    """What the grader's run of the test cells asked for: the collections (plain data, for
    the sandbox) and the judges (for the grading process), per test cell."""
    answers: dict[str, Any]
    calls: list[dict] = field(default_factory=list)
    judges: dict[str, list[tuple[Callable, tuple, dict]]] = field(default_factory=dict)
    cell: str = ""

    def collect(self, name: str, args: tuple, kwargs: dict) -> Collected:
        self.calls.append({"index": len(self.calls), "cell": self.cell, "fn": name,
                           "args": encode(list(args)), "kwargs": encode(kwargs)})
        return Collected(len(self.calls) - 1, name)

    def judge(self, check: Callable, args: tuple, kwargs: dict) -> None:
        self.judges.setdefault(self.cell, []).append((check, args, kwargs))

    def drop(self, cell: str) -> None:
        """A cell whose own code failed collects nothing."""
        self.calls = [c for c in self.calls if c["cell"] != cell]
        self.judges.pop(cell, None)


_plan: Plan | None = None  # set by the grader while it plans test cells


def planning(plan: Plan | None) -> None:
    global _plan
    _plan = plan


def _caller_namespace() -> dict:
    frame = sys._getframe(2)
    return frame.f_globals


def collect(name: str, *args: Any, **kwargs: Any) -> Any:
    """The result of the notebook's function `name` called with these plain arguments, as
    plain data."""
    if _plan is not None:
        return _plan.collect(name, args, kwargs)
    fn = _caller_namespace().get(name)
    if not callable(fn):
        raise NameError(f"{name!r} is not defined: run its cell first")
    return plain(fn(*plain(list(args)), **plain(kwargs)))


def judge(check: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Run check(*args, **kwargs) on collected values; its assertions fail the cell."""
    if _plan is not None:
        _plan.judge(check, args, kwargs)
        return
    check(*args, **kwargs)


def answer(name: str) -> Any:
    """The plain-data value the answer cells bound to `name`."""
    if _plan is not None:
        if name not in _plan.answers:
            raise NameError(f"{name!r} is not defined as plain data by your answers")
        return plain(_plan.answers[name])
    namespace = _caller_namespace()
    if name not in namespace:
        raise NameError(f"{name!r} is not defined: run your answer cell first")
    return plain(namespace[name])
