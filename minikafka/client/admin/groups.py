"""The admin client's group calls (kafka-python 3.x names) and the course's
kafka-consumer-groups.sh view of them (minikafka.core.group_command)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kafka import errors as Errors
from kafka.admin import OffsetSpec, OffsetTimestamp
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)
from kafka.structs import OffsetAndMetadata, TopicPartition

from ... import errors as kerrors
from ...core import api, errors, group_command
from ...core.group_command import PartitionLag
from ..security import raise_refusals, raise_refused, refused_error
from .base import raise_for
from .group_command import AdminGroupPort
from .operations import OperationsAdmin


class GroupsAdmin(OperationsAdmin):
    """Group calls, and kafka-consumer-groups' describe and reset over them."""

    # -- groups: kafka-python 3.x -----------------------------------------------------------------
    def list_groups(self, broker_ids: Iterable[int] | None = None,
                    states_filter: Iterable[Any] | None = None,
                    types_filter: Iterable[Any] | None = None) -> list[dict]:
        states = [getattr(s, "value", s) for s in states_filter] if states_filter else None
        types = [str(getattr(t, "value", t)) for t in types_filter] if types_filter else None
        brokers = list(broker_ids) if broker_ids is not None else [None]
        out = []
        for broker in brokers:
            for group_id, protocol_type, state, kind in api.list_groups(
                    self.cluster, self.caller, broker, states, types):
                out.append({"group_id": group_id, "protocol_type": protocol_type,
                            "group_state": state, "group_type": kind})
        return out

    def describe_groups(self, group_ids: Iterable[str], group_coordinator_id: int | None = None,
                        include_authorized_operations: bool = False) -> dict[str, dict]:
        return {group_id: {k: v for k, v in d.items() if k != "error_code"}
                for group_id, d in self._describe_groups(group_ids, group_coordinator_id).items()}

    def _describe_groups(self, group_ids: Iterable[str], group_coordinator_id: int | None
                         ) -> dict[str, dict]:
        """describe_groups' answer with each group's error code too (for the 2.x names)."""
        out = {}
        for group_id in group_ids:
            d = api.describe_group(self.cluster, self.caller, group_coordinator_id, group_id)
            if d.error == errors.GROUP_AUTHORIZATION_FAILED:
                out[group_id] = {
                    "group_id": group_id, "group_state": "", "protocol_type": "",
                    "protocol_data": "", "members": [], "authorized_operations": None,
                    "error": str(refused_error(d.error, group_id)), "error_code": d.error}
                continue
            members = []
            for m in d.members:
                members.append({
                    "member_id": m.member_id, "group_instance_id": m.group_instance_id,
                    "client_id": m.client_id, "client_host": m.client_host,
                    "member_metadata": self._decode(ConsumerProtocolSubscription, m.metadata,
                                                    d.protocol_type),
                    "member_assignment": self._decode(ConsumerProtocolAssignment, m.assignment,
                                                      d.protocol_type)})
            out[group_id] = {
                "group_id": group_id, "group_state": d.state, "protocol_type": d.protocol_type,
                "protocol_data": d.protocol_name, "members": members,
                "authorized_operations": None,
                "error": str(kerrors.for_code(d.error, d.error_message or ""))
                if d.error else None,
                "error_code": d.error}
        return out

    @staticmethod
    def _decode(cls: Any, data: bytes, protocol_type: str) -> Any:
        if not data or protocol_type != "consumer":
            return data
        return cls.decode(data)

    def list_group_offsets(self, group_specs: Any) -> dict[str, dict]:
        if isinstance(group_specs, str):
            group_specs = {group_specs: None}
        elif isinstance(group_specs, list):
            group_specs = dict.fromkeys(group_specs)
        out = {}
        for group_id, partitions in group_specs.items():
            tps = None if partitions is None else [(tp[0], tp[1]) for tp in partitions]
            code, found = api.offset_fetch(self.cluster, self.caller, None, group_id, tps)
            raise_refused(code if code == errors.GROUP_AUTHORIZATION_FAILED else 0, group_id)
            raise_for(code, f"OffsetFetchResponse failed for group '{group_id}'.")
            raise_refusals({t: c for (t, _), (_, _, _, c) in found.items() if c})
            out[group_id] = {TopicPartition(t, p): OffsetAndMetadata(offset, metadata, epoch)
                             for (t, p), (offset, epoch, metadata, _) in found.items()
                             if offset >= 0}
        return out

    def delete_groups(self, group_ids: Iterable[str],
                      group_coordinator_id: int | None = None) -> dict[str, str]:
        """{group_id: 'OK' or the error's class name}, as kafka-python returns it."""
        result = self._delete_groups(list(group_ids), group_coordinator_id)
        return {g: "OK" if code == errors.NONE else type(kerrors.for_code(code)).__name__
                for g, code in result.items()}

    def _delete_groups(self, group_ids: list[str], coordinator: int | None) -> dict[str, int]:
        """DeleteGroups: {group: error code}, refused groups (DELETE) left untouched."""
        return api.delete_groups(self.cluster, self.caller, coordinator, group_ids)

    def alter_group_offsets(self, group_id: str, offsets: Mapping[TopicPartition, Any],
                            group_coordinator_id: int | None = None) -> dict[TopicPartition, type]:
        """Commit offsets for a group as the admin client does (generation -1): only an
        empty group accepts them; members' groups answer UNKNOWN_MEMBER_ID."""
        if not offsets:
            return {}
        request = {}
        for tp, value in offsets.items():
            if isinstance(value, int):
                value = OffsetAndMetadata(value, "", -1)
            epoch = -1 if value.leader_epoch is None else value.leader_epoch
            request[(tp.topic, tp.partition)] = (value.offset, epoch, value.metadata or "")
        result = self._wait(lambda done: api.offset_commit(
            self.cluster, self.caller, group_coordinator_id, group_id, -1, "", None, request,
            done))
        return {TopicPartition(t, p): type(kerrors.for_code(code)) if code else Errors.NoError
                for (t, p), code in result.items()}

    def reset_group_offsets(self, group_id: str, offset_specs: Mapping[TopicPartition, Any],
                            group_coordinator_id: int | None = None) -> dict[TopicPartition, dict]:
        """kafka-python 3.x: OffsetSpec, OffsetTimestamp or an int per partition, clamped
        to [earliest, latest]; {tp: {'error': class, 'offset': int}}."""
        if not offset_specs:
            return {}
        current = self.list_group_offsets({group_id: list(offset_specs)})[group_id]
        to_reset = {}
        for tp, spec in offset_specs.items():
            earliest, latest = self._bounds(tp)
            if isinstance(spec, OffsetSpec | OffsetTimestamp):
                raw = self.list_partition_offsets({tp: spec})[tp].offset
            elif isinstance(spec, int):
                raw = spec
            else:
                raise TypeError(f"Unsupported reset target for {tp}: {spec!r} "
                                "(expected OffsetSpec, OffsetTimestamp, or int offset)")
            clamped = latest if raw < 0 or raw > latest else max(raw, earliest)
            old = current.get(tp)
            to_reset[tp] = old._replace(offset=clamped) if old else \
                OffsetAndMetadata(clamped, "", None)
        errors_by_tp = self.alter_group_offsets(group_id, to_reset, group_coordinator_id)
        return {tp: {"error": errors_by_tp[tp], "offset": to_reset[tp].offset} for tp in to_reset}

    def delete_group_offsets(self, group_id: str, partitions: Iterable[TopicPartition],
                             group_coordinator_id: int | None = None) -> dict[TopicPartition, type]:
        code, result = api.offset_delete(self.cluster, self.caller, group_coordinator_id,
                                         group_id, [(tp.topic, tp.partition) for tp in partitions])
        raise_for(code, f"OffsetDeleteRequest failed for group '{group_id}'.")
        return {TopicPartition(t, p): type(kerrors.for_code(c)) if c else Errors.NoError
                for (t, p), c in result.items()}

    def remove_group_members(self, group_id: str, members: Iterable[Any],
                             group_coordinator_id: int | None = None) -> dict[str, type]:
        """LeaveGroup on behalf of members (MemberToRemove: member_id or group_instance_id),
        the way to make a static member's partitions move without waiting for its session."""
        members = list(members)
        code, result = api.leave_group(
            self.cluster, self.caller, group_coordinator_id, group_id,
            [(m.member_id or "", m.group_instance_id) for m in members],
            "removed by the admin client")
        raise_refused(code if code == errors.GROUP_AUTHORIZATION_FAILED else 0, group_id)
        raise_for(code, f"LeaveGroupRequest failed for group '{group_id}'.")
        return {(m.member_id or m.group_instance_id): type(kerrors.for_code(c)) if c
                else Errors.NoError for m, c in zip(members, result, strict=True)}

    # -- kafka-consumer-groups.sh (minikafka.core.group_command) ----------------------------------
    def _group_command(self) -> AdminGroupPort:
        self._groups  # noqa: B018 - a closed client raises IllegalStateError
        return AdminGroupPort(self)

    def describe_consumer_group(self, group_id: str) -> list[PartitionLag]:
        """``kafka-consumer-groups --describe --group G``: each partition the group has
        committed or is assigned, with its committed offset, log end offset and lag.
        GroupIdNotFoundError for a group that does not exist."""
        return self._translated(lambda: group_command.describe(self._group_command(),
                                                               group_id).rows)

    def lag(self, group_id: str) -> dict[TopicPartition, int | None]:
        """Lag per partition: log end offset (high watermark) minus the committed offset."""
        return {TopicPartition(r.topic, r.partition): r.lag
                for r in self.describe_consumer_group(group_id)}

    def total_lag(self, group_id: str) -> int:
        """The group's lag: the sum over its partitions (those it never committed count 0,
        as kafka-consumer-groups leaves them blank)."""
        return sum(v for v in self.lag(group_id).values() if v is not None)

    def reset_offsets(self, group_id: str, topics: Iterable[Any] | None = None, *,
                      to_earliest: bool = False, to_latest: bool = False,
                      to_offset: int | None = None, shift_by: int | None = None,
                      to_datetime: Any = None, by_duration: Any = None,
                      to_current: bool = False, execute: bool = False
                      ) -> dict[TopicPartition, int]:
        """``kafka-consumer-groups --reset-offsets``: exactly one scenario; a dry run unless
        execute=True. ``topics``: names, "topic:0,2" strings or TopicPartitions; None
        means --all-topics (every partition the group has committed). --by-duration counts
        back from the cluster's simulated now.

        Refused with Kafka's NON_EMPTY_GROUP while the group has members, with the tool's
        message. Returns the new offset per partition (what the tool prints)."""
        scenario = group_command.Scenario(to_earliest, to_latest, to_current, to_offset,
                                          shift_by, to_datetime, by_duration)
        return self._translated(lambda: group_command.reset_offsets(
            self._group_command(), group_id, topics, scenario, now_ms=self.cluster.now_ms,
            execute=execute))

    @staticmethod
    def _translated(call: Callable[[], Any]) -> Any:
        """The tool's refusals as kafka-python's error classes."""
        try:
            return call()
        except group_command.GroupCommandError as exc:
            raise kerrors.translate(exc) from None
