"""Import a folder or zip of submissions as a learning-management system exports them.

Each file's path (relative to the export's top) is matched against a layout's regular
expression; its named group `student` (and optional `lms_id`) names the student, and the
file becomes submitted/<student id>/<assignment>/<notebook>.ipynb with a timestamp.txt
(nbgrader's "%Y-%m-%d %H:%M:%S.%f UTC" form, from the file's modification time).

Layouts:
    canvas   smithjane_12345_67890_partitions.ipynb  (login_userid_submissionid_filename;
             "_late_" may follow the login; resubmissions get "-1", "-2" before .ipynb)
    moodle   Jane Smith_12345_assignsubmission_file_/partitions.ipynb
    folders  <student>/<anything>/partitions.ipynb
or any regex with a `student` group (--pattern).

A roster CSV (columns lms_id or name, and student_id) maps LMS identities to the course's
student ids; without one the captured `student` text, lower-cased, is the id.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import tempfile
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

LAYOUTS = {
    "canvas": r"^(?:.*/)?(?P<student>[^_/]+)_(?:late_)?(?P<lms_id>\d+)_\d+_(?P<file>[^/]+)$",
    "moodle": r"^(?P<student>[^/]+?)_(?P<lms_id>\d+)_assign\w*?_/(?:.*/)?(?P<file>[^/]+)$",
    "folders": r"^(?P<student>[^/]+)/(?:.*/)?(?P<file>[^/]+)$",
}
TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f UTC"
_RESUBMISSION = re.compile(r"-\d+$")


@dataclass
class ImportReport:
    imported: dict[str, str] = field(default_factory=dict)   # student -> notebook file
    skipped: list[str] = field(default_factory=list)         # path: reason


def read_roster(path: Path) -> dict[str, str]:
    """LMS id or name (lower-cased) -> student id."""
    mapping = {}
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            student = (row.get("student_id") or "").strip()
            if not student:
                continue
            for column in ("lms_id", "name", "login"):
                if row.get(column):
                    mapping[row[column].strip().lower()] = student
    return mapping


def clean_id(text: str) -> str:
    """A student id safe as a folder name and in nbgrader's exchange (no '+', no '/')."""
    return re.sub(r"[^a-z0-9._-]+", "-", text.strip().lower()).strip("-.")


def _notebook_for(filename: str, notebooks: list[str]) -> str | None:
    stem = _RESUBMISSION.sub("", Path(filename).stem)
    if not filename.endswith(".ipynb"):
        return None
    for name in notebooks:
        if stem == name or stem.endswith(name):
            return name
    return notebooks[0] if len(notebooks) == 1 else None


def _files(source: Path, workdir: Path) -> tuple[Path, list[Path]]:
    if zipfile.is_zipfile(source):
        with zipfile.ZipFile(source) as archive:
            archive.extractall(workdir)
            for info in archive.infolist():  # extractall does not keep modification times
                if not info.is_dir():
                    stamp = datetime(*info.date_time).timestamp()
                    target = workdir / info.filename
                    os.utime(target, (stamp, stamp))
        source = workdir
    files = sorted(p for p in source.rglob("*") if p.is_file() and "__MACOSX" not in p.parts)
    return source, files


def import_submissions(root: Path, assignment: str, source: Path, layout: str = "canvas",
                       pattern: str | None = None, roster: Path | None = None) -> ImportReport:
    """Copy an LMS export into submitted/ (newest file wins per student and notebook)."""
    regex = re.compile(pattern or LAYOUTS[layout])
    if "student" not in regex.groupindex:
        raise ValueError("the pattern needs a named group (?P<student>...)")
    mapping = read_roster(roster) if roster else None
    notebooks = sorted(p.stem for p in (root / "release" / assignment).glob("*.ipynb")) or \
        sorted(p.stem for p in (root / "source" / assignment).glob("*.ipynb"))
    if not notebooks:
        raise FileNotFoundError(f"no notebooks for {assignment}: generate it first")
    report = ImportReport()
    chosen: dict[tuple[str, str], Path] = {}
    with tempfile.TemporaryDirectory() as tmp:
        top, files = _files(Path(source), Path(tmp))
        for path in files:
            rel = path.relative_to(top).as_posix()
            match = regex.match(rel)
            if not match:
                report.skipped.append(f"{rel}: does not match the {layout} layout")
                continue
            student = _student_id(match, mapping)
            if student is None:
                report.skipped.append(f"{rel}: not in the roster")
                continue
            notebook = _notebook_for(match.groupdict().get("file") or path.name, notebooks)
            if notebook is None:
                report.skipped.append(f"{rel}: not one of the notebooks {notebooks}")
                continue
            key = (student, notebook)
            if key in chosen:
                older = min(chosen[key], path, key=lambda p: p.stat().st_mtime)
                report.skipped.append(f"{older.relative_to(top).as_posix()}: an older upload")
                if older is path:
                    continue
            chosen[key] = path
        for (student, notebook), path in sorted(chosen.items()):
            dest = root / "submitted" / student / assignment
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest / f"{notebook}.ipynb")
            stamp = datetime.fromtimestamp(path.stat().st_mtime, UTC)
            (dest / "timestamp.txt").write_text(stamp.strftime(TIMESTAMP_FORMAT))
            report.imported[student] = f"{notebook}.ipynb"
    return report


def _student_id(match: re.Match, mapping: dict[str, str] | None) -> str | None:
    found = match.groupdict()
    if mapping is None:
        return clean_id(found["student"]) or None
    for key in (found.get("lms_id"), found.get("student")):
        if key and key.strip().lower() in mapping:
            return clean_id(mapping[key.strip().lower()])
    return None
