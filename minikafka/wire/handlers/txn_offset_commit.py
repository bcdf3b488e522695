"""TxnOffsetCommit (key 28), v0-v5: a transactional producer's consumer offsets.

They are staged beside the transaction (TransactionCoordinator.stage_offsets) and
reach the group only when the commit marker is written (EndTxn); an abort drops
them. The producer id and epoch must be the transaction's current ones, the broker
must be the group's coordinator (NOT_COORDINATOR sends the client to FindCoordinator)
once the group APIs are served, and from v3 the consumer's generation and member id
must be the group's (generation -1 for an empty group).
"""
from __future__ import annotations

from kafka.protocol.producer import TxnOffsetCommitRequest, TxnOffsetCommitResponse
from kafka.structs import OffsetAndMetadata, TopicPartition

from ...core import errors
from ...core.errors import KafkaCoreError
from ..registry import RequestContext
from ._common import JOIN_GROUP_KEY, KAFKA_ERRORS, error_code, group_coordinator, serving_broker
from ._transactions import check_producer, coordinator

API_KEY = 28
MIN_VERSION = 0
MAX_VERSION = 5

_Topic = TxnOffsetCommitResponse.TxnOffsetCommitResponseTopic
_Partition = _Topic.TxnOffsetCommitResponsePartition


def handle(ctx: RequestContext, request: TxnOffsetCommitRequest) -> TxnOffsetCommitResponse:
    cluster = ctx.cluster
    serving_broker(ctx)
    version = ctx.api_version
    known = cluster.controller.topics
    try:
        if JOIN_GROUP_KEY in ctx.registry and \
                group_coordinator(ctx, request.group_id) != ctx.broker_id:
            raise KafkaCoreError(errors.NOT_COORDINATOR,
                                 f"not the coordinator of {request.group_id}")
        check_producer(cluster, request.transactional_id, request.producer_id,
                       request.producer_epoch)
        common = errors.NONE
        if version >= 3:  # KIP-447: the consumer's generation and member id come along
            common = cluster.groups.validate_txn_offset_commit(
                request.group_id, request.generation_id, request.member_id,
                request.group_instance_id)
    except KAFKA_ERRORS as exc:
        common = error_code(exc)
        if common == errors.PRODUCER_FENCED and version < 3:
            common = errors.INVALID_PRODUCER_EPOCH  # what older clients understand
    staged = {}
    topics = []
    for topic in request.topics:
        answers = []
        for p in topic.partitions:
            code = common
            meta = known.get(topic.name)
            if code == errors.NONE and (meta is None
                                        or not 0 <= p.partition_index < len(meta.partitions)):
                code = errors.UNKNOWN_TOPIC_OR_PARTITION
            if code == errors.NONE:
                epoch = p.committed_leader_epoch if version >= 2 else -1
                staged[TopicPartition(topic.name, p.partition_index)] = OffsetAndMetadata(
                    p.committed_offset, p.committed_metadata or "", epoch)
            answers.append(_Partition(partition_index=p.partition_index, error_code=code))
        topics.append(_Topic(name=topic.name, partitions=answers))
    if staged:
        coordinator(cluster).stage_offsets(request.producer_id, request.group_id, staged)
    return TxnOffsetCommitResponse(version=version, throttle_time_ms=0, topics=topics)
