"""ListConfigResources (key 74), v0-v1 (KIP-1142; v0 was ListClientMetricsResources): the
resources that have configs. v1 lists the types asked for (all when none is): topics
(internal ones too), brokers and broker loggers (by live broker id), groups (share groups
too); DESCRIBE_CONFIGS on the cluster is needed (CLUSTER_AUTHORIZATION_FAILED);
minikafka has no client-metrics subscriptions, so v0 and CLIENT_METRICS list nothing."""
from __future__ import annotations

from typing import TYPE_CHECKING

from kafka.protocol.admin import ListConfigResourcesRequest, ListConfigResourcesResponse

from ...core import errors
from ...core.api.configs import BROKER, BROKER_LOGGER, GROUP, TOPIC
from ...core.errors import INVALID_REQUEST
from ...core.groups.classic import DEAD
from ..registry import RequestContext
from ._common import may_call, registered_brokers, serving_broker

if TYPE_CHECKING:
    from ...core.api.port import ClusterPort

API_KEY = 74
MIN_VERSION = 0
MAX_VERSION = 1

CLIENT_METRICS = 16
_TYPES = (TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP)

_Resource = ListConfigResourcesResponse.ConfigResource


def _names(cluster: ClusterPort, resource_type: int) -> list[str]:
    if resource_type == TOPIC:
        return sorted(cluster.controller.topics)
    if resource_type in (BROKER, BROKER_LOGGER):
        return [str(b) for b in registered_brokers(cluster)]
    if resource_type == GROUP:
        return sorted({g for g, group in cluster.groups.groups.items() if group.state != DEAD}
                      | set(cluster.share_groups.groups))
    return []  # CLIENT_METRICS


def handle(ctx: RequestContext,
           request: ListConfigResourcesRequest) -> ListConfigResourcesResponse:
    serving_broker(ctx)
    version = ctx.api_version
    if not may_call(ctx, "ListConfigResources"):
        return ListConfigResourcesResponse(version=version, throttle_time_ms=0,
                                           error_code=errors.CLUSTER_AUTHORIZATION_FAILED,
                                           config_resources=[])
    types = (list(request.resource_types) or list(_TYPES)) if version >= 1 else [CLIENT_METRICS]
    if any(t not in _TYPES for t in types):
        return ListConfigResourcesResponse(version=version, throttle_time_ms=0,
                                           error_code=INVALID_REQUEST, config_resources=[])
    resources = [_Resource(resource_name=name, resource_type=t)
                 for t in types for name in _names(ctx.cluster, t)]
    return ListConfigResourcesResponse(version=version, throttle_time_ms=0,
                                       error_code=errors.NONE, config_resources=resources)
