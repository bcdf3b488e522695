"""One consumer group scenario under several group protocols, side by side on a time axis:
partitions down, time across in fixed slots, each cell naming the member that owns the
partition then, or ✕ when nobody does (nobody reads it: the rebalance pause).

The input is `minikafka.course.group_protocols.protocol_timeline()`'s plain data::

    {"label", "partitions": n, "members": [...], "end_ms",
     "moments": [{"time_ms", "what", "owners": {p: member | None}}], "idle_ms": {p: ms},
     "stopped_at_once": k}

A slot shows ✕ if the partition had no owner at any time within it, so a short pause
stays visible at any slot width. Every grid has the same columns, so the protocols line
up moment by moment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import graphviz

from .html import esc, font, td
from .palette import (
    BLACK,
    BLUE,
    BLUISH_GREEN,
    FONT,
    ORANGE,
    REDDISH_PURPLE,
    VERMILLION,
    WHITE,
)

MEMBER_COLOURS = [(BLUE, WHITE), (ORANGE, BLACK), (BLUISH_GREEN, WHITE),
                  (REDDISH_PURPLE, BLACK)]
NOBODY = (VERMILLION, WHITE)
NOBODY_MARK = "✕"


def _owner_at(moments: Sequence[Mapping[str, Any]], p: int, t: float) -> str | None:
    owner = None
    for m in moments:
        if m["time_ms"] > t:
            break
        owner = m["owners"].get(p)
    return owner


def _unowned_in(moments: Sequence[Mapping[str, Any]], p: int, begin: int, end: int,
                end_ms: int) -> bool:
    for i, m in enumerate(moments):
        until = moments[i + 1]["time_ms"] if i + 1 < len(moments) else end_ms
        if m["owners"].get(p) is None and m["time_ms"] < end and until > begin \
                and until > m["time_ms"]:
            return True
    return False


def slot_owners(timeline: Mapping[str, Any], slot_ms: int) -> list[list[str | None]]:
    """Per partition, per slot: the owner in the middle of the slot, or None when the
    partition had no owner at any time within it."""
    moments, end_ms = timeline["moments"], timeline["end_ms"]
    slots = range(0, end_ms, slot_ms)
    return [[None if _unowned_in(moments, p, s, s + slot_ms, end_ms)
             else _owner_at(moments, p, s + slot_ms / 2) for s in slots]
            for p in range(timeline["partitions"])]


def _marks(timeline: Mapping[str, Any], slot_ms: int, n: int) -> list[str]:
    """The membership changes (joins, leaves) by slot."""
    marks = [""] * n
    for m in timeline["moments"]:
        if m["what"].endswith(("joins", "leaves")):
            i = min(int(m["time_ms"] // slot_ms), n - 1)
            marks[i] = m["what"].replace(" ", "<BR/>", 1)
    return marks


def _mark_cells(marks: list[str], span: int) -> str:
    """The marks row: a mark takes `span` slots, so its words fit; empty slots stay
    single."""
    cells, i = [], 0
    while i < len(marks):
        if marks[i]:
            width = min(span, len(marks) - i)
            cells.append(td(marks[i], raw=True, border=0, point=10, align="LEFT",
                            colspan=width))
            i += width
        else:
            cells.append(td("", border=0, width=22, height=26))
            i += 1
    return "".join(cells)


def _grid(timeline: Mapping[str, Any], slot_ms: int, colours: Mapping[str, tuple]) -> str:
    grid = slot_owners(timeline, slot_ms)
    n = len(grid[0]) if grid else 0
    idle_s = sum(timeline["idle_ms"].values()) / 1000
    head = f"{esc(timeline['label'])}<BR/>" + font(
        f"at most {timeline['stopped_at_once']} of {timeline['partitions']} partitions unread "
        f"at once · {idle_s:.1f} partition-seconds unread", point=10)
    every = max(1, 2_000 // slot_ms)  # a time label every 2 s
    times = "".join(td(f"{i * slot_ms / 1000:g} s", border=0, point=10, align="LEFT",
                       colspan=min(every, n - i)) for i in range(0, n, every))
    rows = ["<TR>" + td(head, colspan=n + 1, border=0, bold=True, point=11, align="LEFT",
                        raw=True)
            + "</TR>",
            "<TR>" + td("time", border=0, point=10, bold=True, align="RIGHT") + times
            + "</TR>",
            "<TR>" + td("group", border=0, point=10, bold=True, align="RIGHT")
            + _mark_cells(_marks(timeline, slot_ms, n), every) + "</TR>"]
    for p, owners in enumerate(grid):
        cells = [td(f"partition {p}", border=0, point=11, bold=True, align="RIGHT")]
        for owner in owners:
            fill, colour = colours[owner] if owner else NOBODY
            cells.append(td(owner[1:] if owner else NOBODY_MARK, fill=fill, color=colour,
                            point=11, bold=owner is None, width=22, height=20))
        rows.append("<TR>" + "".join(cells) + "</TR>")
    return ('<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="1" CELLPADDING="1">'
            + "".join(rows) + "</TABLE>>")


def protocol_timeline_view(timelines: Sequence[Mapping[str, Any]], *,
                           slot_ms: int = 1_000) -> graphviz.Digraph:
    """The timelines stacked, one grid each, with one legend for the members."""
    members: list[str] = []
    for timeline in timelines:
        members += [m for m in timeline["members"] if m not in members]
    colours = {m: MEMBER_COLOURS[i % len(MEMBER_COLOURS)] for i, m in enumerate(members)}
    g = graphviz.Digraph("protocols", graph_attr={"fontname": FONT, "ranksep": "0.25"},
                         node_attr={"shape": "plain", "fontname": FONT})
    for i, timeline in enumerate(timelines):
        g.node(f"t{i}", _grid(timeline, slot_ms, colours))
        if i:
            g.edge(f"t{i - 1}", f"t{i}", style="invis")
    legend = "".join(td(f"{m[1:]} = {m}", fill=colours[m][0], color=colours[m][1], point=10,
                        width=50, height=18) for m in members)
    legend += td(f"{NOBODY_MARK} = nobody", fill=NOBODY[0], color=NOBODY[1], point=10,
                 bold=True, width=84, height=18)
    legend += td(f": who reads the partition in each {slot_ms} ms slot", border=0, point=10,
                 color=BLACK, fill=WHITE)
    g.node("legend", f'<<TABLE BORDER="0" CELLSPACING="2"><TR>{legend}</TR></TABLE>>')
    if timelines:
        g.edge(f"t{len(timelines) - 1}", "legend", style="invis")
    return g
