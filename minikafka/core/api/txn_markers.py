"""WriteTxnMarkers (key 27): write a COMMIT or ABORT marker for one producer into
partitions this broker leads. The transaction coordinator sends it to end a transaction;
`kafka-transactions.sh abort` sends it too (Admin.abortTransaction), to close a hanging
transaction that no coordinator knows of.

Kafka checks each marker as it checks a batch: a partition the broker holds no replica of
is UNKNOWN_TOPIC_OR_PARTITION, one it does not lead NOT_LEADER_OR_FOLLOWER, and a marker
older than the producer's epoch on that partition INVALID_PRODUCER_EPOCH
(ProducerAppendInfo.checkProducerEpoch). A marker of transaction version 2 (WriteTxnMarkers
v2 carries the version) must be newer than that epoch, as its coordinator bumped the epoch
to write it: the same epoch is a duplicate, let through only once the transaction it ended
is closed. minikafka runs one coordinator whose epoch never changes, so the
coordinator-epoch check (TRANSACTION_COORDINATOR_FENCED) never fires.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import errors
from ..records import ABORT_MARKER, COMMIT_MARKER, control_batch

if TYPE_CHECKING:
    from .port import ClusterPort


@dataclass(frozen=True)
class TxnMarker:
    producer_id: int
    producer_epoch: int
    commit: bool
    partitions: tuple[tuple[str, int], ...]
    coordinator_epoch: int = 0
    transaction_version: int = 0  # WriteTxnMarkers v2; 0 below it


def _stale(producers, marker: TxnMarker) -> bool:
    """ProducerAppendInfo.checkProducerEpoch for a marker."""
    entry = producers.producers.get(marker.producer_id)
    if entry is None:
        return False
    if marker.transaction_version < 2:
        return marker.producer_epoch < entry.epoch
    duplicate = marker.producer_epoch == entry.epoch and \
        marker.producer_id not in producers.ongoing
    return marker.producer_epoch <= entry.epoch and not duplicate


def write_txn_markers(cluster: ClusterPort, broker_id: int,
                      markers: Sequence[TxnMarker]) -> list[dict[tuple[str, int], int]]:
    """{(topic, partition): error code} per marker, in order: each partition the broker
    leads gets the marker appended as its leader (the LSO moves past an open transaction
    of that producer)."""
    broker = cluster.brokers[broker_id]
    out = []
    for marker in markers:
        results: dict[tuple[str, int], int] = {}
        for tp in marker.partitions:
            replica = broker.replicas.get(tp)
            if replica is None:
                results[tp] = errors.UNKNOWN_TOPIC_OR_PARTITION
                continue
            if not replica.is_leader:
                results[tp] = errors.NOT_LEADER_OR_FOLLOWER
                continue
            if _stale(replica.producers, marker):
                results[tp] = errors.INVALID_PRODUCER_EPOCH
                continue
            batch = control_batch(COMMIT_MARKER if marker.commit else ABORT_MARKER,
                                  marker.producer_id, marker.producer_epoch, cluster.now_ms)
            broker.handle_produce({tp: batch}, 1, 30_000,
                                  lambda r, tp=tp, out=results: out.__setitem__(tp, r[tp][0]))
        cluster.journal.record(cluster.now_ms, "txn.markers.written", broker=broker_id,
                               producer_id=marker.producer_id, epoch=marker.producer_epoch,
                               commit=marker.commit,
                               transaction_version=marker.transaction_version,
                               errors={f"{t}-{p}": c for (t, p), c in results.items()})
        out.append(results)
    return out
