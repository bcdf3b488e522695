""""Your turn" exercises: the student writes a function, a check runs it in a scenario.

A lesson's exercise is three cells: the task (markdown), the answer cell (tagged
``exercise``: a function whose body the student fills in; it ships as
``raise NotImplementedError()``, the look of nbgrader's released assignments), and a
check cell::

    exercises.check("03-keys", key_for)

``check`` runs the answer against a seeded scenario (a minikafka cluster in lessons, the
lab's server in labs) and says in plain words what was right, what went wrong, the
checker's verdict with the history that shows it, and a hint. There are no points. An
answer still raising NotImplementedError gets "not done yet" and the hint; an answer that
raises something else gets the error and the hint: the notebook always runs on.

``solution("03-keys")`` shows a worked answer, and the feedback carries a "Show a
solution" button. The worked answers live in ``minikafka.course.solutions`` (the source
shown is the function's own), never in a notebook.
"""

from __future__ import annotations

import html
import inspect
import sys
import traceback
from dataclasses import dataclass, field
from typing import Any

from .display import widget_bundle
from .exercise_registry import EXERCISES, Exercise, Outcome, exercise

__all__ = ["EXERCISES", "Exercise", "Feedback", "Outcome", "check", "exercise", "solution"]


def _load() -> None:
    # The checks register themselves on import; labs' checks import kafka-python clients.
    from . import hanging, lab_exercises, lesson_exercises  # noqa: F401


def get(id: str) -> Exercise:
    _load()
    try:
        return EXERCISES[id]
    except KeyError:
        raise KeyError(f"no exercise {id!r}; there are {sorted(EXERCISES)}") from None


# -- feedback ---------------------------------------------------------------------------------

@dataclass
class Feedback:
    """The check's answer to the student; truthy when every finding held.

    ``status`` is "done", "wrong", "not done yet" or "error" (the answer raised)."""

    exercise: Exercise
    status: str
    outcome: Outcome = field(default_factory=Outcome)
    error: str = ""
    _widget: Any = None

    def __bool__(self) -> bool:
        return self.status == "done"

    @property
    def headline(self) -> str:
        return {"done": "Well done: every check passed.",
                "wrong": "Not yet right: see what went wrong below.",
                "not done yet": "Not done yet: fill in the answer cell above, run it, then "
                                "run this cell again.",
                "error": "Your code raised an error."}[self.status]

    def _sections(self) -> list[tuple[str, list[str]]]:
        o = self.outcome
        sections = [("What was right", o.right), ("What went wrong", o.wrong)]
        if self.error:
            sections.append(("The error", [self.error]))
        if o.verdict:
            sections.append(("The checker's verdict", [o.verdict]))
        if o.history:
            sections.append(("The history that shows it", o.history))
        if self.status != "done":
            sections.append(("Hint", [self.exercise.hint]))
        return [(title, items) for title, items in sections if items]

    @property
    def text(self) -> str:
        lines = [f"{self.exercise.title}: {self.headline}"]
        for title, items in self._sections():
            lines.append(f"{title}:")
            lines += [f"  {'✓' if title == 'What was right' else '-'} {item}"
                      if title in ("What was right", "What went wrong") else f"  {item}"
                      for item in items]
        lines.append(f'A worked answer: exercises.solution("{self.exercise.id}")')
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.text

    def _html(self) -> str:
        colour = {"done": "#009E73", "wrong": "#D55E00", "error": "#D55E00"}.get(
            self.status, "#E69F00")  # Okabe-Ito green / vermillion / orange
        parts = [f"<p><b>{html.escape(self.exercise.title)}</b>: "
                 f"{html.escape(self.headline)}</p>"]
        for title, items in self._sections():
            mono = title in ("The history that shows it", "The error")
            body = "".join(f"<li><code>{html.escape(i)}</code></li>" if mono
                           else f"<li>{html.escape(i)}</li>" for i in items)
            parts.append(f"<p style='margin-bottom:0'><b>{html.escape(title)}</b></p>"
                         f"<ul style='margin-top:0'>{body}</ul>")
        return (f'<div class="minikafka-exercise" style="border-left: 4px solid {colour}; '
                f'padding: 4px 10px">{"".join(parts)}</div>')

    def _repr_html_(self) -> str:
        return self._html()

    @property
    def widget(self) -> Any:
        """The feedback with a "Show a solution" button that reveals the worked answer."""
        if self._widget is None:
            import ipywidgets as W

            button = W.Button(description="Show a solution", layout=W.Layout(width="160px"))
            shown = W.HTML()

            def on_click(_: Any) -> None:
                shown.value = _solution_html(self.exercise)
                button.layout.display = "none"

            button.on_click(on_click)
            self._widget = W.VBox([W.HTML(self._html()), button, shown])
            self._widget.add_class("minikafka-exercise")
        return self._widget

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        return widget_bundle(self.text, self._html(), self.widget, include, exclude)


def check(id: str, answer: Any) -> Feedback:
    """Run the student's answer against the exercise's scenario; never raises for a
    wrong or unfinished answer."""
    ex = get(id)
    try:
        outcome = ex.run(answer)
    except NotImplementedError:
        return Feedback(ex, "not done yet")
    except Exception as exc:  # the student's code failed: say where, keep the notebook going
        # The student's own line: the last frame outside minikafka and installed packages.
        frames = [f for f in traceback.extract_tb(exc.__traceback__)
                  if not f.filename.startswith((_PACKAGE_DIR, sys.prefix, sys.base_prefix))]
        where = f" (line {frames[-1].lineno}: {frames[-1].line})" if frames else ""
        return Feedback(ex, "error", error=f"{type(exc).__name__}: {exc}{where}")
    return Feedback(ex, "done" if outcome.passed else "wrong", outcome)


_PACKAGE_DIR = __file__.rsplit("/course/", 1)[0]


# -- worked answers ---------------------------------------------------------------------------

def solution_source(id: str) -> str:
    """The worked answer's source: the function in minikafka.course.solutions."""
    return inspect.getsource(get(id).solution)


def _solution_html(ex: Exercise) -> str:
    return (f"<p><b>A worked answer</b> ({html.escape(ex.title)}):</p>"
            f"<pre>{html.escape(inspect.getsource(ex.solution))}</pre>")


@dataclass(frozen=True)
class Solution:
    exercise: Exercise

    def __repr__(self) -> str:
        return f"A worked answer ({self.exercise.title}):\n\n" + inspect.getsource(
            self.exercise.solution)

    def _repr_html_(self) -> str:
        return _solution_html(self.exercise)


def solution(id: str) -> Solution:
    """Show a worked answer (only when asked: it is not in the notebook)."""
    return Solution(get(id))
