"""IncrementalAlterConfigs (key 44), v0-v1, for topics (SET, DELETE, APPEND, SUBTRACT),
brokers (SET, DELETE of the dynamic keys), broker loggers (SET, DELETE of a level) and
share groups (SET, DELETE of their own configs): a thin codec over
core.api.incremental_alter_configs."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

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
    results = alter_with_acls(
        ctx, request.resources, api.incremental_alter_configs, _Result,
        lambda c: api.AlterableConfig(c.name, c.config_operation, c.value),
        request.validate_only)
    return IncrementalAlterConfigsResponse(version=ctx.api_version, throttle_time_ms=0,
                                           responses=results)


def alter_with_acls(ctx: RequestContext, resources: Sequence[Any], alter: Callable[..., list],
                    result: Callable[..., Any], config: Callable[[Any], api.AlterableConfig],
                    validate_only: bool) -> list:
    """Both alter APIs: ALTER_CONFIGS on each resource (the cluster for brokers), as
    KafkaApis checks it; the allowed ones go to `alter` (core.api), in order."""
    serving_broker(ctx)
    who = caller(ctx)
    refusals = [authz.configs(ctx.cluster, who, AclOperation.ALTER_CONFIGS, r.resource_type,
                              r.resource_name) for r in resources]
    done = iter(alter(ctx.cluster, [
        api.AlterConfigsResource(r.resource_type, r.resource_name, [config(c) for c in r.configs])
        for r, refused in zip(resources, refusals) if not refused], validate_only=validate_only))
    results = []
    for resource, refused in zip(resources, refusals):
        if refused:
            results.append(result(error_code=refused, error_message=None,
                                  resource_type=resource.resource_type,
                                  resource_name=resource.resource_name))
            continue
        r = next(done)
        results.append(result(error_code=r.error_code, error_message=r.error_message,
                              resource_type=r.resource_type, resource_name=r.name))
    return results
