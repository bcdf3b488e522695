"""AlterConfigs (key 33), v0-v2, the legacy API Kafka 4.4.0 still serves (kafka-python's
`alter_configs` falls back to it): the given configs replace a topic's overrides or a
broker's dynamic values; a thin codec over core.api.alter_configs, with the same ACL check
as IncrementalAlterConfigs."""
from __future__ import annotations

from kafka.protocol.admin import AlterConfigsRequest, AlterConfigsResponse

from ...core import api
from ..registry import RequestContext
from .incremental_alter_configs import alter_with_acls

API_KEY = 33
MIN_VERSION = 0
MAX_VERSION = 2


def handle(ctx: RequestContext, request: AlterConfigsRequest) -> AlterConfigsResponse:
    results = alter_with_acls(ctx, request.resources, api.alter_configs,
                              AlterConfigsResponse.AlterConfigsResourceResponse,
                              lambda c: api.AlterableConfig(c.name, api.configs.SET, c.value),
                              request.validate_only)
    return AlterConfigsResponse(version=ctx.api_version, throttle_time_ms=0, responses=results)
