"""Produce (key 0): the broker side is Broker.handle_produce, which both doors call;
this module keeps the history of what producers were told.

A write is acknowledged when its producer learns the offset: the in-process producer
when the answer reaches it through the simulated network (a lost answer acknowledges
nothing), the wire handler when it sends the answer. Both record the same
"produce.acked" event, so the checkers (minikafka.core.checkers), the replay slider
and `minikafka dump` see the writes of real clients too.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from .. import errors
from . import authz

if TYPE_CHECKING:
    from ..journal import Event, Journal
    from ..records import RecordBatch
    from .authz import Caller
    from .port import ClusterPort


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


def refusals(cluster: ClusterPort, caller: Caller, transactional_id: str | None, acks: int,
             partitions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], int]:
    """The partitions a Produce refuses before reading their records, in Kafka's order:
    INVALID_REQUIRED_ACKS, the authorizer's refusal, UNKNOWN_TOPIC_OR_PARTITION."""
    partitions = list(partitions)
    if acks not in (0, 1, -1):
        return dict.fromkeys(partitions, errors.INVALID_REQUIRED_ACKS)
    refused = authz.produce(cluster, caller, transactional_id, {t for t, _ in partitions})
    topics = cluster.controller.topics
    out = {}
    for tp in partitions:
        meta = topics.get(tp[0])
        code = refused.get(tp[0], errors.NONE)
        if not code and (meta is None or not 0 <= tp[1] < len(meta.partitions)):
            code = errors.UNKNOWN_TOPIC_OR_PARTITION
        if code:
            out[tp] = code
    return out


def produce(cluster: ClusterPort, broker, caller: Caller, transactional_id: str | None,
            acks: int, timeout_ms: int, batches: dict[tuple[str, int], RecordBatch],
            respond: Callable[[dict], None]) -> None:
    """The in-process door's Produce: the wire's checks (`refusals`), then the leader's
    append (Broker.handle_produce); `respond` gets {tp: (code, base offset)} for all."""
    refused = refusals(cluster, caller, transactional_id, acks, batches)
    if not refused:
        broker.handle_produce(batches, acks, timeout_ms, respond)
        return
    answered = {tp: (code, -1) for tp, code in refused.items()}
    accepted = {tp: b for tp, b in batches.items() if tp not in refused}
    if not accepted:
        respond(answered)
        return
    broker.handle_produce(accepted, acks, timeout_ms, lambda out: respond({**answered, **out}))
