"""DescribeConfigs (key 32), v1-v4, for topics, brokers and broker loggers: a thin codec
over core.api.describe_configs (every setting with its source and synonyms, a topic's
defaults as the answering broker has them; the default broker resource "" lists the
cluster-wide dynamic values only; a broker lists the listener the client came through, as
serve advertises it). Each resource needs DESCRIBE_CONFIGS on it (the cluster for brokers
and loggers), else its type's authorization error and no entries."""
from __future__ import annotations

from kafka.protocol.admin import DescribeConfigsRequest, DescribeConfigsResponse

from ...core import api
from ...core.acl import AclOperation
from ...core.api import authz
from ..listeners import endpoint
from ..registry import RequestContext
from ._common import caller, serving_broker

API_KEY = 32
MIN_VERSION = 1
MAX_VERSION = 4

_Result = DescribeConfigsResponse.DescribeConfigsResult
_Entry = _Result.DescribeConfigsResourceResult
_Synonym = _Entry.DescribeConfigsSynonym


def handle(ctx: RequestContext, request: DescribeConfigsRequest) -> DescribeConfigsResponse:
    serving_broker(ctx)
    synonyms = request.include_synonyms
    documentation = ctx.api_version >= 3 and request.include_documentation
    who = caller(ctx)
    refusals = [authz.configs(ctx.cluster, who, AclOperation.DESCRIBE_CONFIGS, r.resource_type,
                              r.resource_name) for r in request.resources]
    def listeners(broker_id: int) -> str:
        host, port = endpoint(ctx.cluster, broker_id, ctx.listener)
        return f"{ctx.listener or 'PLAINTEXT'}://{host}:{port}"

    found = iter(api.describe_configs(ctx.cluster, [
        api.ConfigResource(r.resource_type, r.resource_name, r.configuration_keys)
        for r, refused in zip(request.resources, refusals) if not refused], listeners,
        ctx.broker_id))
    results = []
    for resource, refused in zip(request.resources, refusals):
        if refused:
            results.append(_Result(error_code=refused, error_message=None,
                                   resource_type=resource.resource_type,
                                   resource_name=resource.resource_name, configs=[]))
            continue
        r = next(found)
        results.append(_Result(
            error_code=r.error_code, error_message=r.error_message,
            resource_type=r.resource_type, resource_name=r.name,
            configs=[_Entry(name=e.name, value=e.value, read_only=e.read_only,
                            config_source=e.source, is_sensitive=e.sensitive,
                            config_type=e.config_type,
                            documentation=e.documentation if documentation else None,
                            synonyms=[_Synonym(name=s.name, value=s.value, source=s.source)
                                      for s in api.entry_synonyms(e)] if synonyms else [])
                     for e in r.entries]))
    return DescribeConfigsResponse(version=ctx.api_version, throttle_time_ms=0,
                                   results=results)
