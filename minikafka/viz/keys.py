"""Where keyed records go: key -> murmur2 -> toPositive -> % partitions -> partition.

`key_placement()` reads the keys back from each partition's leader log, so the picture
shows where records really are, and beside it the partition the formula predicts: the
two always agree for Kafka's default partitioner.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import graphviz

from minikafka.core.partitioner import murmur2

from .html import clip, esc, td
from .palette import (
    BLACK,
    BLUE,
    BLUISH_GREEN,
    FONT,
    LIGHT_GREY,
    ORANGE,
    REDDISH_PURPLE,
    SKY_BLUE,
    VERMILLION,
    WHITE,
)

if TYPE_CHECKING:
    from ..cluster import Cluster

# One colour per partition (edges and partition headers); the number is always written too.
PARTITION_COLOURS = [BLUE, ORANGE, BLUISH_GREEN, VERMILLION, REDDISH_PURPLE, SKY_BLUE]


def _key_text(key: bytes) -> str:
    try:
        return key.decode("utf-8")
    except UnicodeDecodeError:
        return key.hex()


def key_placement(cluster: Cluster, topic: str) -> dict[str, Any]:
    """Every key in the topic with its hash, predicted partition and the partition (and
    offsets) where its records are stored, as plain data::

        {"topic": str, "partitions": n, "leaders": {p: broker},
         "keys": [{"key", "murmur2", "positive", "predicted", "stored", "offsets"}]}

    murmur2 is the hash as a signed 32-bit (Java) int; positive = murmur2 & 0x7fffffff.
    Keys are listed in the order they first appear (by partition, then offset).
    """
    n = cluster.partitions_for(topic)
    found: dict[bytes, dict[str, Any]] = {}
    leaders: dict[int, int | None] = {}
    for p in range(n):
        replica = cluster.leader_replica(topic, p)
        leaders[p] = replica.broker_id if replica is not None else None
        if replica is None:
            continue
        log = replica.log
        for batch in log.read(replica.log_start_offset, replica.log_end_offset, 1 << 62):
            if batch.is_control:
                continue
            for rec in batch.iter_records():
                if rec.key is None:
                    continue
                entry = found.get(rec.key)
                if entry is None:
                    h = murmur2(rec.key)
                    signed = h - (1 << 32) if h >= 1 << 31 else h
                    entry = found[rec.key] = {
                        "key": _key_text(rec.key), "murmur2": signed,
                        "positive": signed & 0x7FFFFFFF,
                        "predicted": (signed & 0x7FFFFFFF) % n, "stored": p, "offsets": []}
                entry["offsets"].append(rec.offset)
    keys = sorted(found.values(), key=lambda e: (e["stored"], e["offsets"][0]))
    return {"topic": topic, "partitions": n, "leaders": leaders, "keys": keys}


def _natural(text: str) -> tuple:
    head, _, tail = text.rpartition("-")
    return (head, int(tail)) if tail.isdigit() else (text, 0)


def key_placement_view(placement: Mapping[str, Any], *, max_keys: int = 24) -> graphviz.Digraph:
    """Keys on the left with their hash arithmetic, partitions on the right with the
    keys they hold; an edge per key to the partition its records are stored in."""
    n = placement["partitions"]
    keys = sorted(placement["keys"], key=lambda e: _natural(e["key"]))[:max_keys]
    hidden = len(placement["keys"]) - len(keys)
    head = [td(h, border=0, bold=True, point=10, align=a) for h, a in (
        ("key", "LEFT"), ("murmur2 (Java int)", "RIGHT"), ("toPositive", "RIGHT"),
        (f"% {n}", "CENTER"))]
    rows = ["<TR>" + "".join(head) + "</TR>"]
    for e in keys:
        colour = PARTITION_COLOURS[e["stored"] % len(PARTITION_COLOURS)]
        rows.append("<TR>" + "".join([
            td(clip(e["key"], 16), align="LEFT", point=10, border=0, bold=True),
            td(f"{e['murmur2']:,}", align="RIGHT", point=10, border=0),
            td(f"{e['positive']:,}", align="RIGHT", point=10, border=0),
            td(f"→ {e['predicted']}", point=10, border=0, bold=True, color=colour,
               port=f"k{keys.index(e)}"),
        ]) + "</TR>")
    if hidden:
        rows.append("<TR>" + td(f"… and {hidden} more keys", colspan=4, border=0, point=10,
                                align="LEFT", italic=True) + "</TR>")
    g = graphviz.Digraph("key_placement", graph_attr={
        "rankdir": "LR", "fontname": FONT, "ranksep": "0.9", "nodesep": "0.15",
        "label": f"topic {placement['topic']}: partition = toPositive(murmur2(key)) % {n}",
        "labelloc": "t", "fontsize": "12"},
        node_attr={"shape": "plain", "fontname": FONT}, edge_attr={"arrowsize": "0.6"})
    g.node("keys", '<<TABLE BORDER="1" COLOR="' + LIGHT_GREY + '" CELLBORDER="0" '
                   'CELLSPACING="0" CELLPADDING="3">' + "".join(rows) + "</TABLE>>")
    by_partition: dict[int, list[dict[str, Any]]] = {p: [] for p in range(n)}
    column = graphviz.Digraph("partitions", graph_attr={"rank": "same"})
    for e in placement["keys"]:
        by_partition[e["stored"]].append(e)
    for p in range(n):
        colour = PARTITION_COLOURS[p % len(PARTITION_COLOURS)]
        held = by_partition[p]
        records = sum(len(e["offsets"]) for e in held)
        leader = placement["leaders"].get(p)
        names = sorted((e["key"] for e in held), key=_natural)
        lines = [", ".join(names[i:i + 3]) for i in range(0, len(names), 3)] or ["(no keys)"]
        label = ('<<TABLE BORDER="2" COLOR="' + colour + '" CELLBORDER="0" CELLSPACING="0" '
                 'CELLPADDING="3">'
                 + "<TR>" + td(f"partition {p}", fill=colour, color=WHITE, bold=True,
                               point=11) + "</TR>"
                 + "<TR>" + td(f"leader broker {leader} · {records} records", point=10,
                               color=BLACK) + "</TR>"
                 + "".join("<TR>" + td(esc(line), raw=True, point=10, align="LEFT") + "</TR>"
                           for line in lines)
                 + "</TABLE>>")
        column.node(f"p{p}", label)
    for p in range(1, n):  # partitions top to bottom in number order
        column.edge(f"p{p - 1}", f"p{p}", style="invis")
    g.subgraph(column)
    for i, e in enumerate(keys):
        colour = PARTITION_COLOURS[e["stored"] % len(PARTITION_COLOURS)]
        g.edge(f"keys:k{i}:e", f"p{e['stored']}:w", color=colour)
    return g
