"""Idempotence and transactions on the broker side.

ProducerStateManager lives with each replica's log: it remembers, per producer id,
the epoch and the last five batches' sequence ranges (Kafka keeps five, which is why
max.in.flight.requests.per.connection <= 5 keeps order), and the first offset of each
open transaction, which pins the last stable offset (LSO).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from . import errors
from .records import ABORT_MARKER, RecordBatch, control_marker_type

MAX_CACHED_BATCHES = 5


@dataclass
class ProducerEntry:
    epoch: int
    batches: deque = field(default_factory=lambda: deque(maxlen=MAX_CACHED_BATCHES))
    # (first_seq, last_seq, base_offset, last_offset) of recent batches
    last_timestamp: int = -1  # the max timestamp of its last batch (DescribeProducers)

    @property
    def last_seq(self) -> int:
        return self.batches[-1][1] if self.batches else -1


@dataclass(frozen=True)
class AbortedTxn:
    producer_id: int
    first_offset: int
    last_offset: int


class ProducerStateManager:
    def __init__(self) -> None:
        self.producers: dict[int, ProducerEntry] = {}
        self.ongoing: dict[int, int] = {}  # producer id -> first offset of its open txn
        self.aborted: list[AbortedTxn] = []

    def check(self, batch: RecordBatch) -> tuple[int, int, int]:
        """(error code, base and last offset of the original when the batch is a duplicate)."""
        pid = batch.producer_id
        if pid < 0 or batch.is_control:
            return errors.NONE, -1, -1
        entry = self.producers.get(pid)
        if entry is None:
            # No state for this producer (new, or its batches all gone to retention or
            # DeleteRecords): Kafka accepts any sequence number.
            return errors.NONE, -1, -1
        if batch.producer_epoch < entry.epoch:
            # Since Kafka 2.7 (KIP-588) a stale epoch on Produce is INVALID_PRODUCER_EPOCH,
            # transactional or not; PRODUCER_FENCED comes from the transaction coordinator.
            return errors.INVALID_PRODUCER_EPOCH, -1, -1
        if batch.producer_epoch > entry.epoch:
            if batch.base_sequence != 0:
                return errors.OUT_OF_ORDER_SEQUENCE_NUMBER, -1, -1
            return errors.NONE, -1, -1
        for first, last, base, last_offset in entry.batches:
            if first == batch.base_sequence and last == batch.last_sequence:
                return errors.DUPLICATE_SEQUENCE_NUMBER, base, last_offset
        if batch.base_sequence != (entry.last_seq + 1) & 0x7FFFFFFF:
            return errors.OUT_OF_ORDER_SEQUENCE_NUMBER, -1, -1
        return errors.NONE, -1, -1

    def update(self, batch: RecordBatch) -> None:
        """Remember an appended batch (leaders and followers alike)."""
        pid = batch.producer_id
        if pid < 0:
            return
        if batch.is_control:
            entry = self.producers.get(pid)
            if entry is None or batch.producer_epoch > entry.epoch:
                entry = self.producers[pid] = ProducerEntry(batch.producer_epoch)
            entry.last_timestamp = batch.max_timestamp
            first = self.ongoing.pop(pid, None)
            if first is not None and control_marker_type(batch) == ABORT_MARKER:
                self.aborted.append(AbortedTxn(pid, first, batch.base_offset))
            return
        entry = self.producers.get(pid)
        if entry is None or batch.producer_epoch > entry.epoch:
            entry = self.producers[pid] = ProducerEntry(batch.producer_epoch)
        entry.batches.append(
            (batch.base_sequence, batch.last_sequence, batch.base_offset, batch.last_offset))
        entry.last_timestamp = batch.max_timestamp
        if batch.is_transactional and pid not in self.ongoing:
            self.ongoing[pid] = batch.base_offset

    def first_unstable_offset(self) -> int | None:
        return min(self.ongoing.values()) if self.ongoing else None

    def rebuild(self, batches) -> None:
        self.__init__()
        for batch in batches:
            self.update(batch)
