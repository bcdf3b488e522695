"""The ecosystem lesson's pipeline as it stands: a database table, a source connector,
a topic, a consume-transform-produce step, a second topic, a sink connector and the
search index it fills, each with the numbers the cluster holds for it now.

`pipeline_state()` reads those numbers from the live cluster and the connectors;
`pipeline_view()` draws the chain top to bottom.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import graphviz

from .html import esc, td
from .palette import BLACK, BLUE, BLUISH_GREEN, FONT, LIGHT_GREY, ORANGE, WHITE, Style

if TYPE_CHECKING:
    from ..cluster import Cluster

KINDS: dict[str, Style] = {
    "store": Style(LIGHT_GREY, BLACK, "▤", "outside Kafka"),
    "connector": Style(ORANGE, BLACK, "⇄", "Kafka Connect"),
    "topic": Style(BLUE, WHITE, "☰", "topic"),
    "app": Style(BLUISH_GREEN, WHITE, "⚙", "application (consumer + producer)"),
}


def topic_records(cluster: Cluster, topic: str) -> int:
    """Data records below the high watermark (transaction markers are not records)."""
    n = 0
    for p in range(cluster.partitions_for(topic)):
        replica = cluster.leader_replica(topic, p)
        if replica is None:
            continue
        for batch in replica.log.read(replica.log_start_offset, replica.high_watermark, 1 << 62):
            if not batch.is_control:
                n += sum(1 for r in batch.iter_records() if r.offset < replica.high_watermark)
    return n


def committed_total(cluster: Cluster, group_id: str) -> int:
    snap = cluster.groups.snapshot().get(group_id) if cluster.groups else None
    return sum((snap or {}).get("offsets", {}).values())


def pipeline_state(cluster: Cluster, source: Any, transform_group: str, transform_topic: str,
                   sink: Any, sink_group: str) -> dict[str, Any]:
    """The stages, in order, as plain data: [{"name", "kind", "lines": [str, ...]}] under
    "stages", and "side" stages ({"name", "kind", "lines", "of": stage name})."""
    topic, out = source.topic, transform_topic
    stages = [
        {"name": "customers table", "kind": "store",
         "lines": ["a database table", f"{len(source.rows)} rows"]},
        {"name": f"source connector {source.name}", "kind": "connector",
         "lines": [f"source offset: {source.position} rows copied"]},
        {"name": f"topic {topic}", "kind": "topic",
         "lines": [f"{cluster.partitions_for(topic)} partitions · "
                   f"{topic_records(cluster, topic)} records"]},
        {"name": f"cleaner (group {transform_group})", "kind": "app",
         "lines": ["read_committed in, transactions out",
                   f"committed offsets sum to {committed_total(cluster, transform_group)}"]},
        {"name": f"topic {out}", "kind": "topic",
         "lines": [f"{cluster.partitions_for(out)} partitions · {topic_records(cluster, out)} "
                   "records (+ commit markers)"]},
        {"name": f"sink connector (group {sink_group})", "kind": "connector",
         "lines": [f"{sink.writes} upserts by this instance",
                   f"committed offsets sum to {committed_total(cluster, sink_group)}"]},
        {"name": "search index", "kind": "store",
         "lines": [f"{len(sink.table)} documents, one per key"]},
    ]
    side = [{"name": f"topic {source.offsets_topic}", "kind": "topic", "of": stages[1]["name"],
             "lines": [f"compacted · {topic_records(cluster, source.offsets_topic)} records"]}]
    return {"stages": stages, "side": side}


def _box(stage: Mapping[str, Any]) -> str:
    style = KINDS[stage["kind"]]
    rows = ["<TR>" + td(f"{style.symbol} {stage['name']}", fill=style.fill, color=style.text,
                        bold=True, point=11, align="LEFT") + "</TR>"]
    rows += ["<TR>" + td(esc(line), raw=True, point=10, align="LEFT") + "</TR>"
             for line in stage["lines"]]
    rows.append("<TR>" + td(style.word, point=9, italic=True, align="LEFT", color=BLACK)
                + "</TR>")
    return ('<<TABLE BORDER="1" CELLBORDER="0" CELLSPACING="0" CELLPADDING="3" '
            f'COLOR="{style.fill}">' + "".join(rows) + "</TABLE>>")


def pipeline_view(state: Mapping[str, Any]) -> graphviz.Digraph:
    """The stages top to bottom, each box coloured by kind; side stages beside theirs."""
    g = graphviz.Digraph("pipeline", graph_attr={"fontname": FONT, "rankdir": "TB",
                                                 "ranksep": "0.25", "nodesep": "0.5"},
                         node_attr={"shape": "plain", "fontname": FONT},
                         edge_attr={"arrowsize": "0.7"})
    names = {}
    for i, stage in enumerate(state["stages"]):
        names[stage["name"]] = f"s{i}"
        g.node(f"s{i}", _box(stage))
        if i:
            g.edge(f"s{i - 1}", f"s{i}")
    for j, stage in enumerate(state.get("side", ())):
        with g.subgraph() as row:
            row.attr(rank="same")
            row.node(f"side{j}", _box(stage))
            row.edge(names[stage["of"]], f"side{j}", style="dashed",
                     label=stage.get("label", "progress"), fontsize="10", fontname=FONT)
    return g
