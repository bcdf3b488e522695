"""Wiring of the cluster's transaction coordinator for in-process producers."""

from __future__ import annotations

from typing import Any

from ..core.records import ABORT_MARKER, COMMIT_MARKER, control_batch
from ..core.transactions import TransactionCoordinator, TransactionMetadata


def transaction_coordinator(cluster: Any) -> TransactionCoordinator:
    """The cluster's coordinator, created on first use (as __transaction_state is)."""
    if cluster.transactions is None:
        def write_markers(tps: set, pid: int, epoch: int, commit: bool) -> None:
            now = cluster.now_ms
            for topic, partition in sorted(tps):
                replica = cluster.leader_replica(topic, partition)
                if replica is None:
                    continue
                marker = control_batch(COMMIT_MARKER if commit else ABORT_MARKER, pid, epoch, now)
                broker = cluster.brokers[replica.broker_id]
                broker.handle_produce({(topic, partition): marker}, 1, 30_000, lambda r: None)
            cluster.journal.record(now, "txn.markers", producer_id=pid, epoch=epoch,
                                   commit=commit, partitions=sorted(f"{t}-{p}" for t, p in tps))

        def on_end(meta: TransactionMetadata, commit: bool) -> None:
            pending = _staged(cluster).pop(meta.producer_id, {})
            if commit and cluster.groups is not None:
                for group_id, offsets in pending.items():
                    cluster.groups.commit_transactional(group_id, offsets)

        cluster.transactions = TransactionCoordinator(cluster.allocate_producer_id,
                                                      write_markers, on_end)
    return cluster.transactions


def _staged(cluster: Any) -> dict:
    if not hasattr(cluster, "_staged_txn_offsets"):
        cluster._staged_txn_offsets = {}
    return cluster._staged_txn_offsets


def stage_offsets(cluster: Any, txn_id: str, producer_id: int, group_id: str, offsets) -> None:
    """TxnOffsetCommit: offsets wait beside the transaction until its commit marker."""
    _staged(cluster).setdefault(producer_id, {}).setdefault(group_id, {}).update(offsets)
