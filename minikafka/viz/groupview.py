"""A consumer group: members, who owns which partition, committed offsets and lag.

The input is a plain dict, so the view works with whatever describes a group (the
group coordinator, `kafka-consumer-groups.sh --describe` output, a hand-made example)::

    {
      "group_id": "billing",
      "state": "Stable",            # Empty | PreparingRebalance | CompletingRebalance
                                    # | Stable | Dead  (optional)
      "generation": 3,              # optional
      "coordinator": 2,             # broker id of the group coordinator (optional)
      "protocol": "range",          # the assignor (optional)
      "leader": "consumer-1-a1b2",  # member id of the group leader (optional)
      "members": [
        {"member_id": "consumer-1-a1b2",
         "client_id": "consumer-1",          # optional
         "instance_id": None,                # group.instance.id: static member (optional)
         "assignment": [("orders", 0), ("orders", 1)]},   # (topic, partition) pairs,
                                                          # TopicPartition or "orders-0"
      ],
      "partitions": [               # optional: offsets per partition
        {"topic": "orders", "partition": 0,
         "committed": 5,            # None when the group never committed
         "log_end_offset": 9,       # lag = log_end_offset - committed
         "lag": 4},                 # optional; computed when missing
      ],
    }

A consumer group of type "consumer" (KIP-848) adds "type": "consumer", "group_epoch",
"assignment_epoch", and per member "epoch", "member_state" and "target" (the partitions
the coordinator means it to have): the picture then shows each member's epoch and draws
a dashed arrow to a target partition the member does not own yet.

Partitions come from "partitions" and from every member's assignment; one assigned to
nobody is drawn as unassigned. `group_description()` builds this dict for a group of a
live cluster.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import graphviz

from .html import bold, clip, esc, italic, td
from .palette import BLACK, FONT, LAG_STYLES, LIGHT_GREY, WHITE, YELLOW

if TYPE_CHECKING:
    from ..cluster import Cluster

TP = tuple[str, int]


def _tp(item: Any) -> TP:
    """(topic, partition) from a pair, a TopicPartition or a "topic-N" string."""
    if isinstance(item, str):
        topic, _, p = item.rpartition("-")
        return topic, int(p)
    if isinstance(item, Mapping):
        return str(item["topic"]), int(item["partition"])
    topic, partition = item
    return str(topic), int(partition)


def group_description(cluster: Cluster, group_id: str,
                      topics: Iterable[str] = ()) -> dict[str, Any]:
    """The group_view() dict of a live cluster's group, from `cluster.groups.snapshot()`.

    log_end_offset is the partition's high watermark: the end a consumer can read to,
    which kafka-consumer-groups.sh reports as LOG-END-OFFSET. Every partition of
    `topics` is listed, so the picture keeps its shape while members come and go.
    A group the coordinator does not know has no members and state "unknown".
    """
    snap = cluster.groups.snapshot().get(group_id)
    if snap is None:
        snap = {"state": "unknown", "generation": None, "protocol": None, "leader": None,
                "coordinator": None, "members": {}, "offsets": {}}
    members = [{"member_id": mid, "client_id": m.get("client_id"),
                "instance_id": m.get("instance"), "assignment": list(m.get("assignment", [])),
                **({"epoch": m["epoch"], "member_state": m.get("member_state"),
                    "protocol": m.get("protocol"),
                    "target": list(m.get("target", []))} if "epoch" in m else {})}
               for mid, m in sorted(snap["members"].items())]
    wanted: set[TP] = {_tp(k) for k in snap["offsets"]}
    for m in members:
        wanted.update(_tp(a) for a in m["assignment"] + m.get("target", []))
    for topic in topics:
        if topic in cluster.controller.topics:
            wanted.update((topic, p) for p in range(cluster.partitions_for(topic)))
    ends: dict[str, list[int]] = {}
    partitions = []
    for topic, p in sorted(wanted):
        if topic not in ends and topic in cluster.controller.topics:
            ends[topic] = [d.high_watermark for d in cluster.describe_topic(topic).partitions]
        hw = ends.get(topic, [])
        end = hw[p] if p < len(hw) and hw[p] >= 0 else None
        partitions.append({"topic": topic, "partition": p, "log_end_offset": end,
                           "committed": snap["offsets"].get(f"{topic}-{p}")})
    return {"group_id": group_id, "state": snap["state"], "generation": snap["generation"],
            "protocol": snap["protocol"], "leader": snap["leader"],
            "coordinator": snap.get("coordinator"), "members": members,
            "partitions": partitions,
            **({"type": "consumer", "group_epoch": snap["group_epoch"],
                "assignment_epoch": snap["assignment_epoch"]}
               if snap.get("type") == "consumer" else {})}


def group_rows(description: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per partition, sorted: topic, partition, member, committed, end, lag."""
    owner: dict[TP, str] = {}
    for m in description.get("members", []):
        for item in m.get("assignment", []):
            owner[_tp(item)] = m["member_id"]
    offsets = {_tp(p): p for p in description.get("partitions", [])}
    rows = []
    for tp in sorted(set(owner) | set(offsets)):
        info = offsets.get(tp, {})
        committed = info.get("committed")
        end = info.get("log_end_offset")
        lag = info.get("lag")
        if lag is None and committed is not None and end is not None:
            lag = max(0, end - committed)
        rows.append({"topic": tp[0], "partition": tp[1], "member": owner.get(tp),
                     "committed": committed, "log_end_offset": end, "lag": lag})
    return rows


