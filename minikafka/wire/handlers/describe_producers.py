"""DescribeProducers (key 61), v0 (kafka-transactions.sh describe-producers): the
idempotent and transactional producers a partition leader remembers, with each one's
epoch, last sequence and the first offset of its open transaction (-1 when none).
minikafka keeps no per-producer timestamp or coordinator epoch: both read -1."""
from __future__ import annotations

from kafka.protocol.admin.transactions import DescribeProducersRequest, DescribeProducersResponse

from ...core import errors
from ...core.acl import AclOperation, ResourceType
from ..registry import RequestContext
from ._common import (
    authorize,
    serving_broker,
)

API_KEY = 61
MIN_VERSION = 0
MAX_VERSION = 0

_Topic = DescribeProducersResponse.TopicResponse
_Partition = _Topic.PartitionResponse
_State = _Partition.ProducerState


def _partition(broker, topic: str, p: int) -> _Partition:
    replica = broker.replicas.get((topic, p))
    if replica is None or not replica.is_leader:
        code = errors.NOT_LEADER_OR_FOLLOWER if replica is not None \
            else errors.UNKNOWN_TOPIC_OR_PARTITION
        return _Partition(partition_index=p, error_code=code, error_message=None,
                          active_producers=[])
    state = replica.producers
    active = [_State(producer_id=pid, producer_epoch=entry.epoch, last_sequence=entry.last_seq,
                     last_timestamp=-1, coordinator_epoch=-1,
                     current_txn_start_offset=state.ongoing.get(pid, -1))
              for pid, entry in sorted(state.producers.items())]
    return _Partition(partition_index=p, error_code=errors.NONE, error_message=None,
                      active_producers=active)


def handle(ctx: RequestContext, request: DescribeProducersRequest) -> DescribeProducersResponse:
    broker = serving_broker(ctx)
    topics = [_Topic(name=t.name, partitions=[
        _partition(broker, t.name, p)
        if authorize(ctx, AclOperation.READ, ResourceType.TOPIC, t.name)
        else _Partition(partition_index=p, error_code=errors.TOPIC_AUTHORIZATION_FAILED,
                        error_message=None, active_producers=[])
        for p in t.partition_indexes]) for t in request.topics]
    return DescribeProducersResponse(version=ctx.api_version, throttle_time_ms=0, topics=topics)
