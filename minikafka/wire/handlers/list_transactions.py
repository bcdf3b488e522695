"""ListTransactions (key 66), v0-v2 (kafka-transactions.sh list): the transactions this
broker coordinates, filtered by state, producer id, (v1) running time and (v2) a regular
expression on the id (minikafka.core.api.transactions)."""
from __future__ import annotations

from kafka.protocol.admin import ListTransactionsRequest, ListTransactionsResponse

from ...core import api, errors
from ...core.api import authz
from ..registry import RequestContext
from ._common import caller, serving_broker

API_KEY = 66
MIN_VERSION = 0
MAX_VERSION = 2

_State = ListTransactionsResponse.TransactionState


def handle(ctx: RequestContext, request: ListTransactionsRequest) -> ListTransactionsResponse:
    serving_broker(ctx)
    version = ctx.api_version
    unknown, listed = api.list_transactions(
        ctx.cluster, ctx.broker_id, request.state_filters or (),
        request.producer_id_filters or (), request.duration_filter if version >= 1 else -1,
        request.transactional_id_pattern if version >= 2 else None)
    hidden = authz.hidden_transactions(ctx.cluster, caller(ctx),
                                       [t.transactional_id for t in listed])
    return ListTransactionsResponse(
        version=version, throttle_time_ms=0, error_code=errors.NONE,
        unknown_state_filters=unknown,
        transaction_states=[_State(transactional_id=t.transactional_id,
                                   producer_id=t.producer_id, transaction_state=t.state)
                            for t in listed
                            if t.transactional_id not in hidden])
