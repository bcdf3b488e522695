"""InitProducerId (key 22), v0-v5: a codec over minikafka.core.api.init_producer_id
(fresh ids, KIP-360 epoch bumps, transactional fencing, the "producer.init" event)."""
from __future__ import annotations

from kafka.protocol.producer import InitProducerIdRequest, InitProducerIdResponse

from ...core import api
from ...core.api import authz
from ..registry import RequestContext
from ._common import (
    caller,
    serving_broker,
)

API_KEY = 22
MIN_VERSION = 0
MAX_VERSION = 5  # v6 is two-phase commit (KIP-939)


def handle(ctx: RequestContext, request: InitProducerIdRequest) -> InitProducerIdResponse:
    serving_broker(ctx)
    bump = ctx.api_version >= 3
    refused = authz.init_producer_id(ctx.cluster, caller(ctx), request.transactional_id)
    if refused:
        return InitProducerIdResponse(version=ctx.api_version, throttle_time_ms=0,
                                      error_code=refused, producer_id=-1, producer_epoch=-1)
    result = api.init_producer_id(ctx.cluster, api.InitProducerIdRequest(
        ctx.client_id, request.transactional_id, request.transaction_timeout_ms,
        request.producer_id if bump else -1, request.producer_epoch if bump else -1))
    return InitProducerIdResponse(version=ctx.api_version, throttle_time_ms=0,
                                  error_code=result.error_code, producer_id=result.producer_id,
                                  producer_epoch=result.producer_epoch)
