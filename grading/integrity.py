"""Which submissions edited or deleted a locked cell (a test or a read-only setup cell), and
what else did the sandboxes see (integrity_report)?

nbgrader restores locked cells from the gradebook before it grades, so an edit earns
nothing; this report tells the instructor who tried. It compares nbgrader's checksum of
each submitted cell with the checksum of the same cell in the instructor's release/ copy,
the version students were given (not with the checksum in the submitted file's metadata,
which a student can edit too; not with the gradebook's, which covers the hidden tests).
"""

from __future__ import annotations

import hashlib
import html
import json
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbgrader.utils import compute_checksum

from .submission import Refused, read_notebook


def escape(text: object, limit: int = 1000) -> str:
    """Text a student controls, safe on one line of a report: control, format and line
    separator characters as escapes (no forged line, no terminal or bidi trick) and markup
    as entities; cut at `limit` characters."""
    out = []
    for ch in html.escape(str(text)[:limit], quote=False):
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            out.append(ch.encode("unicode_escape").decode("ascii"))
        else:
            out.append(ch)
    return "".join(out)


@dataclass(frozen=True)
class EditedCell:
    student: str
    notebook: str
    cell: str
    change: str  # "edited" or "deleted"

    def __str__(self) -> str:
        return f"{escape(self.student)}: {self.notebook} cell {escape(repr(self.cell))} {self.change}"


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
    nb = read_notebook(path)
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
            try:
                actual = _submitted_checksums(path)
            except (Refused, KeyError, TypeError, AttributeError):
                continue  # unreadable_notebooks() reports it
            for cell, checksum in sorted(cells.items()):
                if cell not in actual:
                    found.append(EditedCell(student, notebook, cell, "deleted"))
                elif actual[cell] != checksum:
                    found.append(EditedCell(student, notebook, cell, "edited"))
    return found


# -- what the sandboxes saw ---------------------------------------------------------------------

@dataclass(frozen=True)
class Finding:
    student: str
    kind: str      # harness tampering, input transformer, file outside sandbox, process,
                   # network, introspection, limit, locked cell, identical answers
    evidence: str

    def __str__(self) -> str:
        return f"{escape(self.student)}: {escape(self.kind)}: {escape(self.evidence)}"


# What an answer cell raises when it runs into one of the sandbox's limits.
LIMIT_ERRORS = ("MemoryError", "CellTimeout", "File too large", "No space left",
                "Resource temporarily unavailable")


def _records(root: Path, assignment: str) -> dict[str, dict]:
    folder = root / "integrity" / assignment
    out = {}
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            out[path.stem] = json.loads(path.read_text())
        except ValueError:
            out[path.stem] = {}
    return out


def integrity_report(root: Path, assignment: str) -> list[Finding]:
    """Every submission that touched the harness, registered an input transformer, tried files
    outside its sandbox, spawned processes, reached for the network, hit a limit or edited a
    locked cell, and groups of students whose non-trivial answers and outputs are identical;
    each with its evidence (from integrity/<assignment>/<student>.json, written by autograde)."""
    findings: list[Finding] = []
    answers_by_student: dict[str, str] = {}
    for student, notebooks in _records(root, assignment).items():
        fingerprint = []
        for notebook, record in sorted(notebooks.items()):
            for phase in record.get("phases", []):
                seen = set()
                for item in phase.get("evidence", []):
                    key = (item.get("kind"), item.get("detail"))
                    if key in seen:
                        continue
                    seen.add(key)
                    where = f"{notebook} {phase.get('phase')} phase, cell {item.get('cell')}"
                    findings.append(Finding(student, str(item.get("kind")),
                                            f"{where}: {item.get('detail')}"))
                if phase.get("problem"):
                    findings.append(Finding(student, "limit",
                                            f"{notebook} {phase.get('phase')} phase: {phase['problem']}"))
                if phase.get("crash"):
                    findings.append(Finding(student, "harness crash", f"{notebook}: {phase['crash']}"))
            for cell, answer in sorted(record.get("answers", {}).items()):
                if answer.get("status") not in ("ok", None):
                    error = answer.get("error", "")
                    limit = answer["status"] == "timeout" or any(m in error for m in LIMIT_ERRORS)
                    findings.append(Finding(student, "limit" if limit else "answer error",
                                            f"{notebook} cell {cell}: {answer['status']} {error}"
                                            .strip()))
                fingerprint.append(f"{cell}\0{answer.get('stdout', '')}")
            fingerprint.append(json.dumps(record.get("values", {}).get("values", {}),
                                          sort_keys=True))
        answers_by_student[student] = "\n".join(fingerprint)
    findings += [Finding(e.student, "locked cell", f"{e.notebook} cell {e.cell!r} {e.change}")
                 for e in _edits_or_none(root, assignment)]
    findings += unreadable_notebooks(root, assignment) + refusals(root, assignment)
    findings += identical_answers(root, assignment, answers_by_student)
    return sorted(findings, key=lambda f: (f.student, f.kind, f.evidence))


