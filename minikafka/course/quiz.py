"""Self-check questions: ``quiz(id)`` shows one (a widget in JupyterLab, text elsewhere),
``q.check("b")`` answers it in code, and ``progress(lesson)`` lists how the student did.

The questions, answers and explanations live in ``minikafka.course.quizzes``, out of the
notebook's sight; the answers a student gives are kept by ``minikafka.course.progress``.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from minikafka.course import progress as course_progress
from minikafka.course import quizzes as course_quizzes
from minikafka.course.display import widget_bundle
from minikafka.course.quizzes import LETTERS, QuizSpec
from minikafka.course.tables import Table


@dataclass(frozen=True)
class Feedback:
    """What a quiz says about one answer; truthy when the answer is right."""

    correct: bool
    text: str

    def __bool__(self) -> bool:
        return self.correct

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        colour = "#009E73" if self.correct else "#D55E00"  # Okabe-Ito green / vermillion
        return (f'<div style="border-left: 4px solid {colour}; padding: 4px 10px">'
                f"{html.escape(self.text)}</div>")


class _AnswerKey:
    """A quiz's own answer, as a lesson's hidden check cell passes it (``q.check(q.answer)``):
    it checks the quiz against its key without being recorded as the student's answer,
    and printing it does not say which option it is."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    def __repr__(self) -> str:
        return "<the answer key>"


class Quiz:
    """A multiple-choice question with immediate feedback.

    The lessons' questions live in ``minikafka.course.quizzes`` with their answers and
    explanations; a notebook names one by id, ``quiz("05-acks1")``, so the answer is not
    in the notebook. Answer with the widget, or in code with ``check()``: the feedback
    gives the explanation, and a lesson question's answer is added to the student's
    progress (see ``progress()``)::

        q = quiz("01-offsets")
        q.check("a")     # Not quite: ... then the explanation
    """

    def __init__(self, question: str, options: Sequence[str], answer: int | str,
                 explanation: str, quiz_id: str | None = None) -> None:
        if not 2 <= len(options) <= len(LETTERS):
            raise ValueError(f"a quiz needs 2 to {len(LETTERS)} options")
        self.question = question
        self.options = list(options)
        self.explanation = explanation
        self.quiz_id = quiz_id  # answers are recorded only for a lesson question
        self._answer = self._index(answer)
        self._widget = None

    @classmethod
    def from_spec(cls, spec: QuizSpec) -> Quiz:
        return cls(spec.question, spec.options, spec.answer, spec.explanation,
                   quiz_id=None if spec.demo else spec.id)

    @property
    def answer(self) -> _AnswerKey:
        return _AnswerKey(self._answer)

    def _index(self, choice: int | str) -> int:
        if isinstance(choice, bool):
            raise ValueError("choose an option by number, letter or text")
        if isinstance(choice, int):
            index = choice
        elif isinstance(choice, str) and len(choice.strip()) == 1 and \
                choice.strip().lower() in LETTERS:
            index = LETTERS.index(choice.strip().lower())
        elif choice in self.options:
            index = self.options.index(choice)
        else:
            raise ValueError(f"no option {choice!r}: use a letter from "
                             f"{LETTERS[0]} to {LETTERS[len(self.options) - 1]}")
        if not 0 <= index < len(self.options):
            raise ValueError(f"no option number {index}")
        return index

    def label(self, index: int) -> str:
        return f"{LETTERS[index]}) {self.options[index]}"

    def check(self, choice: int | str | _AnswerKey) -> Feedback:
        """Answer the question; the feedback explains either way."""
        if isinstance(choice, _AnswerKey):
            index, student = choice.index, False
        else:
            index, student = self._index(choice), True
        right = index == self._answer
        if student and self.quiz_id is not None:
            course_progress.record(self.quiz_id, LETTERS[index], right)
        if right:
            return Feedback(True, f"Right: {self.label(index)}. {self.explanation}")
        return Feedback(False, f"Not quite: you chose {self.label(index)}; the answer is "
                               f"{self.label(self._answer)}. {self.explanation}")

    # -- display ---------------------------------------------------------------------
    @property
    def widget(self):
        if self._widget is None:
            import ipywidgets as W

            title = W.HTML(f"<b>Check yourself.</b> {html.escape(self.question)}")
            choices = W.RadioButtons(options=[(self.label(i), i)
                                              for i in range(len(self.options))],
                                     value=None, layout=W.Layout(width="auto"))
            button = W.Button(description="Check", button_style="info",
                              layout=W.Layout(width="120px"))
            answer = W.HTML()

            def on_click(_: Any) -> None:
                if choices.value is None:
                    answer.value = "<i>Pick an answer first.</i>"
                else:
                    answer.value = self.check(choices.value)._repr_html_()

            button.on_click(on_click)
            self._widget = W.VBox([title, choices, button, answer])
            self._widget.add_class("minikafka-quiz")
        return self._widget

    def _text(self) -> str:
        lines = [f"Check yourself: {self.question}"]
        lines += [f"  {self.label(i)}" for i in range(len(self.options))]
        lines.append("Answer in code with .check('a'), .check('b'), ...")
        return "\n".join(lines)

    def _html(self) -> str:
        # No answer here: this HTML is saved with the notebook, where a student could read it.
        items = "".join(f"<li>{html.escape(self.label(i))}</li>"
                        for i in range(len(self.options)))
        return (f"<p><b>Check yourself.</b> {html.escape(self.question)}</p>"
                f'<ul style="list-style: none">{items}</ul>'
                f"<p><i>Answer in JupyterLab with the buttons, or in code with "
                f".check('a'), .check('b'), ...</i></p>")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        return widget_bundle(self._text(), self._html(), self.widget, include, exclude)

    def __repr__(self) -> str:
        return self._text()


def quiz(quiz_id: str) -> Quiz:
    """A lesson's self-check question by id (see Quiz and minikafka.course.quizzes)."""
    return Quiz.from_spec(course_quizzes.get(quiz_id))


def progress(lesson: str) -> Table:
    """A lesson's questions and how the student did: tries, right at the first try, right
    at all. Read from the student's progress file (minikafka.course.progress)."""
    lesson = f"{int(lesson):02d}"
    answers = course_progress.load()
    rows = []
    for spec in course_quizzes.of_lesson(lesson):
        entry = answers.get(spec.id, {})
        rows.append({"quiz": spec.id, "question": spec.question,
                     "tries": entry.get("tries", 0),
                     "right at first try": entry.get("first_try_right") if entry else None,
                     "right": entry.get("right") if entry else None})
    right = sum(1 for r in rows if r["right"])
    return Table(rows, title=f"Lesson {int(lesson)}: {right} of {len(rows)} questions "
                             f"answered right")
