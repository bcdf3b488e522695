"""Every picture of every lesson and lab fits a notebook's output area: 848 px, in a
1280-px-wide JupyterLab with the file browser open.

Each notebook runs as the harness runs it (`notebook_helpers.execute_notebook`, which runs
notebooks as `pytest --nbmake` does; labs on their own embedded server, Spark on the Python
source, as `test_labs` runs them offline). Every picture it leaves is collected: SVG and
PNG outputs, and the SVG inside HTML outputs and inside the HTML widgets of its panels
(the widget state the run stores). Each is drawn in Debian's Chromium at its own size,
unscaled, and its width measured: wider than 848 px, JupyterLab would cut it or shrink its
text. `python tests/test_picture_widths.py [NN ...]` prints the table (notebook, picture,
width) without asserting.
"""

from __future__ import annotations

import base64
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script too
from notebook_helpers import execute_notebook, notebook_group

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "lessons").glob("[0-9][0-9]-*.ipynb")) + sorted(
    (ROOT / "labs").glob("[0-9][0-9]-*.ipynb"))
OUTPUT_WIDTH_PX = 848
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
_PROLOG = re.compile(r"^.*?(?=<svg)", re.S)
_SVG = re.compile(r"<svg\b.*?</svg>", re.S)


def notebook_id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


SPARK_LABS = {"05-spark-streaming", "06-spark-batch-customers", "08-spark-windows-joins"}


def run(path: Path, lab_dir: Path) -> nbformat.NotebookNode:
    """The notebook executed as the notebook tests execute it: a lesson as test_lessons
    runs it, a lab as test_labs runs it offline (its own embedded server, Spark on the Python
    source, whose JVM logs on stderr as it starts). In one process, the run those tests made
    is reused (notebook_helpers keeps it)."""
    if path.parent.name == "lessons":
        return execute_notebook(path, timeout=480)
    env = {"MINIKAFKA_LAB_DIR": str(lab_dir), "MINIKAFKA_SPARK_UI": "0"}
    if path.stem in SPARK_LABS:
        env["MINIKAFKA_SPARK_SOURCE"] = "python"
    dropped = ("KAFKA_BOOTSTRAP_SERVERS", "MINIKAFKA_KAFKA_DATA_DIR", "MINIKAFKA_SPARK_SOURCE")
    saved = {k: os.environ.get(k) for k in (*env, *dropped)}
    for k in dropped:  # labs start their embedded server
        os.environ.pop(k, None)
    os.environ.update(env)
    try:
        return execute_notebook(path, timeout=480, stderr_ok=path.stem in SPARK_LABS)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def pictures(nb: nbformat.NotebookNode) -> list[tuple[str, str]]:
    """(name, HTML that draws the picture at its own size) for every picture the run left."""
    found: list[tuple[str, str]] = []
    for i, cell in enumerate(nb.cells):
        k = 0
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "image/svg+xml" in data:
                found.append((f"cell {i} svg {k}", _PROLOG.sub("", data["image/svg+xml"], 1)))
            elif "image/png" in data:
                png = data["image/png"].replace("\n", "")
                found.append((f"cell {i} png {k}", f'<img src="data:image/png;base64,{png}">'))
            elif "<svg" in data.get("text/html", ""):
                found += [(f"cell {i} html svg {k}.{j}", svg)
                          for j, svg in enumerate(_SVG.findall(data["text/html"]))]
            else:
                continue
            k += 1
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    for model_id, model in state.items():
        value = model.get("state", {}).get("value")
        if isinstance(value, str) and "<svg" in value:
            found += [(f"widget {model_id[:8]} svg {j}", svg)
                      for j, svg in enumerate(_SVG.findall(value))]
    return found


# Every <section>'s picture, at its own size: its width in CSS px.
MEASURE = """async () => {
  const out = [];
  for (const s of document.querySelectorAll('section')) {
    const el = s.querySelector('svg, img');
    if (el.tagName === 'IMG') await el.decode();
    out.push([s.dataset.name, el.getBoundingClientRect().width]);
  }
  return out;
}"""


