"""Produce (key 0): the broker side is Broker.handle_produce, which both doors call;
this module keeps the history of what producers were told.

A write is acknowledged when its producer learns the offset: the in-process producer
when the answer reaches it through the simulated network (a lost answer acknowledges
nothing), the wire handler when it sends the answer. Both record the same
"produce.acked" event, so the checkers (minikafka.core.checkers), the replay slider
and `minikafka dump` see the writes of real clients too.

Before the leader appends a transactional batch it checks with the transaction
coordinator that the partition is part of the producer's ongoing transaction (KIP-890
partition verification, Kafka 3.6; `transaction.partition.verification.enable`, on by
default): `unverified`, which `append` runs for both doors. A Produce delayed past its
transaction's end is refused instead of opening a transaction no coordinator will end.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from .. import errors
from ..journal import shape
from ..transactions import TV_2
from . import authz
from .client_quotas import record_and_get_throttle_ms
from .transactions import verification_enabled, verify_in_transaction

if TYPE_CHECKING:
    from ..broker import Broker
    from ..journal import Journal
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


_ACKED = shape("client", "topic", "partition", "base_offset", "count", "acks", "broker",
               "producer_id", "sequence", "records")


def record_acked(journal: Journal, now_ms: int, *, client: str, topic: str, partition: int,
                 base_offset: int, records: Sequence, acks: int, broker: int,
                 producer_id: int, sequence: int) -> None:
    """Journal one acknowledged batch: "produce.acked" with its records."""
    journal.add(now_ms, "produce.acked", _ACKED, client, topic, partition, base_offset,
                len(records), acks, broker, producer_id, sequence, records)


def produce_throttle_ms(cluster: ClusterPort, broker: Broker, principal: str, client_id: str,
                        nbytes: int, now_ms: int) -> int:
    """Count a Produce request's NBYTES against the client's producer_byte_rate quota on
    this broker: the throttle_time_ms Kafka answers with at once (KIP-219: the client then
    waits that long before its next send to this broker), journaled as "produce.throttled"."""
    ms = record_and_get_throttle_ms(broker.quota_samples, cluster.controller.client_quotas,
                                    "producer_byte_rate", principal, client_id, nbytes, now_ms)
    if ms:
        cluster.journal.record(now_ms, "produce.throttled", client=client_id, broker=broker.id,
                               throttle_time_ms=ms)
    return ms


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


# Produce versions as Kafka's AddPartitionsToTxnManager reads them: below v11 the client
# does not know TRANSACTION_ABORTABLE; from v12 it follows transaction version 2, sends
# no AddPartitionsToTxn, and the leader adds the partition to the transaction itself.
FIRST_GENERIC_ERROR_VERSION = 11
FIRST_ADD_PARTITION_VERSION = 12
# The in-process producer is shaped like kafka-python's, which sends Produce v9; it follows
# the finalized transaction.version as the Java client does, with v12 under version 2.
IN_PROCESS_VERSION = 9

# Coordinator answers an older client would not retry: NOT_ENOUGH_REPLICAS, which it
# retries without refreshing metadata (ReplicaManager.handleProduceAppend).
_RETRY_AS_NOT_ENOUGH_REPLICAS = frozenset({
    errors.NETWORK_EXCEPTION, errors.COORDINATOR_LOAD_IN_PROGRESS,
    errors.COORDINATOR_NOT_AVAILABLE, errors.NOT_COORDINATOR})


# The error message Kafka's Produce response gives with a refusal of verification
# (ReplicaManager's custom exception); other refusals carry none.
NOT_IN_TRANSACTION_MESSAGE = "Partition was not added to the transaction"


def _as_produce_error(code: int, version: int) -> int:
    """A coordinator's verification answer as the Produce response gives it
    (AddPartitionsToTxnManager, then ReplicaManager.handleProduceAppend)."""
    if code == errors.PRODUCER_FENCED:
        return errors.INVALID_PRODUCER_EPOCH
    if code == errors.TRANSACTION_ABORTABLE and version < FIRST_GENERIC_ERROR_VERSION:
        return errors.INVALID_TXN_STATE
    if code in _RETRY_AS_NOT_ENOUGH_REPLICAS or (
            code == errors.CONCURRENT_TRANSACTIONS and version < FIRST_ADD_PARTITION_VERSION):
        return errors.NOT_ENOUGH_REPLICAS
    return code


def unverified(cluster: ClusterPort, broker: Broker, transactional_id: str | None,
               batches: dict[tuple[str, int], RecordBatch],
               version: int = IN_PROCESS_VERSION) -> dict[tuple[str, int], int]:
    """The partitions whose transactional batch the leader refuses after asking the
    coordinator, with Produce's error code (KIP-890 partition verification).

    Only a partition this broker leads where the producer has no open transaction at
    this epoch yet is checked (UnifiedLog.maybeStartTransactionVerification): a lower
    epoch than the partition last saw is INVALID_PRODUCER_EPOCH at once; otherwise the
    coordinator answers (TransactionCoordinator.verify_partitions), and from v12 adds
    the partition instead. A partition outside the transaction gets INVALID_TXN_STATE
    below v11, TRANSACTION_ABORTABLE after; an ending transaction NOT_ENOUGH_REPLICAS
    below v12 (retriable), CONCURRENT_TRANSACTIONS from v12. Batches of two producers
    in one request: INVALID_PRODUCER_ID_MAPPING for all."""
    txn = {tp: b for tp, b in batches.items() if b.is_transactional and b.producer_id >= 0}
    if not txn:
        return {}
    if len({(b.producer_id, b.producer_epoch) for b in txn.values()}) > 1:
        return dict.fromkeys(batches, errors.INVALID_PRODUCER_ID_MAPPING)
    # A version-2 client's partition is added whatever the setting: no one else adds it.
    if not transactional_id or (not verification_enabled(broker)
                                and version < FIRST_ADD_PARTITION_VERSION):
        return {}
    out: dict[tuple[str, int], int] = {}
    to_verify = set()
    for tp, batch in txn.items():
        replica = broker.replicas.get(tp)
        if replica is None or not replica.is_leader:
            continue  # the append answers NOT_LEADER_OR_FOLLOWER
        state = replica.producers
        entry = state.producers.get(batch.producer_id)
        if entry is not None and batch.producer_epoch < entry.epoch:
            out[tp] = errors.INVALID_PRODUCER_EPOCH
        elif batch.producer_id not in state.ongoing or entry is None \
                or entry.epoch != batch.producer_epoch:
            to_verify.add(tp)
    if not to_verify:
        return out
    batch = txn[next(iter(to_verify))]
    pid, epoch = batch.producer_id, batch.producer_epoch
    add = None
    if version >= FIRST_ADD_PARTITION_VERSION:
        def add() -> None:
            cluster.transaction_coordinator.add_partitions(transactional_id, pid, epoch,
                                                           to_verify, cluster.now_ms, TV_2)
    answers = verify_in_transaction(cluster, transactional_id, pid, epoch, to_verify, add)
    for tp, code in answers.items():
        if code != errors.NONE:
            out[tp] = _as_produce_error(code, version)
    return out


def append(cluster: ClusterPort, broker: Broker, transactional_id: str | None, acks: int,
           timeout_ms: int, batches: dict[tuple[str, int], RecordBatch],
           respond: Callable[[dict], None], version: int = IN_PROCESS_VERSION) -> None:
    """The leader's side of a Produce whose partitions passed `refusals`: partition
    verification (`unverified`), then Broker.handle_produce for the rest; `respond`
    gets {tp: (code, base offset)} for all of `batches`."""
    refused = unverified(cluster, broker, transactional_id, batches, version)
    _append_rest(broker, acks, timeout_ms, batches, refused, respond)


def _append_rest(broker: Broker, acks: int, timeout_ms: int,
                 batches: dict[tuple[str, int], RecordBatch], refused: dict[tuple[str, int], int],
                 respond: Callable[[dict], None]) -> None:
    if not refused:
        broker.handle_produce(batches, acks, timeout_ms, respond)
        return
    answered = {tp: (code, -1) for tp, code in refused.items()}
    accepted = {tp: b for tp, b in batches.items() if tp not in refused}
    if not accepted:
        respond(answered)
        return
    broker.handle_produce(accepted, acks, timeout_ms, lambda out: respond({**answered, **out}))


def produce(cluster: ClusterPort, broker: Broker, caller: Caller, transactional_id: str | None,
            acks: int, timeout_ms: int, batches: dict[tuple[str, int], RecordBatch],
            respond: Callable[[dict], None], version: int = IN_PROCESS_VERSION) -> None:
    """The in-process door's Produce: the wire's checks (`refusals`), then the leader's
    (`append`: partition verification, Broker.handle_produce); `respond` gets
    {tp: (code, base offset)} for all."""
    refused = refusals(cluster, caller, transactional_id, acks, batches)
    accepted = {tp: b for tp, b in batches.items() if tp not in refused}
    refused.update(unverified(cluster, broker, transactional_id, accepted, version))
    _append_rest(broker, acks, timeout_ms, batches, refused, respond)
