"""Produce (key 0): the broker side is Broker.handle_produce, which both doors call;
this module keeps the history of what producers were told.

A write is acknowledged when its producer learns the offset: the in-process producer
when the answer reaches it through the simulated network (a lost answer acknowledges
nothing), the wire handler when it sends the answer. Both record the same
"produce.acked" event, so the checkers (minikafka.core.checkers), the replay slider
and `minikafka dump` see the writes of real clients too.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..journal import Event, Journal
    from ..records import RecordBatch


class BatchRecords(Sequence):
    """A stored batch's records as (offset delta, timestamp, key, value, headers),
    decoded only when read: a batch from a real client stays bytes until then."""

    __slots__ = ("_batch",)

    def __init__(self, batch: RecordBatch) -> None:
        self._batch = batch

    def __len__(self) -> int:
        return self._batch.record_count

    def __getitem__(self, index):  # type: ignore[override]
        return self._batch.records[index]

    def __iter__(self) -> Iterator[tuple]:
        return iter(self._batch.records)

    def __repr__(self) -> str:
        return f"BatchRecords({len(self)} records)"


def record_acked(journal: Journal, now_ms: int, *, client: str, topic: str, partition: int,
                 base_offset: int, records: Sequence, acks: int, broker: int,
                 producer_id: int, sequence: int) -> Event:
    """Journal one acknowledged batch: "produce.acked" with its records."""
    return journal.record(now_ms, "produce.acked", client=client, topic=topic,
                          partition=partition, base_offset=base_offset, count=len(records),
                          acks=acks, broker=broker, producer_id=producer_id,
                          sequence=sequence, records=records)