def _lag_kind(row: Mapping[str, Any]) -> str:
    if row["committed"] is None:
        return "no-commit"
    return "lagging" if row["lag"] else "caught-up"


def _node_id(kind: str, name: object) -> str:
    """A DOT-safe node id (a ':' in an edge end would be read as a port)."""
    return kind + "_" + re.sub(r"[^A-Za-z0-9_]", lambda m: f"_{ord(m.group()):x}_", str(name))


def _member_label(m: Mapping[str, Any], leader: bool, count: int) -> str:
    name = clip(str(m["member_id"]), 28)
    lines = [bold(f"{'♛ ' if leader else ''}{esc(name)}")]
    if m.get("client_id"):
        lines.append(f"client {esc(clip(str(m['client_id']), 24))}")
    if m.get("instance_id"):
        lines.append(f"static: {esc(clip(str(m['instance_id']), 20))}")
    if m.get("epoch") is not None:
        state = str(m.get("member_state") or "").replace("_", " ").lower()
        lines.append(f"member epoch {m['epoch']}" + (f" · {esc(state)}" if state else ""))
        if m.get("protocol") == "classic":  # a classic member of a mixed group
            lines.append("classic protocol (JoinGroup)")
    if leader:
        lines.append("group leader (runs the assignor)")
    lines.append(f"{count} partition{'s' if count != 1 else ''}" if count
                 else italic("idle: no partitions"))
    fill = WHITE if count else LIGHT_GREY
    return ('<<TABLE BORDER="0" CELLPADDING="3">' + "<TR>"
            + td("<BR/>".join(lines), raw=True, width=220, height=16 * len(lines) + 6,
                 fill=fill, border=0, point=9)
            + "</TR></TABLE>>")


def _partition_label(row: Mapping[str, Any]) -> str:
    style = LAG_STYLES[_lag_kind(row)]
    committed = "–" if row["committed"] is None else row["committed"]
    end = "?" if row["log_end_offset"] is None else row["log_end_offset"]
    lag = "–" if row["lag"] is None else row["lag"]
    owner = "" if row["member"] is not None else "<BR/>" + italic("unassigned")
    name = bold(f"{esc(row['topic'])}-{row['partition']}")
    text = (f"{name} {style.symbol} lag {lag}"
            f"<BR/>committed {committed} · end {end}{owner}")
    return ('<<TABLE BORDER="0" CELLPADDING="0">' + "<TR>"
            + td(text, raw=True, style=style, width=190, height=42, point=9)
            + "</TR></TABLE>>")


def _legend() -> str:
    rows = "".join("<TR>" + td(f"{s.symbol} {s.word}", style=s, width=150, height=20,
                               point=9, align="LEFT") + "</TR>"
                   for s in LAG_STYLES.values())
    return f'<<TABLE BORDER="0" CELLSPACING="2">{rows}</TABLE>>'


