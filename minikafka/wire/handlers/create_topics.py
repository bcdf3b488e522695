"""CreateTopics (key 19), v2-v7: a codec over minikafka.core.api.create_topics (defaults,
explicit assignments, validate_only through the same checks as a real create). From v5
the answer carries the topic's partitions, replication factor and effective configs;
from v7 its topic id.
"""
from __future__ import annotations

from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse

from ...core import api
from ...core.api import authz
from ...core.api.configs import topic_entries
from ..registry import RequestContext
from ._common import caller, serving_broker, topic_uuid

API_KEY = 19
MIN_VERSION = 2
MAX_VERSION = 7

_Result = CreateTopicsResponse.CreatableTopicResult
_Config = _Result.CreatableTopicConfigs


def handle(ctx: RequestContext, request: CreateTopicsRequest) -> CreateTopicsResponse:
    cluster = ctx.cluster
    serving_broker(ctx)
    refused = authz.create_topics(cluster, caller(ctx), [t.name for t in request.topics])
    asked = api.CreateTopicsRequest(
        [api.CreatableTopic(t.name, t.num_partitions, t.replication_factor,
                            {a.partition_index: list(a.broker_ids) for a in t.assignments},
                            {c.name: c.value for c in t.configs})
         for t in request.topics if t.name not in refused],
        validate_only=bool(request.validate_only))
    created = iter(api.create_topics(cluster, asked))
    results = []
    for t in request.topics:
        if t.name in refused:
            results.append(_Result(name=t.name, error_code=refused[t.name],
                                   error_message=authz.REFUSED_MESSAGE, num_partitions=-1,
                                   replication_factor=-1, configs=[]))
            continue
        r = next(created)
        result = _Result(name=r.name, error_code=r.error_code, error_message=r.error_message,
                         num_partitions=r.num_partitions, replication_factor=r.replication_factor,
                         configs=[])
        results.append(result)
        if r.topic_id is None:
            continue
        meta = cluster.controller.topics[r.name]
        result.topic_id = topic_uuid(meta)
        result.configs = [_Config(name=e.name, value=e.value, read_only=e.read_only,
                                  config_source=e.source, is_sensitive=False)
                          for e in topic_entries(meta)]
    return CreateTopicsResponse(version=ctx.api_version, throttle_time_ms=0, topics=results)
