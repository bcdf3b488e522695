"""Lessons in Debian's Chromium with Playwright.

Legibility: every lesson's pictures and panels, drawn by the lesson's own cells, are put
in a page as wide as a notebook's output area in a 1280-px-wide JupyterLab (its file
browser open), scaled down to fit as JupyterLab does; the smallest text must be at least
11 px and no placeholder text may show.

JupyterLab itself, 1280 px wide, opens lesson 04 (replication), runs every cell, and
then the student's path: the replication panel's text must be legible, then pick the
broker that leads orders-0 and press "stop (clean)". The cluster picture must redraw
with a new leader and the old one down. Widgets must render (no "model not found"). A
screenshot is kept for the record.
Chromium is /usr/bin/chromium (test.sh installs it); `playwright install` is never used.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lesson_pictures import picture_cells

pytestmark = [pytest.mark.browser, pytest.mark.timeout(400)]

ROOT = Path(__file__).resolve().parent.parent
LESSON = "04-replication.ipynb"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
TOKEN = "lesson-browser-test"

# Broker boxes in the first panel's cluster picture: broker -> (status line, role of orders-0).
READ_CLUSTER = """() => {
  const panel = [...document.querySelectorAll('.jp-OutputArea-output')]
    .find((o) => [...o.querySelectorAll('button')].some((b) => b.textContent.includes('stop (clean)')));
  const out = {};
  if (!panel) return out;
  for (const node of panel.querySelectorAll('svg g.node')) {
    const texts = [...node.querySelectorAll('text')].map((t) => t.textContent.trim());
    const i = texts.findIndex((t) => t.replace('▶ ', '') === 'orders-0');
    const title = node.querySelector('title');
    if (i >= 0 && title) out[title.textContent] = {all: texts.join(' '), role: texts[i + 1] || ''};
  }
  return out;
}"""


# A notebook's output area in a 1280-px-wide JupyterLab 4 with the file browser open.
OUTPUT_WIDTH_PX = 848
MIN_TEXT_PX = 11
LESSONS = sorted((ROOT / "lessons").glob("[0-9][0-9]-*.ipynb"))
# The lessons with Graphviz pictures (lesson 22's one picture is a chart; that every lesson
# draws something is tests/test_viz_lessons.py's check).
DRAWING = [p for p in LESSONS if picture_cells(p)]

# Every <text> of the SVGs under `root`: its rendered font size in CSS px (font-size in
# SVG units times the SVG's scale on screen) and its content.
READ_TEXTS = """(root) => [...root.querySelectorAll('svg text')].map((t) => {
  const size = parseFloat(t.getAttribute('font-size') || getComputedStyle(t).fontSize);
  const m = t.getScreenCTM();
  return {text: t.textContent, px: size * Math.hypot(m.a, m.b)};
})"""
PLACEHOLDER = re.compile(r"^\s*(None|null|undefined|nan|NaN|-|–)\s*$|\brack\s+[-–·]|\brack\s*$|· ·")


def placeholders(texts: list[dict[str, Any]]) -> list[str]:
    return [t["text"] for t in texts if PLACEHOLDER.search(t["text"])]


def illegible(texts: list[dict[str, Any]]) -> list[tuple[str, float]]:
    return [(t["text"], round(t["px"], 1)) for t in texts
            if t["text"].strip() and t["px"] < MIN_TEXT_PX]


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "Debian's chromium is missing: run ./test.sh"
    with sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("profile")), executable_path=CHROMIUM, args=ARGS,
            headless=True, viewport={"width": 1280, "height": 900})
        try:
            yield ctx
        finally:
            ctx.close()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("path", DRAWING, ids=[p.stem for p in DRAWING])
def test_lesson_pictures_are_legible_at_100_percent(browser: Any, path: Path) -> None:
    from lesson_pictures import lesson_graphs

    from minikafka.viz.svg import render, svg_html, to_svg

    graphs = lesson_graphs(path)
    assert graphs, f"{path.name} draws no picture"
    for name, g in graphs:  # dot's warnings are layout bugs ("cell size too small", ...)
        assert render(g)[1] == [], (path.name, name, render(g)[1])
    # svg_html scales a picture down to the width it is given, as the panels show them;
    # JupyterLab shows show()'s SVG as an image with the same max-width: 100%.
    body = "".join(f'<section data-name="{name}" style="width:{OUTPUT_WIDTH_PX}px">'
                   f"{svg_html(to_svg(g))}</section>" for name, g in graphs)
    page = browser.new_page()
    try:
        page.set_content(f"<html><body style='margin:0'>{body}</body></html>")
        for section in page.locator("section").all():
            name = section.get_attribute("data-name")
            texts = section.evaluate(READ_TEXTS)
            assert texts, f"{path.name} {name}: no text drawn"
            assert not placeholders(texts), (path.name, name, placeholders(texts))
            small = illegible(texts)
            assert not small, (f"{path.name} {name}: text below {MIN_TEXT_PX} px at 100% "
                               f"zoom in a {OUTPUT_WIDTH_PX}-px output area: {small[:5]}")
    finally:
        page.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """JupyterLab on 127.0.0.1 serving a copy of the lesson (autosave must not touch ours)."""
    root = tmp_path_factory.mktemp("lab")
    shutil.copy(ROOT / "lessons" / LESSON, root / LESSON)
    port = free_port()
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(root / ".runtime")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
         f"--ServerApp.port={port}", f"--IdentityProvider.token={TOKEN}",
         f"--ServerApp.root_dir={root}", "--LabApp.news_url=None",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--allow-root"],
        cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2)
                break
            except OSError:
                assert proc.poll() is None, "JupyterLab exited"
                assert time.monotonic() < deadline, "JupyterLab did not start in 60 s"
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


# A code cell's prompt: "[ ]:" before it runs, "[*]:" while queued or running, "[7]:" after,
# and empty while its input is collapsed (the check cells).
PROMPTS = ("[...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]"
           ".map((p) => p.textContent.trim()).filter((t) => t)")
STARTED = f"() => {PROMPTS}.some((t) => /[*0-9]/.test(t))"
# Done: nothing queued, and every cell ran or one raised (Run All stops there).
RAN_ALL = (f"() => {{ const t = {PROMPTS}; return t.length > 0 && !t.some((x) => x.includes('*'))"
           " && (t.every((x) => /[0-9]/.test(x))"
           " || !!document.querySelector(\".jp-OutputArea-output[data-mime-type*='error']\")); }")


def run_all(page: Any) -> None:
    """Run > Run All Cells, and wait until it has started. On a loaded machine the first
    click can be lost (no cell starts): then focus the notebook and click again."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for attempt in range(3):
        page.click(".jp-Notebook .jp-Cell >> nth=0")
        page.click(".lm-MenuBar-itemLabel:text-is('Run')")
        page.click(".lm-Menu-item:not(.lm-mod-disabled) .lm-Menu-itemLabel:text-is('Run All Cells')")
        try:
            page.wait_for_function(STARTED, timeout=60_000)
            return
        except PlaywrightTimeout:
            if attempt == 2:
                raise


