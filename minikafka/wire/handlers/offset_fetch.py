"""OffsetFetch (key 9), v1-v10: a group's committed offsets.

A partition without a commit answers offset -1 (the consumer then applies
auto.offset.reset); topics=null (v2+) asks for every committed partition. v8+
asks for several groups at once. With require_stable (v7+, what a read_committed
consumer sends), a partition whose offsets wait in an open transaction
(TxnOffsetCommit) answers UNSTABLE_OFFSET_COMMIT, which the client retries.

Coordinator errors go per partition in v1, at top level in v2-v7 and per group in
v8+. v10 names topics by id (UNKNOWN_TOPIC_ID for an id the cluster does not have).
"""
from __future__ import annotations

from typing import Any

from kafka.protocol.consumer.group import OffsetFetchRequest, OffsetFetchResponse

from ...core import api, errors
from ..registry import RequestContext
from ._common import caller, serving_broker, topic_uuid

API_KEY = 9
MIN_VERSION = 1
MAX_VERSION = 10

_Topic = OffsetFetchResponse.OffsetFetchResponseTopic
_Partition = _Topic.OffsetFetchResponsePartition
_Group = OffsetFetchResponse.OffsetFetchResponseGroup
_GroupTopic = _Group.OffsetFetchResponseTopics
_GroupPartition = _GroupTopic.OffsetFetchResponsePartitions

TP = tuple[str, int]
# (partition, offset, leader epoch, metadata, error) per topic, in answer order
Rows = dict[str, list[tuple[int, int, int, str, int]]]


def _fetch(ctx: RequestContext, group_id: str, topics: list[tuple[str, list[int]]] | None,
           require_stable: bool, member_id: str | None = None,
           member_epoch: int = -1) -> tuple[int, Rows]:
    """(group error, rows) from core.api.offset_fetch; with a group error the rows list
    the asked partitions with it (v1 answers per partition)."""
    asked = None if topics is None else [(t, p) for t, parts in topics for p in parts]
    code, found = api.offset_fetch(ctx.cluster, caller(ctx), ctx.broker_id, group_id, asked,
                                   member_id, member_epoch, require_stable)
    rows: Rows = {}
    if code != errors.NONE:
        for topic, parts in topics or []:
            rows[topic] = [(p, -1, -1, "", code) for p in parts]
        return code, rows
    for (topic, partition), (offset, epoch, metadata, error) in found.items():
        rows.setdefault(topic, []).append((partition, offset, epoch, metadata, error))
    return code, rows


def _asked(topics: Any) -> list[tuple[str, list[int]]] | None:
    if topics is None:
        return None
    return [(t.name, list(t.partition_indexes)) for t in topics]


def _group_topic(version: int, name: str | None, topic_id: Any,
                 parts: list[tuple[int, int, int, str, int]]) -> Any:
    partitions = [_GroupPartition(partition_index=p, committed_offset=o,
                                  committed_leader_epoch=e, metadata=m, error_code=c)
                  for p, o, e, m, c in parts]
    if version >= 10:
        return _GroupTopic(topic_id=topic_id, partitions=partitions)
    return _GroupTopic(name=name, partitions=partitions)


def handle(ctx: RequestContext, request: OffsetFetchRequest) -> OffsetFetchResponse:
    serving_broker(ctx)
    version = ctx.api_version
    stable = version >= 7 and request.require_stable
    if version >= 8:
        known = ctx.cluster.controller.topics
        ids = {t.name: topic_uuid(t) for t in known.values()} if version >= 10 else {}
        names = {topic_id: name for name, topic_id in ids.items()}
        groups = []
        for group in request.groups:
            member = (group.member_id, group.member_epoch) if version >= 9 else (None, -1)
            asked, unknown_ids = _asked(group.topics), []
            if version >= 10 and group.topics is not None:
                asked = [(names[t.topic_id], list(t.partition_indexes))
                         for t in group.topics if t.topic_id in names]
                unknown_ids = [t for t in group.topics if t.topic_id not in names]
            code, rows = _fetch(ctx, group.group_id, asked, stable, *member)
            topics = [] if code != errors.NONE else [
                _group_topic(version, topic, ids.get(topic), parts)
                for topic, parts in rows.items()] + [
                _group_topic(version, None, t.topic_id,
                             [(p, -1, -1, "", errors.UNKNOWN_TOPIC_ID)
                              for p in t.partition_indexes]) for t in unknown_ids]
            groups.append(_Group(group_id=group.group_id, error_code=code, topics=topics))
        return OffsetFetchResponse(version=version, throttle_time_ms=0, groups=groups)
    code, rows = _fetch(ctx, request.group_id, _asked(request.topics), stable)
    topics = [_Topic(name=topic, partitions=[
        _Partition(partition_index=p, committed_offset=o, committed_leader_epoch=e,
                   metadata=m, error_code=c) for p, o, e, m, c in parts])
        for topic, parts in rows.items()]
    if version >= 2 and code != errors.NONE:
        topics = []
    return OffsetFetchResponse(version=version, throttle_time_ms=0, topics=topics,
                               error_code=code)
