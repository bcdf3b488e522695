"""A partition's log as the presenter's strips draw it: viz's `log_state()` (kinds of
cells, markers, who is leader and in sync) plus a short text per record, because on
a projector "AAPL 193" says more than an offset."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from minikafka.viz.logstate import log_state

if TYPE_CHECKING:
    from ..cluster import Cluster


def _short(data: bytes | None, n: int = 6) -> str:
    if data is None:
        return ""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.hex()
    return text if len(text) <= n else text[: n - 1] + "…"


def strip_state(cluster: Cluster, topic: str, partition: int, max_cells: int) -> dict[str, Any]:
    """log_state() with "labels": {broker: {offset: [key text, value text]}}; a null
    value (a tombstone) reads "null"."""
    state = log_state(cluster, topic, partition, max_cells)
    start, end = state["window"]
    labels: dict[int, dict[int, list[str]]] = {}
    for b in state["replicas"]:
        replica = cluster.brokers[b].replicas[(topic, partition)]
        texts: dict[int, list[str]] = {}
        for batch in replica.log.read(max(start, replica.log_start_offset), end, 1 << 62):
            if batch.is_control:
                continue
            for rec in batch.iter_records():
                if start <= rec.offset < end:
                    value = "null" if rec.value is None else _short(rec.value)
                    texts[rec.offset] = [_short(rec.key), value]
        labels[b] = texts
    state["labels"] = labels
    return state
