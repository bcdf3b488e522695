"""Per-question scores from the gradebook, as a CSV an LMS or a spreadsheet can take.

One row per student, one column per graded cell ("notebook:cell", in notebook order), then
the total, the maximum, the number of answers still waiting for a manual grade and the
locked cells the student edited. The first row, "(max points)", holds each column's maximum.
A manually graded answer that nobody has graded yet is left empty, not counted as zero.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry

MAX_ROW = "(max points)"


@dataclass(frozen=True)
class Question:
    notebook: str
    cell: str
    max_score: float

    @property
    def column(self) -> str:
        return f"{self.notebook}:{self.cell}"


@dataclass
class StudentScores:
    student: str
    scores: dict[str, float | None] = field(default_factory=dict)  # column -> score

    @property
    def total(self) -> float:
        return sum(s for s in self.scores.values() if s is not None)

    @property
    def pending(self) -> int:
        return sum(1 for s in self.scores.values() if s is None)


def _cell_order(root: Path, assignment: str, notebook: str) -> list[str]:
    for folder in ("source", "release"):
        path = root / folder / assignment / f"{notebook}.ipynb"
        if path.exists():
            nb = nbformat.read(path, as_version=4)
            return [c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells]
    return []


def questions(root: Path, db_url: str, assignment: str) -> list[Question]:
    """The graded cells of an assignment, in the order a student meets them."""
    out = []
    with Gradebook(db_url) as gb:
        for nb in sorted(gb.find_assignment(assignment).notebooks, key=lambda n: n.name):
            order = _cell_order(root, assignment, nb.name)
            cells = sorted(nb.grade_cells, key=lambda c: (
                order.index(c.name) if c.name in order else len(order), c.name))
            out.extend(Question(nb.name, c.name, float(c.max_score)) for c in cells)
    return out


def student_scores(db_url: str, assignment: str) -> list[StudentScores]:
    """Every submission's score per graded cell; None where a manual grade is pending."""
    rows = []
    with Gradebook(db_url) as gb:
        try:
            submissions = gb.find_assignment(assignment).submissions
        except MissingEntry:
            return []
        for submission in sorted(submissions, key=lambda s: s.student.id):
            row = StudentScores(submission.student.id)
            for nb in submission.notebooks:
                for grade in nb.grades:
                    pending = grade.needs_manual_grade and grade.manual_score is None
                    row.scores[f"{nb.name}:{grade.name}"] = None if pending else float(grade.score)
            rows.append(row)
    return rows


def write_csv(path: Path, qs: list[Question], rows: list[StudentScores],
              edited: dict[str, list[str]] | None = None) -> Path:
    edited = edited or {}
    header = ["student_id", *(q.column for q in qs), "total", "max", "pending_manual",
              "edited_locked_cells"]
    maximum = sum(q.max_score for q in qs)
    with open(path, "w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(header)
        out.writerow([MAX_ROW, *(_fmt(q.max_score) for q in qs), _fmt(maximum), _fmt(maximum),
                      "", ""])
        for row in rows:
            out.writerow([row.student, *(_fmt(row.scores.get(q.column)) for q in qs),
                          _fmt(row.total), _fmt(maximum), row.pending,
                          " ".join(edited.get(row.student, []))])
    return path


def _fmt(value: float | None) -> str:
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def read_csv(path: Path) -> dict[str, dict[str, str]]:
    """student id -> column -> value, the "(max points)" row included."""
    with open(path, newline="") as fh:
        return {row["student_id"]: row for row in csv.DictReader(fh)}