def _edits_or_none(root: Path, assignment: str) -> list[EditedCell]:
    try:
        return edited_locked_cells(root, assignment)
    except FileNotFoundError:
        return []


def identical_answers(root: Path, assignment: str,
                      outputs: dict[str, str]) -> list[Finding]:
    """Students whose answer cells are the same text (whitespace and comments aside) and
    whose answers printed and defined the same, when that is not the blank release."""
    released = {}
    for path in sorted((root / "release" / assignment).glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id:
                released[(path.stem, grade_id)] = _normalized(cell.source)
    groups: dict[str, list[str]] = {}
    for student, text in outputs.items():
        answers = []
        for path in sorted((root / "submitted" / student / assignment).glob("*.ipynb")):
            try:
                cells = read_notebook(path).cells
            except Refused:
                continue
            for cell in cells:
                if not isinstance(cell, dict) or not isinstance(cell.get("source"), str):
                    continue
                meta = cell.metadata.get("nbgrader", {})
                if meta.get("solution") and cell.cell_type == "code":
                    norm = _normalized(cell.source)
                    if norm != released.get((path.stem, meta.get("grade_id"))) and len(norm) > 40:
                        answers.append(norm)
        if answers:
            key = hashlib.sha256(("\n".join(answers) + "\0" + text).encode()).hexdigest()[:12]
            groups.setdefault(key, []).append(student)
    return [Finding(s, "identical answers", f"answer cells and their outputs identical to "
                    f"{', '.join(x for x in group if x != s)} (fingerprint {key})")
            for key, group in sorted(groups.items()) if len(group) > 1 for s in group]


def unreadable_notebooks(root: Path, assignment: str) -> list[Finding]:
    """Submitted notebooks no step can read (bad JSON, a symlink, over a size limit)."""
    found = []
    submitted = root / "submitted"
    for path in sorted(submitted.glob(f"*/{assignment}/*.ipynb")) if submitted.is_dir() else []:
        try:
            read_notebook(path)
        except Refused as exc:
            found.append(Finding(path.parts[-3], "refused", str(exc)))
    return found


def refusal_log(root: Path, assignment: str) -> Path:
    return root / "integrity" / f"{assignment}-refused.jsonl"


def record_refusal(root: Path, assignment: str, student: str, reason: str) -> Finding:
    """Note that a step refused (part of) a student's submission, for the report."""
    path = refusal_log(root, assignment)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fh.write(json.dumps({"student": student, "reason": reason}) + "\n")
    return Finding(student, "refused", reason)


def refusals(root: Path, assignment: str) -> list[Finding]:
    path = refusal_log(root, assignment)
    seen: dict[tuple[str, str], Finding] = {}
    for line in path.read_text().splitlines() if path.exists() else []:
        try:
            entry = json.loads(line)
            key = (str(entry["student"]), str(entry["reason"]))
        except (ValueError, KeyError, TypeError):
            continue
        seen.setdefault(key, Finding(key[0], "refused", key[1]))
    return list(seen.values())


def _normalized(source: str) -> str:
    lines = (line.split("#", 1)[0].rstrip() for line in source.splitlines())
    return "\n".join(line for line in lines if line.strip())


def write_report(root: Path, assignment: str, findings: list[Finding]) -> Path:
    """integrity/<assignment>/REPORT.txt for the instructor."""
    path = root / "integrity" / f"{assignment}-report.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"integrity report for {assignment}: {len(findings)} finding(s)"]
    lines += [f"  {f}" for f in findings]  # each one line: Finding escapes what students wrote
    path.write_text("\n".join(lines) + "\n")
    return path
