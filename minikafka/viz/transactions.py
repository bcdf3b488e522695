"""A transaction as Kafka keeps it: the coordinator's record of it, and the partitions
it wrote to, with their commit/abort markers and last stable offset (LSO).

`transaction_state()` reads the cluster's transaction coordinator and each partition's
leader log (`log_state()`); `transaction_view()` draws the coordinator on the left and
one strip of offsets per partition on the right, an edge to every partition the open
transaction has touched (where its marker will go).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import graphviz

from .html import bold, clip, esc, td
from .logstate import ABORTED, CONTROL_ABORT, CONTROL_COMMIT, DATA, log_state
from .logview import KIND_STYLES
from .palette import BLACK, BLUISH_GREEN, FONT, LIGHT_GREY, REDDISH_PURPLE, WHITE, YELLOW, Style

if TYPE_CHECKING:
    from ..cluster import Cluster

CELL_W, LABEL_W = 44, 100
OPEN = "open"  # a record of a transaction not yet ended: at or past the LSO
STYLES: dict[str, Style] = {
    DATA: Style(BLUISH_GREEN, WHITE, "", "committed record"),
    OPEN: Style(YELLOW, BLACK, "…", "open transaction: read_committed waits", line="dashed"),
    **{k: KIND_STYLES[k] for k in (CONTROL_COMMIT, CONTROL_ABORT, ABORTED)},
}


def transaction_state(cluster: Cluster, transactional_id: str,
                      topics: Iterable[str]) -> dict[str, Any]:
    """The coordinator's view of one transactional.id and the logs of every partition of
    `topics`, as plain data::

        {"transactional_id", "producer_id", "producer_epoch", "state",
         "partitions": ["topic-p", ...],   # in the current transaction
         "logs": [log_state(...), ...]}
    """
    coordinator = cluster.transactions
    meta = coordinator.transactions.get(transactional_id) if coordinator else None
    logs = [log_state(cluster, t, p) for t in topics for p in range(cluster.partitions_for(t))]
    return {
        "transactional_id": transactional_id,
        "producer_id": meta.producer_id if meta else None,
        "producer_epoch": meta.producer_epoch if meta else None,
        "state": meta.state if meta else "unknown",
        "partitions": sorted(f"{t}-{p}" for t, p in meta.partitions) if meta else [],
        "logs": logs,
    }


def _kind(kind: str, offset: int, lso: int | None) -> str:
    if kind == DATA and lso is not None and offset >= lso:
        return OPEN
    return kind


def _strip(state: Mapping[str, Any], in_txn: bool, columns: int) -> str:
    """One partition's label and offset cells, padded to `columns` offset columns so
    every strip has the same width and they line up."""
    start, end = state["window"]
    leader = state["leader"]
    cells = state["replicas"][leader]["cells"] if leader is not None else {}
    lso, hw = state["last_stable_offset"], state["high_watermark"]
    name = f"{state['topic']}-{state['partition']}"
    marks = []
    strip = []
    for offset in range(start, end + 1):
        names = [n for n, o in (("LSO", lso), ("HW", hw)) if o == offset]
        marks.append(td("<BR/>".join(names) + ("<BR/>▼" if names else ""), raw=True,
                        width=CELL_W, height=40, border=0, point=9, bold=bool(names)))
        if offset == end:
            strip.append(td("next", width=CELL_W, height=30, line="dashed", point=9))
            continue
        kind, key = cells.get(offset, (DATA, ""))
        kind = _kind(kind, offset, lso)
        style = STYLES[kind]
        text = f"{bold(str(offset))}<BR/>{esc(clip(key, 5) if kind in (DATA, OPEN) else style.symbol)}"
        strip.append(td(text, raw=True, style=style, width=CELL_W, height=30, point=9))
    pad = columns - (end - start + 1)
    marks += [td("", width=CELL_W, height=40, border=0)] * pad
    strip += [td("", width=CELL_W, height=30, border=0)] * pad
    left = '<BR ALIGN="LEFT"/>'
    label = esc(name) + left + ("in the open" + left + "transaction" + left if in_txn else "")
    marks.insert(0, td("", width=LABEL_W, height=40, border=0))
    strip.insert(0, td(label, raw=True, width=LABEL_W, height=44, border=0, bold=in_txn,
                       point=10, align="LEFT", port="in"))
    return ('<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="2" CELLPADDING="1">'
            + "<TR>" + "".join(marks) + "</TR><TR>" + "".join(strip) + "</TR></TABLE>>")


def _legend(kinds: set[str]) -> str:
    rows = "".join(
        "<TR>" + td(style.symbol or " ", style=style, width=CELL_W, height=18, point=9)
        + td(style.word, align="LEFT", border=0, point=9) + "</TR>"
        for kind, style in STYLES.items() if kind in kinds)
    words = td("LSO = last stable offset: read_committed reads below it<BR/>"
               "HW = high watermark: read_uncommitted reads below it", raw=True, colspan=2,
               border=0, point=9, align="LEFT")
    return ('<<TABLE BORDER="0" CELLSPACING="2" CELLPADDING="2"><TR>' + words + "</TR>"
            + rows + "</TABLE>>")


def transaction_view(state: Mapping[str, Any]) -> graphviz.Digraph:
    """Coordinator (transactional.id, producer id and epoch, state, partitions) and the
    partitions' logs with markers, open-transaction records and the LSO."""
    open_parts = set(state["partitions"])
    coord_rows = [
        ("transaction coordinator", True, 11),
        (f"transactional.id {state['transactional_id']}", False, 10),
        (f"producer id {state['producer_id']} · epoch {state['producer_epoch']}", False, 10),
        (f"state {state['state']}", True, 10),
        ("partitions: " + (", ".join(state["partitions"]) or "none"), False, 10),
    ]
    g = graphviz.Digraph("transaction", graph_attr={
        "rankdir": "LR", "fontname": FONT, "ranksep": "0.6", "nodesep": "0.2"},
        node_attr={"shape": "plain", "fontname": FONT},
        edge_attr={"color": REDDISH_PURPLE, "fontname": FONT, "fontsize": "9"})
    g.node("coordinator", '<<TABLE BORDER="2" CELLBORDER="0" CELLSPACING="0" CELLPADDING="3" '
                          f'BGCOLOR="{LIGHT_GREY}">'
           + "".join("<TR>" + td(text, bold=bold, point=pt, align="LEFT") + "</TR>"
                     for text, bold, pt in coord_rows) + "</TABLE>>")
    kinds: set[str] = set()
    column = graphviz.Digraph("logs", graph_attr={"rank": "same"})
    columns = max((log["window"][1] - log["window"][0] + 1 for log in state["logs"]), default=0)
    for i, log in enumerate(state["logs"]):
        name = f"{log['topic']}-{log['partition']}"
        column.node(f"log{i}", _strip(log, name in open_parts, columns))
        if i:
            column.edge(f"log{i - 1}", f"log{i}", style="invis")
        leader = log["leader"]
        if leader is not None:
            kinds |= {_kind(k, int(o), log["last_stable_offset"])
                      for o, (k, _) in log["replicas"][leader]["cells"].items()}
        g.edge("coordinator", f"log{i}:in:w",
               **({"label": "marker on commit/abort", "style": "dashed"}
                  if name in open_parts else {"style": "invis"}))
    column.node("legend", _legend(kinds))
    if state["logs"]:
        column.edge(f"log{len(state['logs']) - 1}", "legend", style="invis")
    g.subgraph(column)
    return g
