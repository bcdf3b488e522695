"""The group APIs a member and the admin client send to the group coordinator:
JoinGroup (key 11), SyncGroup (key 14), Heartbeat (key 12), LeaveGroup (key 13),
OffsetCommit (key 8), OffsetFetch (key 9), DescribeGroups (key 15), ListGroups (key 16),
DeleteGroups (key 42), OffsetDelete (key 47), KIP-848's ConsumerGroupHeartbeat (key 68)
and ConsumerGroupDescribe (key 69), each with the authorization Kafka's KafkaApis checks
before the coordinator sees the request, so the in-process consumer and admin client
(through the simulated network, at the coordinator) and the wire handlers get the same
answers.

The coordinator (core.groups) keeps its own checks: the coordinator itself
(NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS), the member and generation, and
OffsetCommit's UNKNOWN_TOPIC_OR_PARTITION for a partition the metadata lacks.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from .. import errors
from ..groups.classic import GroupDescription, JoinResult, SyncResult
from ..groups.consumer_protocol import ConsumerGroupView, ConsumerHeartbeat, HeartbeatAnswer
from . import authz

if TYPE_CHECKING:
    from ..groups.classic import Protocols
    from .authz import Caller
    from .port import ClusterPort

TP = tuple[str, int]
# A partition's commit: (offset, leader epoch or -1, metadata).
Commit = tuple[int, int, str]
DEFAULT_LEAVE_REASON = "the consumer is leaving the group"
SHARE = "share"  # the group type (and protocol type) of KIP-932's share groups
# OffsetFetch's answer for a partition: (offset, leader epoch, metadata, error code);
# (-1, -1, "", code) where nothing is committed or the partition failed.
Fetched = tuple[int, int, str, int]
# ListGroups' row: (group id, protocol type, state, group type).
ListedGroup = tuple[str, str, str, str]


def join_group(cluster: ClusterPort, caller: Caller, broker_id: int | None, group_id: str,
               member_id: str, instance_id: str | None, client_id: str, client_host: str,
               protocol_type: str, protocols: Protocols, session_timeout_ms: int,
               rebalance_timeout_ms: int, respond: Callable[[JoinResult], None],
               reason: str = "") -> None:
    """JoinGroup: READ on the group, then the coordinator, which answers at the
    rebalance barrier."""
    refused = authz.group(cluster, caller, group_id)
    if refused:
        respond(JoinResult(refused, ""))
        return
    cluster.groups.join_group(broker_id, group_id, member_id, instance_id, client_id,
                              client_host, protocol_type, protocols, session_timeout_ms,
                              rebalance_timeout_ms, respond, reason)


def sync_group(cluster: ClusterPort, caller: Caller, broker_id: int | None, group_id: str,
               member_id: str, instance_id: str | None, generation_id: int,
               protocol_type: str | None, protocol_name: str | None,
               assignments: Mapping[str, bytes], respond: Callable[[SyncResult], None]
               ) -> None:
    """SyncGroup: READ on the group, then the coordinator, which answers a follower once
    the leader's assignment is written."""
    refused = authz.group(cluster, caller, group_id)
    if refused:
        respond(SyncResult(refused))
        return
    cluster.groups.sync_group(broker_id, group_id, member_id, instance_id, generation_id,
                              protocol_type, protocol_name, assignments, respond)


def heartbeat(cluster: ClusterPort, caller: Caller, broker_id: int | None, group_id: str,
              member_id: str, instance_id: str | None, generation_id: int) -> int:
    """Heartbeat: READ on the group, then the coordinator's answer (REBALANCE_IN_PROGRESS
    tells the member to rejoin)."""
    refused = authz.group(cluster, caller, group_id)
    if refused:
        return refused
    return cluster.groups.heartbeat(broker_id, group_id, member_id, instance_id,
                                    generation_id)


def leave_group(cluster: ClusterPort, caller: Caller, broker_id: int | None, group_id: str,
                members: Iterable[tuple[str, str | None]],
                reason: str = DEFAULT_LEAVE_REASON) -> tuple[int, list[int]]:
    """LeaveGroup for members by (member id, group instance id): READ on the group, then
    (the coordinator's error, one code per member)."""
    refused = authz.group(cluster, caller, group_id)
    if refused:
        return refused, []
    return cluster.groups.leave_group(broker_id, group_id, list(members), reason)


