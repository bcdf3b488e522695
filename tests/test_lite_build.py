"""`minikafka lite build`'s pieces that need no network: the pyodide-lock.json entries it
writes for wheels, and the kernel settings that keep the site on its own host."""
from __future__ import annotations

import hashlib
import json
import sys
import zipfile
from pathlib import Path

from minikafka.lite import build


def _wheel(path: Path, name: str, requires: list[str]) -> Path:
    wheel = path / f"{name}-1.0-py3-none-any.whl"
    meta = "\n".join(["Metadata-Version: 2.1", f"Name: {name}", "Version: 1.0",
                      *(f"Requires-Dist: {r}" for r in requires)]) + "\n"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(f"{name}/__init__.py", "")
        z.writestr(f"{name}_extra.py", "")
        z.writestr(f"{name}-1.0.dist-info/METADATA", meta)
    return wheel


def test_lock_entry_evaluates_dependencies_as_pyodide_would(tmp_path):
    wheel = _wheel(tmp_path, "demo_pkg", [
        "Traitlets>=5", "pexpect; sys_platform != 'emscripten'", "extra_only; extra == 'x'",
        "old_backport; python_version < '3.12'"])
    entry = build.lock_entry(wheel)
    assert entry["name"] == "demo-pkg" and entry["version"] == "1.0"
    assert entry["depends"] == ["traitlets"]
    assert entry["imports"] == ["demo_pkg", "demo_pkg_extra"]
    assert entry["sha256"] == hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert entry["file_name"] == wheel.name and entry["install_dir"] == "site"


def test_pyodide_dir_locks_exactly_the_wheels_it_ships(tmp_path):
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    for name in ("pyodide.mjs", "pyodide.js", "pyodide.asm.mjs", "pyodide.asm.wasm",
                 "python_stdlib.zip", "package.json"):
        (runtime / name).write_text(name)
    upstream = {"info": {"python": "3.14.2"}, "packages": {"numpy": {"file_name": "numpy.whl"}}}
    (runtime / "pyodide-lock.json").write_text(json.dumps(upstream))
    wheels = [_wheel(tmp_path, "alpha", ["beta", "missing_in_browser"]), _wheel(tmp_path, "beta", [])]
    out = tmp_path / "site" / "static" / "pyodide"
    names = build.pyodide_dir(runtime, wheels, out)
    lock = json.loads((out / "pyodide-lock.json").read_text())
    assert names == ["alpha", "beta"] == sorted(lock["packages"])
    assert lock["packages"]["alpha"]["depends"] == ["beta"]  # only what the site has
    assert lock["info"] == upstream["info"]
    assert all((out / e["file_name"]).exists() for e in lock["packages"].values())


