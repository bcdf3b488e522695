"""What the page shows for one state, as plain JSON-ready data: the two pictures as SVG
text, the consumer group as table rows, the notes, the simulated time."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import graphviz

from minikafka.viz.groupview import group_rows
from minikafka.viz.html import sim_time
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


def cluster_frame(snapshot: Mapping[str, Any], topics: Iterable[str],
                  watched: tuple[str, int] | None = None,
                  offset_word: str = "LEO") -> dict[str, Any]:
    """The parts of a frame that need only a snapshot (what live mode has)."""
    topics = list(topics)
    leaders = {f"{t}-{p['partition']}": p["leader"]
               for t in topics for p in snapshot["topics"].get(t, [])}
    return {
        "time": sim_time(snapshot["time_ms"]) if snapshot.get("time_ms") is not None else "",
        "controller": snapshot.get("controller"),
        "brokers": sorted(snapshot["brokers"]),
        "down": sorted(b for b, i in snapshot["brokers"].items() if not i["running"]),
        "leaders": leaders,
        "cluster_svg": svg_text(cluster_stage(snapshot, topics, watched,
                                              offset_word=offset_word)),
    }


def run_frame(run: Run) -> dict[str, Any]:
    """Everything the page draws for the current state of a scenario run."""
    cluster = run.cluster
    topic, partition = run.watch
    frame = cluster_frame(cluster.snapshot(), [topic], run.watch)
    groups = run.consumers.offsets(topic, partition) if run.consumers is not None else None
    columns = run.scenario.columns
    frame["log_svg"] = svg_text(log_stage(strip_state(cluster, topic, partition, columns),
                                          columns, groups))
    frame["groups"] = [group_panel(run.consumers.description())] \
        if run.consumers is not None else []
    frame["notes"] = [[label, text] for label, text in run.notes.items()]
    return frame
