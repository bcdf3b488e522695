"""Cluster's coordinators, each made on first use as its internal topic appears: the
group coordinator (__consumer_offsets), the share-group coordinator (KIP-932) and the
transaction coordinator (__transaction_state) with its markers and timeouts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import errors as kerrors
from ..core import api, errors
from ..core.groups.coordinator import GroupCoordinator
from ..core.offsets import OFFSETS_TOPIC
from ..core.records import ABORT_MARKER, COMMIT_MARKER, control_batch
from ..core.share.coordinator import ShareGroupCoordinator
from ..core.transactions import TransactionCoordinator, TransactionMetadata
from .base import ClusterBase

TXN_MARKER_RETRY_MS = 100  # how soon an undelivered transaction marker is tried again



class Coordinators(ClusterBase):
    def _recover_transactions(self) -> set[int]:
        """The transaction coordinator replays __transaction_state (if transactions were
        ever used); returns the producer ids of the transactions it holds open."""
        from ..core.transactions import ONGOING
        from ..core.txn_log import TXN_TOPIC
        if TXN_TOPIC not in self.controller.topics:
            return set()
        coordinator = self.transaction_coordinator
        held = {}
        for meta in coordinator.transactions.values():
            if meta.state == ONGOING:
                held[meta.producer_id] = meta
                self.recovery_messages.append(
                    f"transaction {meta.transactional_id} (producer id {meta.producer_id}) is "
                    f"open: aborted once {meta.timeout_ms} ms old unless it ends first")
        return set(held)

    @property
    def transaction_coordinator(self) -> TransactionCoordinator:
        """The transaction coordinator; like __transaction_state, it appears on first use.
        Markers go to each partition's leader; one without a leader keeps its transaction
        open (its LSO does not move) until a leader is back, as Kafka's marker channel
        keeps retrying."""
        if self.transactions is None:
            args = (lambda: api.producer_id.allocate_producer_id(self), self._write_txn_markers,
                    self._txn_ended, int(self.broker_config["transaction.max.timeout.ms"]))
            if self.log_dirs:  # on disk, __transaction_state keeps it across restarts
                from ..core.txn_log import LoggedTransactionCoordinator, load, writer
                self.transactions = LoggedTransactionCoordinator(*args)
                self.transactions.persist = writer(self)
                self.transactions.recover(load(self))
            else:
                self.transactions = TransactionCoordinator(*args)
            self.transactions.group_partition = self._group_offsets_partition
            self.clock.call_later(self._txn_cleanup_interval_ms, self._abort_timed_out_txns)
        return self.transactions

    @property
    def _txn_cleanup_interval_ms(self) -> int:
        return int(self.broker_config[
            "transaction.abort.timed.out.transaction.cleanup.interval.ms"])

    def _write_txn_markers(self, tps: set, pid: int, epoch: int, commit: bool,
                           transaction_version: int = 1) -> None:
        for tp in sorted(tps):
            self._deliver_txn_marker(tp, pid, epoch, commit)
        self.journal.record(self.now_ms, "txn.markers", producer_id=pid, epoch=epoch,
                            commit=commit, partitions=sorted(f"{t}-{p}" for t, p in tps),
                            transaction_version=transaction_version)

    def _deliver_txn_marker(self, tp: tuple[str, int], pid: int, epoch: int, commit: bool,
                            late: bool = False) -> None:
        replica = self.leader_replica(*tp)
        if replica is None:
            self.clock.call_later(TXN_MARKER_RETRY_MS, self._deliver_txn_marker, tp, pid, epoch,
                                  commit, True)
            return
        marker = control_batch(COMMIT_MARKER if commit else ABORT_MARKER, pid, epoch,
                               self.now_ms)
        self.brokers[replica.broker_id].handle_produce({tp: marker}, 1, 30_000, lambda r: None)
        if late:
            self.journal.record(self.now_ms, "txn.marker.late", producer_id=pid, epoch=epoch,
                                commit=commit, partition=f"{tp[0]}-{tp[1]}")

    def _group_offsets_partition(self, group_id: str) -> tuple[str, int]:
        return (OFFSETS_TOPIC, self.groups.partition_for(group_id))

    def _txn_ended(self, meta: TransactionMetadata, commit: bool, staged: dict) -> None:
        if commit:
            for group_id, offsets in staged.items():
                self.groups.commit_transactional(group_id, offsets)

    def _abort_timed_out_txns(self) -> None:
        """The coordinator's periodic check: a transaction open longer than its
        transaction.timeout.ms is aborted and its producer fenced (epoch + 1)."""
        now = self.now_ms
        for txn_id in self.transactions.expire(now):
            self.journal.record(now, "txn.timed_out", transactional_id=txn_id)
        self.clock.call_later(self._txn_cleanup_interval_ms, self._abort_timed_out_txns)

    @property
    def groups(self) -> GroupCoordinator:
        """The group coordinator; like __consumer_offsets, it appears on first use."""
        if self._groups is None:
            self._groups = GroupCoordinator(self)
        return self._groups

    @property
    def share_groups(self) -> ShareGroupCoordinator:
        """The share-group coordinator (KIP-932), made on first use; with log directories
        its state is kept in share-group-state.json beside them."""
        if self._share_groups is None:
            self._share_groups = ShareGroupCoordinator(self)
            if self.log_dirs:
                from ..core.share import state_file
                path = next(iter(self.log_dirs.values())).path.parent / state_file.FILE_NAME
                self._share_groups.restore(state_file.load(path))
                self._share_groups.persist = state_file.writer(path)
        return self._share_groups


    def alter_share_group_config(self, group_id: str, changes: Mapping[str, Any]) -> None:
        """A share group's own configs (share.auto.offset.reset, share.record.lock.duration.ms,
        share.delivery.count.limit, ...), as `kafka-configs --entity-type groups` sets them."""
        try:
            self.share_groups.alter_group_config(group_id, changes)
        except errors.KafkaCoreError as exc:
            raise kerrors.translate(exc) from None

