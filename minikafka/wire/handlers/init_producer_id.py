"""InitProducerId (key 22), v0-v5: a producer id and epoch.

Idempotent producers (no transactional id) get a fresh id at epoch 0, or, when
they send their current id and epoch (v3+, KIP-360), the same id at the next
epoch. Transactional producers get their transactional id's id with a bumped
epoch, which fences older instances and aborts their open transaction.
"""
from __future__ import annotations

from kafka.protocol.producer import InitProducerIdRequest, InitProducerIdResponse

from ...core import errors
from ..registry import RequestContext
from ._common import KAFKA_ERRORS, error_code, serving_broker
from ._transactions import coordinator

API_KEY = 22
MIN_VERSION = 0
MAX_VERSION = 5  # v6 is two-phase commit (KIP-939)

_MAX_EPOCH = 32767


def _ids(cluster, request: InitProducerIdRequest, version: int, now_ms: int) -> tuple[int, int]:
    txn_id = request.transactional_id
    if txn_id is not None:
        current = (request.producer_id, request.producer_epoch) if version >= 3 else None
        return coordinator(cluster).init_producer_id(txn_id, request.transaction_timeout_ms,
                                                     now_ms, current)
    if version >= 3 and request.producer_id >= 0 and 0 <= request.producer_epoch < _MAX_EPOCH:
        return request.producer_id, request.producer_epoch + 1
    return cluster.allocate_producer_id(), 0


def handle(ctx: RequestContext, request: InitProducerIdRequest) -> InitProducerIdResponse:
    cluster = ctx.cluster
    serving_broker(ctx)
    code, pid, epoch = errors.NONE, -1, -1
    try:
        pid, epoch = _ids(cluster, request, ctx.api_version, cluster.now_ms)
    except KAFKA_ERRORS as exc:
        code = error_code(exc)
    return InitProducerIdResponse(version=ctx.api_version, throttle_time_ms=0, error_code=code,
                                  producer_id=pid, producer_epoch=epoch)
