"""The notebook harness (tests/notebook_helpers.py) fails where `pytest --nbmake` fails.

IPython reports a display whose rich repr raised (a picture Graphviz refused: dot 2.43's
syntax error on an empty <B></B>) as an error output, and the cell still finishes: nbclient
alone passes such a notebook, nbmake fails it. The harness must fail it too, and fail on
text on stderr (red in the notebook), whatever prints it.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from notebook_helpers import execute_notebook

pytestmark = [pytest.mark.notebook, pytest.mark.timeout(120)]

REFUSED = """\
import graphviz
from minikafka.course.pictures import show
g = graphviz.Digraph("metrics", node_attr={"shape": "plain"})
# Refused by every Graphviz (2.43 refuses an empty <B></B> too; newer ones accept that).
g.node("metrics", "<<TABLE><TR><TD>x</TABLE>>")

class Old:  # how pictures were shown before: dot's error raised from the repr
    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"image/svg+xml": g.pipe(format="svg", encoding="utf-8")}

from IPython.display import display
display(Old())
print("the cell went on")
"""


def notebook(tmp_path: Path, *sources: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    path = tmp_path / "probe.ipynb"
    nbformat.write(nb, path)
    return path


def test_a_display_that_raised_fails_the_notebook(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match=r"cell 0 shows CalledProcessError"):
        execute_notebook(notebook(tmp_path, REFUSED), timeout=60)


def test_text_on_stderr_fails_the_notebook(tmp_path: Path) -> None:
    source = "import sys\nprint('Warning: cell size too small for content', file=sys.stderr)"
    with pytest.raises(AssertionError, match=r"cell 1 prints on stderr: 'Warning: cell size"):
        execute_notebook(notebook(tmp_path, "x = 1", source), timeout=60)


def test_show_draws_a_refused_picture_as_one_line_and_passes(tmp_path: Path) -> None:
    # The same picture through the course's show(): one line of text, nothing red.
    source = REFUSED.split("class Old")[0] + "show(g)\n"
    nb = execute_notebook(notebook(tmp_path, source), timeout=60)
    (out,) = nb.cells[0].outputs
    assert out.output_type == "display_data" and set(out.data) == {"text/plain"}
    text = out.data["text/plain"]
    assert "\n" not in text and "Graphviz could not draw this picture" in text
