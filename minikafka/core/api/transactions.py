"""ListTransactions (key 66) and DescribeTransactions (key 65): the transaction
coordinator's view, as `kafka-transactions.sh list` and `describe` print it.

minikafka's coordinator is cluster-wide; each transactional id belongs to one live broker
(Java's String.hashCode of the id over the live brokers, what FindCoordinator answers), so
ListTransactions sent to every broker, as the Admin client does, lists each transaction
once, at its coordinator.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .. import errors
from ..offsets import java_string_hash
from ..transactions import TransactionMetadata, TxnState
from .port import ClusterPort

if TYPE_CHECKING:
    from ..broker import Broker

VERIFICATION = "transaction.partition.verification.enable"


@dataclass(frozen=True)
class TransactionListing:
    transactional_id: str
    producer_id: int
    state: str


@dataclass(frozen=True)
class TransactionDescription:
    transactional_id: str
    error_code: int = errors.NONE
    state: str = ""
    timeout_ms: int = 0
    start_time_ms: int = -1
    producer_id: int = -1
    producer_epoch: int = -1
    partitions: dict[str, list[int]] = field(default_factory=dict)


def live_brokers(cluster: ClusterPort) -> list[int]:
    """Brokers that run and are registered unfenced: the ones a client can be sent to."""
    regs = cluster.controller.brokers
    return [b for b in sorted(cluster.brokers)
            if b in regs and not regs[b].fenced and cluster.brokers[b].running]


def transaction_coordinator_id(cluster: ClusterPort, transactional_id: str) -> int:
    """The broker that coordinates `transactional_id`; COORDINATOR_NOT_AVAILABLE if none."""
    live = live_brokers(cluster)
    if not live:
        raise errors.KafkaCoreError(errors.COORDINATOR_NOT_AVAILABLE, "no live brokers")
    return live[(java_string_hash(transactional_id) & 0x7FFFFFFF) % len(live)]


def verification_enabled(broker: Broker) -> bool:
    """transaction.partition.verification.enable (KIP-890, on by default): whether a
    leader asks the coordinator before a transactional write (Produce, TxnOffsetCommit)."""
    return str(broker.config.get(VERIFICATION, True)).lower() == "true"


def verify_in_transaction(cluster: ClusterPort, transactional_id: str, producer_id: int,
                          epoch: int, tps: set, add: Callable[[], object] | None = None
                          ) -> dict[tuple[str, int], int]:
    """The coordinator's answer for the partitions a transactional write is about to touch
    (AddPartitionsToTxn with verify_only, sent by Kafka's AddPartitionsToTxnManager): per
    partition NONE or its error (TransactionCoordinator.verify_partitions). A client of
    transaction version 2 sends no AddPartitionsToTxn: the leader adds the partition
    instead, with `add`. COORDINATOR_NOT_AVAILABLE when no broker can coordinate."""
    try:
        transaction_coordinator_id(cluster, transactional_id)
        if add is not None:
            add()
            return dict.fromkeys(tps, errors.NONE)
        return cluster.transaction_coordinator.verify_partitions(transactional_id, producer_id,
                                                                 epoch, tps)
    except errors.KafkaCoreError as exc:
        return dict.fromkeys(tps, exc.code)


def _start_ms(meta: TransactionMetadata) -> int:
    """txnStartTimestamp: when the last transaction began; -1 before any."""
    return meta.started_ms if meta.state != TxnState.EMPTY else -1


def list_transactions(cluster: ClusterPort, broker_id: int, state_filters: Iterable[str] = (),
                      producer_id_filters: Iterable[int] = (), duration_filter_ms: int = -1,
                      transactional_id_pattern: str | None = None
                      ) -> tuple[list[str], list[TransactionListing]]:
    """(the state filters Kafka does not know, the transactions `broker_id` coordinates
    that pass every filter). A filter left empty (or -1, or None) lets everything by;
    the pattern is a regular expression the whole id must match (KIP-1152)."""
    known = {s.value for s in TxnState}
    states = set(state_filters)
    unknown = sorted(states - known)
    pids = set(producer_id_filters)
    pattern = re.compile(transactional_id_pattern) if transactional_id_pattern else None
    now = cluster.now_ms
    out = []
    for txn_id, meta in sorted(cluster.transaction_coordinator.transactions.items()):
        if transaction_coordinator_id(cluster, txn_id) != broker_id:
            continue
        if states and meta.state.value not in states:
            continue
        if pids and meta.producer_id not in pids:
            continue
        if duration_filter_ms >= 0 and now - _start_ms(meta) <= duration_filter_ms:
            continue
        if pattern is not None and not pattern.fullmatch(txn_id):
            continue
        out.append(TransactionListing(txn_id, meta.producer_id, meta.state.value))
    return unknown, out


def describe_transactions(cluster: ClusterPort, broker_id: int | None,
                          transactional_ids: Iterable[str]) -> list[TransactionDescription]:
    """Each id's state, producer, timeout, start and partitions; TRANSACTIONAL_ID_NOT_FOUND
    for an id the coordinator does not know, NOT_COORDINATOR when `broker_id` (None: any)
    is not the id's coordinator."""
    coordinator = cluster.transaction_coordinator
    out = []
    for txn_id in transactional_ids:
        if broker_id is not None and transaction_coordinator_id(cluster, txn_id) != broker_id:
            out.append(TransactionDescription(txn_id, errors.NOT_COORDINATOR))
            continue
        meta = coordinator.transactions.get(txn_id)
        if meta is None:
            out.append(TransactionDescription(txn_id, errors.TRANSACTIONAL_ID_NOT_FOUND))
            continue
        by_topic: dict[str, list[int]] = {}
        for topic, p in sorted(meta.partitions):
            by_topic.setdefault(topic, []).append(p)
        out.append(TransactionDescription(
            txn_id, errors.NONE, meta.state.value, meta.timeout_ms, _start_ms(meta), meta.producer_id,
            meta.producer_epoch, by_topic))
    return out
