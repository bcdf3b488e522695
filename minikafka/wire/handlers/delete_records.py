"""DeleteRecords (key 21), v0-v2 (kafka-delete-records.sh): move a partition's log
start offset forward. Offset -1 means the high watermark; beyond it is
OFFSET_OUT_OF_RANGE. Records below the new start are no longer served, and
retention deletes the segments wholly below it on its next pass.

In Kafka the followers learn the new start from their fetches and the request
waits for them; here every replica of the partition moves at once.
"""
from __future__ import annotations

from kafka.protocol.admin import DeleteRecordsRequest, DeleteRecordsResponse

from ...core import errors
from ...core.cleaner import policies
from ..registry import RequestContext
from ._common import led_replica, serving_broker

API_KEY = 21
MIN_VERSION = 0
MAX_VERSION = 2

HIGH_WATERMARK = -1

_Topic = DeleteRecordsResponse.DeleteRecordsTopicResult
_Partition = _Topic.DeleteRecordsPartitionResult


def _delete(cluster, leader, tp: tuple[str, int], offset: int) -> tuple[int, int]:
    """(error code, new low watermark)."""
    if "delete" not in policies(leader.config):
        return errors.POLICY_VIOLATION, -1  # Kafka: records of a compact-only topic stay
    hw = leader.high_watermark
    if offset == HIGH_WATERMARK:
        offset = hw
    if offset < 0 or offset > hw:
        return errors.OFFSET_OUT_OF_RANGE, -1
    for broker in cluster.brokers.values():
        replica = broker.replicas.get(tp)
        if replica is None:
            continue
        if replica.log.maybe_increment_log_start_offset(min(offset, replica.log_end_offset)):
            start = replica.log_start_offset
            producers = replica.producers
            producers.ongoing = {p: max(o, start) for p, o in producers.ongoing.items()}
            producers.aborted = [a for a in producers.aborted if a.last_offset >= start]
    cluster.journal.record(cluster.now_ms, "records.deleted", topic=tp[0], partition=tp[1],
                           log_start_offset=leader.log_start_offset)
    return errors.NONE, leader.log_start_offset


def handle(ctx: RequestContext, request: DeleteRecordsRequest) -> DeleteRecordsResponse:
    cluster = ctx.cluster
    broker = serving_broker(ctx)
    topics = cluster.controller.topics
    out = []
    for topic in request.topics:
        answers = []
        for wanted in topic.partitions:
            index = wanted.partition_index
            tp = (topic.name, index)
            code, replica = led_replica(broker, topics, topic.name, index)
            low = -1
            if replica is not None:
                code, low = _delete(cluster, replica, tp, wanted.offset)
            answers.append(_Partition(partition_index=index, low_watermark=low, error_code=code))
        out.append(_Topic(name=topic.name, partitions=answers))
    return DeleteRecordsResponse(version=ctx.api_version, throttle_time_ms=0, topics=out)
