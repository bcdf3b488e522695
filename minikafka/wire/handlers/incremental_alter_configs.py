"""IncrementalAlterConfigs (key 44), v0-v1, for topics (SET, DELETE, APPEND, SUBTRACT),
brokers (SET, DELETE of the dynamic keys), broker loggers (SET, DELETE of a level) and
share groups (SET, DELETE of their own configs): a thin codec over
core.api.incremental_alter_configs."""
from __future__ import annotations

from kafka.protocol.admin import IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse

from ...core import api
from ...core.acl import AclOperation
from ...core.api import authz
from ..registry import RequestContext
from ._common import caller, serving_broker

API_KEY = 44
MIN_VERSION = 0
MAX_VERSION = 1

_Result = IncrementalAlterConfigsResponse.AlterConfigsResourceResponse


def handle(ctx: RequestContext,
           request: IncrementalAlterConfigsRequest) -> IncrementalAlterConfigsResponse:
    serving_broker(ctx)
    # ALTER_CONFIGS on each resource (the cluster for brokers), as KafkaApis checks it.
    who = caller(ctx)
    refusals = [authz.configs(ctx.cluster, who, AclOperation.ALTER_CONFIGS, r.resource_type,
                              r.resource_name) for r in request.resources]
    done = iter(api.incremental_alter_configs(ctx.cluster, [
        api.AlterConfigsResource(r.resource_type, r.resource_name, [
            api.AlterableConfig(c.name, c.config_operation, c.value) for c in r.configs])
        for r, refused in zip(request.resources, refusals) if not refused],
        validate_only=request.validate_only))
    results = []
    for resource, refused in zip(request.resources, refusals):
        if refused:
            results.append(_Result(error_code=refused, error_message=None,
                                   resource_type=resource.resource_type,
                                   resource_name=resource.resource_name))
            continue
        r = next(done)
        results.append(_Result(error_code=r.error_code, error_message=r.error_message,
                               resource_type=r.resource_type, resource_name=r.name))
    return IncrementalAlterConfigsResponse(version=ctx.api_version, throttle_time_ms=0,
                                           responses=results)
