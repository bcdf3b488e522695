"""What the grader reads from a submission, and the hard limits on it.

Every step that opens a student's notebook (autograde's screening, the integrity report, the
export) reads it through `read_notebook`: never through a symlink, never a file that is not
a regular file, never more than MAX_NOTEBOOK_BYTES (read in bounded chunks), and only valid
JSON notebooks valid by nbformat's schema, of at most MAX_CELLS cells. Anything else raises Refused with the reason,
for the instructor's report; the class goes on.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import nbformat
from nbformat.notebooknode import NotebookNode

MAX_NOTEBOOK_BYTES = 16 * 2**20
MAX_CELLS = 1000
CHUNK = 1 << 20


class Refused(ValueError):
    """A submitted file the grader will not read, with the reason."""


def read_bounded(path: Path, limit: int = MAX_NOTEBOOK_BYTES) -> bytes:
    """The bytes of a regular file that is no symlink, refused past `limit` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        why = "a symlink" if os.path.islink(path) else exc.strerror
        raise Refused(f"{path.name}: {why}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Refused(f"{path.name}: not a regular file")
        data = bytearray()
        while len(data) <= limit:
            chunk = os.read(fd, CHUNK)
            if not chunk:
                return bytes(data)
            data += chunk
        raise Refused(f"{path.name}: larger than {limit >> 20} MB (notebook size limit)")
    finally:
        os.close(fd)


def read_notebook(path: Path) -> NotebookNode:
    """A submitted notebook, within the limits, or Refused."""
    data = read_bounded(path)
    try:
        nb = nbformat.reads(data.decode("utf-8"), as_version=4)
        cells = nb.cells
    except Exception as exc:  # bad JSON, bad UTF-8, not a notebook: all the same to a grader
        raise Refused(f"{path.name}: not a readable notebook ({type(exc).__name__})") from None
    if not isinstance(cells, list):
        raise Refused(f"{path.name}: not a readable notebook (no list of cells)")
    if len(cells) > MAX_CELLS:
        raise Refused(f"{path.name}: {len(cells)} cells, more than {MAX_CELLS} (cell count limit)")
    try:
        # what nbgrader and nbconvert assume of every notebook (a vandal's breaks feedback)
        nbformat.validate(nb)
    except nbformat.ValidationError as exc:
        raise Refused(f"{path.name}: not a valid notebook ({exc.message[:200]})") from None
    return nb


def screen(folder: Path, notebooks: list[str]) -> dict[str, str]:
    """The files of one submission folder the grader refuses: path (relative) -> reason.
    A symlink or special file anywhere, and any of `notebooks` that read_notebook refuses."""
    refused: dict[str, str] = {}
    for top, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(top) / name
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                refused[str(path.relative_to(folder))] = "a symlink (to a file outside the submission)"
            elif not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                refused[str(path.relative_to(folder))] = "not a regular file"
        dirs[:] = [d for d in dirs if not os.path.islink(Path(top) / d)]
    for name in notebooks:
        path = folder / name
        if name in refused or not os.path.lexists(path):
            continue
        try:
            read_notebook(path)
        except Refused as exc:
            refused[name] = str(exc).removeprefix(f"{name}: ")
    return refused


def quarantine(folder: Path, refused: dict[str, str], aside: Path,
               blank: dict[str, Path]) -> None:
    """Move the refused files of a submission folder to `aside` (kept for the instructor)
    and put the blank released notebook in each refused notebook's place, so nbgrader grades
    it as the submission of nothing: 0 points, and every later step has a notebook to read."""
    for rel in refused:
        path = folder / rel
        target = aside / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if os.path.isdir(target) and not os.path.islink(target):
            shutil.rmtree(target)
        elif os.path.lexists(target):
            os.remove(target)
        os.rename(path, target)
        if rel in blank:
            shutil.copyfile(blank[rel], path)
