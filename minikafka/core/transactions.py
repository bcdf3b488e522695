"""The transaction coordinator (KIP-98): producer ids and epochs per transactional.id,
the partitions a transaction touched, and the commit or abort markers that end it.

Markers are control batches written to every partition of the transaction; a
read_committed consumer reads up to the last stable offset (LSO), the first offset of
any still-open transaction, and skips records of aborted ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from . import errors


class TxnState(StrEnum):
    """A transaction's state at its coordinator (Kafka's TransactionState)."""

    EMPTY = "Empty"
    ONGOING = "Ongoing"
    PREPARE_COMMIT = "PrepareCommit"
    PREPARE_ABORT = "PrepareAbort"
    COMPLETE_COMMIT = "CompleteCommit"
    COMPLETE_ABORT = "CompleteAbort"


EMPTY, ONGOING, PREPARE_COMMIT, PREPARE_ABORT, COMPLETE_COMMIT, COMPLETE_ABORT = TxnState

# state -> the states it may move to (Kafka's TransactionState.validPreviousStates, turned
# around). A coordinator change outside this table is a bug, not a client error.
TXN_TRANSITIONS: dict[TxnState, frozenset[TxnState]] = {
    EMPTY: frozenset({EMPTY, ONGOING}),
    ONGOING: frozenset({ONGOING, PREPARE_COMMIT, PREPARE_ABORT}),
    PREPARE_COMMIT: frozenset({COMPLETE_COMMIT}),
    PREPARE_ABORT: frozenset({COMPLETE_ABORT}),
    COMPLETE_COMMIT: frozenset({EMPTY, ONGOING}),
    COMPLETE_ABORT: frozenset({EMPTY, ONGOING}),
}


class ProducerTxnState(StrEnum):
    """A transactional producer's own state (the Java client's TransactionManager.State,
    which kafka-python copies)."""

    UNINITIALIZED = "UNINITIALIZED"
    INITIALIZING = "INITIALIZING"
    READY = "READY"
    IN_TRANSACTION = "IN_TRANSACTION"
    COMMITTING_TRANSACTION = "COMMITTING_TRANSACTION"
    ABORTING_TRANSACTION = "ABORTING_TRANSACTION"
    ABORTABLE_ERROR = "ABORTABLE_ERROR"
    FATAL_ERROR = "FATAL_ERROR"


_P = ProducerTxnState
# state -> the states it may move to (TransactionManager.State.isTransitionValid, turned
# around). FATAL_ERROR can be reached from anywhere and left for nowhere.
PRODUCER_TXN_TRANSITIONS: dict[ProducerTxnState, frozenset[ProducerTxnState]] = {
    _P.UNINITIALIZED: frozenset({_P.INITIALIZING}),
    _P.INITIALIZING: frozenset({_P.READY, _P.ABORTABLE_ERROR}),
    _P.READY: frozenset({_P.UNINITIALIZED, _P.IN_TRANSACTION}),
    _P.IN_TRANSACTION: frozenset({_P.COMMITTING_TRANSACTION, _P.ABORTING_TRANSACTION,
                                  _P.ABORTABLE_ERROR}),
    _P.COMMITTING_TRANSACTION: frozenset({_P.READY, _P.ABORTABLE_ERROR}),
    _P.ABORTING_TRANSACTION: frozenset({_P.INITIALIZING, _P.READY}),
    _P.ABORTABLE_ERROR: frozenset({_P.UNINITIALIZED, _P.ABORTING_TRANSACTION,
                                   _P.ABORTABLE_ERROR}),
    _P.FATAL_ERROR: frozenset(),
}


def producer_transition(source: ProducerTxnState, target: ProducerTxnState) -> ProducerTxnState:
    """`target` if the table allows the move (FATAL_ERROR always), else KafkaCoreError
    INVALID_TXN_STATE with the Java client's wording.

    >>> producer_transition(ProducerTxnState.READY, ProducerTxnState.IN_TRANSACTION)
    <ProducerTxnState.IN_TRANSACTION: 'IN_TRANSACTION'>
    >>> producer_transition(ProducerTxnState.READY, ProducerTxnState.READY)
    Traceback (most recent call last):
    ...
    minikafka.core.errors.KafkaCoreError: Invalid transition attempted from state READY to state READY
    """
    if target is _P.FATAL_ERROR or target in PRODUCER_TXN_TRANSITIONS[source]:
        return target
    raise errors.KafkaCoreError(errors.INVALID_TXN_STATE,
                                f"Invalid transition attempted from state {source} to state "
                                f"{target}")


@dataclass
class TransactionMetadata:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TxnState = EMPTY
    partitions: set = field(default_factory=set)
    groups: set = field(default_factory=set)
    started_ms: int = 0


# Offsets a transaction stages (TxnOffsetCommit): {group id: {(topic, partition): offset}};
# the values are whatever the group coordinator commits (OffsetAndMetadata-like).
StagedOffsets = dict[str, dict[Any, Any]]


def _move(meta: TransactionMetadata, target: TxnState) -> None:
    if target not in TXN_TRANSITIONS[meta.state]:
        raise errors.KafkaCoreError(errors.INVALID_TXN_STATE,
                                    f"{meta.transactional_id}: {meta.state} -> {target} is not "
                                    "a transition of Kafka's TransactionState")
    meta.state = target


class TransactionCoordinator:
    def __init__(self, allocate_producer_id: Callable[[], int],
                 write_markers: Callable[[set, int, int, bool], None],
                 on_end: Callable[[TransactionMetadata, bool, StagedOffsets], None] | None = None,
                 max_timeout_ms: int = 900_000) -> None:
        self.allocate_producer_id = allocate_producer_id
        self.max_timeout_ms = max_timeout_ms  # transaction.max.timeout.ms
        self.write_markers = write_markers
        self.on_end = on_end
        self.transactions: dict[str, TransactionMetadata] = {}
        # producer id -> the offsets its open transaction staged, committed with its marker.
        self.staged_offsets: dict[int, StagedOffsets] = {}
        # A group's __consumer_offsets partition, the one AddOffsetsToTxn puts in the
        # transaction (the cluster sets it; without it a group is its own partition).
        self.group_partition: Callable[[str], Any] = lambda group_id: group_id

    def stage_offsets(self, producer_id: int, group_id: str, offsets: dict) -> None:
        """TxnOffsetCommit: offsets wait beside the transaction until its commit marker."""
        self.staged_offsets.setdefault(producer_id, {}).setdefault(group_id, {}).update(offsets)

    def unstable_offsets(self, group_id: str) -> set[tuple[str, int]]:
        """Partitions whose offsets for `group_id` a still-open transaction staged
        (OffsetFetch with require_stable answers UNSTABLE_OFFSET_COMMIT for them)."""
        return {(tp[0], tp[1]) for by_group in self.staged_offsets.values()
                for tp in by_group.get(group_id, {})}

    def init_producer_id(self, txn_id: str, timeout_ms: int, now_ms: int,
                         current: tuple[int, int] | None = None) -> tuple[int, int]:
        """InitProducerId: a new epoch fences any older producer with the same id; an
        open transaction of the old one is aborted first. A producer that sends its
        `current` (id, epoch) to bump its own epoch (KIP-360) is fenced if a newer
        instance already took the id."""
        if timeout_ms <= 0 or timeout_ms > self.max_timeout_ms:
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
        _move(meta, EMPTY)
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
            _move(meta, ONGOING)
            meta.started_ms = now_ms
            meta.partitions, meta.groups = set(), set()
        meta.partitions.update(tps)

    def add_offsets(self, txn_id: str, producer_id: int, epoch: int, group_id: str,
                    now_ms: int) -> None:
        meta = self._check(txn_id, producer_id, epoch)
        if meta.state != ONGOING:
            _move(meta, ONGOING)
            meta.started_ms = now_ms
            meta.partitions, meta.groups = set(), set()
        meta.groups.add(group_id)

    def verify_partitions(self, txn_id: str, producer_id: int, epoch: int,
                          tps: set) -> dict[tuple[str, int], int]:
        """AddPartitionsToTxn with verify_only (KIP-890), what a partition leader asks
        before it appends a transactional batch: per partition NONE when the ongoing
        transaction includes it, TRANSACTION_ABORTABLE when not; one error for all when
        the producer is unknown, fenced (any other epoch) or its transaction is ending
        (TransactionCoordinator.handleVerifyPartitionsInTransaction)."""
        meta = self.transactions.get(txn_id)
        if meta is None or meta.producer_id != producer_id:
            return dict.fromkeys(tps, errors.INVALID_PRODUCER_ID_MAPPING)
        if meta.producer_epoch != epoch:
            return dict.fromkeys(tps, errors.PRODUCER_FENCED)
        if meta.state in (PREPARE_COMMIT, PREPARE_ABORT):
            return dict.fromkeys(tps, errors.CONCURRENT_TRANSACTIONS)
        added = meta.partitions | self._offsets_partitions(meta)
        return {tp: errors.NONE if tp in added else errors.TRANSACTION_ABORTABLE for tp in tps}

    def _offsets_partitions(self, meta: TransactionMetadata) -> set:
        return {self.group_partition(g) for g in meta.groups}

    def end_txn(self, txn_id: str, producer_id: int, epoch: int, commit: bool) -> None:
        meta = self._check(txn_id, producer_id, epoch)
        if meta.state == EMPTY:
            return
        if meta.state != ONGOING:
            raise errors.KafkaCoreError(errors.INVALID_TXN_STATE,
                                        f"cannot end a transaction in state {meta.state}")
        self._end(meta, commit)

    def _end(self, meta: TransactionMetadata, commit: bool) -> None:
        _move(meta, PREPARE_COMMIT if commit else PREPARE_ABORT)
        self._decided(meta)
        self._complete(meta, commit)

    def _decided(self, meta: TransactionMetadata) -> None:
        """Hook: the commit or abort is decided, no marker written yet (a logged
        coordinator writes the decision to __transaction_state here)."""

    def _complete(self, meta: TransactionMetadata, commit: bool) -> None:
        """Markers, staged offsets, then CompleteCommit/CompleteAbort: the second half of
        an end, also run on its own for a decision recovered from the log."""
        self.write_markers(set(meta.partitions), meta.producer_id, meta.producer_epoch, commit)
        staged = self.staged_offsets.pop(meta.producer_id, {})
        # Offsets in a __consumer_offsets partition the transaction never added (a
        # TxnOffsetCommit let through with partition verification off) get no marker:
        # they stay pending, unstable, as on Kafka, until one of this producer's markers
        # reaches their partition.
        marked = self._offsets_partitions(meta)
        pending = {g: o for g, o in staged.items() if self.group_partition(g) not in marked}
        if pending:
            self.staged_offsets[meta.producer_id] = pending
            staged = {g: o for g, o in staged.items() if g not in pending}
        if self.on_end:
            self.on_end(meta, commit, staged)
        _move(meta, COMPLETE_COMMIT if commit else COMPLETE_ABORT)
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
