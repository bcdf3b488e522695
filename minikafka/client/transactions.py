"""Wiring of the cluster's transaction coordinator for in-process producers."""

from __future__ import annotations

from typing import Any

from ..core.records import ABORT_MARKER, COMMIT_MARKER, control_batch
from ..core.transactions import TransactionCoordinator, TransactionMetadata

MARKER_RETRY_MS = 100  # how soon an undelivered transaction marker is tried again


def transaction_coordinator(cluster: Any) -> TransactionCoordinator:
    """The cluster's coordinator, created on first use (as __transaction_state is)."""
    if cluster.transactions is None:
        def deliver_marker(tp: tuple[str, int], pid: int, epoch: int, commit: bool,
                           late: bool = False) -> None:
            # Kafka's marker channel keeps trying until the partition has a leader again:
            # until then the transaction stays open there (its LSO does not move).
            replica = cluster.leader_replica(*tp)
            if replica is None:
                cluster.clock.call_later(MARKER_RETRY_MS, deliver_marker, tp, pid, epoch,
                                         commit, True)
                return
            marker = control_batch(COMMIT_MARKER if commit else ABORT_MARKER, pid, epoch,
                                   cluster.now_ms)
            cluster.brokers[replica.broker_id].handle_produce({tp: marker}, 1, 30_000,
                                                              lambda r: None)
            if late:
                cluster.journal.record(cluster.now_ms, "txn.marker.late", producer_id=pid,
                                       epoch=epoch, commit=commit,
                                       partition=f"{tp[0]}-{tp[1]}")

        def write_markers(tps: set, pid: int, epoch: int, commit: bool) -> None:
            for tp in sorted(tps):
                deliver_marker(tp, pid, epoch, commit)
            cluster.journal.record(cluster.now_ms, "txn.markers", producer_id=pid, epoch=epoch,
                                   commit=commit, partitions=sorted(f"{t}-{p}" for t, p in tps))

        def on_end(meta: TransactionMetadata, commit: bool) -> None:
            pending = _staged(cluster).pop(meta.producer_id, {})
            if commit and cluster.groups is not None:
                for group_id, offsets in pending.items():
                    cluster.groups.commit_transactional(group_id, offsets)

        args = (cluster.allocate_producer_id, write_markers, on_end,
                int(cluster.broker_config["transaction.max.timeout.ms"]))
        if cluster.log_dirs:  # on disk, __transaction_state keeps it across restarts
            from ..core.txn_log import LoggedTransactionCoordinator, load, writer
            cluster.transactions = LoggedTransactionCoordinator(*args)
            cluster.transactions.persist = writer(cluster)
            cluster.transactions.recover(load(cluster))
        else:
            cluster.transactions = TransactionCoordinator(*args)
        interval = int(cluster.broker_config[
            "transaction.abort.timed.out.transaction.cleanup.interval.ms"])

        def abort_timed_out() -> None:
            # The coordinator's periodic check: a transaction open longer than its
            # transaction.timeout.ms is aborted and its producer fenced (epoch + 1).
            now = cluster.now_ms
            for txn_id in cluster.transactions.expire(now):
                cluster.journal.record(now, "txn.timed_out", transactional_id=txn_id)
            cluster.clock.call_later(interval, abort_timed_out)

        cluster.clock.call_later(interval, abort_timed_out)
    return cluster.transactions


def _staged(cluster: Any) -> dict:
    if not hasattr(cluster, "_staged_txn_offsets"):
        cluster._staged_txn_offsets = {}
    return cluster._staged_txn_offsets


def stage_offsets(cluster: Any, txn_id: str, producer_id: int, group_id: str, offsets) -> None:
    """TxnOffsetCommit: offsets wait beside the transaction until its commit marker."""
    _staged(cluster).setdefault(producer_id, {}).setdefault(group_id, {}).update(offsets)
