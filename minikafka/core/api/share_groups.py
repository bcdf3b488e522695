"""The share-group APIs a share consumer and the admin send to the group's coordinator
(KIP-932): ShareGroupHeartbeat (key 76), ShareGroupDescribe (key 77),
DescribeShareGroupOffsets (key 90), AlterShareGroupOffsets (key 91) and
DeleteShareGroupOffsets (key 92), each with the authorization Kafka's KafkaApis checks
before the coordinator sees the request, so the in-process share consumer and the wire
handlers get the same answers.

The share-group coordinator (core.share.coordinator) keeps its own checks: the
coordinator itself (NOT_COORDINATOR), a group id a consumer group holds
(GROUP_ID_NOT_FOUND), the member and its epoch, and NON_EMPTY_GROUP for offsets changed
while members consume. ShareFetch and ShareAcknowledge are in core.api.share.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from .. import errors
from ..acl import AclOperation
from ..share.coordinator import HeartbeatResult, ShareGroupDescription
from . import authz
from .share import DescribedShareOffset, share_group_offsets

if TYPE_CHECKING:
    from .authz import Caller
    from .port import ClusterPort

TP = tuple[str, int]
# (the group's error code, its message, the answers of the partitions or topics asked)
Outcome = tuple[int, str | None, dict]


def share_group_heartbeat(cluster: ClusterPort, caller: Caller, broker_id: int | None,
                          group_id: str, member_id: str, member_epoch: int,
                          subscribed_topics: Iterable[str] | None = None,
                          rack_id: str | None = None, client_id: str = "",
                          client_host: str = "") -> HeartbeatResult:
    """ShareGroupHeartbeat: READ on the group and DESCRIBE on every subscribed topic
    (GROUP_/TOPIC_AUTHORIZATION_FAILED), then the coordinator's answer: join (epoch 0),
    stay (the member's epoch), leave (-1). `subscribed_topics` None keeps the
    subscription the coordinator has."""
    topics = None if subscribed_topics is None else list(subscribed_topics)
    refused = authz.group_heartbeat(cluster, caller, group_id, topics)
    if refused:
        return HeartbeatResult(refused)
    return cluster.share_groups.heartbeat(broker_id, group_id, member_id, member_epoch,
                                          topics, rack_id, client_id, client_host)


def share_group_describe(cluster: ClusterPort, caller: Caller, broker_id: int | None,
                         group_id: str) -> ShareGroupDescription:
    """ShareGroupDescribe, one group: DESCRIBE on it (else GROUP_AUTHORIZATION_FAILED and
    nothing else), then the coordinator's description (GROUP_ID_NOT_FOUND for none)."""
    refused = authz.describe_group(cluster, caller, group_id)
    if refused:
        return ShareGroupDescription(refused, group_id)
    return cluster.share_groups.describe(broker_id, group_id)


def describe_share_group_offsets(cluster: ClusterPort, caller: Caller, broker_id: int | None,
                                 group_id: str, topics: Mapping[str, Iterable[int]] | None
                                 ) -> tuple[int, str | None, list[DescribedShareOffset]]:
    """DescribeShareGroupOffsets, one group: (its error, message, its share-partitions).
    DESCRIBE on the group (else GROUP_AUTHORIZATION_FAILED), the coordinator's check, then
    DESCRIBE on each topic: a topic asked for answers TOPIC_AUTHORIZATION_FAILED per
    partition, and all topics (`topics` None) leaves it out."""
    refused_group = authz.offset_fetch(cluster, caller, group_id)
    if refused_group:
        return refused_group, None, []
    try:
        cluster.share_groups.check_coordinator(broker_id, group_id)
    except errors.KafkaCoreError as exc:
        return exc.code, exc.message or None, []
    asked = None if topics is None else {t: list(ps) for t, ps in topics.items()}
    refused = authz.describe_topics(cluster, caller, asked or ())
    wanted = None if asked is None else {t: ps for t, ps in asked.items() if t not in refused}
    found = share_group_offsets(cluster, group_id, wanted)
    if asked is None and cluster.authorizer is not None:
        hidden = authz.describe_topics(cluster, caller, {d.topic for d in found})
        found = [d for d in found if d.topic not in hidden]
    found += [DescribedShareOffset(t, p, -1, -1, -1, refused[t])
              for t, ps in (asked or {}).items() if t in refused for p in ps]
    return errors.NONE, None, found


def alter_share_group_offsets(cluster: ClusterPort, caller: Caller, broker_id: int | None,
                              group_id: str, offsets: Mapping[TP, int]) -> Outcome:
    """AlterShareGroupOffsets (kafka-share-groups.sh --reset-offsets): READ on the group
    (else the whole request is refused), READ on each topic (else its partitions answer
    TOPIC_AUTHORIZATION_FAILED and keep their state), then the coordinator: (its error,
    message, {partition: code}), the refused partitions listed first."""
    code, refused = authz.share_group_offsets(cluster, caller, group_id,
                                              {t for t, _ in offsets})
    if code:
        return code, None, {}
    code, message, results = cluster.share_groups.alter_offsets(
        broker_id, group_id, {tp: o for tp, o in offsets.items() if tp[0] not in refused})
    return code, message, {**{tp: refused[tp[0]] for tp in offsets if tp[0] in refused},
                           **results}


def delete_share_group_offsets(cluster: ClusterPort, caller: Caller, broker_id: int | None,
                               group_id: str, topics: Iterable[str]) -> Outcome:
    """DeleteShareGroupOffsets (kafka-share-groups.sh --delete-offsets): DELETE on the
    group (else the whole request is refused), READ on each topic (else it answers
    TOPIC_AUTHORIZATION_FAILED and keeps its state), then the coordinator: (its error,
    message, {topic: code}), the refused topics listed last."""
    names = list(topics)
    code, refused = authz.share_group_offsets(cluster, caller, group_id, names,
                                              AclOperation.DELETE)
    if code:
        return code, None, {}
    code, message, results = cluster.share_groups.delete_offsets(
        broker_id, group_id, [t for t in names if t not in refused])
    return code, message, {**results, **refused}
