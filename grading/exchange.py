"""nbgrader's `collect`, refusing what a student could forge in the exchange.

nbgrader's own collect takes the newest `inbound/<student>+<assignment>+<time>+<id>` folder
of each name, follows symlinks when it copies (a submitted "notebook" that is a symlink to the
instructor's source/ becomes that notebook), and only logs a warning when the folder's owner
is not the student it names. This collect refuses, and reports with the reason:

* a folder whose owner (its Unix user) is not the student it names: on a shared server
  (JupyterHub) every student submits as their own user. With `single_user` (one Unix
  account for the whole class, e.g. a course run on one laptop) the grader's own account is
  also accepted, since submitters cannot be told apart there;
* a folder that is itself a symlink, or holds a symlink, a hard-linked file or anything but
  regular files and folders: nothing outside the submission is ever copied;
* a folder holding a file or folder another Unix user made: nbgrader leaves every
  submission folder writable by everyone (hidden only by its unguessable name), so a
  student who learns that name could swap the notebook in it;
* a submission larger than nbgrader's max_dir_size.

A refused folder is never the student's "newest": their newest accepted one is collected.
"""

from __future__ import annotations

import fnmatch
import os
import pwd
import shutil
import stat
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect


class Unsafe(ValueError):
    pass


def owner_name(st: os.stat_result) -> str:
    try:
        return pwd.getpwuid(st.st_uid).pw_name
    except KeyError:
        return f"uid {st.st_uid}"


def check_folder(path: Path, student: str, single_user: bool) -> None:
    """Raise Unsafe when an inbound folder may not be collected as `student`'s."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise Unsafe("the submission is a symlink or not a folder")
    owner = owner_name(st)
    if owner != student and not (single_user and st.st_uid == os.geteuid()):
        raise Unsafe(f"submitted as {student!r} by the Unix user {owner!r}")
    for top, dirs, files in os.walk(path):
        for name in dirs + files:
            entry = Path(top) / name
            est = os.lstat(entry)
            rel = entry.relative_to(path)
            if stat.S_ISLNK(est.st_mode):
                raise Unsafe(f"{rel} is a symlink (to a file outside the submission)")
            if stat.S_ISREG(est.st_mode) and est.st_nlink > 1:
                raise Unsafe(f"{rel} is a hard link (to a file outside the submission)")
            if not (stat.S_ISREG(est.st_mode) or stat.S_ISDIR(est.st_mode)):
                raise Unsafe(f"{rel} is not a regular file")
            if est.st_uid != st.st_uid:
                raise Unsafe(f"{rel} was written by the Unix user {owner_name(est)!r}, "
                             "not by the submitter")


def copy_regular(src: Path, dest: Path, ignore: list[str]) -> None:
    """Copy a checked folder without following any symlink (one made since the check
    fails the copy)."""
    dest.mkdir(parents=True)
    for entry in os.scandir(src):
        if any(fnmatch.fnmatch(entry.name, pattern) for pattern in ignore):
            continue
        if entry.is_dir(follow_symlinks=False):
            copy_regular(Path(entry.path), dest / entry.name, ignore)
        elif entry.is_file(follow_symlinks=False):
            fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as fh, open(dest / entry.name, "wb") as out:
                shutil.copyfileobj(fh, out)
        else:
            raise Unsafe(f"{entry.name} is not a regular file")


class CheckedCollect(ExchangeCollect):
    """nbgrader's collect with the checks above; `refused` lists (student, reason)."""

    single_user = False

    def init_src(self):
        self.refused: list[tuple[str, str]] = []
        super().init_src()
        # nbgrader picked the newest folder per name; pick the newest accepted one instead
        chosen = []
        for record in self.src_records:
            student = record["username"]
            pattern = f"{student}+{self.coursedir.assignment_id}+*"
            candidates = [self._path_to_record(str(p)) for p in Path(self.inbound_path).glob(pattern)
                          if p.name.split("+", 1)[0] == student]
            for candidate in self._sort_by_timestamp(candidates):
                if self.duedate is not None and self.before_duedate \
                        and candidate["timestamp"] > self.duedate:
                    continue
                try:
                    check_folder(Path(self.inbound_path) / candidate["filename"], student,
                                 self.single_user)
                except Unsafe as exc:
                    self.refused.append((student, f"{candidate['filename']}: {exc}"))
                    continue
                chosen.append(candidate)
                break
        self.src_records = chosen

    def do_copy(self, src, dest, log=None):
        try:
            dir_size = self.get_size(src)
            if dir_size > 1000 * self.coursedir.max_dir_size:
                raise Unsafe(f"{dir_size} bytes, over the course's max_dir_size")
            copy_regular(Path(src), Path(dest), list(self.coursedir.ignore))
        except (Unsafe, OSError) as exc:
            shutil.rmtree(dest, ignore_errors=True)
            self.refused.append((Path(src).name.split("+", 1)[0], f"{Path(src).name}: {exc}"))
