"""DescribeTransactions (key 65), v0 (kafka-transactions.sh describe): each transactional
id's state, producer id and epoch, timeout, start time and partitions, from its
coordinator (NOT_COORDINATOR elsewhere, TRANSACTIONAL_ID_NOT_FOUND for an unknown id)."""
from __future__ import annotations

from kafka.protocol.admin import DescribeTransactionsRequest, DescribeTransactionsResponse

from ...core import api
from ...core.api import authz
from ..registry import RequestContext
from ._common import caller, serving_broker

API_KEY = 65
MIN_VERSION = 0
MAX_VERSION = 0

_State = DescribeTransactionsResponse.TransactionState
_Topic = _State.TopicData


def handle(ctx: RequestContext,
           request: DescribeTransactionsRequest) -> DescribeTransactionsResponse:
    serving_broker(ctx)
    # DESCRIBE on each transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED), and
    # on each topic of a transaction: one the principal may not describe is left out.
    ids = list(request.transactional_ids)
    who = caller(ctx)
    refused = authz.describe_transactions(ctx.cluster, who, ids)
    described = iter(api.describe_transactions(ctx.cluster, ctx.broker_id,
                                               [t for t in ids if t not in refused]))
    states = []
    for transactional_id in ids:
        if transactional_id in refused:
            states.append(_State(
                error_code=refused[transactional_id],
                transactional_id=transactional_id, transaction_state="",
                transaction_timeout_ms=0, transaction_start_time_ms=-1, producer_id=-1,
                producer_epoch=-1, topics=[]))
            continue
        d = next(described)
        hidden = authz.describe_topics(ctx.cluster, who, d.partitions)
        states.append(_State(
            error_code=d.error_code, transactional_id=d.transactional_id,
            transaction_state=d.state, transaction_timeout_ms=d.timeout_ms,
            transaction_start_time_ms=d.start_time_ms, producer_id=d.producer_id,
            producer_epoch=d.producer_epoch,
            topics=[_Topic(topic=t, partitions=ps) for t, ps in d.partitions.items()
                    if t not in hidden]))
    return DescribeTransactionsResponse(version=ctx.api_version, throttle_time_ms=0,
                                        transaction_states=states)
