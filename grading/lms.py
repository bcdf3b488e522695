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

A roster CSV (columns lms_id and student_id) is required: it maps the LMS's own student id
(the `lms_id` group; for a layout without one, the captured `student` text) to the course's
student id. Display names are never used to tell students apart (two students may share one),
and a roster that maps one LMS id or one student id twice is refused. Symlinks, special files
and files over the notebook size limit in an export are skipped with the reason.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import stat
import tempfile
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from .submission import MAX_NOTEBOOK_BYTES, Refused

LAYOUTS = {
    "canvas": r"^(?:.*/)?(?P<student>[^_/]+)_(?:late_)?(?P<lms_id>\d+)_\d+_(?P<file>[^/]+)$",
    "moodle": r"^(?P<student>[^/]+?)_(?P<lms_id>\d+)_assign\w*?_/(?:.*/)?(?P<file>[^/]+)$",
    "folders": r"^(?P<student>[^/]+)/(?:.*/)?(?P<file>[^/]+)$",
}
TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f UTC"
_RESUBMISSION = re.compile(r"-\d+$")


class RosterError(ValueError):
    """No roster, or one that does not tell students apart."""


@dataclass
class ImportReport:
    imported: dict[str, str] = field(default_factory=dict)   # student -> notebook file
    skipped: list[str] = field(default_factory=list)         # path: reason


def read_roster(path: Path) -> dict[str, str]:
    """The LMS's student id (lower-cased) -> the course's student id, one to one."""
    mapping: dict[str, str] = {}
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        if not {"lms_id", "student_id"} <= set(reader.fieldnames or ()):
            raise RosterError(f"{path}: the roster needs the columns lms_id and student_id")
        for row in reader:
            lms_id = (row.get("lms_id") or "").strip().lower()
            student = clean_id(row.get("student_id") or "")
            if not lms_id or not student:
                continue
            if mapping.get(lms_id, student) != student:
                raise RosterError(f"{path}: LMS id {lms_id!r} is given to two students")
            mapping[lms_id] = student
    if len(set(mapping.values())) != len(mapping):
        raise RosterError(f"{path}: a student id is given to two LMS ids")
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
    files = []
    for top, dirs, names in os.walk(source):  # never into a symlinked folder
        files += [Path(top) / n for n in names]
        dirs[:] = [d for d in dirs if d != "__MACOSX"]
    return source, sorted(files)


def import_submissions(root: Path, assignment: str, source: Path, layout: str = "canvas",
                       pattern: str | None = None, roster: Path | None = None) -> ImportReport:
    """Copy an LMS export into submitted/ (newest file wins per student and notebook)."""
    regex = re.compile(pattern or LAYOUTS[layout])
    if "student" not in regex.groupindex:
        raise ValueError("the pattern needs a named group (?P<student>...)")
    if roster is None:
        raise RosterError("a roster is needed (--roster: a CSV with lms_id and student_id): "
                          "display names cannot tell students apart")
    mapping = read_roster(roster)
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
            try:
                kind = os.lstat(path).st_mode
                if stat.S_ISLNK(kind) or not stat.S_ISREG(kind):
                    raise Refused("a symlink or not a regular file")
                if os.lstat(path).st_size > MAX_NOTEBOOK_BYTES:
                    raise Refused(f"larger than {MAX_NOTEBOOK_BYTES >> 20} MB")
            except Refused as exc:
                report.skipped.append(f"{rel}: refused: {exc}")
                continue
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


def _student_id(match: re.Match, mapping: dict[str, str]) -> str | None:
    """The course's id for the LMS's student id (never for a display name)."""
    found = match.groupdict()
    key = found["lms_id"] if "lms_id" in found else found["student"]
    return mapping.get((key or "").strip().lower())