def offset_commit(cluster: ClusterPort, caller: Caller, broker_id: int | None, group_id: str,
                  generation_id: int, member_id: str, instance_id: str | None,
                  offsets: Mapping[TP, Commit], respond: Callable[[dict[TP, int]], None],
                  version: int | None = None) -> None:
    """OffsetCommit: READ on the group (else every partition fails) and on each topic;
    the partitions allowed go to the coordinator, which answers once __consumer_offsets
    holds them. `respond` gets a code for every partition asked; `version` is the wire
    request's (a KIP-848 member needs v9+), None in process."""
    refusals = authz.offset_commit(cluster, caller, group_id, {t for t, _ in offsets})
    refused = {tp: refusals[tp[0]] for tp in offsets if refusals.get(tp[0])}
    allowed = {tp: v for tp, v in offsets.items() if tp not in refused}
    if not allowed:
        respond(refused)
        return
    cluster.groups.offset_commit(broker_id, group_id, generation_id, member_id, instance_id,
                                 allowed, lambda codes: respond({**codes, **refused}),
                                 version)


def commit_timed_out(offsets: Iterable[TP]) -> dict[TP, int]:
    """What a commit the coordinator did not answer in time gets."""
    return dict.fromkeys(offsets, errors.REQUEST_TIMED_OUT)


def describe_group(cluster: ClusterPort, caller: Caller, broker_id: int | None,
                   group_id: str) -> GroupDescription:
    """DescribeGroups, one group: DESCRIBE on it (else GROUP_AUTHORIZATION_FAILED and
    nothing else), then the coordinator's description."""
    refused = authz.describe_group(cluster, caller, group_id)
    if refused:
        return GroupDescription(refused, group_id, "", "", "")
    return cluster.groups.describe_group(broker_id, group_id)


def list_groups(cluster: ClusterPort, caller: Caller, broker_id: int | None,
                states: Iterable[str] | None = None, types: Iterable[str] | None = None,
                with_share: bool = True) -> list[ListedGroup]:
    """ListGroups: the groups `broker_id` coordinates (every broker's when None), classic
    and consumer groups, then share groups unless `with_share` is off (a client before
    ListGroups v5 knows no group types) or `types` leaves them out; filtered by state
    and type, and without the groups the caller may not DESCRIBE."""
    states = list(states or ()) or None
    types = list(types or ()) or None
    listed = cluster.groups.list_groups(broker_id, states, types)
    if with_share and (types is None or SHARE in {t.lower() for t in types}):
        listed += [(g, SHARE, state, SHARE)
                   for g, state in cluster.share_groups.list_groups(broker_id, states)]
    hidden = authz.hidden_groups(cluster, caller, [g[0] for g in listed])
    return [g for g in listed if g[0] not in hidden]


def delete_groups(cluster: ClusterPort, caller: Caller, broker_id: int | None,
                  group_ids: Iterable[str]) -> dict[str, int]:
    """DeleteGroups: {group: code}. DELETE on each group; an allowed one goes to its
    coordinator, the share-group coordinator for a share group (kafka-share-groups.sh
    --delete): NON_EMPTY_GROUP with members, GROUP_ID_NOT_FOUND for none."""
    names = list(group_ids)
    refused = authz.delete_groups(cluster, caller, names)
    share = cluster.share_groups
    allowed = [g for g in names if g not in refused]
    results = cluster.groups.delete_groups(broker_id, [g for g in allowed
                                                       if g not in share.groups])
    for group_id in allowed:
        if group_id in share.groups:
            results[group_id] = share.delete_group(group_id, broker_id)
    return {g: refused.get(g) or results[g] for g in names}


def offset_fetch(cluster: ClusterPort, caller: Caller, broker_id: int | None, group_id: str,
                 partitions: Iterable[TP] | None, member_id: str | None = None,
                 member_epoch: int = -1, require_stable: bool = False
                 ) -> tuple[int, dict[TP, Fetched]]:
    """OffsetFetch: (the group's error, {partition: answer}), every partition asked
    answered (None asks for every committed one). DESCRIBE on the group is needed
    (GROUP_AUTHORIZATION_FAILED, then no partitions), and on each topic: one asked for
    gets TOPIC_AUTHORIZATION_FAILED, and an all-topics fetch leaves it out. A KIP-848
    member (v9+) names itself and its epoch, which the coordinator checks. With
    `require_stable` (v7+, a read_committed consumer) a partition whose offsets wait in
    an open transaction answers UNSTABLE_OFFSET_COMMIT, which the client retries."""
    asked = None if partitions is None else list(partitions)
    code = authz.offset_fetch(cluster, caller, group_id)
    if code:
        return code, {}
    refused = authz.describe_topics(cluster, caller, {t for t, _ in asked or ()})
    wanted = None if asked is None else [tp for tp in asked if tp[0] not in refused]
    code, found = cluster.groups.offset_fetch(broker_id, group_id, wanted, member_id,
                                              member_epoch)
    if code:
        return code, {}
    if asked is None and cluster.authorizer is not None:
        hidden = authz.describe_topics(cluster, caller, {tp[0] for tp in found})
        found = {tp: c for tp, c in found.items() if tp[0] not in hidden}
    txn = cluster.transactions  # None until a transaction was ever started
    unstable = txn.unstable_offsets(group_id) if require_stable and txn is not None else set()
    out: dict[TP, Fetched] = {}
    for tp, committed in found.items():
        if tp in unstable:
            out[tp] = (-1, -1, "", errors.UNSTABLE_OFFSET_COMMIT)
        elif committed is None:
            out[tp] = (-1, -1, "", errors.NONE)
        else:
            out[tp] = (committed.offset, committed.leader_epoch, committed.metadata,
                       errors.NONE)
    for tp in asked or ():
        if tp[0] in refused:
            out[tp] = (-1, -1, "", refused[tp[0]])
    return errors.NONE, out


