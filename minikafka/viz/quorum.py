"""The KRaft metadata quorum as the active controller sees it (lesson 12).

One box per replica of `__cluster_metadata`: the leader (the active controller), the
other voters and the observers (brokers that only fetch), each with its log end offset
and lag, as `kafka-metadata-quorum.sh describe --replication` lists them. Every other
replica fetches from the leader: a solid arrow for a replica the leader hears from, a
dotted one for a replica it cannot reach. With no leader (no majority), the voters are
drawn alone, with the reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import graphviz

from ..core.api import describe_quorum
from .html import esc, td
from .palette import BLACK, BLUE, FONT, GREY, SKY_BLUE, WHITE, Style

if TYPE_CHECKING:
    from ..cluster import Cluster

STATUS: dict[str, Style] = {
    "Leader": Style(BLUE, WHITE, "★", "active controller (leader)", border=3),
    "Follower": Style(SKY_BLUE, BLACK, "●", "voter"),
    "Observer": Style(WHITE, BLACK, "○", "observer (broker)"),
    "Unreachable": Style(GREY, BLACK, "✕", "not fetching", line="dotted"),
}


def quorum_state(cluster: Cluster) -> dict[str, Any]:
    """Plain data: {"leader", "epoch", "high_watermark", "replicas": [{"node", "status",
    "log_end", "lag"}]}; a replica the leader cannot reach has status "Unreachable"."""
    info = describe_quorum(cluster, cluster.cluster_id)
    if info.leader_id < 0:
        return {"leader": None, "epoch": info.leader_epoch, "high_watermark": None,
                "replicas": [{"node": r.replica_id, "status": "Unreachable", "log_end": -1,
                              "lag": None}
                             for r in sorted(info.voters, key=lambda r: r.replica_id)]}
    # a replica that does not fetch now is one the leader cannot reach
    rows = [{"node": r.replica_id, "log_end": r.log_end_offset, "lag": info.lag(r),
             "status": status if r.last_fetch_timestamp == cluster.now_ms else "Unreachable"}
            for r, status in info.replicas()]
    return {"leader": info.leader_id, "epoch": info.leader_epoch,
            "high_watermark": info.high_watermark, "replicas": rows}


def _box(row: dict[str, Any], voter: bool) -> str:
    style = STATUS[row["status"]]
    role = style.word if row["status"] != "Unreachable" else \
        ("voter" if voter else "observer") + ", not fetching"
    lines = [f"{style.symbol} node {row['node']}", role,
             f"log end {row['log_end']}" + ("" if row["lag"] is None else f" · lag {row['lag']}")]
    cells = [td(esc(lines[0]), raw=True, fill=style.fill, color=style.text, bold=True,
                point=11, line=style.line, border=style.border)]
    cells += [td(esc(line), raw=True, point=10) for line in lines[1:]]
    return ('<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="3">'
            + "".join(f"<TR>{c}</TR>" for c in cells) + "</TABLE>>")


def quorum_view(state: dict[str, Any], voters: tuple[int, ...]) -> graphviz.Digraph:
    """Voters on one row with the leader, observers below; arrows are Fetch requests."""
    title = ("no active controller: a majority of the voters is down" if state["leader"] is None
             else f"__cluster_metadata · epoch {state['epoch']} · high watermark "
                  f"{state['high_watermark']}")
    g = graphviz.Digraph("quorum", graph_attr={"fontname": FONT, "label": title, "labelloc": "t",
                                               "rankdir": "BT", "nodesep": "0.4", "ranksep": "0.5"},
                         node_attr={"shape": "box", "style": "rounded", "fontname": FONT},
                         edge_attr={"arrowsize": "0.7", "fontname": FONT, "fontsize": "9"})
    rows = state["replicas"]
    with g.subgraph(name="voters") as top:
        top.attr(rank="same")
        for row in rows:
            if row["node"] in voters:
                top.node(f"n{row['node']}", _box(row, True))
    for row in rows:
        if row["node"] not in voters:
            g.node(f"n{row['node']}", _box(row, False))
    if state["leader"] is not None:
        for row in rows:
            if row["status"] == "Leader":
                continue
            dotted = row["status"] == "Unreachable"
            g.edge(f"n{row['node']}", f"n{state['leader']}", label="Fetch",
                   style="dotted" if dotted else "solid", color=GREY if dotted else BLACK)
    return g
