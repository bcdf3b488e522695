"""CreatePartitions (key 37), v0-v3: a thin codec over core.api.create_partitions."""
from __future__ import annotations

from kafka.protocol.admin import CreatePartitionsRequest, CreatePartitionsResponse

from ...core import api
from ..registry import RequestContext
from ._common import serving_broker

API_KEY = 37
MIN_VERSION = 0
MAX_VERSION = 3

_Result = CreatePartitionsResponse.CreatePartitionsTopicResult


def handle(ctx: RequestContext, request: CreatePartitionsRequest) -> CreatePartitionsResponse:
    serving_broker(ctx)
    results = api.create_partitions(
        ctx.cluster, [api.NewPartitions(t.name, t.count,
                                        [list(a.broker_ids) for a in t.assignments]
                                        if t.assignments else None)
                      for t in request.topics], validate_only=request.validate_only)
    return CreatePartitionsResponse(
        version=ctx.api_version, throttle_time_ms=0,
        results=[_Result(name=r.name, error_code=r.error_code, error_message=r.error_message)
                 for r in results])
