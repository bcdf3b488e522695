"""A partition's log as a strip of offset cells, with its markers.

Above each strip: log start offset, high watermark (HW), last stable offset (LSO) and
log end offset (LEO, the next offset to be written), each pointing at a cell. Below
it: which segment each offset lives in. Cells at or past the HW are uncommitted
(yellow, dashed, "?"). Consumer groups' committed offsets and positions are drawn
under the strip. With replicas=True every replica gets its own strip, so a lagging
follower shows as a shorter one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import graphviz

from .html import OUTPUT_PT, bold, clip, clip_middle, esc, sim_time, td, text_pt
from .logstate import ABORTED, CONTROL_ABORT, CONTROL_COMMIT, DATA, GONE, log_state
from .palette import (
    BLACK,
    CELL_STYLES,
    COMMITTED,
    FONT,
    GREY,
    LIGHT_GREY,
    REDDISH_PURPLE,
    UNCOMMITTED,
    WHITE,
    Style,
)

if TYPE_CHECKING:
    from ..cluster import Cluster

CELL_W, LABEL_W, SPACING = 32, 120, 1
KEY_POINT = 9
KIND_STYLES: dict[str, Style] = {
    CONTROL_COMMIT: Style(REDDISH_PURPLE, BLACK, "✦", "commit marker"),
    CONTROL_ABORT: Style(REDDISH_PURPLE, BLACK, "✦", "abort marker", line="dashed"),
    ABORTED: Style(LIGHT_GREY, BLACK, "✗", "aborted (skipped by read_committed)",
                   line="dotted"),
    GONE: Style(WHITE, GREY, "·", "removed by compaction", line="dotted"),
}
BLANK = Style(WHITE, WHITE, "", "", border=0)
GROUP_LETTERS = {"committed": "C", "position": "P"}

GroupOffsets = Mapping[str, "int | Mapping[str, int | None]"]


def _group_marks(groups: GroupOffsets | None) -> dict[str, dict[str, int]]:
    """{group: offset} means a committed offset; {group: {"committed": c, "position": p}}
    gives either or both."""
    out: dict[str, dict[str, int]] = {}
    for name, value in (groups or {}).items():
        if isinstance(value, Mapping):
            out[name] = {k: int(v) for k, v in value.items()
                         if k in ("committed", "position") and v is not None}
        elif value is not None:
            out[name] = {"committed": int(value)}
    return out


def _replica_title(b: int, rep: Mapping[str, Any]) -> tuple[str, str]:
    """Two lines: a narrow first column leaves the width to the records."""
    if not rep["running"]:
        return f"broker {b}", "✕ DOWN"
    if rep["leader"]:
        return f"broker {b}", "★ leader"
    return f"broker {b}", "● in ISR" if rep["in_isr"] else "◌ OUT OF ISR"


def _group_title(name: str, marks: Mapping[str, int]) -> tuple[str, ...]:
    """Short lines, one fact each: a narrow first column leaves the width to the records."""
    return ("group", clip(name, 20), *(f"{what} {offset}" for what, offset in sorted(marks.items())))


def _label_width(bold: list[str], plain: list[str]) -> int:
    """The first column: as wide as its longest line (at 9 pt), at most LABEL_W."""
    return min(LABEL_W, max([48] + [text_pt(t, 9, bold=True) + 8 for t in bold]
                            + [text_pt(t, 9) + 8 for t in plain]))


def _column_index(offset: int, start: int, end: int) -> int | None:
    """Column of an offset: None before the window, end is the LEO slot."""
    if offset < start:
        return None
    return min(offset, end) - start


def _shows_lso(rep: Mapping[str, Any], lso: int | None) -> bool:
    # Without an open transaction the LSO is the HW: drawn only when a transaction holds
    # it back, so a log without transactions shows no term it does not need.
    return lso is not None and rep["leader"] and lso != rep["high_watermark"]


def _marker_row(rep: Mapping[str, Any], lso: int | None, start: int, end: int,
                clipped: bool, cell_w: int, label_w: int) -> str:
    marks: dict[int | None, list[str]] = {}
    points = [("start", rep["log_start_offset"]), ("HW", rep["high_watermark"])]
    if _shows_lso(rep, lso):
        points.append(("LSO", lso))
    points.append(("LEO", rep["log_end_offset"]))
    for name, offset in points:
        col = _column_index(offset, start, end)
        marks.setdefault(col, []).append(name if col is not None else f"{name} {offset}")
    cells = [td("", width=label_w, height=50, border=0)]
    if clipped:
        cells.append(td("<BR/>".join(esc(m) for m in marks.get(None, [])), raw=True,
                        width=CELL_W + 20, height=50, border=0, point=9))
    for col in range(end - start + 1):
        names = marks.get(col, [])
        width = cell_w if col < end - start else CELL_W
        text = "<BR/>".join(esc(n) for n in names) + ("<BR/>▼" if names else "")
        cells.append(td(text, raw=True, width=width, height=50, border=0, point=9,
                        bold=bool(names)))
    return "<TR>" + "".join(cells) + "</TR>"


def _cell(offset: int, cell: list[str] | None, partition_hw: int, cell_w: int,
          chars: int) -> str:
    if cell is None:
        return td("", style=BLANK, width=cell_w, height=34)
    kind, key = cell
    if kind == DATA:
        style = CELL_STYLES[COMMITTED if offset < partition_hw else UNCOMMITTED]
        mark = f"{style.symbol}" if style.symbol else ""
        text = f"{bold(f'{offset}{mark}')}<BR/>{esc(clip_middle(key, chars))}"
    else:
        style = KIND_STYLES[kind]
        text = f"{bold(str(offset))}<BR/>{esc(style.symbol)}"
    return td(text, raw=True, style=style, width=cell_w, height=34, point=KEY_POINT)


def _strip_row(b: int, rep: Mapping[str, Any], start: int, end: int, clipped: bool,
               partition_hw: int, cell_w: int, chars: int, label_w: int) -> str:
    cells = [td("<BR/>".join(map(esc, _replica_title(b, rep))), raw=True, width=label_w,
                height=34, align="LEFT", point=9,
                bold=rep["leader"], border=0)]
    if clipped:
        cells.append(td(f"… {start - rep['log_start_offset']}<BR/>earlier"
                        if start > rep["log_start_offset"] else "", raw=True, width=CELL_W + 20,
                        height=34, point=9, border=0))
    for offset in range(start, end):
        cells.append(_cell(offset, rep["cells"].get(offset), partition_hw, cell_w, chars))
    if rep["log_end_offset"] == end:
        cells.append(td("next", width=CELL_W, height=34, line="dashed", point=9))
    else:
        cells.append(td("", style=BLANK, width=CELL_W, height=34))
    return "<TR>" + "".join(cells) + "</TR>"


def _segment_row(rep: Mapping[str, Any], start: int, end: int, clipped: bool,
                 label_w: int) -> str:
    bases = rep["segments"]
    cells = [td("segments", width=label_w, height=18, align="RIGHT", point=9, border=0)]
    if clipped:
        cells.append(td("", width=CELL_W + 20, height=18, border=0))
    col = start
    shade = [LIGHT_GREY, WHITE]
    for i, base in enumerate(bases):
        seg_end = bases[i + 1] if i + 1 < len(bases) else end + 1
        lo, hi = max(base, col, start), min(seg_end, end + 1)
        if hi <= lo:
            continue
        if lo > col:  # offsets this replica no longer holds (deleted by retention)
            span = lo - col
            cells.append(td("", colspan=span, border=0, point=9))
        span = hi - lo
        active = i == len(bases) - 1
        word = ("active segment" if active else "segment") + f" @{base}"
        text = word if span >= 4 else (f"@{base}" if span >= 2 else "|")
        # No fixed width on spanning cells: the columns set it, and the text is chosen
        # short enough to fit.
        cells.append(td(text, colspan=span, point=9, fill=shade[i % 2],
                        line="dashed" if active else None))
        col = hi
    if col < end + 1:
        span = end + 1 - col
        cells.append(td("", colspan=span, border=0, point=9))
    return "<TR>" + "".join(cells) + "</TR>"


def _group_row(name: str, marks: Mapping[str, int], start: int, end: int,
               clipped: bool, cell_w: int, label_w: int) -> str:
    at: dict[int | None, list[str]] = {}
    for what, offset in sorted(marks.items()):
        col = _column_index(offset, start, end)
        at.setdefault(col, []).append(GROUP_LETTERS[what])
    lines = _group_title(name, marks)
    height = 11 * len(lines) + 6
    cells = [td("<BR/>".join(map(esc, lines)), raw=True, width=label_w,
                height=height, align="LEFT", point=9, border=0)]
    if clipped:
        cells.append(td("◀ " + " ".join(at[None]) if None in at else "", width=CELL_W + 20,
                        height=height, point=9, border=0, bold=True))
    for col in range(end - start + 1):
        letters = at.get(col, [])
        text = ("▲<BR/>" + " ".join(letters)) if letters else ""
        cells.append(td(text, raw=True, width=cell_w if col < end - start else CELL_W,
                        height=height, point=9, border=0, bold=bool(letters)))
    return "<TR>" + "".join(cells) + "</TR>"


def _fit(start: int, end: int, log_start: int, label_w: int) -> tuple[int, bool]:
    """(first offset drawn, clipped?): the window cut further, so that at least CELL_W per
    column fits a notebook's output area; "… n earlier" then stands for the rest."""
    room = OUTPUT_PT - label_w - 4 * SPACING
    if start > log_start:
        room -= CELL_W + 20 + SPACING
    if (end - start + 1) * (CELL_W + SPACING) <= room:
        return start, start > log_start
    if start == log_start:
        room -= CELL_W + 20 + SPACING
    return end + 1 - room // (CELL_W + SPACING), True