def group_view(description: Mapping[str, Any], *,
               partitions: Iterable[TP] = ()) -> graphviz.Digraph:
    """Members on the left, partitions on the right, an arrow for each assignment.

    `partitions` adds partitions to draw even when nobody owns or committed them
    (so the picture keeps its shape while members come and go).
    """
    rows = {(r["topic"], r["partition"]): r for r in group_rows(description)}
    for tp in partitions:
        tp = _tp(tp)
        rows.setdefault(tp, {"topic": tp[0], "partition": tp[1], "member": None,
                             "committed": None, "log_end_offset": None, "lag": None})
    members = sorted(description.get("members", []), key=lambda m: str(m["member_id"]))
    state = description.get("state", "?")
    total = sum(r["lag"] or 0 for r in rows.values())
    head = [f"group {description.get('group_id', '?')}", f"state {state}"]
    if description.get("type") == "consumer":
        head.append(f"group epoch {description.get('group_epoch')}")
        head.append(f"target epoch {description.get('assignment_epoch')}")
    elif description.get("generation") is not None:
        head.append(f"generation {description['generation']}")
    if description.get("protocol"):
        head.append(f"assignor {description['protocol']}")
    if description.get("coordinator") is not None:
        head.append(f"coordinator broker {description['coordinator']}")
    head.append(f"total lag {total}")
    rebalancing = state in ("PreparingRebalance", "CompletingRebalance", "Assigning",
                            "Reconciling")
    g = graphviz.Digraph("group", graph_attr={
        "rankdir": "LR", "fontname": FONT, "nodesep": "0.15", "ranksep": "1.0",
        # Two lines when long (a KIP-848 group's epochs), so the picture stays narrow.
        "label": ("⟳ REBALANCING · " if rebalancing else "") + (
            " · ".join(head) if len(head) <= 4
            else " · ".join(head[:4]) + "\\l" + " · ".join(head[4:]) + "\\l"),
        "labelloc": "t", "labeljust": "l", "fontsize": "13",
        "bgcolor": YELLOW if rebalancing else WHITE},
        node_attr={"shape": "plain", "fontname": FONT},
        edge_attr={"color": BLACK, "arrowsize": "0.6"})
    owned: dict[str, int] = {}
    for r in rows.values():
        if r["member"] is not None:
            owned[r["member"]] = owned.get(r["member"], 0) + 1
    with g.subgraph(name="members") as sg:
        sg.attr(rank="same")
        if not members:
            sg.node(_node_id("member", ""), f"<{italic('no members')}>", shape="box", style="dashed")
        for m in members:
            sg.node(_node_id("member", m["member_id"]), _member_label(
                m, m["member_id"] == description.get("leader"), owned.get(m["member_id"], 0)),
                shape="box", style="rounded", margin="0.05")
    with g.subgraph(name="partitions") as sg:
        sg.attr(rank="same")
        for tp in sorted(rows):
            sg.node(_node_id("tp", f"{tp[0]}-{tp[1]}"), _partition_label(rows[tp]))
    for a, b in zip(members, members[1:]):  # members in id order top to bottom
        g.edge(_node_id("member", a["member_id"]), _node_id("member", b["member_id"]),
               style="invis")
    ordered = sorted(rows)
    for a, b in zip(ordered, ordered[1:]):  # keep partitions in order top to bottom
        g.edge(_node_id("tp", f"{a[0]}-{a[1]}"), _node_id("tp", f"{b[0]}-{b[1]}"),
               style="invis")
    for tp in ordered:
        member = rows[tp]["member"]
        if member is not None:
            g.edge(_node_id("member", member), _node_id("tp", f"{tp[0]}-{tp[1]}"))
    for m in members:  # KIP-848: where the coordinator is moving a partition
        for item in m.get("target", []):
            tp = _tp(item)
            if tp in rows and rows[tp]["member"] != m["member_id"]:
                g.edge(_node_id("member", m["member_id"]), _node_id("tp", f"{tp[0]}-{tp[1]}"),
                       style="dashed", color=LIGHT_GREY, label="target", fontsize="10")
    g.node("legend", _legend())
    return g
