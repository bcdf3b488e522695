"""A share-partition (KIP-932): one row of offsets, each in its record state.

The input is a plain dict (`share_partition_state()` builds it from a live cluster)::

    {
      "group_id": "workers", "topic": "jobs", "partition": 0,
      "start_offset": 3,           # the SPSO: everything before it is done with
      "high_watermark": 9,         # what the log has for readers
      "delivery_count_limit": 5,
      "records": [                 # the in-flight window, SPSO onwards
        {"offset": 3, "state": "ACQUIRED", "delivery_count": 1, "member": "Nb-ZLcnp"},
        {"offset": 4, "state": "AVAILABLE", "delivery_count": 1, "member": None},
      ],
    }

Offsets before the SPSO are drawn done; offsets past the window up to the high watermark
"not yet delivered". Each in-flight offset shows its state (colour, symbol and word), its
delivery count out of the limit and, while acquired, which member holds it.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import graphviz

from .html import clip, td
from .palette import (
    BLACK,
    BLUE,
    BLUISH_GREEN,
    FONT,
    GREY,
    LIGHT_GREY,
    SKY_BLUE,
    VERMILLION,
    WHITE,
    Style,
)

SHARE_STYLES: dict[str, Style] = {
    "AVAILABLE": Style(SKY_BLUE, BLACK, "○", "available"),
    "ACQUIRED": Style(BLUE, WHITE, "◆", "acquired", border=3),
    "ACKNOWLEDGED": Style(BLUISH_GREEN, WHITE, "✓", "acknowledged"),
    "ARCHIVED": Style(VERMILLION, WHITE, "✕", "archived", line="dashed"),
    "done": Style(LIGHT_GREY, BLACK, "", "done", line="dotted"),  # before the SPSO
    "new": Style(WHITE, BLACK, "", "not yet read", line="dashed"),
}
CELL_WIDTH = 96
MAX_CELLS = 24


def share_partition_state(cluster: Any, group_id: str, topic: str, partition: int = 0
                          ) -> dict[str, Any]:
    """The share_partition_view() dict of a live cluster's share-partition."""
    share = cluster.share_groups
    sp = share.partitions.get((group_id, topic, partition))
    leader = cluster.leader_replica(topic, partition)
    return {"group_id": group_id, "topic": topic, "partition": partition,
            "start_offset": sp.start_offset if sp is not None else None,
            "high_watermark": leader.high_watermark if leader is not None else None,
            "delivery_count_limit": share.settings(group_id).delivery_count_limit,
            "records": sp.rows() if sp is not None else []}


def _cell(offset: int, kind: str, record: Mapping[str, Any] | None, limit: int | None) -> str:
    style = SHARE_STYLES[kind]
    lines = [f"<B>{offset}</B>", f"{style.symbol} {style.word}".strip()]
    if record is not None:
        count = record.get("delivery_count", 0)
        lines.append(f"delivery {count}/{limit}" if limit else f"delivery {count}")
        if record.get("member") and kind == "ACQUIRED":
            lines.append(clip(str(record["member"]), 8))
    body = "<BR/>".join(lines)
    return td(body, raw=True, style=style, width=CELL_WIDTH, height=64, point=9)


def share_partition_view(state: Mapping[str, Any]) -> graphviz.Digraph:
    """The share-partition's window as one strip of offset cells, SPSO and HW marked."""
    records = {int(r["offset"]): r for r in state.get("records", [])}
    start = state.get("start_offset")
    hw = state.get("high_watermark")
    limit = state.get("delivery_count_limit")
    last = max([*records, (hw or 0) - 1, (start or 0) - 1, 0])
    first = max(0, min([start if start is not None else 0, *records]) - 2)
    first = max(first, last + 1 - MAX_CELLS)
    cells = []
    for offset in range(first, last + 1):
        record = records.get(offset)
        if record is not None:
            kind = str(record["state"])
        elif start is not None and offset < start:
            kind = "done"
        else:
            kind = "new"
        cells.append(_cell(offset, kind, record, limit))
    marks = []
    for offset in range(first, last + 1):
        words = []
        if offset == start:
            words.append("▲ SPSO")
        if hw is not None and offset == hw - 1:
            words.append("HW-1")
        marks.append(td(" ".join(words), width=CELL_WIDTH, height=16, border=0, point=9))
    title = (f"share group {state.get('group_id')} · {state.get('topic')}-"
             f"{state.get('partition')} · SPSO {start if start is not None else '–'}"
             f" · in flight {len(records)}")
    label = ('<<TABLE BORDER="0" CELLSPACING="2" CELLPADDING="2">'
             f'<TR>{td(title, colspan=max(1, len(cells)), border=0, bold=True, align="LEFT")}</TR>'
             f'<TR>{"".join(cells)}</TR><TR>{"".join(marks)}</TR></TABLE>>')
    graph = graphviz.Digraph("share_partition", graph_attr={"fontname": FONT},
                             node_attr={"shape": "plaintext", "fontname": FONT})
    graph.node("window", label=label, color=GREY)
    return graph
