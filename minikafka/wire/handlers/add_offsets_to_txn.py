"""AddOffsetsToTxn (key 25), v0-v4: a consumer group's offsets will be part of the
transaction (the producer then sends them with TxnOffsetCommit)."""
from __future__ import annotations

from kafka.protocol.producer import AddOffsetsToTxnRequest, AddOffsetsToTxnResponse

from ...core import errors
from ...core.acl import AclOperation, ResourceType
from ...core.errors import KafkaCoreError
from ..registry import RequestContext
from ._common import (
    KAFKA_ERRORS,
    authorize,
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
        if not authorize(ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID,
                         request.transactional_id):
            raise KafkaCoreError(errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "")
        if not authorize(ctx, AclOperation.READ, ResourceType.GROUP, request.group_id):
            raise KafkaCoreError(errors.GROUP_AUTHORIZATION_FAILED, "")
        coordinator(cluster).add_offsets(request.transactional_id, request.producer_id,
                                         request.producer_epoch, request.group_id,
                                         cluster.now_ms)
    except KAFKA_ERRORS as exc:
        code = error_code(exc)
    return AddOffsetsToTxnResponse(version=ctx.api_version, throttle_time_ms=0, error_code=code)
