"""Which self-check questions a student got right, kept between sessions.

One small JSON file per user: ``$MINIKAFKA_PROGRESS`` if set (tests point it at a temporary
file), else ``~/.minikafka/progress.json``; in the browser edition, where the home folder
lasts only as long as the tab, ``minikafka-progress.json`` beside the lessons, in the
browser's own storage (JupyterLite's drive, mounted at ``/drive``). Per quiz id it keeps the number of tries, the
first answer's verdict and whether any answer was right. No timestamps: the file depends
only on what the student answered.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from minikafka.browser import BROWSER

ENV_VAR = "MINIKAFKA_PROGRESS"
BROWSER_DRIVE = Path("/drive")
VERSION = 1


def progress_path() -> Path:
    """Where this user's answers are kept."""
    configured = os.environ.get(ENV_VAR)
    if configured:
        return Path(configured).expanduser()
    if BROWSER and BROWSER_DRIVE.is_dir():
        return BROWSER_DRIVE / "minikafka-progress.json"
    return Path.home() / ".minikafka" / "progress.json"


def load(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """Every recorded answer by quiz id; empty when nothing was recorded or the file is
    unreadable (a broken progress file must not stop a lesson)."""
    path = path or progress_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    quizzes = data.get("quizzes") if isinstance(data, dict) else None
    return quizzes if isinstance(quizzes, dict) else {}


def record(quiz_id: str, letter: str, correct: bool, path: Path | None = None) -> dict[str, Any]:
    """Add one answer to the student's record and return that quiz's entry."""
    path = path or progress_path()
    quizzes = load(path)
    entry = quizzes.get(quiz_id) or {"tries": 0, "first_try_right": correct, "right": False}
    entry["tries"] += 1
    entry["right"] = bool(entry["right"] or correct)
    entry["last"] = letter
    quizzes[quiz_id] = entry
    _write(path, {"version": VERSION, "quizzes": dict(sorted(quizzes.items()))})
    return entry


def reset(lesson: str | None = None, path: Path | None = None) -> None:
    """Forget the answers to one lesson's questions, or to all of them."""
    path = path or progress_path()
    quizzes = {k: v for k, v in load(path).items()
               if lesson is not None and not k.startswith(f"{lesson}-")}
    _write(path, {"version": VERSION, "quizzes": quizzes})


def _write(path: Path, data: dict[str, Any]) -> None:
    # Write a temporary file and rename it, so a kernel stopped mid-write leaves the old
    # record rather than half a file.
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".progress-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
