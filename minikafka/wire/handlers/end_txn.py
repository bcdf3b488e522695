"""EndTxn (key 26), v0-v5: commit or abort. The coordinator writes the COMMIT or
ABORT marker to every partition of the transaction before answering, and a commit
makes the transaction's staged consumer offsets visible. v5 is transaction version 2
(KIP-890): the epoch is bumped and the answer carries the producer id and epoch the
client goes on with; an error answers -1 for both."""
from __future__ import annotations

from kafka.protocol.producer import EndTxnRequest, EndTxnResponse

from ...core import errors
from ...core.api import authz
from ...core.errors import KafkaCoreError
from ...core.transactions import TV_1, TV_2
from ..registry import RequestContext
from ._common import (
    KAFKA_ERRORS,
    caller,
    error_code,
    serving_broker,
)
from ._transactions import coordinator

API_KEY = 26
FIRST_TV2_VERSION = 5  # EndTxnRequest.LAST_STABLE_VERSION_BEFORE_TRANSACTION_V2 + 1
MIN_VERSION = 0
MAX_VERSION = 5


def handle(ctx: RequestContext, request: EndTxnRequest) -> EndTxnResponse:
    cluster = ctx.cluster
    serving_broker(ctx)
    code = errors.NONE
    version = TV_2 if ctx.api_version >= FIRST_TV2_VERSION else TV_1
    try:
        refused = authz.transaction(cluster, caller(ctx), request.transactional_id)
        if refused:
            raise KafkaCoreError(refused, "")
        pid, epoch = coordinator(cluster).end_txn(request.transactional_id, request.producer_id,
                                                  request.producer_epoch,
                                                  bool(request.committed), version)
    except KAFKA_ERRORS as exc:
        code = error_code(exc)
        pid, epoch = -1, -1
    return EndTxnResponse(version=ctx.api_version, throttle_time_ms=0, error_code=code,
                          producer_id=pid, producer_epoch=epoch)
