"""EndTxn (key 26), v0-v5: commit or abort. The coordinator writes the COMMIT or
ABORT marker to every partition of the transaction before answering, and a commit
makes the transaction's staged consumer offsets visible."""
from __future__ import annotations

from kafka.protocol.producer import EndTxnRequest, EndTxnResponse

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

API_KEY = 26
MIN_VERSION = 0
MAX_VERSION = 5


def handle(ctx: RequestContext, request: EndTxnRequest) -> EndTxnResponse:
    cluster = ctx.cluster
    serving_broker(ctx)
    code = errors.NONE
    try:
        refused = authz.transaction(cluster, caller(ctx), request.transactional_id)
        if refused:
            raise KafkaCoreError(refused, "")
        coordinator(cluster).end_txn(request.transactional_id, request.producer_id,
                                     request.producer_epoch, bool(request.committed))
    except KAFKA_ERRORS as exc:
        code = error_code(exc)
    return EndTxnResponse(version=ctx.api_version, throttle_time_ms=0, error_code=code,
                          producer_id=request.producer_id,
                          producer_epoch=request.producer_epoch)