def test_configure_preloads_every_package_from_the_site_and_never_pypi(tmp_path):
    (tmp_path / "jupyter-lite.json").write_text(json.dumps({"jupyter-config-data": {}}))
    build.configure(tmp_path, ["minikafka", "micropip"])
    data = json.loads((tmp_path / "jupyter-lite.json").read_text())["jupyter-config-data"]
    kernel = data["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
    assert kernel["disablePyPIFallback"] is True
    assert kernel["pyodideUrl"].startswith("./static/pyodide/")
    assert kernel["loadPyodideOptions"]["packages"] == ["minikafka", "micropip"]
    assert kernel["loadPyodideOptions"]["lockFileURL"].startswith("./static/pyodide/")


def test_the_kernel_and_the_runtime_are_the_same_pyodide():
    from jupyterlite_pyodide_kernel.constants import PYODIDE_VERSION
    assert build.PYODIDE_VERSION == PYODIDE_VERSION


def test_pictures_in_the_browser_are_drawn_by_the_page_from_dot_source(monkeypatch):
    import graphviz

    from minikafka.course import pictures

    graph = graphviz.Digraph("g")
    graph.edge("broker 1", "broker 2")
    monkeypatch.setattr(pictures, "BROWSER", True)
    monkeypatch.setattr(pictures, "_has_dot", lambda: False)  # Pyodide has no `dot`
    bundle = pictures._Picture(graph)._repr_mimebundle_()
    html = bundle["text/html"]
    assert json.dumps(graph.source) in html  # the DOT source, escaped for JavaScript
    assert pictures.VIZ_URL in html and '<script type="module">' in html
    assert "image/svg+xml" not in bundle
    monkeypatch.setattr(pictures, "BROWSER", False)
    assert "not drawn" in pictures._Picture(graph)._repr_mimebundle_()["text/plain"]


def test_a_served_cluster_cell_is_skipped_in_one_line_and_run_all_goes_on(monkeypatch, capsys):
    from IPython.core.interactiveshell import InteractiveShell

    from minikafka.course import browser

    monkeypatch.setattr(browser, "BROWSER", True)
    monkeypatch.setattr("minikafka.browser.BROWSER", True)
    shell = InteractiveShell.instance()
    try:
        browser.install()  # as importing minikafka.course does in a tab
        cell = ("from minikafka.course.served import real_cluster\n"
                "with real_cluster(topics={'orders': 3}) as server:\n"
                "    reached = True\n"
                "print('after', reached)\n")
        result = shell.run_cell(cell)
        out = capsys.readouterr().out
        assert result.success, result.error_in_exec  # a skip: Run All goes on
        assert "reached" not in shell.user_ns
        assert out.strip().splitlines() == [
            "Skipped in the browser edition: this cell needs a cluster served over the "
            "network (sockets), which a browser tab cannot provide; it runs after ./setup.sh"]
        assert "Traceback" not in out
        # Other errors still fail as errors, with their traceback.
        assert not shell.run_cell("1 / 0").success
        assert "ZeroDivisionError" in capsys.readouterr().out
    finally:
        InteractiveShell.clear_instance()


def test_a_cell_importing_a_package_without_a_browser_build_is_skipped(monkeypatch, capsys):
    from IPython.core.interactiveshell import InteractiveShell

    from minikafka.course import browser

    monkeypatch.setattr(browser, "BROWSER", True)
    monkeypatch.setitem(sys.modules, "confluent_kafka", None)  # as in Pyodide: not there
    shell = InteractiveShell.instance()
    try:
        browser.install()
        result = shell.run_cell("from confluent_kafka import Producer\nreached = True\n")
        out = capsys.readouterr().out
        assert result.success and "reached" not in shell.user_ns
        assert out.startswith("Skipped in the browser edition: this cell needs "
                              "confluent-kafka (librdkafka, a C library)")
        # A misspelt import is the student's mistake: an error, with its traceback.
        result = shell.run_cell("import minikafak\n")
        assert not result.success
        assert "ModuleNotFoundError" in capsys.readouterr().out
    finally:
        InteractiveShell.clear_instance()


def test_a_process_or_a_missing_codec_is_a_skip_and_other_os_errors_are_not(capsys):
    from IPython.core.interactiveshell import InteractiveShell

    from minikafka.course import browser

    shell = InteractiveShell.instance()
    try:
        browser.install()
        # What subprocess raises in Pyodide, whose sys.platform has no fork or exec.
        assert shell.run_cell("raise OSError(138, 'emscripten does not support processes.')\n"
                              "reached = True").success
        assert "process of its own" in capsys.readouterr().out
        assert shell.run_cell("from kafka.errors import UnsupportedCodecError\n"
                              "raise UnsupportedCodecError('zstd is not available here')").success
        assert capsys.readouterr().out.startswith("Skipped in the browser edition: ")
        assert "reached" not in shell.user_ns
        assert not shell.run_cell("open('/nonexistent/file')").success
        assert "FileNotFoundError" in capsys.readouterr().out
    finally:
        InteractiveShell.clear_instance()


def test_outside_the_browser_require_does_nothing():
    from minikafka.course.browser import require

    require("anything")  # CPython: the cell goes on


def test_lesson_22_in_the_browser_names_its_certificates_without_making_them(
        monkeypatch, capsys, tmp_path):
    """No cryptography in a tab: the subjects (what the lesson's tables and principal
    mapping use) are there, no key is written, and one line says what was skipped. A
    served listener is skipped by Cluster.serve itself."""
    from IPython.core.interactiveshell import InteractiveShell

    from minikafka.course import authentication, browser

    monkeypatch.setattr(authentication, "BROWSER", True)
    monkeypatch.setattr("minikafka.browser.BROWSER", True)
    certs = authentication.make_certificates(tmp_path / "certs", {"alice": "course",
                                                                  "billing": "services"})
    out = capsys.readouterr().out
    assert out.startswith("Skipped in the browser edition: making the keys and certificates, "
                          "which needs cryptography") and len(out.splitlines()) == 1
    assert certs.subjects == {"broker": "CN=localhost,OU=brokers,O=minikafka",
                              "alice": "CN=alice,OU=course,O=minikafka",
                              "billing": "CN=billing,OU=services,O=minikafka"}
    assert certs.client["alice"] == (tmp_path / "certs/alice.pem", tmp_path / "certs/alice.key")
    assert not (tmp_path / "certs").exists()
    listener = authentication.listener_properties(certs, "SSL", client_auth="required")
    assert listener["ssl.keystore.location"] == str(tmp_path / "certs/broker.pem")
    shell = InteractiveShell.instance()
    try:
        browser.install()
        shell.user_ns["listener"] = listener
        result = shell.run_cell(
            "from minikafka import Cluster\n"
            "from minikafka.core.security_config import client_listeners\n"
            "with Cluster(brokers=1).serve(port=0, listeners=client_listeners(listener)):\n"
            "    reached = True\n")
        assert result.success and "reached" not in shell.user_ns
        assert capsys.readouterr().out.startswith(
            "Skipped in the browser edition: this cell needs a cluster served over the network")
    finally:
        InteractiveShell.clear_instance()


def test_lesson_22_exercise_in_the_browser_judges_the_rules_without_a_broker(monkeypatch):
    from minikafka.course import exercises, lesson_exercises, solutions

    monkeypatch.setattr(lesson_exercises, "BROWSER", True)

    def served(rules):
        raise AssertionError("no broker is served in the browser")
    monkeypatch.setattr(lesson_exercises, "_mapped_writes", served)
    right = exercises.check("22-mapping-rules", solutions.principal_mapping_rules)
    assert right.status == "done"
    assert any("skipped in the browser edition" in line for line in right.outcome.history)
    # Plausible wrong answers are still refused: no DEFAULT, and OU=course.* (too wide).
    for wrong in ("RULE:^CN=([^,]+),OU=course,O=minikafka$/$1/L, "
                  "RULE:^CN=([^,]+),OU=services,O=minikafka$/svc-$1/",
                  "RULE:^CN=([^,]+),OU=course.*$/$1/L, "
                  "RULE:^CN=([^,]+),OU=services,O=minikafka$/svc-$1/, DEFAULT"):
        assert exercises.check("22-mapping-rules", lambda w=wrong: w).status == "wrong", wrong
