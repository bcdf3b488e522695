"""InitProducerId (key 22), v0-v5: a codec over minikafka.core.api.init_producer_id
(fresh ids, KIP-360 epoch bumps, transactional fencing, the "producer.init" event)."""
from __future__ import annotations

from kafka.protocol.producer import InitProducerIdRequest, InitProducerIdResponse

from ...core import api, errors
from ...core.acl import AclOperation, ResourceType
from ..registry import RequestContext
from ._common import (
    authorize,
    serving_broker,
)

API_KEY = 22
MIN_VERSION = 0
MAX_VERSION = 5  # v6 is two-phase commit (KIP-939)


def _refused(ctx: RequestContext, transactional_id: str | None) -> int:
    """A transactional producer needs WRITE on its transactional id; an idempotent one
    IDEMPOTENT_WRITE on the cluster or WRITE on some topic (Kafka's rules)."""
    if transactional_id is not None:
        if not authorize(ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID,
                         transactional_id):
            return errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        return errors.NONE
    authorizer = ctx.cluster.authorizer
    if authorizer is None or authorize(ctx, AclOperation.IDEMPOTENT_WRITE, ResourceType.CLUSTER) \
            or authorizer.authorize_by_resource_type(ctx.principal, ctx.client_host,
                                                     AclOperation.WRITE, ResourceType.TOPIC):
        return errors.NONE
    return errors.CLUSTER_AUTHORIZATION_FAILED


def handle(ctx: RequestContext, request: InitProducerIdRequest) -> InitProducerIdResponse:
    serving_broker(ctx)
    bump = ctx.api_version >= 3
    refused = _refused(ctx, request.transactional_id)
    if refused:
        return InitProducerIdResponse(version=ctx.api_version, throttle_time_ms=0,
                                      error_code=refused, producer_id=-1, producer_epoch=-1)
    result = api.init_producer_id(ctx.cluster, api.InitProducerIdRequest(
        ctx.client_id, request.transactional_id, request.transaction_timeout_ms,
        request.producer_id if bump else -1, request.producer_epoch if bump else -1))
    return InitProducerIdResponse(version=ctx.api_version, throttle_time_ms=0,
                                  error_code=result.error_code, producer_id=result.producer_id,
                                  producer_epoch=result.producer_epoch)
