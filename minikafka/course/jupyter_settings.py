"""The course's JupyterLab settings: no news pop-up, no update check, code lines wrapped,
and nbgrader's instructor tools out of the students' way.

A fresh JupyterLab asks every new user whether to fetch Jupyter's news, which greets a
student with a question that has nothing to do with the lesson. JupyterLab reads default
overrides from ``<app dir>/settings/overrides.d/*.json`` (the app dir is
``<sys.prefix>/share/jupyter/lab`` unless ``JUPYTERLAB_DIR`` says otherwise); a student
can still change the setting in *Settings*. ``setup.sh`` and the Docker image install the
file with::

    python -m minikafka.course.jupyter_settings

nbgrader ships one JupyterLab extension with its menu, the "Create Assignment" panel and
the formgrader; a student needs none of them. The same command disables it in this
environment (``<sys.prefix>/etc/jupyter/labconfig/page_config.json``, where
``jupyter labextension disable --level=sys_prefix`` writes) unless an instructor has enabled
it with::

    python -m minikafka.course.jupyter_settings --instructor

(``--student`` disables it again). The choice is kept in the environment, so running
``setup.sh`` again does not undo it.
"""

from __future__ import annotations

import json
import shutil
import sys
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


NBGRADER_LABEXTENSION = "@jupyter/nbgrader"


def _etc(prefix: Path | None) -> Path:
    return Path(prefix or sys.prefix) / "etc" / "jupyter"


def role_file(prefix: Path | None = None) -> Path:
    """Where the environment remembers whose JupyterLab it is."""
    return _etc(prefix) / "minikafka-course-role"


def set_nbgrader_ui(enabled: bool, prefix: Path | None = None) -> Path:
    """Enable or disable nbgrader's JupyterLab extension for this environment, as
    ``jupyter labextension enable|disable --level=sys_prefix`` does; return the file."""
    page_config = _etc(prefix) / "labconfig" / "page_config.json"
    config = json.loads(page_config.read_text()) if page_config.exists() else {}
    config.setdefault("disabledExtensions", {})[NBGRADER_LABEXTENSION] = not enabled
    page_config.parent.mkdir(parents=True, exist_ok=True)
    page_config.write_text(json.dumps(config, indent=2) + "\n")
    return page_config


def apply_role(role: str | None = None, prefix: Path | None = None) -> str:
    """Set the environment up for "student" or "instructor"; without ``role``, keep the
    one chosen before (a student's by default)."""
    marker = role_file(prefix)
    if role is None:
        role = marker.read_text().strip() if marker.exists() else "student"
    set_nbgrader_ui(role == "instructor", prefix)
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(role + "\n")
    return role


if __name__ == "__main__":
    chosen = {"--instructor": "instructor", "--student": "student"}.get(
        sys.argv[1] if len(sys.argv) > 1 else "")
    print(f"JupyterLab settings for the course: {install()}")
    role = apply_role(chosen)
    print(f"nbgrader's JupyterLab tools: {'on' if role == 'instructor' else 'off'} ({role})")
