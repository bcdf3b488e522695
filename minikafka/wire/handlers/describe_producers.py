"""DescribeProducers (key 61), v0 (kafka-transactions.sh describe-producers): a thin codec
over core.api.describe_producers for the broker the request came to."""
from __future__ import annotations

from kafka.protocol.admin.transactions import DescribeProducersRequest, DescribeProducersResponse

from ...core import api, errors
from ...core.api import authz
from ..registry import RequestContext
from ._common import caller, serving_broker

API_KEY = 61
MIN_VERSION = 0
MAX_VERSION = 0

_Topic = DescribeProducersResponse.TopicResponse
_Partition = _Topic.PartitionResponse
_State = _Partition.ProducerState


def handle(ctx: RequestContext, request: DescribeProducersRequest) -> DescribeProducersResponse:
    broker = serving_broker(ctx)
    # READ on each topic (Kafka's handleDescribeProducersRequest); a refused topic's
    # partitions answer TOPIC_AUTHORIZATION_FAILED and are not looked up.
    refused = authz.describe_producers(ctx.cluster, caller(ctx), {t.name for t in request.topics})
    found = api.describe_producers(ctx.cluster, broker.id, [
        (t.name, p) for t in request.topics if t.name not in refused
        for p in t.partition_indexes])
    topics: dict[str, list] = {t.name: [] for t in request.topics}  # in the request's order
    for t in request.topics:
        if t.name in refused:
            topics[t.name].extend(
                _Partition(partition_index=p, error_code=errors.TOPIC_AUTHORIZATION_FAILED,
                           error_message=None, active_producers=[])
                for p in t.partition_indexes)
    for r in found:
        topics.setdefault(r.topic, []).append(_Partition(
            partition_index=r.partition, error_code=r.error_code, error_message=None,
            active_producers=[_State(producer_id=s.producer_id, producer_epoch=s.producer_epoch,
                                     last_sequence=s.last_sequence,
                                     last_timestamp=s.last_timestamp,
                                     coordinator_epoch=s.coordinator_epoch,
                                     current_txn_start_offset=s.current_txn_start_offset)
                              for s in r.producers]))
    return DescribeProducersResponse(
        version=ctx.api_version, throttle_time_ms=0,
        topics=[_Topic(name=t, partitions=ps) for t, ps in topics.items()])