def consumer_group_heartbeat(cluster: ClusterPort, caller: Caller, broker_id: int | None,
                             request: ConsumerHeartbeat) -> HeartbeatAnswer:
    """ConsumerGroupHeartbeat (key 68), KIP-848's consumer protocol: READ on the group
    and DESCRIBE on every subscribed topic, then the coordinator's answer (the member's
    epoch and assignment)."""
    refused = authz.group_heartbeat(cluster, caller, request.group_id,
                                    request.subscribed_topic_names)
    if refused:
        return HeartbeatAnswer(refused)
    return cluster.groups.consumer_group_heartbeat(broker_id, request)


def consumer_group_describe(cluster: ClusterPort, caller: Caller, broker_id: int | None,
                            group_id: str) -> ConsumerGroupView:
    """ConsumerGroupDescribe (key 69), one group: DESCRIBE on it (else
    GROUP_AUTHORIZATION_FAILED), then the coordinator's view (GROUP_ID_NOT_FOUND for an
    unknown group or a classic one). As Kafka's KafkaApis does, a group whose members'
    assignments or target assignments name a topic the caller may not DESCRIBE answers
    TOPIC_AUTHORIZATION_FAILED, with no members, so the topic stays hidden."""
    refused = authz.describe_group(cluster, caller, group_id)
    if refused:
        return ConsumerGroupView(refused, group_id)
    view = cluster.groups.consumer_group_describe(broker_id, group_id)
    if view.error or cluster.authorizer is None:
        return view
    name = cluster.groups.consumer.topic_name
    topics = {name(t) for m in view.members for rows in (m.assignment, m.target_assignment)
              for t, _ in rows}
    if authz.describe_topics(cluster, caller, topics):
        return ConsumerGroupView(errors.TOPIC_AUTHORIZATION_FAILED, group_id,
                                 "The group has described topic(s) that the client is not "
                                 "authorized to describe.")
    return view


def offset_delete(cluster: ClusterPort, caller: Caller, broker_id: int | None, group_id: str,
                  partitions: Iterable[TP]) -> tuple[int, dict[TP, int]]:
    """OffsetDelete (key 47): (the request's error, {partition: code}) for every partition
    asked. DELETE on the group, else GROUP_AUTHORIZATION_FAILED and no partitions; READ on
    each topic, else TOPIC_AUTHORIZATION_FAILED; a partition the metadata lacks is
    UNKNOWN_TOPIC_OR_PARTITION. The coordinator deletes the rest: GROUP_ID_NOT_FOUND for
    no group, NON_EMPTY_GROUP for an active group of another protocol type, and
    GROUP_SUBSCRIBED_TO_TOPIC for a topic the group's members consume."""
    asked = list(dict.fromkeys(partitions))
    code, refused = authz.offset_delete(cluster, caller, group_id, {t for t, _ in asked})
    if code:
        return code, {}
    known = cluster.controller.topics
    out: dict[TP, int] = {}
    for topic, partition in asked:
        if topic in refused:
            out[(topic, partition)] = refused[topic]
        elif topic not in known or not 0 <= partition < len(known[topic].partitions):
            out[(topic, partition)] = errors.UNKNOWN_TOPIC_OR_PARTITION
    code, deleted = cluster.groups.delete_offsets(broker_id, group_id,
                                                  [tp for tp in asked if tp not in out])
    if code:
        return code, {}
    return errors.NONE, {tp: out[tp] if tp in out else deleted[tp] for tp in asked}
