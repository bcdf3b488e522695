"""AddPartitionsToTxn (key 24), v0-v5: partitions join the producer's transaction
before it writes to them. v0-v3 carry one transaction (clients); v4+ a list (what
brokers send to verify, KIP-890), each possibly verify_only: then the coordinator
only answers whether each partition is in the ongoing transaction
(TransactionCoordinator.verify_partitions, which a leader's Produce asks too).

Kafka answers per partition: an unknown one gets UNKNOWN_TOPIC_OR_PARTITION and the
rest OPERATION_NOT_ATTEMPTED; a coordinator error applies to all.
"""
from __future__ import annotations

from kafka.protocol.producer import AddPartitionsToTxnRequest, AddPartitionsToTxnResponse

from ...core import errors
from ...core.api import authz
from ...core.errors import OPERATION_NOT_ATTEMPTED
from ..registry import RequestContext
from ._common import KAFKA_ERRORS, caller, error_code, serving_broker
from ._transactions import coordinator

API_KEY = 24
MIN_VERSION = 0
MAX_VERSION = 5

_Txn = AddPartitionsToTxnResponse.AddPartitionsToTxnResult
_Topic = AddPartitionsToTxnResponse.AddPartitionsToTxnTopicResult
_Partition = _Topic.AddPartitionsToTxnPartitionResult


def _add(ctx: RequestContext, txn_id: str, pid: int, epoch: int, topics,
         verify_only: bool) -> list:
    cluster = ctx.cluster
    wanted = [(t.name, p) for t in topics for p in t.partitions]
    known = cluster.controller.topics
    unknown = {tp for tp in wanted
               if tp[0] not in known or not 0 <= tp[1] < len(known[tp[0]].partitions)}
    refusals = authz.add_partitions_to_txn(cluster, caller(ctx), txn_id,
                                           {tp[0] for tp in wanted})
    codes: dict[tuple[str, int], int] = {}
    if refusals:
        codes = {tp: refusals.get(tp[0], OPERATION_NOT_ATTEMPTED) for tp in wanted}
    elif unknown:
        codes = {tp: errors.UNKNOWN_TOPIC_OR_PARTITION if tp in unknown
                 else OPERATION_NOT_ATTEMPTED for tp in wanted}
    else:
        if verify_only:
            codes = coordinator(cluster).verify_partitions(txn_id, pid, epoch, set(wanted))
        else:
            try:
                coordinator(cluster).add_partitions(txn_id, pid, epoch, set(wanted),
                                                    cluster.now_ms)
                code = errors.NONE
            except KAFKA_ERRORS as exc:
                code = error_code(exc)
            codes = dict.fromkeys(wanted, code)
    return [_Topic(name=t.name, results_by_partition=[
        _Partition(partition_index=p, partition_error_code=codes[(t.name, p)])
        for p in t.partitions]) for t in topics]


def handle(ctx: RequestContext,
           request: AddPartitionsToTxnRequest) -> AddPartitionsToTxnResponse:
    serving_broker(ctx)
    version = ctx.api_version
    if version <= 3:
        results = _add(ctx, request.v3_and_below_transactional_id,
                       request.v3_and_below_producer_id, request.v3_and_below_producer_epoch,
                       request.v3_and_below_topics, False)
        return AddPartitionsToTxnResponse(version=version, throttle_time_ms=0,
                                          results_by_topic_v3_and_below=results)
    by_txn = [_Txn(transactional_id=t.transactional_id,
                   topic_results=_add(ctx, t.transactional_id, t.producer_id,
                                      t.producer_epoch, t.topics, t.verify_only))
              for t in request.transactions]
    return AddPartitionsToTxnResponse(version=version, throttle_time_ms=0,
                                      error_code=errors.NONE, results_by_transaction=by_txn)
