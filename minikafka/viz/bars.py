"""Offset bars over time: one row per sample, a bar of a partition's offsets cut into
coloured stretches (lesson 8's consumer positions, lesson 20's storage tiers)."""

from __future__ import annotations

from collections.abc import Sequence

import graphviz

from .html import td
from .palette import FONT


def offset_bar(fills: Sequence[str], cuts: Sequence[int], scale: float, width: int) -> str:
    """A bar `width` wide: stretch i, in fills[i], runs from cut i-1 (0 first) to cut i;
    the rest stays blank."""
    cells, last = [], 0
    for fill, cut in zip(fills, cuts):
        w = round((cut - last) * scale)
        if w > 0:
            cells.append(td("", width=w, height=18, fill=fill, border=0))
        last = cut
    rest = width - round(last * scale)
    if rest > 0:
        cells.append(td("", width=rest, height=18, border=0))
    return ('<TABLE BORDER="1" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0"><TR>'
            + "".join(cells) + "</TR></TABLE>")


def bar_timeline(name: str, title: str, headers: Sequence[tuple[str, str]],
                 rows: Sequence[str], legend: Sequence[tuple[str, str]]) -> graphviz.Digraph:
    """The picture: a title, four column headers (text, alignment), the rows (each
    "<TR>...</TR>") and a legend of (fill, meaning)."""
    head = ["<TR>" + td(title, colspan=4, border=0, bold=True, point=12, align="LEFT") + "</TR>",
            "<TR>" + "".join(td(h, border=0, bold=True, point=10, align=a) for h, a in headers)
            + "</TR>"]
    key = ('<TR><TD COLSPAN="4" BORDER="0" ALIGN="LEFT"><TABLE BORDER="0" CELLSPACING="3">'
           + "".join(f"<TR>{td('', width=14, height=14, fill=f, border=1)}"
                     f"{td(w, border=0, point=10, align='LEFT')}</TR>" for f, w in legend)
           + "</TABLE></TD></TR>")
    g = graphviz.Digraph(name, graph_attr={"fontname": FONT},
                         node_attr={"shape": "plain", "fontname": FONT})
    g.node(name, '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="2" CELLPADDING="2">'
                 + "".join([*head, *rows, key]) + "</TABLE>>")
    return g
