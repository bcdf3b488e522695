"""The exercises' registry: each check registers itself with ``@exercise`` and returns an
``Outcome``. ``lesson_exercises`` and ``lab_exercises`` hold the checks; ``exercises`` runs
them and shows the feedback."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Outcome:
    """What a check found: the findings that held, the ones that did not, the checker's
    verdict in one line and the history (events, records) that shows it."""

    right: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    verdict: str = ""
    history: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.wrong

    def expect(self, holds: bool, right: str, wrong: str) -> bool:
        """Record one finding; returns whether it held."""
        (self.right if holds else self.wrong).append(right if holds else wrong)
        return holds


@dataclass(frozen=True)
class Exercise:
    id: str
    title: str
    run: Callable[[Any], Outcome]
    hint: str
    solution: Callable[..., Any]


EXERCISES: dict[str, Exercise] = {}


def exercise(id: str, title: str, hint: str,
             solution: Callable[..., Any]) -> Callable[[Callable[[Any], Outcome]],
                                                       Callable[[Any], Outcome]]:
    """Register a check: ``run(answer) -> Outcome``, with its hint and worked answer."""
    def register(run: Callable[[Any], Outcome]) -> Callable[[Any], Outcome]:
        if id in EXERCISES:
            raise ValueError(f"exercise {id!r} is registered twice")
        EXERCISES[id] = Exercise(id, title, run, hint, solution)
        return run
    return register
