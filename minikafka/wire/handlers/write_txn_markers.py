"""WriteTxnMarkers (key 27), v1-v2 (kafka-transactions.sh abort, and a coordinator's
markers): a thin codec over core.api.write_txn_markers for the broker the request came to.
Kafka 4.x accepts v1 and up; v2 adds the marker's transaction version, which decides how
the leader checks the marker's epoch (core.api.txn_markers)."""
from __future__ import annotations

from kafka.protocol.producer.transaction import WriteTxnMarkersRequest, WriteTxnMarkersResponse

from ...core import api
from ...core.api import authz
from ..registry import RequestContext
from ._common import caller, serving_broker

API_KEY = 27
MIN_VERSION = 1
MAX_VERSION = 2

_Marker = WriteTxnMarkersResponse.WritableTxnMarkerResult
_Topic = _Marker.WritableTxnMarkerTopicResult
_Partition = _Topic.WritableTxnMarkerPartitionResult


def handle(ctx: RequestContext, request: WriteTxnMarkersRequest) -> WriteTxnMarkersResponse:
    broker = serving_broker(ctx)
    markers = [api.TxnMarker(m.producer_id, m.producer_epoch, m.transaction_result,
                             tuple((t.name, p) for t in m.topics for p in t.partition_indexes),
                             m.coordinator_epoch,
                             getattr(m, "transaction_version", 0) if ctx.api_version >= 2 else 0)
               for m in request.markers]
    refused = authz.write_txn_markers(ctx.cluster, caller(ctx))
    results = ([dict.fromkeys(m.partitions, refused) for m in markers] if refused
               else api.write_txn_markers(ctx.cluster, broker.id, markers))
    out = []
    for marker, codes in zip(markers, results):
        topics: dict[str, list] = {}
        for (topic, p), code in codes.items():
            topics.setdefault(topic, []).append(_Partition(partition_index=p, error_code=code))
        out.append(_Marker(producer_id=marker.producer_id,
                           topics=[_Topic(name=t, partitions=ps) for t, ps in topics.items()]))
    return WriteTxnMarkersResponse(version=ctx.api_version, markers=out)
