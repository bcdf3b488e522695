"""The course's JupyterLab settings: no news pop-up, no update check.

A fresh JupyterLab asks every new user whether to fetch Jupyter's news, which greets a
student with a question that has nothing to do with the lesson. JupyterLab reads default
overrides from ``<app dir>/settings/overrides.d/*.json`` (the app dir is
``<sys.prefix>/share/jupyter/lab`` unless ``JUPYTERLAB_DIR`` says otherwise); a student
can still change the setting in *Settings*. ``setup.sh`` and the Docker image install the
file with::

    python -m minikafka.course.jupyter_settings
"""

from __future__ import annotations

import shutil
from pathlib import Path

OVERRIDES = Path(__file__).with_name("jupyterlab-overrides.json")
FILE_NAME = "minikafka-course.json"


def overrides_dir() -> Path:
    """Where this Python's JupyterLab reads packaged setting overrides."""
    from jupyterlab.commands import get_app_dir

    return Path(get_app_dir()) / "settings" / "overrides.d"


def install(target_dir: Path | None = None) -> Path:
    """Copy the course's overrides where JupyterLab reads them; return the file written."""
    target_dir = target_dir or overrides_dir()
    target_dir.mkdir(parents=True, exist_ok=True)
    target = target_dir / FILE_NAME
    shutil.copyfile(OVERRIDES, target)
    return target


if __name__ == "__main__":
    print(f"JupyterLab settings for the course: {install()}")
