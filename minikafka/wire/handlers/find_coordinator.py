"""FindCoordinator (key 10), v0-v6: which broker coordinates a transactional id or
a consumer group; v4+ asks for several keys at once.

Transactions: minikafka's coordinator is cluster-wide, so any live broker serves
it; the key hashes (Java's String.hashCode, as Kafka places __transaction_state
partitions) onto the live brokers, and a client whose coordinator dies asks again.

Groups are answered by the group coordinator only once the group APIs are served
(a JoinGroup handler is registered); until then COORDINATOR_NOT_AVAILABLE, which
clients retry, rather than naming a coordinator they could not join.
"""
from __future__ import annotations

from collections.abc import Callable

from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse

from ...core import api, errors
from ...core.api import authz
from ...core.errors import INVALID_REQUEST, KafkaCoreError
from ..listeners import endpoint
from ..registry import RequestContext
from ._common import (
    KAFKA_ERRORS,
    caller,
    error_code,
    error_message,
    group_coordinator,
    serving_broker,
)

API_KEY = 10
MIN_VERSION = 0
MAX_VERSION = 6

GROUP, TRANSACTION = authz.GROUP_KEY, authz.TRANSACTION_KEY

_Coordinator = FindCoordinatorResponse.Coordinator


def _transaction_coordinator(ctx: RequestContext, key: str) -> int:
    return api.transaction_coordinator_id(ctx.cluster, key)


RESOLVERS: dict[int, Callable[[RequestContext, str], int]] = {
    GROUP: group_coordinator,
    TRANSACTION: _transaction_coordinator,
}


def _find(ctx: RequestContext, key_type: int, key: str) -> tuple[int, str | None, int, str, int]:
    """(error code, message, node id, host, port)."""
    resolver = RESOLVERS.get(key_type)
    refused = authz.find_coordinator(ctx.cluster, caller(ctx), key_type, key)
    if refused:
        return refused, None, -1, "", -1
    try:
        if resolver is None:
            raise KafkaCoreError(INVALID_REQUEST, f"Unknown coordinator type {key_type}")
        node = resolver(ctx, key)
    except KAFKA_ERRORS as exc:
        return error_code(exc), error_message(exc), -1, "", -1
    host, port = endpoint(ctx.cluster, node, ctx.listener)
    return errors.NONE, None, node, host, port


def handle(ctx: RequestContext, request: FindCoordinatorRequest) -> FindCoordinatorResponse:
    serving_broker(ctx)
    version = ctx.api_version
    key_type = request.key_type if version >= 1 else GROUP
    if version >= 4:
        coordinators = []
        for key in request.coordinator_keys:
            code, message, node, host, port = _find(ctx, key_type, key)
            coordinators.append(_Coordinator(key=key, node_id=node, host=host, port=port,
                                             error_code=code, error_message=message))
        return FindCoordinatorResponse(version=version, throttle_time_ms=0,
                                       coordinators=coordinators)
    code, message, node, host, port = _find(ctx, key_type, request.key)
    return FindCoordinatorResponse(version=version, throttle_time_ms=0, error_code=code,
                                   error_message=message, node_id=node, host=host, port=port)
