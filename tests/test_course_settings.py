"""The course's JupyterLab settings: students are not greeted by the news pop-up, code
lines wrap, and nbgrader's instructor tools are off in a student's set-up."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from jupyterlab.commands import get_app_dir
from jupyterlab.labapp import LabApp
from jupyterlab_server.settings_utils import _get_overrides

from minikafka.course import jupyter_settings

ROOT = Path(__file__).resolve().parent.parent
NOTIFICATION = "@jupyterlab/apputils-extension:notification"


def test_overrides_turn_news_and_update_checks_off() -> None:
    overrides = json.loads(jupyter_settings.OVERRIDES.read_text())
    assert overrides[NOTIFICATION] == {"fetchNews": "false", "checkForUpdates": False}
    # The values are ones this JupyterLab's own schema accepts ("false" is a string there).
    schema_path = (Path(get_app_dir()) / "schemas" / "@jupyterlab" / "apputils-extension"
                   / "notification.json")
    jsonschema.validate(overrides[NOTIFICATION], json.loads(schema_path.read_text()))


def test_installed_where_jupyterlab_reads_them(tmp_path: Path) -> None:
    # The default target is the overrides.d folder of the app settings dir JupyterLab uses.
    assert jupyter_settings.overrides_dir() == Path(LabApp().app_settings_dir) / "overrides.d"
    settings_dir = tmp_path / "settings"
    written = jupyter_settings.install(settings_dir / "overrides.d")
    assert written.parent == settings_dir / "overrides.d"
    overrides, error = _get_overrides(str(settings_dir))
    assert not error and overrides[NOTIFICATION]["fetchNews"] == "false"
    jupyter_settings.install(settings_dir / "overrides.d")  # a second run just rewrites it


def test_setup_and_the_docker_image_install_them() -> None:
    command = "-m minikafka.course.jupyter_settings"
    setup = (ROOT / "setup.sh").read_text()
    # In setup.sh it runs on every run, not only when the venv is (re)installed.
    assert re.search(r'^"\$VENV/bin/python" ' + re.escape(command), setup, re.M)
    assert setup.index(command) > setup.index('echo "$want_stamp" > "$STAMP"')
    assert f"python {command}" in (ROOT / "docker" / "jupyter" / "Dockerfile").read_text()


def test_code_lines_wrap_in_notebooks() -> None:
    # A long code line wraps instead of running off the right edge (file browser open).
    tracker = "@jupyterlab/notebook-extension:tracker"
    overrides = json.loads(jupyter_settings.OVERRIDES.read_text())[tracker]
    assert overrides["codeCellConfig"]["lineWrap"] is True
    schema_path = (Path(get_app_dir()) / "schemas" / "@jupyterlab" / "notebook-extension"
                   / "tracker.json")
    schema = json.loads(schema_path.read_text())
    jsonschema.validate(overrides["codeCellConfig"],
                        schema["properties"]["codeCellConfig"])
    # JupyterLab replaces the whole object, so its other default keys are kept.
    assert set(schema["properties"]["codeCellConfig"]["default"]) <= set(
        overrides["codeCellConfig"])


def test_the_student_set_up_hides_nbgrader_s_jupyterlab_tools() -> None:
    # setup.sh ran `python -m minikafka.course.jupyter_settings`: this environment is a
    # student's unless an instructor switched it (then the marker says so).
    if jupyter_settings.role_file().read_text().strip() == "instructor":
        pytest.fail("this environment was switched to the instructor's set-up; run "
                    "python -m minikafka.course.jupyter_settings --student")
    listed = subprocess.run([sys.executable, "-m", "jupyter", "labextension", "list"],
                            capture_output=True, text=True, timeout=120)
    line = next(x for x in (listed.stdout + listed.stderr).splitlines()
                if jupyter_settings.NBGRADER_LABEXTENSION + " v" in x)
    assert "disabled" in line and "enabled" not in line, line
    # The widgets' extension, a student's tool, stays on.
    widgets = next(x for x in (listed.stdout + listed.stderr).splitlines()
                   if "@jupyter-widgets/jupyterlab-manager" in x)
    assert "enabled" in widgets


def test_an_instructor_turns_nbgrader_s_tools_on_and_setup_keeps_it(tmp_path: Path) -> None:
    def disabled() -> bool:
        page = json.loads((tmp_path / "etc/jupyter/labconfig/page_config.json").read_text())
        return page["disabledExtensions"][jupyter_settings.NBGRADER_LABEXTENSION]

    assert jupyter_settings.apply_role(prefix=tmp_path) == "student" and disabled()
    assert jupyter_settings.apply_role("instructor", prefix=tmp_path) == "instructor"
    assert not disabled()
    assert jupyter_settings.apply_role(prefix=tmp_path) == "instructor" and not disabled()
    assert jupyter_settings.apply_role("student", prefix=tmp_path) == "student" and disabled()
