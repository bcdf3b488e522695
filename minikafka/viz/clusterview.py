"""The cluster picture: one box per broker, one row per replica it hosts.

Input is `Cluster.snapshot()` (plain data), so the same function draws the live cluster
and any recorded state of it. Each broker is a single node with a table label, always
drawn, in broker-id order, padded to the same number of rows: a broker that goes down
changes colour and text, never position or size.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import graphviz

from .html import esc, sim_time, td
from .palette import (
    BLACK,
    EMPTY,
    FONT,
    GREY,
    IN_SYNC,
    LEADER,
    LIGHT_GREY,
    OFFLINE,
    OUT_OF_SYNC,
    ROLE_STYLES,
    WHITE,
    YELLOW,
)

# Sized so that two brokers side by side fit a notebook's output area (about 850 px in a
# 1280-px-wide JupyterLab with its file browser open) at 100% zoom: text at 9 pt or more
# is never scaled below 11 px.
NAME_W, ROLE_W, ROW_H = 96, 176, 30


@dataclass(frozen=True)
class ReplicaState:
    """One replica as the cluster view draws it."""

    topic: str
    partition: int
    broker: int
    role: str  # palette.LEADER, IN_SYNC, OUT_OF_SYNC or OFFLINE
    leader: int | None
    log_end_offset: int | None
    high_watermark: int | None
    lag: int | None  # leader LEO minus this replica's LEO (followers only)
    note: str = ""  # why offline, or that the leader it follows is down
    eligible: bool = False  # offline but in the ELR: it may be elected cleanly (KIP-966)


def _shown_topics(snapshot: Mapping[str, Any], topics: Iterable[str] | None,
                  internal: bool) -> list[str]:
    if topics is not None:
        return [t for t in topics if t in snapshot["topics"]]
    return sorted(t for t in snapshot["topics"] if internal or not t.startswith("__"))


def replica_states(snapshot: Mapping[str, Any], topics: Iterable[str] | None = None,
                   internal: bool = False) -> dict[int, list[ReplicaState]]:
    """Every broker's replicas, sorted by (topic, partition), with the role each plays.

    A replica on a stopped broker is offline; so is every replica of a partition with
    no leader. Otherwise the leader is the one the metadata names, and a follower is in
    or out of sync by the ISR. An offline replica in the ELR says so: it may lead again.
    """
    brokers = snapshot["brokers"]
    out: dict[int, list[ReplicaState]] = {b: [] for b in sorted(brokers)}
    for topic in _shown_topics(snapshot, topics, internal):
        for part in snapshot["topics"][topic]:
            leader = part["leader"]
            offsets = part.get("replica_offsets", {})
            leader_leo = part["log_end_offset"] if leader is not None else None
            for b in part["replicas"]:
                leo, hw = offsets.get(b, (None, None))
                note = ""
                if not brokers[b]["running"]:
                    role, note = OFFLINE, "broker down"
                elif leader is None:
                    role, note = OFFLINE, "no leader"
                elif b == leader:
                    role = LEADER
                else:
                    role = IN_SYNC if b in part["isr"] else OUT_OF_SYNC
                    if not brokers[leader]["running"]:
                        note = f"leader {leader} down"
                eligible = role == OFFLINE and b in part.get("elr", ())
                if eligible:
                    note += ", eligible leader"
                lag = None
                if role in (IN_SYNC, OUT_OF_SYNC) and leo is not None and leader_leo is not None:
                    lag = max(0, leader_leo - leo)
                out[b].append(ReplicaState(topic, part["partition"], b, role, leader, leo, hw,
                                           lag, note, eligible))
    return out


def _role_text(r: ReplicaState) -> str:
    style = ROLE_STYLES[r.role]
    if r.note:
        return f"{style.symbol} {style.word} ({r.note})"
    if r.role in (IN_SYNC, OUT_OF_SYNC):
        return f"{style.symbol} {style.word} of {r.leader}"
    return f"{style.symbol} {style.word}"


def _offsets_text(r: ReplicaState) -> str:
    if r.log_end_offset is None:
        return ""
    text = f"LEO {r.log_end_offset} HW {r.high_watermark}"
    if r.lag:
        text += f" lag {r.lag}"
    return text


def _replica_row(r: ReplicaState | None, highlight: bool, name_w: int) -> str:
    if r is None:
        style = ROLE_STYLES[EMPTY]
        cells = [td("", style=style, width=w, height=ROW_H) for w in (name_w, ROLE_W)]
        return "<TR>" + "".join(cells) + "</TR>"
    style = ROLE_STYLES[r.role]
    name = f"{'▶ ' if highlight else ''}{r.topic}-{r.partition}"
    return "<TR>" + "".join([
        td(name, style=style, width=name_w, height=ROW_H, align="LEFT", bold=highlight,
           point=9),
        # Role above offsets in one cell: a third column would not fit two brokers a row.
        # (A <BR ALIGN="LEFT"/> left-aligns the line it ends, so each line gets one.)
        td(esc(_role_text(r)) + ('<BR ALIGN="LEFT"/>' + esc(_offsets_text(r))
                                 + '<BR ALIGN="LEFT"/>' if _offsets_text(r) else ""),
           raw=True, style=style, width=ROLE_W, height=ROW_H, align="LEFT",
           bold=r.role == LEADER, point=9),
    ]) + "</TR>"


def _header(b: int, info: Mapping[str, Any], name_w: int) -> list[str]:
    span = 2
    width = name_w + ROLE_W + 2
    if not info["running"]:
        status, fill, colour = "✕ DOWN", GREY, BLACK
    elif info.get("fenced"):
        status, fill, colour = "⚠ fenced (not in metadata)", YELLOW, BLACK
    else:
        status, fill, colour = "✓ running", WHITE, BLACK
    if info.get("controller"):
        badge = "♛ ACTIVE CONTROLLER"
    elif info.get("voter"):
        badge = "controller voter"
    else:
        badge = "broker only"
    # A broker without broker.rack shows no rack at all (not a placeholder).
    where = f"rack {info['rack']} · " if info.get("rack") else ""
    return [
        "<TR>" + td(f"broker {b}", width=width, height=22, colspan=span, bold=True,
                    fill=fill, color=colour, border=0, point=14) + "</TR>",
        "<TR>" + td(f"{where}{status}", width=width, height=ROW_H, colspan=span,
                    fill=fill, color=colour, border=0, point=10) + "</TR>",
        "<TR>" + td(badge, width=width, height=ROW_H, colspan=span,
                    fill=BLACK if info.get("controller") else LIGHT_GREY,
                    color=WHITE if info.get("controller") else BLACK,
                    bold=bool(info.get("controller")), border=0, point=10) + "</TR>",
    ]


def _broker_label(b: int, info: Mapping[str, Any], rows: list[ReplicaState], height: int,
                  highlight: set[tuple[str, int]], name_w: int) -> str:
    body = _header(b, info, name_w)
    body += [_replica_row(r, (r.topic, r.partition) in highlight, name_w) for r in rows]
    body += [_replica_row(None, False, name_w)] * (height - len(rows))
    line = ' STYLE="dashed"' if not info["running"] else ""
    return (f'<<TABLE BORDER="2" CELLBORDER="1" CELLSPACING="1" CELLPADDING="2"'
            f' COLOR="{BLACK if info["running"] else GREY}"{line}>{"".join(body)}</TABLE>>')


def _legend() -> str:
    rows = []
    for role in (LEADER, IN_SYNC, OUT_OF_SYNC, OFFLINE):
        s = ROLE_STYLES[role]
        rows.append("<TR>" + td(f"{s.symbol} {s.word}", style=s, width=ROLE_W, height=ROW_H,
                                align="LEFT", point=9) + "</TR>")
    return ('<<TABLE BORDER="0" CELLSPACING="2" CELLPADDING="2">'
            + "<TR>" + td("legend", border=0, bold=True, point=10) + "</TR>"
            + "".join(rows) + "</TABLE>>")


def cluster_view(snapshot: Mapping[str, Any], *, topics: Iterable[str] | None = None,
                 internal: bool = False, per_row: int = 2,
                 highlight: Iterable[tuple[str, int]] = ()) -> graphviz.Digraph:
    """Brokers (fixed id order, `per_row` to a row) with their replicas and roles.

    `topics` limits the rows to some topics; internal topics (``__…``) are hidden unless
    internal=True. `highlight` marks some (topic, partition) rows with ▶ and bold text.
    """
    states = replica_states(snapshot, topics, internal)
    height = max((len(rows) for rows in states.values()), default=0)
    # Wide enough for the longest name shown (bold, with ▶): names are never cut, and
    # the width changes only when the set of topics does.
    longest = max((len(f"{r.topic}-{r.partition}") for rs in states.values() for r in rs),
                  default=0)
    name_w = max(NAME_W, 7 * longest + 24)
    marked = set(highlight)
    g = graphviz.Digraph("cluster", graph_attr={
        "rankdir": "TB", "nodesep": "0.3", "ranksep": "0.3", "fontname": FONT,
        "newrank": "true"}, node_attr={"shape": "plain", "fontname": FONT})
    ids = list(states)
    controller = snapshot.get("controller")
    status = (f"{sim_time(snapshot.get('time_ms', 0))} · active controller: "
              f"{controller if controller is not None else 'NONE (no quorum)'}")
    g.node("status", "<" + '<TABLE BORDER="0"><TR>'
           + td(status, width=name_w + ROLE_W, height=20, border=0, point=11)
           + "</TR></TABLE>>")
    rows = [ids[i:i + per_row] for i in range(0, len(ids), max(1, per_row))]
    for i, row in enumerate(rows):
        with g.subgraph(name=f"row{i}") as sg:
            sg.attr(rank="same")
            for b in row:
                sg.node(f"broker_{b}", _broker_label(
                    b, snapshot["brokers"][b], states[b], height, marked, name_w))
        # Invisible edges fix the order inside a row and the order of rows.
        for a, b in zip(row, row[1:]):
            g.edge(f"broker_{a}", f"broker_{b}", style="invis")
        top = "status" if i == 0 else f"broker_{rows[i - 1][0]}"
        g.edge(top, f"broker_{row[0]}", style="invis")
    g.node("legend", _legend())
    last = rows[-1][0] if rows else "status"
    g.edge(f"broker_{last}" if rows else "status", "legend", style="invis")
    return g
