"""The in-process admin as kafka-consumer-groups' port (minikafka.core.group_command):
describe and reset through the admin client's own calls, so the lesson's
``admin.reset_offsets()`` and the ``consumer-groups`` tool share one implementation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment
from kafka.structs import OffsetAndMetadata, TopicPartition

from ... import errors as kerrors
from ...core import api
from ...core import errors as core_errors
from ...core.group_command import GroupView, Member, not_found
from ..port import AdminHost


class GroupAdmin(Protocol):
    """The admin client's calls the port makes (minikafka.client.admin.KafkaAdminClient)."""

    cluster: AdminHost

    def list_group_offsets(self, group_specs: Any) -> dict[str, dict]: ...

    def alter_group_offsets(self, group_id: str, offsets: Mapping[TopicPartition, Any],
                            group_coordinator_id: int | None = None
                            ) -> dict[TopicPartition, type]: ...


class AdminGroupPort:
    """GroupCommandPort over an in-process KafkaAdminClient."""

    def __init__(self, admin: GroupAdmin) -> None:
        self.admin = admin

    def topic_partition(self, topic: str, partition: int) -> TopicPartition:
        return TopicPartition(topic, partition)

    def describe_group(self, group_id: str) -> GroupView:
        d = self.admin.cluster.groups.describe_group(None, group_id)
        if d.error == core_errors.GROUP_ID_NOT_FOUND:
            raise not_found(group_id)
        if d.error:
            raise kerrors.for_code(d.error, d.error_message or "")
        members = tuple(
            Member(m.member_id, m.client_host, m.client_id,
                   tuple(sorted(ConsumerProtocolAssignment.decode(m.assignment).partitions()))
                   if d.protocol_type == "consumer" and m.assignment else ())
            for m in d.members)
        return GroupView(group_id, d.state, members)

    def group_state(self, group_id: str) -> str:
        return self.admin.cluster.groups.describe_group(None, group_id).state

    def committed_offsets(self, group_id: str) -> dict[TopicPartition, int]:
        return {tp: o.offset for tp, o in
                self.admin.list_group_offsets(group_id)[group_id].items()}

    def list_offsets(self, partitions: Sequence[TopicPartition], spec: int
                     ) -> dict[TopicPartition, int]:
        out = {}
        for tp in partitions:
            result, = api.list_offsets_of(self.admin.cluster, tp.topic, tp.partition, spec)
            if result.error_code:
                err = type(kerrors.for_code(result.error_code))
                raise err(f"ListOffsetsRequest failed for {tp}: {err.__name__}")
            out[tp] = result.offset
        return out

    def partitions_of(self, topic: str) -> list[int] | None:
        meta = self.admin.cluster.controller.topics.get(topic)
        return None if meta is None else list(range(len(meta.partitions)))

    def alter_offsets(self, group_id: str, offsets: Mapping[TopicPartition, int]
                      ) -> dict[TopicPartition, Any]:
        return self.admin.alter_group_offsets(
            group_id, {tp: OffsetAndMetadata(o, "", None) for tp, o in offsets.items()})