def _key_cells(keys: list[str], records: int, clipped: bool, label_w: int) -> tuple[int, int]:
    """(width of a record's cell, key characters shown): wide enough for the longest key
    in full (customer-0, -1, -2 must differ), as long as the strip still fits the
    notebook's output area; otherwise keys are cut to what fits. One width for every
    record keeps the picture regular; the "next" column stays CELL_W."""
    room = (OUTPUT_PT - label_w - (CELL_W + 20 + SPACING if clipped else 0) - 4 * SPACING
            - CELL_W - SPACING)
    widest = max(CELL_W, (room // max(records, 1)) - SPACING)
    chars = max((len(k) for k in keys), default=1)
    while chars > 2 and _widest(keys, chars) > widest:
        chars -= 1
    return max(CELL_W, min(widest, _widest(keys, chars))), chars


def _widest(keys: list[str], chars: int) -> int:
    """Points a cell needs for the keys cut to `chars` (and its padding)."""
    return max((text_pt(clip_middle(k, chars), KEY_POINT) for k in keys), default=0) + 7


def _legend(kinds: set[str], uncommitted: bool, lso: bool, groups: bool) -> str:
    """The legend for what the picture shows: uncommitted records, the LSO, transaction
    markers and group offsets are named only when drawn (a lesson meets them when it
    teaches them)."""
    swatches = [
        (CELL_STYLES[COMMITTED], "offset, key"),
        *([(CELL_STYLES[UNCOMMITTED], "? not yet replicated to the whole ISR")]
          if uncommitted else []),
        *[(s, "") for kind, s in KIND_STYLES.items() if kind in kinds],
    ]
    words = ["start = log start offset", "HW = high watermark"]
    if lso:
        words.append("LSO = last stable offset (read_committed reads up to it)")
    words.append("LEO = log end offset (next offset to write)")
    if groups:
        words += ["▲C a group's committed offset", "▲P a consumer's position"]
    # One term a line: a single long line would set the picture's width.
    rows = [td("<BR/>".join(esc(w) for w in words), raw=True, colspan=2, border=0, point=9)]
    body = "<TR>" + rows[0] + "</TR>"
    for style, extra in swatches:
        body += ("<TR>" + td(style.symbol or " ", style=style, width=CELL_W, height=18, point=9)
                 + td(f"{style.word}{' · ' + extra if extra else ''}", align="LEFT",
                      border=0, point=9) + "</TR>")
    return f'<<TABLE BORDER="0" CELLSPACING="2" CELLPADDING="2">{body}</TABLE>>'


def log_view(state: Mapping[str, Any], groups: GroupOffsets | None = None, *,
             replicas: bool = False, legend: bool = True) -> graphviz.Digraph:
    """Draw a `log_state()` dict: the leader's strip (or every replica's), markers,
    segments and consumer groups' offsets."""
    start, end = state["window"]
    reps = state["replicas"]
    leader = state["leader"]
    order = sorted(reps, key=lambda b: (b != leader, b))
    if not replicas:
        order = order[:1]
    label_w = _label_width([line for b in order for line in _replica_title(b, reps[b])],
                           [line for name, marks in _group_marks(groups).items()
                            for line in _group_title(name, marks)] + ["segments"])
    log_start = min(reps[b]["log_start_offset"] for b in order)
    start, clipped = _fit(start, end, log_start, label_w)
    clipped = clipped or any(start > reps[b]["log_start_offset"] for b in order)
    # Committed is a property of the partition: colour by the leader's HW.
    partition_hw = state["high_watermark"]
    title = (f"{state['topic']}-{state['partition']} · "
             f"{'leader ' + str(leader) if leader is not None else '✕ NO LEADER (offline)'}"
             f" · {sim_time(state['time_ms'])}")
    rows = ["<TR>" + td(title, colspan=end - start + 2 + int(clipped), border=0,
                        bold=True, point=11, align="LEFT") + "</TR>"]
    keys = [cell[1] for b in order for offset, cell in reps[b]["cells"].items()
            if cell[0] == DATA and start <= offset < end]
    cell_w, chars = _key_cells(keys, end - start, clipped, label_w)
    for b in order:
        rep = reps[b]
        hw = partition_hw if partition_hw is not None else rep["high_watermark"]
        rows.append(_marker_row(rep, state["last_stable_offset"], start, end, clipped, cell_w,
                                label_w))
        rows.append(_strip_row(b, rep, start, end, clipped, hw, cell_w, chars, label_w))
        rows.append(_segment_row(rep, start, end, clipped, label_w))
    for name, marks in _group_marks(groups).items():
        rows.append(_group_row(name, marks, start, end, clipped, cell_w, label_w))
    g = graphviz.Digraph("log", graph_attr={"fontname": FONT, "rankdir": "TB",
                                            "ranksep": "0.2"},
                         node_attr={"shape": "plain", "fontname": FONT})
    g.node("log", f'<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="{SPACING}" '
                  f'CELLPADDING="1">{"".join(rows)}</TABLE>>')
    if legend:
        kinds = {cell[0] for b in order for cell in reps[b]["cells"].values()}
        uncommitted = any(kind == DATA and offset >= partition_hw for b in order
                          for offset, (kind, _) in reps[b]["cells"].items()) \
            if partition_hw is not None else False
        lso = any(_shows_lso(reps[b], state["last_stable_offset"]) for b in order)
        g.node("legend", _legend(kinds, uncommitted, lso, bool(_group_marks(groups))))
        g.edge("log", "legend", style="invis")
    return g


def partition_log_view(cluster: Cluster, topic: str, partition: int,
                       groups: GroupOffsets | None = None, *, replicas: bool = False,
                       max_cells: int = 32, legend: bool = True) -> graphviz.Digraph:
    """The log of one partition of a live cluster; see log_view() and log_state().

    groups: {group: committed offset} or {group: {"committed": c, "position": p}}.
    """
    return log_view(log_state(cluster, topic, partition, max_cells), groups,
                    replicas=replicas, legend=legend)