def measure(page: Any, found: list[tuple[str, str]]) -> list[tuple[str, float]]:
    # Each in a box as wide as the output area, without max-width: a picture with a size
    # of its own keeps it (and overflows when too wide); one with only a viewBox fills
    # the box, as it does in JupyterLab.
    body = "".join(f'<section data-name="{name}" style="width:{OUTPUT_WIDTH_PX}px">'
                   f'{markup.replace("max-width:100%", "")}</section>' for name, markup in found)
    page.set_content(f"<html><body style='margin:0;width:10000px'>{body}</body></html>")
    return [(name, round(width, 1)) for name, width in page.evaluate(MEASURE)]


def open_browser(profile: Path) -> Any:
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "Debian's chromium is missing: run ./test.sh"
    pw = sync_playwright().start()
    ctx = pw.chromium.launch_persistent_context(
        str(profile), executable_path=CHROMIUM, args=ARGS, headless=True,
        viewport={"width": 1280, "height": 900})
    return pw, ctx


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    pw, ctx = open_browser(tmp_path_factory.mktemp("profile"))
    try:
        yield ctx.new_page()
    finally:
        ctx.close()
        pw.stop()


@pytest.mark.browser
@pytest.mark.notebook
@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("path", [pytest.param(p, marks=notebook_group(p), id=notebook_id(p))
                                  for p in NOTEBOOKS])
def test_every_picture_fits_the_output_area(page: Any, path: Path, tmp_path: Path) -> None:
    found = pictures(run(path, tmp_path))
    widths = measure(page, found)
    assert len(widths) == len(found)
    assert all(w > 0 for _, w in widths), widths
    wide = [(name, w) for name, w in widths if w > OUTPUT_WIDTH_PX]
    assert not wide, f"{notebook_id(path)}: wider than {OUTPUT_WIDTH_PX} px: {wide}"


def test_pictures_are_collected_from_outputs_and_widgets() -> None:
    """The collector finds SVG, PNG, SVG in HTML and in a widget's stored value."""
    svg = '<svg width="900pt" height="10pt"><g/></svg>'
    png = base64.b64encode(b"\x89PNG").decode()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(outputs=[
        nbformat.v4.new_output("display_data", {"image/svg+xml": '<?xml?>\n' + svg}),
        nbformat.v4.new_output("display_data", {"image/png": png}),
        nbformat.v4.new_output("display_data", {"text/html": f"<div>{svg}</div>"}),
        nbformat.v4.new_output("stream", name="stdout", text="no picture"),
    ])]
    nb.metadata["widgets"] = {WIDGET_STATE: {"state": {"abcdef0123": {"state": {
        "value": f'<div style="overflow:auto">{svg}</div>'}}}}}
    names = [name for name, _ in pictures(nb)]
    assert names == ["cell 0 svg 0", "cell 0 png 1", "cell 0 html svg 2.0",
                     "widget abcdef01 svg 0"]
    assert pictures(nb)[0][1] == svg


def main(argv: list[str]) -> int:
    """Print the width table for the notebooks named by number (all without arguments)."""
    import tempfile

    paths = [p for p in NOTEBOOKS if not argv or p.stem[:2] in argv]
    with tempfile.TemporaryDirectory() as tmp:
        pw, ctx = open_browser(Path(tmp) / "profile")
        try:
            page_ = ctx.new_page()
            print(f"{'notebook':42s} {'picture':28s} {'width px':>8s}")
            for path in paths:
                lab_dir = Path(tmp) / path.stem
                lab_dir.mkdir()
                try:
                    nb = run(path, lab_dir)
                except Exception as e:  # the table goes on; the test reports it
                    print(f"{notebook_id(path):42s} did not run: {str(e)[:200]}", flush=True)
                    continue
                for name, width in measure(page_, pictures(nb)):
                    flag = "  TOO WIDE" if width > OUTPUT_WIDTH_PX else ""
                    print(f"{notebook_id(path):42s} {name:28s} {width:8.0f}{flag}", flush=True)
        finally:
            ctx.close()
            pw.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
