"""The course directory: its nbgrader configuration, assignments and notebooks."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from . import COURSE_DIR

CONFIG_FILE = "nbgrader_config.py"


def load_config(root: Path = COURSE_DIR, overrides: Config | None = None) -> Config:
    """The course's nbgrader_config.py, as nbgrader itself would load it, plus overrides."""
    config = PyFileConfigLoader(CONFIG_FILE, path=str(root)).load_config()
    if overrides is not None:
        config.merge(overrides)
    return config


def _scripts_on_path() -> None:
    """nbgrader runs `alembic` (gradebook migrations) from PATH: make this interpreter's
    scripts visible when the virtualenv is used without being activated."""
    scripts = str(Path(sys.executable).parent)
    if scripts not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")


def make_api(root: Path = COURSE_DIR, overrides: Config | None = None):
    """nbgrader's high-level API (the one the formgrader uses) for this course."""
    from nbgrader.apps import NbGraderAPI

    _scripts_on_path()
    config = load_config(root, overrides)
    api = NbGraderAPI(config=config)
    api.log.setLevel(logging.WARNING)
    return api


def assignments(root: Path = COURSE_DIR) -> list[str]:
    """Assignment ids: the folders of source/."""
    source = root / "source"
    return sorted(p.name for p in source.iterdir() if p.is_dir() and not p.name.startswith("."))


def source_notebooks(root: Path, assignment: str) -> list[Path]:
    return sorted((root / "source" / assignment).glob("*.ipynb"))


def release_dir(root: Path, assignment: str) -> Path:
    return root / "release" / assignment


def submitted_dir(root: Path, student: str, assignment: str) -> Path:
    return root / "submitted" / student / assignment
