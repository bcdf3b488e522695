"""The group coordinator, one job per module:

- ``coordinator``: the facade (``GroupCoordinator``): placement on __consumer_offsets
  leaders, dispatch of both protocols, the cluster reached through ``port.GroupPort``;
- ``classic``: the classic protocol's state machine (TRANSITIONS), groups and members;
- ``membership``: JoinGroup, SyncGroup, Heartbeat, LeaveGroup and rebalances;
- ``consumer`` and ``consumer_protocol``: KIP-848 consumer groups (ConsumerGroupHeartbeat,
  ConsumerGroupDescribe), ``assignors``: their server-side assignors;
- ``mixed``: classic members inside consumer groups, online upgrade and downgrade
  (group.consumer.migration.policy);
- ``offsets_store``: OffsetCommit/Fetch/Delete, transactional offsets, retention;
- ``persistence`` and ``records``: writing and replaying __consumer_offsets;
- ``views``: ListGroups, DescribeGroups, DeleteGroups and the snapshot.
"""
from __future__ import annotations

import importlib
from typing import Any

# Exported names and their modules, imported on first use: core.offsets (imported by
# these modules) reads ``records`` from this package, so nothing may load eagerly here.
_EXPORTS = {
    **dict.fromkeys(("COMPLETING_REBALANCE", "DEAD", "EMPTY", "PREPARING_REBALANCE", "STABLE",
                     "TRANSITIONS", "CommittedOffset", "Group", "GroupDescription",
                     "JoinResult", "Member", "SyncResult"), "classic"),
    "ConsumerGroup": "consumer",
    **dict.fromkeys(("ConsumerGroupView", "ConsumerHeartbeat", "HeartbeatAnswer"),
                    "consumer_protocol"),
    "GroupCoordinator": "coordinator",
    "GroupPort": "port",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
