"""The transaction coordinator (KIP-98): producer ids and epochs per transactional.id,
the partitions a transaction touched, and the commit or abort markers that end it.

Markers are control batches written to every partition of the transaction; a
read_committed consumer reads up to the last stable offset (LSO), the first offset of
any still-open transaction, and skips records of aborted ones.

Two transaction versions (the `transaction.version` feature; each request says which its
client speaks): version 1 keeps the producer's epoch for the whole session and bumps it only
to fence; version 2 (KIP-890 part 2, Kafka 4.0) bumps it at the end of every transaction,
writes the markers with the new epoch and gives the client that epoch in EndTxn's answer,
so a request delayed from an ended transaction is refused everywhere its marker landed.
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
# around). A coordinator change outside this table is a bug, not a client error. An abort
# from Empty or a completed transaction is transaction version 2's (an EndTxn that bumps the
# epoch although nothing was added).
TXN_TRANSITIONS: dict[TxnState, frozenset[TxnState]] = {
    EMPTY: frozenset({EMPTY, ONGOING, PREPARE_ABORT}),
    ONGOING: frozenset({ONGOING, PREPARE_COMMIT, PREPARE_ABORT}),
    PREPARE_COMMIT: frozenset({COMPLETE_COMMIT}),
    PREPARE_ABORT: frozenset({COMPLETE_ABORT}),
    COMPLETE_COMMIT: frozenset({EMPTY, ONGOING, PREPARE_ABORT}),
    COMPLETE_ABORT: frozenset({EMPTY, ONGOING, PREPARE_ABORT}),
}

# Transaction versions (Kafka's TransactionVersion): 2 bumps the epoch at every EndTxn.
TV_1, TV_2 = 1, 2
MAX_EPOCH = 32767  # Short.MAX_VALUE, kept for the coordinator to fence with


def epoch_exhausted(epoch: int) -> bool:
    """TransactionMetadata.isEpochExhausted: no client may be handed Short.MAX_VALUE, so
    an epoch of 32766 or more takes a new producer id at the next bump."""
    return epoch >= MAX_EPOCH - 1


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
    # The epoch before the last bump (a retried EndTxn of version 2 carries it), the
    # producer id before the last rotation, and the version the last transaction ran.
    last_producer_epoch: int = -1
    previous_producer_id: int = -1
    client_version: int = TV_1
    next_producer_id: int = -1  # allocated when a version-2 end exhausts the epoch


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
                 write_markers: Callable[[set, int, int, bool, int], None],
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
        instance already took the id. An exhausted epoch takes a new producer id at
        epoch 0 (prepareProducerIdRotation)."""
        if timeout_ms <= 0 or timeout_ms > self.max_timeout_ms:
            raise errors.KafkaCoreError(errors.INVALID_TRANSACTION_TIMEOUT,
                                        f"transaction timeout {timeout_ms} ms is not allowed")
        meta = self.transactions.get(txn_id)
        if meta is None:
            meta = TransactionMetadata(txn_id, self.allocate_producer_id(), 0, timeout_ms)
            self.transactions[txn_id] = meta
            return meta.producer_id, meta.producer_epoch
        if current is not None and current[0] >= 0 and current[0] != meta.producer_id and not (
                current[0] == meta.previous_producer_id and epoch_exhausted(current[1])):
            raise errors.KafkaCoreError(
                errors.PRODUCER_FENCED,
                f"producer id {current[0]} of {txn_id} is fenced by {meta.producer_id}")
        if current is not None and current[0] == meta.producer_id and \
                current[1] != meta.producer_epoch and current[1] != meta.last_producer_epoch:
            raise errors.KafkaCoreError(
                errors.PRODUCER_FENCED,
                f"producer epoch {current[1]} of {txn_id} is fenced by epoch {meta.producer_epoch}")
        meta.timeout_ms = timeout_ms
        if meta.state == ONGOING:
            # Kafka fences and aborts (PrepareEpochFence), answers CONCURRENT_TRANSACTIONS,
            # and bumps again when the client retries: the new producer gets epoch + 2.
            self._end(meta, commit=False, fence=True)
        if epoch_exhausted(meta.producer_epoch) and (
                current is None or current[1] == meta.producer_epoch):
            meta.last_producer_epoch = meta.producer_epoch if current is not None else -1
            meta.previous_producer_id = meta.producer_id
            meta.producer_id, meta.producer_epoch = self.allocate_producer_id(), 0
        elif current is not None and current[0] == meta.producer_id and \
                current[1] == meta.last_producer_epoch:
            pass  # a retry of a bump that succeeded: the same epoch again
        else:
            meta.last_producer_epoch = meta.producer_epoch if current is not None else -1
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

    def add_partitions(self, txn_id: str, producer_id: int, epoch: int, tps, now_ms: int,
                       version: int = TV_1) -> None:
        """AddPartitionsToTxn: from a client of transaction version 1, or (`version` 2)
        from a partition leader adding what a Produce of a version-2 client touched."""
        meta = self._check(txn_id, producer_id, epoch)
        if meta.state in (PREPARE_COMMIT, PREPARE_ABORT):
            raise errors.KafkaCoreError(errors.CONCURRENT_TRANSACTIONS, "transaction ending")
        self._begin(meta, now_ms, version)
        meta.partitions.update(tps)

    def add_offsets(self, txn_id: str, producer_id: int, epoch: int, group_id: str,
                    now_ms: int, version: int = TV_1) -> None:
        """AddOffsetsToTxn (version 1), or the group coordinator adding the group's
        partition for a TxnOffsetCommit of a version-2 client."""
        meta = self._check(txn_id, producer_id, epoch)
        self._begin(meta, now_ms, version)
        meta.groups.add(group_id)

    @staticmethod
    def _begin(meta: TransactionMetadata, now_ms: int, version: int) -> None:
        if meta.state != ONGOING:
            _move(meta, ONGOING)
            meta.started_ms = now_ms
            meta.partitions, meta.groups = set(), set()
        meta.client_version = version

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

    def end_txn(self, txn_id: str, producer_id: int, epoch: int, commit: bool,
                 version: int = TV_1) -> tuple[int, int]:
        """EndTxn: commit or abort; the producer id and epoch the client goes on with
        (EndTxn v5 returns them). Version 2 bumps the epoch (a new producer id at epoch 0
        once it is exhausted) and may abort with nothing added; a retry of an EndTxn
        that succeeded (the epoch before the bump) is answered again."""
        if version >= TV_2:
            return self._end_txn_v2(txn_id, producer_id, epoch, commit)
        meta = self._check(txn_id, producer_id, epoch)
        if meta.state != EMPTY:
            if meta.state != ONGOING:
                raise errors.KafkaCoreError(errors.INVALID_TXN_STATE,
                                            f"cannot end a transaction in state {meta.state}")
            meta.client_version = TV_1
            self._end(meta, commit)
        return meta.producer_id, meta.producer_epoch

    def _end_txn_v2(self, txn_id: str, producer_id: int, epoch: int,
                    commit: bool) -> tuple[int, int]:
        """TransactionCoordinator.endTransaction for transaction version 2."""
        meta = self.transactions.get(txn_id)
        if meta is None:
            raise errors.KafkaCoreError(errors.INVALID_PRODUCER_ID_MAPPING,
                                        f"unknown transactional id {txn_id}")
        retry_on_overflow = meta.previous_producer_id == producer_id and \
            epoch == MAX_EPOCH - 1 and meta.producer_epoch == 0
        retry_on_bump = meta.producer_epoch == epoch + 1
        state = meta.state
        if state in (ONGOING, EMPTY):
            valid = epoch == meta.producer_epoch
        elif state in (PREPARE_COMMIT, PREPARE_ABORT):
            valid = retry_on_bump
        else:
            valid = retry_on_bump or retry_on_overflow or epoch == meta.producer_epoch
        if meta.producer_id != producer_id and not retry_on_overflow:
            raise errors.KafkaCoreError(errors.INVALID_PRODUCER_ID_MAPPING,
                                        f"producer id {producer_id} is not {txn_id}'s")
        if not valid:
            raise errors.KafkaCoreError(
                errors.PRODUCER_FENCED,
                f"producer epoch {epoch} of {txn_id} is fenced by epoch {meta.producer_epoch}")
        retry = retry_on_bump or retry_on_overflow
        ended = COMPLETE_COMMIT if commit else COMPLETE_ABORT
        if state in (PREPARE_COMMIT, PREPARE_ABORT):
            code = errors.CONCURRENT_TRANSACTIONS if (state == PREPARE_COMMIT) == commit \
                else errors.INVALID_TXN_STATE
            raise errors.KafkaCoreError(code, f"{txn_id} is in state {state}")
        if state == ended and retry:
            return meta.producer_id, meta.producer_epoch
        if state == ONGOING or (not commit and not retry):
            meta.client_version = TV_2
            self._end(meta, commit)
            return meta.producer_id, meta.producer_epoch
        raise errors.KafkaCoreError(errors.INVALID_TXN_STATE,
                                    f"cannot {'commit' if commit else 'abort'} {txn_id} in "
                                    f"state {state}")

    def _end(self, meta: TransactionMetadata, commit: bool, fence: bool = False) -> None:
        """Decide, write the markers, complete. `fence`: the coordinator aborts on its
        own (a new producer, a timeout) with the epoch bumped once to fence the old one
        (PrepareEpochFence), whatever the version (Kafka 4.4.0 writes a fenced version-2
        transaction's markers at epoch + 1 too). Otherwise version 2 bumps the epoch for
        the markers; when that bump exhausts it, the producer goes on with a new id at 0."""
        if fence:
            meta.producer_epoch = min(meta.producer_epoch + 1, MAX_EPOCH)
            meta.last_producer_epoch = -1
        elif meta.client_version >= TV_2:
            if epoch_exhausted(meta.producer_epoch):
                meta.next_producer_id = self.allocate_producer_id()
            meta.last_producer_epoch = meta.producer_epoch
            if meta.producer_epoch < MAX_EPOCH or commit:
                meta.producer_epoch += 1
        _move(meta, PREPARE_COMMIT if commit else PREPARE_ABORT)
        self._decided(meta)
        self._complete(meta, commit)

    def _decided(self, meta: TransactionMetadata) -> None:
        """Hook: the commit or abort is decided, no marker written yet (a logged
        coordinator writes the decision to __transaction_state here)."""

    def _complete(self, meta: TransactionMetadata, commit: bool) -> None:
        """Markers, staged offsets, then CompleteCommit/CompleteAbort: the second half of
        an end, also run on its own for a decision recovered from the log."""
        self.write_markers(set(meta.partitions), meta.producer_id, meta.producer_epoch, commit,
                           meta.client_version)
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
        if meta.next_producer_id >= 0:  # prepareComplete: the client sees 32766, then 0
            meta.previous_producer_id, meta.producer_id = meta.producer_id, meta.next_producer_id
            meta.producer_epoch, meta.next_producer_id = 0, -1
        meta.partitions = set()
        meta.groups = set()

    def expire(self, now_ms: int) -> list[str]:
        """Abort transactions open longer than their timeout (transaction.timeout.ms),
        fencing the timed-out producer (epoch + 1)."""
        expired = []
        for meta in self.transactions.values():
            if meta.state == ONGOING and now_ms - meta.started_ms > meta.timeout_ms:
                self._end(meta, commit=False, fence=True)
                expired.append(meta.transactional_id)
        return expired
