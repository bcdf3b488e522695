"""DeleteRecords (key 21), v0-v2 (kafka-delete-records.sh): a codec over
minikafka.core.api.delete_records."""
from __future__ import annotations

from kafka.protocol.admin import DeleteRecordsRequest, DeleteRecordsResponse

from ...core import api
from ...core.api import authz
from ..registry import RequestContext
from ._common import (
    caller,
    serving_broker,
)

API_KEY = 21
MIN_VERSION = 0
MAX_VERSION = 2

_Topic = DeleteRecordsResponse.DeleteRecordsTopicResult
_Partition = _Topic.DeleteRecordsPartitionResult


def handle(ctx: RequestContext, request: DeleteRecordsRequest) -> DeleteRecordsResponse:
    broker = serving_broker(ctx)
    out = []
    refused = authz.delete_records(ctx.cluster, caller(ctx), {t.name for t in request.topics})
    for topic in request.topics:
        if topic.name in refused:
            out.append(_Topic(name=topic.name, partitions=[
                _Partition(partition_index=p.partition_index, low_watermark=-1,
                           error_code=refused[topic.name])
                for p in topic.partitions]))
            continue
        results = api.delete_records(ctx.cluster, broker, [
            api.DeleteRecordsPartition(topic.name, p.partition_index, p.offset)
            for p in topic.partitions])
        out.append(_Topic(name=topic.name, partitions=[
            _Partition(partition_index=r.partition, low_watermark=r.low_watermark,
                       error_code=r.error_code) for r in results]))
    return DeleteRecordsResponse(version=ctx.api_version, throttle_time_ms=0, topics=out)
