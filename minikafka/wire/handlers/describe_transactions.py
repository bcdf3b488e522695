"""DescribeTransactions (key 65), v0 (kafka-transactions.sh describe): each transactional
id's state, producer id and epoch, timeout, start time and partitions, from its
coordinator (NOT_COORDINATOR elsewhere, TRANSACTIONAL_ID_NOT_FOUND for an unknown id)."""
from __future__ import annotations

from kafka.protocol.admin import DescribeTransactionsRequest, DescribeTransactionsResponse

from ...core import api
from ..registry import RequestContext
from ._common import serving_broker

API_KEY = 65
MIN_VERSION = 0
MAX_VERSION = 0

_State = DescribeTransactionsResponse.TransactionState
_Topic = _State.TopicData


def handle(ctx: RequestContext,
           request: DescribeTransactionsRequest) -> DescribeTransactionsResponse:
    serving_broker(ctx)
    described = api.describe_transactions(ctx.cluster, ctx.broker_id, request.transactional_ids)
    return DescribeTransactionsResponse(
        version=ctx.api_version, throttle_time_ms=0, transaction_states=[
            _State(error_code=d.error_code, transactional_id=d.transactional_id,
                   transaction_state=d.state, transaction_timeout_ms=d.timeout_ms,
                   transaction_start_time_ms=d.start_time_ms, producer_id=d.producer_id,
                   producer_epoch=d.producer_epoch,
                   topics=[_Topic(topic=t, partitions=ps) for t, ps in d.partitions.items()])
            for d in described])
