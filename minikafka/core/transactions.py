"""The transaction coordinator (KIP-98): producer ids and epochs per transactional.id,
the partitions a transaction touched, and the commit or abort markers that end it.

Markers are control batches written to every partition of the transaction; a
read_committed consumer reads up to the last stable offset (LSO), the first offset of
any still-open transaction, and skips records of aborted ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from . import errors

EMPTY, ONGOING, PREPARE_COMMIT, PREPARE_ABORT, COMPLETE_COMMIT, COMPLETE_ABORT = (
    "Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort")


@dataclass
class TransactionMetadata:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: str = EMPTY
    partitions: set = field(default_factory=set)
    groups: set = field(default_factory=set)
    started_ms: int = 0


class TransactionCoordinator:
    def __init__(self, allocate_producer_id: Callable[[], int],
                 write_markers: Callable[[set, int, int, bool], None],
                 on_end: Callable[[TransactionMetadata, bool], None] | None = None) -> None:
        self.allocate_producer_id = allocate_producer_id
        self.write_markers = write_markers
        self.on_end = on_end
        self.transactions: dict[str, TransactionMetadata] = {}

    def init_producer_id(self, txn_id: str, timeout_ms: int, now_ms: int,
                         current: tuple[int, int] | None = None) -> tuple[int, int]:
        """InitProducerId: a new epoch fences any older producer with the same id; an
        open transaction of the old one is aborted first. A producer that sends its
        `current` (id, epoch) to bump its own epoch (KIP-360) is fenced if a newer
        instance already took the id."""
        if timeout_ms <= 0 or timeout_ms > 900_000:  # transaction.max.timeout.ms
            raise errors.KafkaCoreError(errors.INVALID_TRANSACTION_TIMEOUT,
                                        f"transaction timeout {timeout_ms} ms is not allowed")
        meta = self.transactions.get(txn_id)
        if meta is None:
            meta = TransactionMetadata(txn_id, self.allocate_producer_id(), 0, timeout_ms)
            self.transactions[txn_id] = meta
            return meta.producer_id, meta.producer_epoch
        if current is not None and current[0] >= 0 and \
                current != (meta.producer_id, meta.producer_epoch):
            raise errors.KafkaCoreError(
                errors.PRODUCER_FENCED,
                f"producer epoch {current[1]} of {txn_id} is fenced by epoch {meta.producer_epoch}")
        meta.producer_epoch += 1
        meta.timeout_ms = timeout_ms
        if meta.state == ONGOING:
            self._end(meta, commit=False)
            # Kafka fences and aborts with that first bump, answers CONCURRENT_TRANSACTIONS,
            # and bumps again when the client retries: the new producer gets epoch + 2.
            meta.producer_epoch += 1
        meta.state = EMPTY
        return meta.producer_id, meta.producer_epoch

    def _check(self, txn_id: str, producer_id: int, epoch: int) -> TransactionMetadata:
        meta = self.transactions.get(txn_id)
        if meta is None or meta.producer_id != producer_id:
            raise errors.KafkaCoreError(errors.INVALID_PRODUCER_ID_MAPPING,
                                        f"unknown transactional id {txn_id}")
        if epoch < meta.producer_epoch:
            raise errors.KafkaCoreError(
                errors.PRODUCER_FENCED,
                f"producer epoch {epoch} of {txn_id} is fenced by epoch {meta.producer_epoch}")
        return meta

    def add_partitions(self, txn_id: str, producer_id: int, epoch: int, tps, now_ms: int) -> None:
        meta = self._check(txn_id, producer_id, epoch)
        if meta.state in (PREPARE_COMMIT, PREPARE_ABORT):
            raise errors.KafkaCoreError(errors.CONCURRENT_TRANSACTIONS, "transaction ending")
        if meta.state != ONGOING:
            meta.state, meta.started_ms = ONGOING, now_ms
            meta.partitions, meta.groups = set(), set()
        meta.partitions.update(tps)

    def add_offsets(self, txn_id: str, producer_id: int, epoch: int, group_id: str,
                    now_ms: int) -> None:
        meta = self._check(txn_id, producer_id, epoch)
        if meta.state != ONGOING:
            meta.state, meta.started_ms = ONGOING, now_ms
            meta.partitions, meta.groups = set(), set()
        meta.groups.add(group_id)

    def end_txn(self, txn_id: str, producer_id: int, epoch: int, commit: bool) -> None:
        meta = self._check(txn_id, producer_id, epoch)
        if meta.state == EMPTY:
            return
        if meta.state != ONGOING:
            raise errors.KafkaCoreError(errors.INVALID_TXN_STATE,
                                        f"cannot end a transaction in state {meta.state}")
        self._end(meta, commit)

    def _end(self, meta: TransactionMetadata, commit: bool) -> None:
        meta.state = PREPARE_COMMIT if commit else PREPARE_ABORT
        self.write_markers(set(meta.partitions), meta.producer_id, meta.producer_epoch, commit)
        if self.on_end:
            self.on_end(meta, commit)
        meta.state = COMPLETE_COMMIT if commit else COMPLETE_ABORT
        meta.partitions = set()
        meta.groups = set()

    def expire(self, now_ms: int) -> list[str]:
        """Abort transactions open longer than their timeout (transaction.timeout.ms)."""
        expired = []
        for meta in self.transactions.values():
            if meta.state == ONGOING and now_ms - meta.started_ms > meta.timeout_ms:
                meta.producer_epoch += 1  # the timed-out producer is fenced
                self._end(meta, commit=False)
                expired.append(meta.transactional_id)
        return expired
