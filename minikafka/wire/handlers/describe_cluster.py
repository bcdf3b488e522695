"""DescribeCluster (key 60), v0-v2: a codec over minikafka.core.api.describe_cluster
(cluster id, controller and brokers, fenced ones too when asked, v2)."""
from __future__ import annotations

from kafka.protocol.admin import DescribeClusterRequest, DescribeClusterResponse

from ...core import errors
from ...core.acl import AclOperation, ResourceType
from ...core.api import describe_cluster
from ...core.errors import UNSUPPORTED_ENDPOINT_TYPE
from ..listeners import endpoint
from ..registry import RequestContext
from ._common import authorize, authorized_operations, cluster_id, serving_broker

API_KEY = 60
MIN_VERSION = 0
MAX_VERSION = 2

BROKERS_ENDPOINT = 1

_Broker = DescribeClusterResponse.DescribeClusterBroker


def handle(ctx: RequestContext, request: DescribeClusterRequest) -> DescribeClusterResponse:
    cluster = ctx.cluster
    serving_broker(ctx)
    version = ctx.api_version
    if version >= 1 and request.endpoint_type != BROKERS_ENDPOINT:
        return DescribeClusterResponse(
            version=version, throttle_time_ms=0, error_code=UNSUPPORTED_ENDPOINT_TYPE,
            error_message="minikafka brokers describe brokers only",
            endpoint_type=request.endpoint_type, cluster_id=cluster_id(cluster),
            controller_id=-1, brokers=[], authorized_operations=None)
    answer = describe_cluster(cluster, version >= 2 and request.include_fenced_brokers)
    brokers = []
    for b in answer.brokers:
        host, port = endpoint(cluster, b.broker_id, ctx.listener)
        brokers.append(_Broker(broker_id=b.broker_id, host=host, port=port, rack=b.rack,
                               is_fenced=b.fenced))
    # a set of AclOperation bits in kafka-python; None encodes "not requested"
    # Kafka computes them only for a principal that may DESCRIBE the cluster.
    operations = None
    if request.include_cluster_authorized_operations:
        operations = authorized_operations(ctx, ResourceType.CLUSTER) \
            if authorize(ctx, AclOperation.DESCRIBE, ResourceType.CLUSTER) else set()
    return DescribeClusterResponse(
        version=version, throttle_time_ms=0, error_code=errors.NONE, error_message=None,
        endpoint_type=BROKERS_ENDPOINT, cluster_id=answer.cluster_id,
        controller_id=answer.controller_id, brokers=brokers,
        authorized_operations=operations)
