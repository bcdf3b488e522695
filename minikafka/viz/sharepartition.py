"""A share partition's window (KIP-932): the records from the share-partition start
offset (SPSO) to the log end, each with its state, delivery count, and the member whose
acquisition lock holds it.

The input is `minikafka.course.share_groups.share_partition_state()`'s plain data::

    {"group", "topic", "partition", "start_offset", "next_offset", "log_end_offset",
     "delivery_count_limit", "lock_duration_ms",
     "records": [{"offset", "state", "delivery_count", "member", "lock_left_ms"}]}

A few offsets before the SPSO are drawn as done; offsets past the last one handed out
(the share-partition end offset, SPEO) as not delivered yet. Every state has a colour, a
symbol and a word (palette.Style), so the picture reads in greyscale too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import graphviz

from .html import esc, td
from .palette import (
    BLACK,
    BLUISH_GREEN,
    FONT,
    GREY,
    LIGHT_GREY,
    ORANGE,
    SKY_BLUE,
    WHITE,
    Style,
)

STATE_STYLES: dict[str, Style] = {
    "AVAILABLE": Style(SKY_BLUE, BLACK, "○", "available"),
    "ACQUIRED": Style(ORANGE, BLACK, "●", "acquired", border=2),
    "ACKNOWLEDGED": Style(BLUISH_GREEN, WHITE, "✓", "acknowledged"),
    "ARCHIVED": Style(GREY, BLACK, "✕", "archived", line="dashed"),
    "DONE": Style(LIGHT_GREY, BLACK, "✓", "done", line="dotted"),
    "NEW": Style(WHITE, BLACK, "·", "not yet", line="dotted"),
}
NOTE = ("✓ done: below the share-partition start offset (SPSO)",
        "· not yet: past the share-partition end offset (SPEO), never delivered",
        "a lock that runs out makes its record available again")
BEFORE = 2  # done offsets drawn before the SPSO


def _lines(*lines: str) -> str:
    return "<BR/>".join(esc(line) for line in lines if line)


def window_cells(state: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One dict per drawn offset: offset, kind (a STATE_STYLES key), delivery count,
    member, lock_left_ms."""
    spso = state["start_offset"] or 0
    first_new = state["next_offset"] if state["next_offset"] is not None else spso
    cells = [{"offset": o, "kind": "DONE", "delivery_count": None, "member": None,
              "lock_left_ms": None} for o in range(max(0, spso - BEFORE), spso)]
    cells += [{"offset": r["offset"], "kind": r["state"], "delivery_count": r["delivery_count"],
               "member": r["member"], "lock_left_ms": r["lock_left_ms"]}
              for r in state["records"]]
    cells += [{"offset": o, "kind": "NEW", "delivery_count": 0, "member": None,
               "lock_left_ms": None} for o in range(first_new, state["log_end_offset"])]
    return cells


def _collapse_new(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The offsets never delivered as one cell ("6-11"): the strip stays narrow."""
    new = [c for c in cells if c["kind"] == "NEW"]
    if len(new) <= 1:
        return cells
    first, last = new[0]["offset"], new[-1]["offset"]
    return [c for c in cells if c["kind"] != "NEW"] + [
        {"offset": first, "label": f"{first}–{last}", "kind": "NEW", "delivery_count": 0,
         "member": None, "lock_left_ms": None}]


def share_partition_view(state: Mapping[str, Any], *, title: str | None = None) -> graphviz.Digraph:
    """The share partition as a strip of offsets, with the SPSO and SPEO marked."""
    cells = _collapse_new(window_cells(state))
    spso, nxt = state["start_offset"], state["next_offset"]
    speo = (nxt - 1 if state["records"] else spso) if nxt is not None else None
    limit = state["delivery_count_limit"]
    head = title or (f"share group {state['group']} · {state['topic']}-{state['partition']}"
                     f" · delivery count limit {limit} · lock "
                     f"{state['lock_duration_ms'] / 1000:g} s")
    shown = []
    for c in cells:
        style = STATE_STYLES[c["kind"]]
        mark = [m for m, at in (("SPSO ▼", spso), ("SPEO ▼", speo))
                if at is not None and c["offset"] == at]
        count = c["delivery_count"]
        said = ("", "") if count is None else ("delivered", f"{count}×")
        if count is not None and count >= limit:
            said = (f"{count}×", "(limit)")
        held = c["member"] or ""
        if c["lock_left_ms"] is not None:
            held += f" · {c['lock_left_ms'] / 1000:g} s"
        shown.append((style, mark, c.get("label", str(c["offset"])), said, held))
    # No fixed widths: the columns of one table line up anyway, and each is only as wide
    # as its words, two lines of them: the strip fits a notebook's width.
    marks, offsets, states, counts, holders = [], [], [], [], []
    for style, mark, offset, said, held in shown:
        marks.append(td(_lines(*mark), raw=True, border=0, point=10, bold=bool(mark)))
        offsets.append(td(offset, border=0, point=11, bold=True))
        states.append(td(_lines(style.symbol, style.word), raw=True, style=style, point=10))
        counts.append(td(_lines(*said), raw=True, border=0, point=10))
        holders.append(td(held, border=0, point=10))
    if not cells:
        states.append(td("nothing in flight, nothing to deliver", border=0, point=10))
    # The title and the note are nodes of their own: a row wider than the strip would
    # stretch the strip's fixed-size cells out of line.
    label = ('<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="2" CELLPADDING="2">'
             + "".join("<TR>" + td(name, border=0, point=10, bold=bool(name), align="RIGHT")
                       + "".join(row) + "</TR>"
                       for name, row in (("", marks), ("offset", offsets), ("state", states),
                                         ("", counts), ("lock held by", holders)) if row)
             + "</TABLE>>")
    g = graphviz.Digraph("share_partition", graph_attr={"fontname": FONT, "ranksep": "0.1"},
                         node_attr={"shape": "plain", "fontname": FONT})
    g.node("title", f'<<TABLE BORDER="0"><TR>{td(head, border=0, bold=True, point=12)}</TR>'
                    "</TABLE>>")
    g.node("window", label)
    # One row a line: lines joined by <BR/> inside <I> overlap on some Graphviz versions.
    note = "".join(f"<TR>{td(line, border=0, point=10, italic=True, align='LEFT')}</TR>"
                   for line in NOTE)
    g.node("note", f'<<TABLE BORDER="0" CELLSPACING="0">{note}</TABLE>>')
    g.edge("title", "window", style="invis")
    g.edge("window", "note", style="invis")
    return g
