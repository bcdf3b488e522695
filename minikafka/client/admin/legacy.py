"""kafka-python 2.x's names for the group calls, still met in tutorials."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable, Mapping
from typing import Any

from kafka.structs import OffsetAndMetadata, TopicPartition

from ... import errors as kerrors
from ...core import api
from .groups import GroupsAdmin

# kafka-python 2.x return types of describe_consumer_groups.
GroupInformation = namedtuple(
    "GroupInformation",
    ["error_code", "group", "state", "protocol_type", "protocol", "members",
     "authorized_operations"])
MemberInformation = namedtuple(
    "MemberInformation",
    ["member_id", "client_id", "client_host", "member_metadata", "member_assignment"])


class KafkaPython2Names(GroupsAdmin):
    """The kafka-python 2.x names of the group calls."""

    # -- groups: kafka-python 2.x names -----------------------------------------------------------
    def list_consumer_groups(self, broker_ids: Iterable[int] | None = None) -> list[tuple[str, str]]:
        # kafka-python 2.x asks ListGroups before v5, which lists no share groups.
        return [(g["group_id"], g["protocol_type"]) for g in self.list_groups(broker_ids)
                if g["group_type"] != api.SHARE_GROUP_TYPE]

    def describe_consumer_groups(self, group_ids: Iterable[str],
                                 group_coordinator_id: int | None = None,
                                 include_authorized_operations: bool = False
                                 ) -> list[GroupInformation]:
        out = []
        for group_id, d in self._describe_groups(group_ids, group_coordinator_id).items():
            members = [MemberInformation(m["member_id"], m["client_id"], m["client_host"],
                                         m["member_metadata"], m["member_assignment"])
                       for m in d["members"]]
            out.append(GroupInformation(d["error_code"], group_id, d["group_state"],
                                        d["protocol_type"],
                                        d["protocol_data"], members, None))
        return out

    def list_consumer_group_offsets(self, group_id: str, group_coordinator_id: int | None = None,
                                    partitions: Iterable[TopicPartition] | None = None
                                    ) -> dict[TopicPartition, OffsetAndMetadata]:
        spec = None if partitions is None else list(partitions)
        return self.list_group_offsets({group_id: spec})[group_id]

    def delete_consumer_groups(self, group_ids: Iterable[str],
                               group_coordinator_id: int | None = None) -> list[tuple[str, Any]]:
        result = self._delete_groups(list(group_ids), group_coordinator_id)
        return [(g, type(kerrors.for_code(code))) for g, code in result.items()]

    def alter_consumer_group_offsets(self, group_id: str, offsets: Mapping[TopicPartition, Any],
                                     group_coordinator_id: int | None = None
                                     ) -> dict[TopicPartition, type]:
        return self.alter_group_offsets(group_id, offsets, group_coordinator_id)
