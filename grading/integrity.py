"""Which submissions edited or deleted a locked cell (a test or a read-only setup cell)?

nbgrader restores locked cells from the gradebook before it grades, so an edit earns
nothing; this report tells the instructor who tried. It compares nbgrader's checksum of
each submitted cell with the checksum of the same cell in the instructor's release/ copy,
the version students were given (not with the checksum in the submitted file's metadata,
which a student can edit too; not with the gradebook's, which covers the hidden tests).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbgrader.utils import compute_checksum


@dataclass(frozen=True)
class EditedCell:
    student: str
    notebook: str
    cell: str
    change: str  # "edited" or "deleted"

    def __str__(self) -> str:
        return f"{self.student}: {self.notebook} cell {self.cell!r} {self.change}"


def locked_checksums(root: Path, assignment: str) -> dict[str, dict[str, str]]:
    """notebook id -> {cell id: checksum} of the locked cells students were given."""
    out = {}
    for path in sorted((root / "release" / assignment).glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        out[path.stem] = {cell.metadata.nbgrader["grade_id"]: compute_checksum(cell)
                          for cell in nb.cells
                          if cell.metadata.get("nbgrader", {}).get("locked")}
    return out


def _submitted_checksums(path: Path) -> dict[str, str]:
    nb = nbformat.read(path, as_version=4)
    out = {}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if "grade_id" in meta:
            out[meta["grade_id"]] = compute_checksum(cell)
    return out


def edited_locked_cells(root: Path, assignment: str,
                        students: list[str] | None = None) -> list[EditedCell]:
    """Every locked cell of submitted/<student>/<assignment> that differs from the release."""
    expected = locked_checksums(root, assignment)
    if not expected:
        raise FileNotFoundError(f"no release/{assignment}: generate the assignment first")
    submitted = root / "submitted"
    if students is None:
        students = sorted(p.name for p in submitted.iterdir() if (p / assignment).is_dir()) \
            if submitted.is_dir() else []
    found = []
    for student in students:
        for notebook, cells in sorted(expected.items()):
            path = submitted / student / assignment / f"{notebook}.ipynb"
            if not path.exists():
                continue
            actual = _submitted_checksums(path)
            for cell, checksum in sorted(cells.items()):
                if cell not in actual:
                    found.append(EditedCell(student, notebook, cell, "deleted"))
                elif actual[cell] != checksum:
                    found.append(EditedCell(student, notebook, cell, "edited"))
    return found
