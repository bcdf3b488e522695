"""CreatePartitions (key 37), v0-v3: a thin codec over core.api.create_partitions (the
controller places the new replicas, or puts them on the brokers the request names for
each new partition; validate_only checks and changes nothing)."""
from __future__ import annotations

from kafka.protocol.admin import CreatePartitionsRequest, CreatePartitionsResponse

from ...core import api
from ...core.api import authz
from ..registry import RequestContext
from ._common import caller, serving_broker

API_KEY = 37
MIN_VERSION = 0
MAX_VERSION = 3

_Result = CreatePartitionsResponse.CreatePartitionsTopicResult


def handle(ctx: RequestContext, request: CreatePartitionsRequest) -> CreatePartitionsResponse:
    serving_broker(ctx)
    # A topic named twice is left to the core function, which refuses it as a duplicate
    # before anything is authorized.
    names = [t.name for t in request.topics]
    refused = authz.create_partitions(ctx.cluster, caller(ctx),
                                      [n for n in names if names.count(n) == 1])
    done = iter(api.create_partitions(
        ctx.cluster, [api.NewPartitions(t.name, t.count,
                                        [list(a.broker_ids) for a in t.assignments]
                                        if t.assignments else None)
                      for t in request.topics if t.name not in refused],
        validate_only=request.validate_only))
    results = []
    for t in request.topics:
        if t.name in refused:
            results.append(_Result(name=t.name, error_code=refused[t.name],
                                   error_message=authz.REFUSED_MESSAGE))
            continue
        r = next(done)
        results.append(_Result(name=r.name, error_code=r.error_code,
                               error_message=r.error_message))
    return CreatePartitionsResponse(version=ctx.api_version, throttle_time_ms=0,
                                    results=results)
