"""The in-process admin as kafka-consumer-groups' port (minikafka.core.group_command):
describe and reset through the admin client's own calls, so the lesson's
``admin.reset_offsets()`` and the ``consumer-groups`` tool share one implementation."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment
from kafka.structs import OffsetAndMetadata, OffsetAndTimestamp, TopicPartition

from ... import errors as kerrors
from ...core import api
from ...core import errors as core_errors
from ...core.api.authz import Caller
from ...core.group_command import GroupView, Member
from ..port import AdminHost
from ..security import refused_error


class GroupAdmin(Protocol):
    """The admin client's calls the port makes (minikafka.client.admin.KafkaAdminClient)."""

    cluster: AdminHost
    caller: Caller

    def list_group_offsets(self, group_specs: Any) -> dict[str, dict]: ...

    def list_partition_offsets(self, topic_partition_specs: Mapping[TopicPartition, Any]
                               ) -> dict[TopicPartition, OffsetAndTimestamp]: ...

    def describe_topics(self, topics: Iterable[str] | None = None) -> list[dict]: ...

    def alter_group_offsets(self, group_id: str, offsets: Mapping[TopicPartition, Any],
                            group_coordinator_id: int | None = None
                            ) -> dict[TopicPartition, type]: ...


class AdminGroupPort:
    """GroupCommandPort over an in-process KafkaAdminClient: every call goes through the
    core.api entry the wire handler of the same request calls, as the admin's principal
    (DescribeGroups, ConsumerGroupDescribe, OffsetFetch, ListOffsets, Metadata,
    OffsetCommit), so the tool is refused in process where it is refused on the wire."""

    def __init__(self, admin: GroupAdmin) -> None:
        self.admin = admin

    def topic_partition(self, topic: str, partition: int) -> TopicPartition:
        return TopicPartition(topic, partition)

    def consumer_group_describe(self, group_id: str) -> GroupView | None:
        cluster = self.admin.cluster
        view = api.consumer_group_describe(cluster, self.admin.caller, None, group_id)
        if view.error == core_errors.GROUP_ID_NOT_FOUND:
            return None
        if view.error:
            raise _refusal(view.error, group_id, view.error_message)
        topic_name = cluster.groups.consumer.topic_name

        def partitions(rows: Any) -> tuple[TopicPartition, ...]:
            return tuple(sorted(TopicPartition(topic_name(t), p) for t, ps in rows for p in ps))

        return GroupView(group_id, view.state, tuple(
            Member(m.member_id, m.client_host, m.client_id, partitions(m.assignment),
                   m.member_epoch, partitions(m.target_assignment)) for m in view.members),
            "consumer", view.assignor_name, view.assignment_epoch)

    def classic_group_describe(self, group_id: str) -> GroupView | None:
        d = api.describe_group(self.admin.cluster, self.admin.caller, None, group_id)
        if d.error == core_errors.GROUP_ID_NOT_FOUND or (not d.error and d.state == "Dead"):
            return None
        if d.error:
            raise _refusal(d.error, group_id, d.error_message)
        members = tuple(
            Member(m.member_id, m.client_host, m.client_id,
                   tuple(sorted(ConsumerProtocolAssignment.decode(m.assignment).partitions()))
                   if d.protocol_type == "consumer" and m.assignment else ())
            for m in d.members)
        return GroupView(group_id, d.state, members, "classic", d.protocol_name)

    def committed_offsets(self, group_id: str) -> dict[TopicPartition, int]:
        return {tp: o.offset for tp, o in
                self.admin.list_group_offsets(group_id)[group_id].items()}

    def list_offsets(self, partitions: Sequence[TopicPartition], spec: int
                     ) -> dict[TopicPartition, int]:
        found = self.admin.list_partition_offsets(dict.fromkeys(partitions, spec))
        return {tp: o.offset for tp, o in found.items()}

    def partitions_of(self, topic: str) -> list[int] | None:
        [described] = self.admin.describe_topics([topic])
        return _partitions_of(described)

    def alter_offsets(self, group_id: str, offsets: Mapping[TopicPartition, int]
                      ) -> dict[TopicPartition, Any]:
        return self.admin.alter_group_offsets(
            group_id, {tp: OffsetAndMetadata(o, "", None) for tp, o in offsets.items()})


def _refusal(code: int, group_id: str, message: str | None) -> Exception:
    """A describe's error as kafka-python raises it (a refusal naming the group)."""
    if code == core_errors.GROUP_AUTHORIZATION_FAILED:
        return refused_error(code, group_id)
    return kerrors.for_code(code, message or "")


def _partitions_of(described: dict) -> list[int] | None:
    """A Metadata answer's partition numbers (kafka-python's describe_topics dict); None
    for a topic that does not exist; a refusal (TOPIC_AUTHORIZATION_FAILED) raised."""
    code = described["error_code"]
    if code == core_errors.UNKNOWN_TOPIC_OR_PARTITION:
        return None
    if code:
        raise kerrors.for_code(code, f"Topic '{described['name']}': "
                                     f"{type(kerrors.for_code(code)).__name__}")
    return [p["partition_index"] for p in described["partitions"]]
