"""A scenario run's `Frame` (minikafka.viz.frame, the type the notebook panel records too)
and what the page shows for a frame, as plain JSON-ready data: the two pictures as SVG
text, the consumer groups as table rows, the notes, the time."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import graphviz

from minikafka.viz.frame import Frame
from minikafka.viz.groupview import group_rows
from minikafka.viz.svg import to_svg

from .scenario import Run
from .stage import cluster_stage, log_stage
from .strips import strip_state

_PROLOG = re.compile(r"^.*?(?=<svg)", re.S)
_SIZE = re.compile(r'<svg width="[^"]*" height="[^"]*"')


def svg_text(graph: graphviz.Digraph) -> str:
    """The graph as an <svg> element that scales to its box (the page sets the size;
    the viewBox keeps the proportions)."""
    svg = _PROLOG.sub("", to_svg(graph), count=1)
    return _SIZE.sub('<svg preserveAspectRatio="xMidYMid meet"', svg, count=1)


def group_panel(description: Mapping[str, Any]) -> dict[str, Any]:
    """The group as the page's table: one row per partition, members by client id."""
    names = {m["member_id"]: m.get("client_id") or m["member_id"]
             for m in description.get("members", [])}
    rows = []
    for r in group_rows(description):
        if r["committed"] is None:
            kind = "no-commit"
        else:
            kind = "lagging" if r["lag"] else "caught-up"
        rows.append({"partition": f"{r['topic']}-{r['partition']}",
                     "member": names.get(r["member"], r["member"]),
                     "committed": r["committed"], "end": r["log_end_offset"],
                     "lag": r["lag"], "kind": kind})
    return {"group_id": description.get("group_id"), "state": description.get("state"),
            "generation": description.get("generation"), "rows": rows}


def run_frame(run: Run, label: str) -> Frame:
    """The current state of a scenario run: its cluster, the watched partition's strips
    (with record texts), its consumer group, its notes."""
    cluster = run.cluster
    topic, partition = run.watch
    consumers = run.consumers
    return Frame.simulated(
        label, cluster.snapshot(),
        log=strip_state(cluster, topic, partition, run.scenario.columns),
        group_offsets=consumers.offsets(topic, partition) if consumers is not None else None,
        groups=(consumers.description(),) if consumers is not None else (),
        notes=tuple(run.notes.items()))


def page(frame: Frame, topics: Iterable[str] | None = None, *, columns: int = 10,
         offset_word: str = "LEO") -> dict[str, Any]:
    """Everything the page draws for a frame. topics: those the cluster picture shows
    (default: all the snapshot has); columns: offsets per log strip."""
    snapshot = frame.snapshot
    topics = list(snapshot["topics"] if topics is None else topics)
    leaders = {f"{t}-{p['partition']}": p["leader"]
               for t in topics for p in snapshot["topics"].get(t, [])}
    out: dict[str, Any] = {
        "time": frame.time,
        "controller": snapshot.get("controller"),
        "brokers": sorted(snapshot["brokers"]),
        "down": sorted(b for b, i in snapshot["brokers"].items() if not i["running"]),
        "leaders": leaders,
        "cluster_svg": svg_text(cluster_stage(snapshot, topics, frame.watched,
                                              offset_word=offset_word)),
    }
    if frame.log is not None:
        out["log_svg"] = svg_text(log_stage(frame.log, columns, frame.group_offsets))
    out["groups"] = [group_panel(g) for g in frame.groups]
    out["notes"] = [[label, text] for label, text in frame.notes]
    out["narration"] = frame.label
    return out
