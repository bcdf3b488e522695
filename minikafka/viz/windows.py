"""One key's windows on an event-time axis: a row per window (its span and count, grey once
closed), the records it received as dots in the time slot they were measured, and the
records dropped as too late, marked ✕ with how far behind the stream time they came.

The input is `minikafka.course.streams.window_state()`'s plain data::

    {"key", "describe", "sessions", "grace_ms", "stream_time", "base_ms",
     "windows": [{"start", "end", "count", "closed"}],
     "records": [{"timestamp", "late_by", "counted"}]}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import graphviz

from .html import esc, font, td
from .palette import BLACK, BLUE, FONT, LIGHT_GREY, VERMILLION, WHITE

SLOT_W = 24  # pt per slot: 20 slots and the labels fit the 848-px output area
LABEL_W = 112


def _clock(ms: int) -> str:
    s = abs(ms) // 1000
    return f"{'-' if ms < 0 else ''}{s // 60}:{s % 60:02d}"


def _slot(ms: int, base: int, slot_ms: int) -> int:
    return (ms - base) // slot_ms


def _label(text: str, **kw: Any) -> str:
    return td(text, border=0, point=10, align="RIGHT", width=LABEL_W, height=18, **kw)


def windows_view(state: Mapping[str, Any], *, slot_ms: int = 10_000) -> graphviz.Digraph:
    """The picture described in the module docstring."""
    base = state["base_ms"]
    ends = [w["end"] for w in state["windows"]] + [r["timestamp"] + 1 for r in state["records"]]
    n = max(1, -(-(max(ends, default=base + slot_ms) - base) // slot_ms))
    head = (f"{esc(state['key'])}: {esc(state['describe'])}<BR/>"
            + font(f"stream time {_clock(state['stream_time'] - base)} · windows ending at or "
                   f"before {_clock(state['stream_time'] - state['grace_ms'] - base)} are "
                   "closed", point=10))
    rows = ["<TR>" + td(head, raw=True, colspan=n + 1, border=0, bold=True, point=11,
                        align="LEFT") + "</TR>"]
    every = max(1, 30_000 // slot_ms)  # a time label every 30 s
    rows.append("<TR>" + _label("event time (m:ss)", bold=True) + "".join(
        td(_clock(i * slot_ms), border=0, point=10, align="LEFT", colspan=min(every, n - i))
        for i in range(0, n, every)) + "</TR>")
    counted = [0] * n
    late: dict[int, list[int]] = {}
    for r in state["records"]:
        i = _slot(r["timestamp"], base, slot_ms)
        if r["counted"]:
            counted[i] += 1
        else:
            late.setdefault(i, []).append(r["late_by"])
    rows.append("<TR>" + _label("records measured", bold=True) + "".join(
        td("●" * c if c < 3 else f"{c}●", border=1, point=9, color=BLUE, fill=WHITE,
           width=SLOT_W, height=18) for c in counted) + "</TR>")
    for w in state["windows"]:
        first = max(0, _slot(w["start"], base, slot_ms))  # a window may begin before the axis
        last = max(first + 1, -(-(w["end"] - base) // slot_ms))
        fill, colour = (LIGHT_GREY, BLACK) if w["closed"] else (BLUE, WHITE)
        cells = [td("", border=0, width=SLOT_W, height=18)] * first
        close = "]" if state.get("sessions") else ")"  # a session's end is inclusive
        span = f"[{_clock(w['start'] - base)}, {_clock(w['end'] - base)}{close}"
        text = f"{w['count']}" if last - first < 3 else f"{w['count']} · {span}"
        cells.append(td(text, fill=fill, color=colour, point=10, bold=True,
                        colspan=last - first, border=1))
        cells += [td("", border=0, width=SLOT_W, height=18)] * (n - last)
        state_text = "closed" if w["closed"] else "open"
        rows.append("<TR>" + _label(f"window {state_text}") + "".join(cells) + "</TR>")
    if late:
        cells = []
        for i in range(n):
            lags = late.get(i)
            text = "✕" if lags else ""
            cells.append(td(text, border=1 if lags else 0, fill=VERMILLION if lags else None,
                            color=WHITE, bold=True, point=10, width=SLOT_W, height=18))
        rows.append("<TR>" + _label("dropped (too late)", bold=True, color=VERMILLION)
                    + "".join(cells) + "</TR>")
        for r in state["records"]:
            if not r["counted"]:
                note = (f"✕ measured at {_clock(r['timestamp'] - base)}, arrived "
                        f"{r['late_by'] / 1000:.1f} s behind the stream time")
                rows.append("<TR>" + td(note, colspan=n + 1, border=0, point=10,
                                        align="LEFT", color=VERMILLION) + "</TR>")
    g = graphviz.Digraph("windows", graph_attr={"fontname": FONT},
                         node_attr={"shape": "plain", "fontname": FONT})
    g.node("w", '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="1" CELLPADDING="1">'
           + "".join(rows) + "</TABLE>>")
    return g

