"""AddOffsetsToTxn (key 25), v0-v4: a consumer group's offsets will be part of the
transaction (the producer then sends them with TxnOffsetCommit)."""
from __future__ import annotations

from kafka.protocol.producer import AddOffsetsToTxnRequest, AddOffsetsToTxnResponse

from ...core import errors
from ...core.api import authz
from ...core.errors import KafkaCoreError
from ..registry import RequestContext
from ._common import (
    KAFKA_ERRORS,
    caller,
    error_code,
    serving_broker,
)
from ._transactions import coordinator

API_KEY = 25
MIN_VERSION = 0
MAX_VERSION = 4


def handle(ctx: RequestContext, request: AddOffsetsToTxnRequest) -> AddOffsetsToTxnResponse:
    cluster = ctx.cluster
    serving_broker(ctx)
    code = errors.NONE
    try:
        refused = authz.add_offsets_to_txn(cluster, caller(ctx), request.transactional_id,
                                           request.group_id)
        if refused:
            raise KafkaCoreError(refused, "")
        coordinator(cluster).add_offsets(request.transactional_id, request.producer_id,
                                         request.producer_epoch, request.group_id,
                                         cluster.now_ms)
    except KAFKA_ERRORS as exc:
        code = error_code(exc)
    return AddOffsetsToTxnResponse(version=ctx.api_version, throttle_time_ms=0, error_code=code)
