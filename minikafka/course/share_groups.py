"""Lesson 18's helpers: a share partition's in-flight records as plain data, for the
picture (``minikafka.viz.share_partition_view``) and the lesson's tables.

    state = share_partition_state(cluster, "workers", "jobs", names={"w1": w1, "w2": w2})

gives::

    {"group", "topic", "partition", "time_ms",
     "start_offset": SPSO, "next_offset": the first offset never handed out,
     "log_end_offset": the leader's high watermark (what can be handed out),
     "delivery_count_limit", "lock_duration_ms",
     "records": [{"offset", "state": "AVAILABLE" | "ACQUIRED" | "ACKNOWLEDGED" | "ARCHIVED",
                  "delivery_count", "member": "w1" | None, "lock_left_ms": ms | None}]}

Offsets below the start offset are done; offsets from ``next_offset`` to the log end
were never delivered. Member ids are random; ``names`` maps them back to the lesson's
names (a consumer's ``member_id``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..cluster import Cluster

__all__ = ["share_partition_state", "share_table_rows"]


def share_partition_state(cluster: Cluster, group_id: str, topic: str, partition: int = 0,
                          names: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What the share group's share-partition holds now, as plain data."""
    by_id = {c.member_id: name for name, c in (names or {}).items()}
    settings = cluster.share_groups.settings(group_id)
    sp = cluster.share_groups.partitions.get((group_id, topic, partition))
    hw = cluster.leader_replica(topic, partition).high_watermark
    if sp is None:  # no member has fetched yet
        return {"group": group_id, "topic": topic, "partition": partition,
                "time_ms": cluster.now_ms, "start_offset": None, "next_offset": None,
                "log_end_offset": hw, "delivery_count_limit": settings.delivery_count_limit,
                "lock_duration_ms": settings.record_lock_duration_ms, "records": []}
    locks = {a: t.when for a, t in sp._locks.items() if not t.cancelled}
    records = []
    for offset, rec in sp.in_flight():
        held = rec.state.name == "ACQUIRED" and rec.acquisition in locks
        records.append({"offset": offset, "state": rec.state.name,
                        "delivery_count": rec.delivery_count,
                        "member": by_id.get(rec.member_id, rec.member_id or None)
                        if rec.state.name == "ACQUIRED" else None,
                        "lock_left_ms": locks[rec.acquisition] - cluster.now_ms if held
                        else None})
    return {"group": group_id, "topic": topic, "partition": partition,
            "time_ms": cluster.now_ms, "start_offset": sp.start_offset,
            "next_offset": sp.next_offset, "log_end_offset": hw,
            "delivery_count_limit": settings.delivery_count_limit,
            "lock_duration_ms": settings.record_lock_duration_ms, "records": records}


def share_table_rows(state: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per offset from the start offset to the log end: in flight or not yet
    delivered."""
    rows = [{"offset": r["offset"], "state": r["state"], "delivery count": r["delivery_count"],
             "held by": r["member"],
             "lock left": None if r["lock_left_ms"] is None else f"{r['lock_left_ms'] / 1000:g} s"}
            for r in state["records"]]
    first = state["next_offset"] if state["next_offset"] is not None else 0
    rows += [{"offset": o, "state": "not delivered yet", "delivery count": 0, "held by": None,
              "lock left": None} for o in range(first, state["log_end_offset"])]
    return rows

