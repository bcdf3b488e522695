"""What admins see: ListGroups, DescribeGroups, DeleteGroups, and the plain-data snapshot
the pictures and tests read."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import errors
from ..offsets import (
    group_metadata_key,
    offset_commit_key,
)
from .classic import (
    DEAD,
    DELETE,
    EMPTY,
    STABLE,
    Group,
    GroupDescription,
    MemberDescription,
    describe_assignment,
)
from .consumer import ConsumerGroup


class GroupViews:
    """Listing, describing and deleting groups (a part of GroupCoordinator)."""

    def list_groups(self, broker_id: int | None = None, states: Iterable[str] | None = None,
                    types: Iterable[str] | None = None) -> list[tuple[str, str, str, str]]:
        """ListGroups: [(group_id, protocol_type, state, group type)] of groups whose
        coordinator is broker_id (every broker when None); type "classic" or "consumer"."""
        self._load_all()
        wanted = {s.lower() for s in states} if states else None
        kinds = {t.lower() for t in types} if types else None
        out = []
        for group_id, group in sorted(self.groups.items()):
            host = self._loaded.get(group.partition)
            if host is None or host != self._host(group.partition):
                continue
            if broker_id is not None and host[0] != broker_id:
                continue
            if wanted is not None and group.state.lower() not in wanted:
                continue
            kind = "consumer" if isinstance(group, ConsumerGroup) else "classic"
            if kinds is not None and kind not in kinds:
                continue
            out.append((group_id, group.protocol_type or "", group.state, kind))
        return out

    def describe_group(self, broker_id: int | None, group_id: str) -> GroupDescription:
        """DescribeGroups (v6, KIP-1043): state, protocol and members; an unknown group is
        Dead with GROUP_ID_NOT_FOUND, and so is a consumer group (KIP-848), which
        DescribeGroups does not describe. Before v6 the wire answers both without an error."""
        try:
            group = self.group_at(broker_id, group_id)
        except errors.KafkaCoreError as exc:
            return GroupDescription(exc.code, group_id, "", "", "")
        if group is None or group.state == DEAD:
            return GroupDescription(errors.GROUP_ID_NOT_FOUND, group_id, DEAD, "", "",
                                    error_message=f"Group {group_id} not found.")
        if isinstance(group, ConsumerGroup):
            return GroupDescription(errors.GROUP_ID_NOT_FOUND, group_id, DEAD, "", "",
                                    error_message=f"Group {group_id} is not a classic group.")
        show_assignment = group.state == STABLE
        members = tuple(
            MemberDescription(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                              m.metadata(group.protocol_name),
                              m.assignment if show_assignment else b"")
            for m in group.members.values())
        return GroupDescription(errors.NONE, group_id, group.state, group.protocol_type or "",
                                group.protocol_name or "", members)

    def delete_groups(self, broker_id: int | None, group_ids: Iterable[str]) -> dict[str, int]:
        """DeleteGroups: only empty groups; their offsets become tombstones."""
        out: dict[str, int] = {}
        for group_id in group_ids:
            try:
                group = self.group_at(broker_id, group_id)
            except errors.KafkaCoreError as exc:
                out[group_id] = exc.code
                continue
            if group is None or group.state == DEAD:
                out[group_id] = errors.GROUP_ID_NOT_FOUND
            elif group.state != EMPTY:
                out[group_id] = errors.NON_EMPTY_GROUP
            else:
                self._delete(group, "DeleteGroups")
                out[group_id] = errors.NONE
        return out

    def _delete(self, group: Group | ConsumerGroup, reason: str) -> None:
        records: list[tuple[bytes, bytes | None]] = [
            (offset_commit_key(group.group_id, t, p), None) for t, p in sorted(group.offsets)]
        if isinstance(group, ConsumerGroup):
            records.extend(self.consumer.tombstones(group))
        else:
            records.append((group_metadata_key(group.group_id), None))
        self.append_records(group.partition, records)
        group.offsets.clear()
        if isinstance(group, ConsumerGroup):
            self.consumer.cancel_timers(group)
            group.dead = True
            self.journal.record(self.clock.now_ms, "group.state", group=group.group_id,
                                previous=EMPTY, state=DEAD, trigger=DELETE, reason=reason,
                                type="consumer")
        else:
            self._fire(group, DELETE, self.clock.now_ms, reason)
        del self.groups[group.group_id]


    # -- views ----------------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """Plain data of every loaded group, for pictures and tests."""
        out = {}
        for group_id, g in sorted(self.groups.items()):
            if isinstance(g, ConsumerGroup):
                out[group_id] = self._consumer_snapshot(g)
                continue
            out[group_id] = {
                "type": "classic",
                "state": g.state, "generation": g.generation_id, "protocol": g.protocol_name,
                "leader": g.leader_id, "partition": g.partition,
                "coordinator": (self._loaded.get(g.partition) or (None,))[0],
                "members": {m.member_id: {"instance": m.group_instance_id,
                                          "client_id": m.client_id,
                                          "assignment": describe_assignment(m.assignment)}
                            for m in g.members.values()},
                "offsets": {f"{t}-{p}": c.offset for (t, p), c in sorted(g.offsets.items())},
            }
        return out

    def _consumer_snapshot(self, g: ConsumerGroup) -> dict[str, Any]:
        names = self.consumer._names
        return {
            "type": "consumer", "state": g.state, "generation": g.group_epoch,
            "group_epoch": g.group_epoch, "assignment_epoch": g.assignment_epoch,
            "protocol": g.preferred_assignor() or self.consumer.assignors[0],
            "leader": None, "partition": g.partition,
            "coordinator": (self._loaded.get(g.partition) or (None,))[0],
            "members": {m.member_id: {"instance": m.instance_id, "client_id": m.client_id,
                                      "epoch": m.member_epoch, "member_state": m.state.name,
                                      "protocol": "classic" if m.classic else "consumer",
                                      "assignment": names(m.assigned),
                                      "revoking": names(m.pending_revocation),
                                      "target": names(g.target.get(m.member_id, {}))}
                        for m in g.members.values()},
            "offsets": {f"{t}-{p}": c.offset for (t, p), c in sorted(g.offsets.items())},
        }


