"""DeleteTopics (key 20), v1-v6: by name, or from v6 by name or topic id."""
from __future__ import annotations

import uuid

from kafka.protocol.admin import DeleteTopicsRequest, DeleteTopicsResponse

from ...core import api, errors
from ...core.api import authz
from ..registry import RequestContext
from ._common import caller, serving_broker, topic_name_for_id

API_KEY = 20
MIN_VERSION = 1
MAX_VERSION = 6

_Result = DeleteTopicsResponse.DeletableTopicResult
_ZERO_UUID = uuid.UUID(int=0)


def handle(ctx: RequestContext, request: DeleteTopicsRequest) -> DeleteTopicsResponse:
    cluster = ctx.cluster
    serving_broker(ctx)
    version = ctx.api_version
    if version >= 6:
        wanted = [(t.name, t.topic_id) for t in request.topics]
    else:
        wanted = [(name, _ZERO_UUID) for name in request.topic_names]
    results, named = [], []
    refusals = authz.delete_topics(cluster, caller(ctx), {
        name or topic_name_for_id(cluster, topic_id) for name, topic_id in wanted} - {None})
    for name, topic_id in wanted:
        result = _Result(name=name, topic_id=topic_id, error_code=errors.NONE,
                         error_message=None)
        results.append(result)
        if name is None:
            name = topic_name_for_id(cluster, topic_id)
            if name is None:
                result.error_code = errors.UNKNOWN_TOPIC_ID
                continue
            result.name = name
        if name in refusals:
            result.error_code, result.error_message = refusals[name], authz.REFUSED_MESSAGE
            continue
        named.append(result)
    for result, done in zip(named, api.delete_topics(cluster, [r.name for r in named]),
                            strict=True):
        result.error_code, result.error_message = done.error_code, done.error_message
        if done.topic_id is not None:
            result.topic_id = uuid.UUID(done.topic_id)
    return DeleteTopicsResponse(version=version, throttle_time_ms=0, responses=results)
