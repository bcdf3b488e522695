"""ListOffsets (key 2), v1-v11: the offset for a timestamp, or for a special one:
-1 latest (high watermark, or last stable offset for read_committed), -2 earliest
(log start offset), -3 the record with the largest timestamp (KIP-734), -4 earliest
local (the same here: no tiered storage), -5 latest tiered and -6 earliest pending
upload (none here: -1).

A timestamp lookup finds the first record at or after it, below the high watermark
(or LSO); none gives offset -1 and no error, which kafka-python's offsets_for_times
turns into None.
"""
from __future__ import annotations

from kafka.protocol.consumer import ListOffsetsRequest, ListOffsetsResponse

from ...core import errors
from ..registry import RequestContext
from ._common import led_replica, serving_broker

API_KEY = 2
MIN_VERSION = 1
MAX_VERSION = 11

LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL = -1, -2, -3, -4
READ_COMMITTED = 1

_Topic = ListOffsetsResponse.ListOffsetsTopicResponse
_Partition = _Topic.ListOffsetsPartitionResponse


def _epoch_at(log, offset: int) -> int:
    """The leader epoch that wrote `offset` (leader-epoch-checkpoint lookup)."""
    epoch = -1
    for e, start in log.epochs:
        if start > offset:
            break
        epoch = e
    return epoch


def _max_timestamp(log, limit: int) -> tuple[int, int]:
    """(timestamp, offset) of the first record with the largest timestamp below limit."""
    best_ts, best_offset = -1, -1
    for batch in log.batches():
        if batch.last_offset >= limit:
            break
        if batch.base_offset + batch.last_offset_delta < log.log_start_offset:
            continue
        if batch.is_control or batch.max_timestamp <= best_ts:
            continue
        for record in batch.iter_records():
            if record.timestamp > best_ts and record.offset >= log.log_start_offset:
                best_ts, best_offset = record.timestamp, record.offset
    return best_ts, best_offset


def _lookup(replica, timestamp: int, read_committed: bool) -> tuple[int, int, int]:
    """(timestamp, offset, leader epoch) as ListOffsets answers them."""
    log = replica.log
    limit = replica.last_stable_offset if read_committed else replica.high_watermark
    if timestamp == LATEST:
        return -1, limit, _epoch_at(log, limit)
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        start = log.log_start_offset
        return -1, start, _epoch_at(log, start)
    if timestamp == MAX_TIMESTAMP:
        ts, offset = _max_timestamp(log, limit)
        return ts, offset, _epoch_at(log, offset) if offset >= 0 else -1
    if timestamp < 0:  # latest tiered, earliest pending upload: no remote storage here
        return -1, -1, -1
    found = log.offset_for_timestamp(timestamp)
    if found is None or found[0] >= limit:
        return -1, -1, -1
    offset, ts = found
    return ts, offset, _epoch_at(log, offset)


def handle(ctx: RequestContext, request: ListOffsetsRequest) -> ListOffsetsResponse:
    cluster = ctx.cluster
    broker = serving_broker(ctx)
    version = ctx.api_version
    read_committed = version >= 2 and request.isolation_level == READ_COMMITTED
    topics = cluster.controller.topics
    out = []
    for topic in request.topics:
        answers = []
        for wanted in topic.partitions:
            index = wanted.partition_index
            answer = _Partition(partition_index=index, error_code=errors.NONE, timestamp=-1,
                                offset=-1, leader_epoch=-1)
            answers.append(answer)
            answer.error_code, replica = led_replica(
                broker, topics, topic.name, index,
                wanted.current_leader_epoch if version >= 4 else -1)
            if replica is None:
                continue
            answer.timestamp, answer.offset, answer.leader_epoch = _lookup(
                replica, wanted.timestamp, read_committed)
        out.append(_Topic(name=topic.name, partitions=answers))
    return ListOffsetsResponse(version=version, throttle_time_ms=0, topics=out)
