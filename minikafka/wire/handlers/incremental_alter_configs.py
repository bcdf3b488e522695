"""IncrementalAlterConfigs (key 44), v0-v1, for topics (SET, DELETE, APPEND, SUBTRACT),
brokers (SET, DELETE of the dynamic keys) and share groups (SET, DELETE of their own
configs): a thin codec over core.api.incremental_alter_configs."""
from __future__ import annotations

from kafka.protocol.admin import IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse

from ...core import api
from ..registry import RequestContext
from ._common import serving_broker

API_KEY = 44
MIN_VERSION = 0
MAX_VERSION = 1

_Result = IncrementalAlterConfigsResponse.AlterConfigsResourceResponse


def handle(ctx: RequestContext,
           request: IncrementalAlterConfigsRequest) -> IncrementalAlterConfigsResponse:
    serving_broker(ctx)
    results = api.incremental_alter_configs(ctx.cluster, [
        api.AlterConfigsResource(r.resource_type, r.resource_name, [
            api.AlterableConfig(c.name, c.config_operation, c.value) for c in r.configs])
        for r in request.resources], validate_only=request.validate_only)
    return IncrementalAlterConfigsResponse(
        version=ctx.api_version, throttle_time_ms=0,
        responses=[_Result(error_code=r.error_code, error_message=r.error_message,
                           resource_type=r.resource_type, resource_name=r.name)
                   for r in results])
