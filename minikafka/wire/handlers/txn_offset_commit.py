"""TxnOffsetCommit (key 28), v0-v6: a transactional producer's consumer offsets (v6 names
topics by id, KIP-1319: UNKNOWN_TOPIC_ID for an id the cluster does not have).

They are staged beside the transaction (TransactionCoordinator.stage_offsets) and
reach the group only when the commit marker is written (EndTxn); an abort drops
them. The producer id and epoch must be the transaction's current ones (with
partition verification, core.api.txn_offset_commit, the group's __consumer_offsets
partition must be in the transaction: AddOffsetsToTxn first), the broker must be the
group's coordinator (NOT_COORDINATOR sends the client to FindCoordinator)
once the group APIs are served, and from v3 the consumer's generation and member id
must be the group's (generation -1 for an empty group).
"""
from __future__ import annotations

from kafka.structs import OffsetAndMetadata, TopicPartition

from ...core import errors
from ...core.api import authz, txn_offset_commit
from ...core.errors import KafkaCoreError
from ..messages import TxnOffsetCommitRequest, TxnOffsetCommitResponse
from ..registry import RequestContext
from ._common import (
    JOIN_GROUP_KEY,
    KAFKA_ERRORS,
    caller,
    error_code,
    group_coordinator,
    serving_broker,
    topic_uuid,
)
from ._transactions import check_producer, coordinator

API_KEY = 28
MIN_VERSION = 0
MAX_VERSION = 6

_Topic = TxnOffsetCommitResponse.TxnOffsetCommitResponseTopic
_Partition = _Topic.TxnOffsetCommitResponsePartition


def handle(ctx: RequestContext, request: TxnOffsetCommitRequest) -> TxnOffsetCommitResponse:
    cluster = ctx.cluster
    serving_broker(ctx)
    version = ctx.api_version
    known = cluster.controller.topics
    by_id = {topic_uuid(t): t.name for t in known.values()} if version >= 6 else {}
    names = [by_id.get(t.topic_id) if version >= 6 else t.name for t in request.topics]
    refusals = authz.txn_offset_commit(cluster, caller(ctx), request.transactional_id,
                                       request.group_id, {n for n in names if n is not None})
    try:
        refused = authz.add_offsets_to_txn(cluster, caller(ctx), request.transactional_id,
                                           request.group_id)
        if refused:
            raise KafkaCoreError(refused, "")
        if JOIN_GROUP_KEY in ctx.registry and \
                group_coordinator(ctx, request.group_id) != ctx.broker_id:
            raise KafkaCoreError(errors.NOT_COORDINATOR,
                                 f"not the coordinator of {request.group_id}")
        unverified = txn_offset_commit.unverified(
            cluster, serving_broker(ctx), request.transactional_id, request.group_id,
            request.producer_id, request.producer_epoch, version)
        if unverified:
            raise KafkaCoreError(unverified, "")
        check_producer(cluster, request.transactional_id, request.producer_id,
                       request.producer_epoch)
        common = errors.NONE
        if version >= 3:  # KIP-447: the consumer's generation and member id come along
            common = cluster.groups.validate_txn_offset_commit(
                request.group_id, request.generation_id_or_member_epoch, request.member_id,
                request.group_instance_id)
    except KAFKA_ERRORS as exc:
        common = error_code(exc)
        if common == errors.PRODUCER_FENCED and version < 3:
            common = errors.INVALID_PRODUCER_EPOCH  # what older clients understand
    staged = {}
    topics = []
    for topic in request.topics:
        answers = []
        name = by_id.get(topic.topic_id) if version >= 6 else topic.name
        for p in topic.partitions:
            code = common
            meta = known.get(name) if name is not None else None
            if code == errors.NONE and name is None:
                code = errors.UNKNOWN_TOPIC_ID
            elif code == errors.NONE and name in refusals:
                code = refusals[name]
            elif code == errors.NONE and (meta is None
                                          or not 0 <= p.partition_index < len(meta.partitions)):
                code = errors.UNKNOWN_TOPIC_OR_PARTITION
            if code == errors.NONE:
                epoch = p.committed_leader_epoch if version >= 2 else -1
                staged[TopicPartition(name, p.partition_index)] = OffsetAndMetadata(
                    p.committed_offset, p.committed_metadata or "", epoch)
            answers.append(_Partition(partition_index=p.partition_index, error_code=code))
        topics.append(_Topic(topic_id=topic.topic_id, partitions=answers) if version >= 6
                      else _Topic(name=topic.name, partitions=answers))
    if staged:
        coordinator(cluster).stage_offsets(request.producer_id, request.group_id, staged)
    return TxnOffsetCommitResponse(version=version, throttle_time_ms=0, topics=topics)
