"""Projector-sized pictures: the cluster and a partition's log strips.

The lesson views (minikafka.viz) fit a notebook cell: 9-point text, every column.
On a projector at 1280x720 that text is a few pixels high, so the presenter draws the
same facts bigger and with less on each row: one topic, three short cells per replica,
a fixed number of offset columns. The role logic (`replica_states`), the palette and
the cell builder are viz's, so both views agree on what a leader or an out-of-sync
follower looks like.

Layouts stay put between steps: every broker is drawn in id order with the same number
of rows, every strip has the same number of columns, and cells have fixed sizes, so a
broker going down changes colours and words, never positions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import graphviz

from minikafka.viz.clusterview import ReplicaState, replica_states
from minikafka.viz.html import bold, esc, font, td
from minikafka.viz.logstate import ABORTED, CONTROL_ABORT, CONTROL_COMMIT, DATA, GONE
from minikafka.viz.palette import (
    BLACK,
    CELL_STYLES,
    COMMITTED,
    FONT,
    GREY,
    IN_SYNC,
    LEADER,
    LIGHT_GREY,
    OUT_OF_SYNC,
    REDDISH_PURPLE,
    ROLE_STYLES,
    UNCOMMITTED,
    WHITE,
    YELLOW,
    Style,
)

NAME_W, ROLE_W, LEO_W, ROW_H = 104, 150, 70, 30
BIG, MEDIUM = 20, 15
CELL_W, CELL_H, LABEL_W = 58, 58, 140

KIND_STYLES: dict[str, Style] = {
    CONTROL_COMMIT: Style(REDDISH_PURPLE, BLACK, "✦", "COMMIT"),
    CONTROL_ABORT: Style(REDDISH_PURPLE, BLACK, "✦", "ABORT", line="dashed"),
    ABORTED: Style(LIGHT_GREY, BLACK, "✗", "aborted", line="dotted"),
    GONE: Style(WHITE, GREY, "·", "removed", line="dotted"),
}
BLANK = Style(WHITE, WHITE, "", "", border=0)
ROLE_WORDS = {LEADER: "leader", IN_SYNC: "in sync", OUT_OF_SYNC: "OUT OF SYNC"}


def _role_text(r: ReplicaState) -> str:
    style = ROLE_STYLES[r.role]
    text = f"{style.symbol} {ROLE_WORDS.get(r.role, style.word)}"
    return text + " · ELR" if r.eligible else text


def _broker_label(b: int, info: Mapping[str, Any], rows: list[ReplicaState], height: int,
                  watched: tuple[str, int] | None, name_w: int, offset_word: str) -> str:
    width = name_w + ROLE_W + LEO_W + 4
    running = info["running"]
    if not running:
        status, fill = "✕ DOWN", GREY
    elif info.get("fenced"):
        status, fill = "⚠ fenced", YELLOW
    else:
        status, fill = "✓ running", WHITE
    if info.get("controller"):
        status += " · ♛ controller"
    body = [
        "<TR>" + td(f"broker {b}", width=width, height=34, colspan=3, bold=True, fill=fill,
                    color=BLACK, border=0, point=BIG) + "</TR>",
        "<TR>" + td(status, width=width, height=ROW_H, colspan=3, fill=fill, color=BLACK,
                    border=0, point=MEDIUM, bold=not running) + "</TR>",
    ]
    for r in rows:
        style = ROLE_STYLES[r.role]
        mark = watched == (r.topic, r.partition)
        leo = "" if r.log_end_offset is None else f"{offset_word} {r.log_end_offset}"
        body.append("<TR>" + "".join([
            td(f"{'▶ ' if mark else ''}{r.topic}-{r.partition}", style=style, width=name_w,
               height=ROW_H, align="LEFT", bold=mark, point=MEDIUM),
            td(_role_text(r), style=style, width=ROLE_W, height=ROW_H, align="LEFT",
               bold=r.role == LEADER, point=MEDIUM),
            td(leo, style=style, width=LEO_W, height=ROW_H, point=MEDIUM),
        ]) + "</TR>")
    for _ in range(height - len(rows)):
        body.append("<TR>" + td("", style=BLANK, width=width, height=ROW_H, colspan=3) + "</TR>")
    line = "" if running else ' STYLE="dashed"'
    return (f'<<TABLE BORDER="3" CELLBORDER="1" CELLSPACING="2" CELLPADDING="2"'
            f' COLOR="{BLACK if running else GREY}"{line}>{"".join(body)}</TABLE>>')


def cluster_stage(snapshot: Mapping[str, Any], topics: Iterable[str],
                  watched: tuple[str, int] | None = None, *,
                  offset_word: str = "LEO") -> graphviz.Digraph:
    """Every broker side by side (id order), with its replicas of `topics`.

    offset_word names the number in the last column: each replica's log end offset
    (LEO), or, in live mode, the partition's end offset on the leader's row ("end")."""
    states = replica_states(snapshot, list(topics))
    height = max((len(rows) for rows in states.values()), default=0)
    # Wide enough for the longest name in bold with ▶, so names are never cut.
    longest = max((len(f"{r.topic}-{r.partition}") for rs in states.values() for r in rs),
                  default=0)
    name_w = max(NAME_W, 9 * longest + 30)
    g = graphviz.Digraph("cluster", graph_attr={
        "nodesep": "0.25", "ranksep": "0.25", "fontname": FONT,
        "pad": "0.05"}, node_attr={"shape": "plain", "fontname": FONT})
    ids = list(states)
    with g.subgraph(name="brokers") as sg:
        sg.attr(rank="same")
        for b in ids:
            sg.node(f"broker_{b}", _broker_label(b, snapshot["brokers"][b], states[b], height,
                                                 watched, name_w, offset_word))
    for a, b in zip(ids, ids[1:]):  # fixes the order left to right
        g.edge(f"broker_{a}", f"broker_{b}", style="invis")
    return g


# -- the log strips ---------------------------------------------------------------------
def _replica_title(b: int, rep: Mapping[str, Any]) -> str:
    if not rep["running"]:
        word = "✕ DOWN"
    elif rep["leader"]:
        word = "★ leader"
    else:
        word = "● in ISR" if rep["in_isr"] else "◌ OUT OF ISR"
    return f"{bold(f'broker {b}')}<BR/>{word}"


def _cell(offset: int, kind_key: list[str] | None, label: list[str] | None,
          hw: int | None) -> str:
    if kind_key is None:
        return td("", style=BLANK, width=CELL_W, height=CELL_H)
    kind = kind_key[0]
    head = font(str(offset), point=12)
    if kind == DATA:
        committed = hw is not None and offset < hw
        style = CELL_STYLES[COMMITTED if committed else UNCOMMITTED]
        key, value = label or ["", ""]
        lines = [t for t in (key, value) if t] or [""]
        if not committed:
            head = font(f"{offset} {bold('?')}", point=12)
    else:
        style = KIND_STYLES[kind]
        lines = [style.symbol, style.word] if kind in (CONTROL_COMMIT, CONTROL_ABORT) else \
            [(label or ["", ""])[1] or style.symbol, style.symbol if kind == ABORTED else ""]
        lines = [t for t in lines if t]
    body = head + "<BR/>" + "<BR/>".join(esc(t) for t in lines)
    return td(body, raw=True, style=style, width=CELL_W, height=CELL_H, point=15)


def _marker_row(state: Mapping[str, Any], start: int, columns: int) -> str:
    marks: dict[int, list[str]] = {}
    hw, lso = state["high_watermark"], state["last_stable_offset"]
    if hw is not None:
        marks.setdefault(hw - start, []).append("HW")
    if lso is not None and lso != hw:
        marks.setdefault(lso - start, []).append("LSO")
    cells = [td("", width=LABEL_W, height=24, border=0)]
    for col in range(columns + 1):
        names = marks.get(col, [])
        cells.append(td(" ".join(names) + (" ▼" if names else ""), width=CELL_W, height=24,
                        border=0, point=14, bold=bool(names)))
    return "<TR>" + "".join(cells) + "</TR>"


def _group_row(name: str, marks: Mapping[str, int | None], start: int, columns: int) -> str:
    at: dict[int, list[str]] = {}
    for what, letter in (("committed", "C"), ("position", "P")):
        offset = marks.get(what)
        if offset is not None and offset >= start:
            at.setdefault(min(offset - start, columns), []).append(letter)
    committed = marks.get("committed")
    cells = [td(f"group {name}<BR/>committed {'–' if committed is None else committed}",
                raw=True, width=LABEL_W, height=40, border=0, point=14, align="LEFT")]
    for col in range(columns + 1):
        letters = at.get(col, [])
        cells.append(td("▲ " + " ".join(letters) if letters else "", width=CELL_W,
                        height=40, border=0, point=15, bold=bool(letters)))
    return "<TR>" + "".join(cells) + "</TR>"


def log_stage(state: Mapping[str, Any], columns: int,
              groups: Mapping[str, Mapping[str, int | None]] | None = None) -> graphviz.Digraph:
    """One strip per replica (broker id order) over `columns` offset columns, plus the
    LEO slot; HW and LSO markers on top and consumer-group offsets (▲C committed,
    ▲P a consumer's position) below. `state` is a strips.strip_state() dict, or a
    log_state() one (a notebook panel's frame), whose cells then carry no record texts."""
    start, _ = state["window"]
    hw = state["high_watermark"]
    leader = state["leader"]
    title = (f"{state['topic']}-{state['partition']} · "
             + (f"leader broker {leader}" if leader is not None else "✕ NO LEADER")
             + (f" · HW {hw} · LEO {state['log_end_offset']}" if hw is not None else ""))
    rows = ["<TR>" + td(title, colspan=columns + 2, border=0, bold=True, point=17,
                        align="LEFT", height=28) + "</TR>",
            _marker_row(state, start, columns)]
    for b in sorted(state["replicas"]):
        rep = state["replicas"][b]
        own_hw = hw if hw is not None else rep["high_watermark"]
        cells = [td(_replica_title(b, rep), raw=True, width=LABEL_W, height=CELL_H,
                    align="LEFT", point=16, border=0,
                    fill=GREY if not rep["running"] else None)]
        labels = state.get("labels", {}).get(b, {})
        for offset in range(start, start + columns + 1):
            if offset == rep["log_end_offset"]:  # where this replica writes next
                cells.append(td("next", width=CELL_W, height=CELL_H, line="dashed", point=13))
            else:
                cells.append(_cell(offset, rep["cells"].get(offset), labels.get(offset),
                                   own_hw))
        rows.append("<TR>" + "".join(cells) + "</TR>")
    for name, marks in (groups or {}).items():
        rows.append(_group_row(name, marks, start, columns))
    g = graphviz.Digraph("log", graph_attr={"fontname": FONT, "pad": "0.05"},
                         node_attr={"shape": "plain", "fontname": FONT})
    g.node("log", f'<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="3" CELLPADDING="1">'
                  f'{"".join(rows)}</TABLE>>')
    return g
