"""A rebalance over time: who owns which partition, from one moment to the next, when a
second consumer joins a group, under the eager protocol (range: everyone gives up
everything, then gets a new set) and the cooperative one (cooperative-sticky: only the
partitions that move are given up, and handed over in a second round).

`minikafka.course.rebalance.rebalance_timeline()` runs the seeded scenario and notes every
revocation and assignment the consumers' rebalance listeners are told about, with its
simulated time; `rebalance_view()` draws one grid per protocol: partitions down, moments across, each
cell naming the owner, or nobody (no one reads that partition then).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import graphviz

from .html import td
from .palette import BLACK, BLUE, FONT, ORANGE, VERMILLION, WHITE

MEMBER_COLOURS = [(BLUE, WHITE), (ORANGE, BLACK)]
NOBODY = (VERMILLION, WHITE)


def _grid(timeline: Mapping[str, Any]) -> str:
    moments = timeline["moments"]
    colours = {m: MEMBER_COLOURS[i % len(MEMBER_COLOURS)]
               for i, m in enumerate(timeline["members"])}
    stopped = sorted({p for m in moments for p, o in m["owners"].items() if o is None})
    kept = [p for p in range(timeline["partitions"]) if p not in stopped]
    n = len(moments)
    head = (f"{timeline['strategy']} · {timeline['protocol']} protocol · generations "
            f"{' → '.join(str(g) for g in timeline['generations'])}")
    rows = ["<TR>" + td(head, colspan=n + 1, border=0, bold=True, point=11, align="LEFT")
            + "</TR>",
            "<TR>" + td("time", border=0, point=10, bold=True, align="RIGHT")
            + "".join(td(f"{m['time_ms'] / 1000:.2f} s", border=0, point=10) for m in moments)
            + "</TR>",
            "<TR>" + td("event", border=0, point=10, bold=True, align="RIGHT")
            + "".join(td(m["what"].replace(" [", "<BR/>[", 1), raw=True, border=0, point=10,
                         width=76, height=30) for m in moments) + "</TR>"]
    for p in range(timeline["partitions"]):
        cells = [td(f"partition {p}", border=0, point=10, bold=True, align="RIGHT")]
        for m in moments:
            owner = m["owners"].get(p)
            fill, colour = colours[owner] if owner else NOBODY
            cells.append(td(owner or "nobody", fill=fill, color=colour, point=10,
                            bold=owner is None, width=76, height=20))
        rows.append("<TR>" + "".join(cells) + "</TR>")
    said = (f"partitions not read for a while: {stopped or 'none'}; "
            f"read throughout: {kept or 'none'}")
    rows.append("<TR>" + td(said, colspan=n + 1,
                            border=0, point=10, align="LEFT", italic=True) + "</TR>")
    return ('<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="2" CELLPADDING="2">'
            + "".join(rows) + "</TABLE>>")


def rebalance_view(timelines: Sequence[Mapping[str, Any]]) -> graphviz.Digraph:
    """One grid per timeline, stacked: the moments a rebalance listener was called, and
    who owned each partition after each."""
    g = graphviz.Digraph("rebalance", graph_attr={"fontname": FONT, "ranksep": "0.3"},
                         node_attr={"shape": "plain", "fontname": FONT})
    for i, timeline in enumerate(timelines):
        g.node(f"t{i}", _grid(timeline))
        if i:
            g.edge(f"t{i - 1}", f"t{i}", style="invis")
    g.node("legend", '<<TABLE BORDER="0" CELLSPACING="2"><TR>'
           + td("a", fill=BLUE, color=WHITE, point=10, width=40, height=18)
           + td("b", fill=ORANGE, color=BLACK, point=10, width=40, height=18)
           + td("nobody", fill=VERMILLION, color=WHITE, point=10, bold=True, width=60,
                height=18)
           + td(": the owner of the partition; nobody means no consumer reads it then",
                border=0, point=10, color=BLACK, fill=WHITE)
           + "</TR></TABLE>>")
    if timelines:
        g.edge(f"t{len(timelines) - 1}", "legend", style="invis")
    return g