def cluster_state(page: Any) -> dict[int, dict[str, str]]:
    return {int(k.removeprefix("broker_").removeprefix("broker")): v
            for k, v in page.evaluate(READ_CLUSTER).items()}


def test_lesson_runs_in_jupyterlab_and_stopping_the_leader_moves_it(
        browser: Any, lab: str, tmp_path: Path) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    # The module's one Chromium (a second sync Playwright cannot start beside it).
    page = browser.new_page()
    page.set_viewport_size({"width": 1280, "height": 1000})
    try:
        page.goto(f"{lab}/lab/tree/{LESSON}?token={TOKEN}")
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                               timeout=90_000)
        run_all(page)
        try:
            page.wait_for_function(RAN_ALL, timeout=240_000, polling=500)
        except PlaywrightTimeout:
            page.screenshot(path=str(tmp_path / "stuck.png"))
            prompts = page.evaluate("() => " + PROMPTS)
            raise AssertionError(f"Run All did not finish: prompts {prompts}; "
                                 f"screenshot {tmp_path / 'stuck.png'}") from None
        errors = page.locator(".jp-OutputArea-output[data-mime-type*='error']").count()
        assert errors == 0, "a cell raised in JupyterLab"
        assert "model not found" not in page.content()

        page.wait_for_function(f"() => Object.keys(({READ_CLUSTER})()).length === 3",
                               timeout=60_000)
        panel_out = page.locator(".jp-OutputArea-output").filter(
            has=page.locator("button:has-text('stop (clean)')")).first
        texts = panel_out.evaluate(READ_TEXTS)
        assert texts and not placeholders(texts), placeholders(texts)
        small = illegible(texts)
        assert not small, f"panel text below {MIN_TEXT_PX} px in JupyterLab: {small[:5]}"
        before = cluster_state(page)
        leaders = [b for b, v in before.items() if "leader" in v["role"]]
        assert len(leaders) == 1, before
        leader = leaders[0]
        panel = page.locator(".jp-OutputArea-output").filter(
            has=page.locator("button:has-text('stop (clean)')")).first
        panel.scroll_into_view_if_needed()
        panel.locator(".widget-dropdown:has(label:text-is('broker')) select").select_option(
            label=str(leader))
        shot_before = panel.screenshot()
        panel.locator("button:has-text('stop (clean)')").click()
        page.wait_for_function(
            f"() => {{ const s = ({READ_CLUSTER})();"
            f" const old = Object.entries(s).find(([k]) => k.endsWith('{leader}'));"
            f" return old && !old[1].role.includes('leader'); }}", timeout=60_000)
        after = cluster_state(page)
        new_leaders = [b for b, v in after.items() if "leader" in v["role"]]
        assert len(new_leaders) == 1 and new_leaders[0] != leader, after
        assert "DOWN" in after[leader]["all"].upper() or "offline" in after[leader]["all"]
        shot_after = panel.screenshot()
        assert shot_after != shot_before
        (tmp_path / "lesson04-after-stop.png").write_bytes(page.screenshot(full_page=True))
    finally:
        page.close()
