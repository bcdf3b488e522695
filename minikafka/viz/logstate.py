"""A partition's logs as plain data: what the log view draws, and what the replay
slider keeps (a snapshot of the whole cluster does not hold records)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from minikafka.core.records import ABORT_MARKER, control_marker_type

if TYPE_CHECKING:
    from ..cluster import Cluster

# Cell kinds.
DATA = "data"
CONTROL_COMMIT = "commit marker"
CONTROL_ABORT = "abort marker"
ABORTED = "aborted"
GONE = "gone"  # an offset inside the log with no record: removed by compaction


def _key_text(key: bytes | None) -> str:
    if key is None:
        return ""
    try:
        return key.decode("utf-8")
    except UnicodeDecodeError:
        return key.hex()


def _replica_cells(replica: Any, start: int, end: int) -> dict[int, tuple[str, str]]:
    """offset -> (kind, key text) for the records this replica holds in [start, end)."""
    aborted = [(a.producer_id, a.first_offset, a.last_offset)
               for a in replica.producers.aborted]
    cells: dict[int, tuple[str, str]] = {}
    for batch in replica.log.read(max(start, replica.log_start_offset), end, 1 << 62):
        if batch.is_control:
            kind = CONTROL_ABORT if control_marker_type(batch) == ABORT_MARKER \
                else CONTROL_COMMIT
            cells[batch.base_offset] = (kind, "")
            continue
        for rec in batch.iter_records():
            if start <= rec.offset < end:
                kind = DATA
                if batch.is_transactional and any(
                        pid == batch.producer_id and first <= rec.offset <= last
                        for pid, first, last in aborted):
                    kind = ABORTED
                cells[rec.offset] = (kind, _key_text(rec.key))
    # Offsets inside the log with no record: compaction removed them (offsets stay).
    for offset in range(max(start, replica.log_start_offset), min(end, replica.log_end_offset)):
        cells.setdefault(offset, (GONE, ""))
    return cells


def log_state(cluster: Cluster, topic: str, partition: int, max_cells: int = 32) -> dict[str, Any]:
    """The partition as every replica holds it, cut to a window of `max_cells` offsets.

    Shape (all plain data)::

        {"topic": str, "partition": int, "time_ms": int, "leader": int | None,
         "window": [start, end],          # offsets drawn: start <= offset < end
         "log_start_offset", "high_watermark", "last_stable_offset",
         "log_end_offset": int | None,    # the leader's; None when there is no leader
         "replicas": {broker: {"running": bool, "leader": bool, "in_isr": bool,
                                "log_start_offset": int, "high_watermark": int,
                                "log_end_offset": int, "segments": [base offsets],
                                "cells": {offset: [kind, key text]}}}}

    The window holds the whole log when it fits, else the last `max_cells` offsets.
    """
    meta = cluster.controller.topics[topic].partitions[partition]
    leader = cluster.leader_replica(topic, partition)
    hosted = [(b, cluster.brokers[b].replicas.get((topic, partition))) for b in meta.replicas]
    hosted = [(b, r) for b, r in hosted if r is not None]
    end = max((r.log_end_offset for _, r in hosted), default=0)
    first = min((r.log_start_offset for _, r in hosted), default=0)
    start = first if end - first <= max_cells else end - max_cells
    replicas = {}
    for b, r in hosted:
        replicas[b] = {
            "running": cluster.brokers[b].running,
            "leader": leader is r,
            "in_isr": b in meta.isr,
            "log_start_offset": r.log_start_offset,
            "high_watermark": r.high_watermark,
            "log_end_offset": r.log_end_offset,
            "segments": [s.base_offset for s in r.log.segments],
            "cells": {o: list(v) for o, v in _replica_cells(r, start, end).items()},
        }
    return {
        "topic": topic, "partition": partition, "time_ms": cluster.now_ms,
        "leader": leader.broker_id if leader is not None else None,
        "window": [start, end],
        "log_start_offset": leader.log_start_offset if leader else None,
        "high_watermark": leader.high_watermark if leader else None,
        "last_stable_offset": leader.last_stable_offset if leader else None,
        "log_end_offset": leader.log_end_offset if leader else None,
        "replicas": replicas,
    }
