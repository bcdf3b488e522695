"""`__transaction_state`: the transaction coordinator's log, kept on disk clusters.

Kafka's coordinator writes every state change of a transactional id to its partition of
`__transaction_state` (`abs(hash(transactional.id)) % transaction.state.log.num.partitions`)
before acting on it, and a coordinator that takes over replays the partition:

    key   = version 0, transactional_id
    value = version 0, producer_id, producer_epoch, transaction_timeout_ms, status,
            [topic, [partition]], last_update_ms, start_ms
    value = version 1 (transaction.version 1 and up): the same fields in the flexible
            encoding, plus tagged fields written when not their default: the previous
            (tag 0) and next (tag 1) producer id, and the client's transaction version
            (tag 2), which transaction version 2's epoch bumps need after a restart

so after a restart a transactional id keeps its producer id (a new producer with that
id fences the old one with a higher epoch), an Ongoing transaction is aborted once it
outlives its timeout, and one that was deciding (PrepareCommit / PrepareAbort) is
completed. minikafka keeps it when the cluster has log directories; in memory the
coordinator's state lives as long as the process.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import TYPE_CHECKING

from . import errors
from .offsets import BinaryReader, BinaryWriter, partition_for
from .records import RecordBatch
from .transactions import (
    COMPLETE_ABORT,
    COMPLETE_COMMIT,
    EMPTY,
    ONGOING,
    PREPARE_ABORT,
    PREPARE_COMMIT,
    TV_1,
    TV_2,
    TransactionCoordinator,
    TransactionMetadata,
)

if TYPE_CHECKING:
    from .api.port import ClusterPort

TXN_TOPIC = "__transaction_state"
# Kafka's TransactionState ids.
STATUS = {EMPTY: 0, ONGOING: 1, PREPARE_COMMIT: 2, PREPARE_ABORT: 3, COMPLETE_COMMIT: 4,
          COMPLETE_ABORT: 5}
STATE = {v: k for k, v in STATUS.items()}
_I8 = struct.Struct(">b")


def txn_key(transactional_id: str) -> bytes:
    return BinaryWriter().i16(0).string(transactional_id).done()


# TransactionLogValue's tagged fields (version 1).
_PREVIOUS_PRODUCER_ID, _NEXT_PRODUCER_ID, _CLIENT_TRANSACTION_VERSION = 0, 1, 2


def txn_value(meta: TransactionMetadata, now_ms: int, version: int = 1) -> bytes:
    """The value Kafka's coordinator writes: version 1 where transaction.version is 1 or
    more (TransactionVersion.transactionLogValueVersion), else version 0."""
    flexible = version >= 1
    w = BinaryWriter().i16(version).i64(meta.producer_id).i16(meta.producer_epoch)
    w.i32(meta.timeout_ms).parts.append(_I8.pack(STATUS[meta.state]))
    topics: dict[str, list[int]] = {}
    for topic, p in sorted(meta.partitions):
        topics.setdefault(topic, []).append(p)
    if flexible:
        w.uvarint(len(topics) + 1)
        for topic, parts in topics.items():
            w.compact_string(topic).uvarint(len(parts) + 1)
            for p in parts:
                w.i32(p)
            w.uvarint(0)  # the partition entry's tagged fields: none
    else:
        w.i32(len(topics))
        for topic, parts in topics.items():
            w.string(topic).i32(len(parts))
            for p in parts:
                w.i32(p)
    w.i64(now_ms).i64(meta.started_ms)
    if flexible:
        # A tagged field is written only when it is not its default (-1, -1, 0); Kafka logs
        # a client before transaction version 2 as TV_0, the default.
        tagged: list[tuple[int, bytes]] = []
        if meta.previous_producer_id != -1:
            tagged.append((_PREVIOUS_PRODUCER_ID, BinaryWriter().i64(meta.previous_producer_id).done()))
        if meta.next_producer_id != -1:
            tagged.append((_NEXT_PRODUCER_ID, BinaryWriter().i64(meta.next_producer_id).done()))
        if meta.client_version >= TV_2:
            tagged.append((_CLIENT_TRANSACTION_VERSION, BinaryWriter().i16(TV_2).done()))
        w.uvarint(len(tagged))
        for tag, raw in tagged:
            w.uvarint(tag).uvarint(len(raw)).parts.append(raw)
    return w.done()


def decode(key: bytes, value: bytes | None) -> tuple[str, TransactionMetadata | None]:
    """(transactional id, its state; None for a tombstone)."""
    k = BinaryReader(key)
    k.i16()
    txn_id = k.string() or ""
    if value is None:
        return txn_id, None
    r = BinaryReader(value)
    flexible = r.i16() >= 1
    pid, epoch, timeout = r.i64(), r.i16(), r.i32()
    (status,) = _I8.unpack_from(r.data, r.pos)
    r.pos += 1
    partitions = set()
    for _ in range(r.uvarint() - 1 if flexible else max(r.i32(), 0)):
        topic = (r.compact_string() if flexible else r.string()) or ""
        partitions.update((topic, r.i32()) for _ in range(r.uvarint() - 1 if flexible else r.i32()))
        if flexible:
            _skip_tagged_fields(r)
    r.i64()  # last update
    started = r.i64()
    meta = TransactionMetadata(txn_id, pid, epoch, timeout, STATE[status], partitions, set(),
                               started)
    if flexible:
        for _ in range(r.uvarint()):
            tag, size = r.uvarint(), r.uvarint()
            end = r.pos + size
            if tag == _PREVIOUS_PRODUCER_ID:
                meta.previous_producer_id = r.i64()
            elif tag == _NEXT_PRODUCER_ID:
                meta.next_producer_id = r.i64()
            elif tag == _CLIENT_TRANSACTION_VERSION:
                meta.client_version = TV_2 if r.i16() >= TV_2 else TV_1
            r.pos = end  # a tag this reader does not know is skipped, as Kafka's reader does
    return txn_id, meta


def _skip_tagged_fields(r: BinaryReader) -> None:
    for _ in range(r.uvarint()):
        r.uvarint()
        r.pos += r.uvarint()


class LoggedTransactionCoordinator(TransactionCoordinator):
    """The coordinator with each state change written to __transaction_state first."""

    persist: Callable[[TransactionMetadata], None] = staticmethod(lambda meta: None)

    def init_producer_id(self, txn_id: str, timeout_ms: int, now_ms: int,
                         current: tuple[int, int] | None = None) -> tuple[int, int]:
        result = super().init_producer_id(txn_id, timeout_ms, now_ms, current)
        self.persist(self.transactions[txn_id])
        return result

    def add_partitions(self, txn_id: str, producer_id: int, epoch: int, tps, now_ms: int,
                       version: int = TV_1) -> None:
        super().add_partitions(txn_id, producer_id, epoch, tps, now_ms, version)
        self.persist(self.transactions[txn_id])

    def add_offsets(self, txn_id: str, producer_id: int, epoch: int, group_id: str,
                    now_ms: int, version: int = TV_1) -> None:
        super().add_offsets(txn_id, producer_id, epoch, group_id, now_ms, version)
        self.persist(self.transactions[txn_id])

    def _decided(self, meta: TransactionMetadata) -> None:
        self.persist(meta)  # the decision is logged before any marker is written

    def _complete(self, meta: TransactionMetadata, commit: bool) -> None:
        super()._complete(meta, commit)
        self.persist(meta)

    def recover(self, logged: dict[str, TransactionMetadata]) -> None:
        """Take over the logged state: a transaction that was deciding is completed
        now; an Ongoing one waits for its timeout, as in Kafka."""
        self.transactions.update(logged)
        for meta in logged.values():
            if meta.state in (PREPARE_COMMIT, PREPARE_ABORT):
                self._complete(meta, meta.state == PREPARE_COMMIT)


def ensure_topic(cluster: ClusterPort) -> None:
    """Create __transaction_state on first use, as Kafka's coordinator does: internal,
    compacted, transaction.state.log.num.partitions partitions."""
    ctl = cluster.controller
    if TXN_TOPIC in ctl.topics:
        return
    live = len(ctl.unfenced())
    if ctl.quorum.leader is None or live == 0:
        raise errors.KafkaCoreError(errors.COORDINATOR_NOT_AVAILABLE, "no active controller")
    partitions = int(cluster.broker_config["transaction.state.log.num.partitions"])
    # transaction.state.log.replication.factor (3), at most the live brokers, as for
    # __consumer_offsets; transaction.state.log.segment.bytes (100 MiB).
    topic = ctl.create_topic(TXN_TOPIC, partitions, min(3, live),
                             {"cleanup.policy": "compact", "segment.bytes": "104857600"},
                             internal=True)
    cluster.journal.record(cluster.now_ms, "topic.created", topic=TXN_TOPIC,
                           partitions=len(topic.partitions),
                           replicas=[list(p.replicas) for p in topic.partitions], internal=True)
    cluster.publish_metadata()


def writer(cluster: ClusterPort) -> Callable[[TransactionMetadata], None]:
    """persist(meta): one record to the transactional id's partition, on its leader."""
    def persist(meta: TransactionMetadata) -> None:
        ensure_topic(cluster)
        partitions = len(cluster.controller.topics[TXN_TOPIC].partitions)
        tp = (TXN_TOPIC, partition_for(meta.transactional_id, partitions))
        replica = cluster.leader_replica(*tp)
        if replica is None:
            raise errors.KafkaCoreError(errors.COORDINATOR_NOT_AVAILABLE,
                                        f"{tp[0]}-{tp[1]} has no leader")
        now = cluster.now_ms
        value = txn_value(meta, now, 1 if cluster.features.get("transaction.version", 0) >= 1 else 0)
        batch = RecordBatch([(0, now, txn_key(meta.transactional_id), value, ())],
                            first_timestamp=now, max_timestamp=now)
        cluster.brokers[replica.broker_id].handle_produce({tp: batch}, 1, 30_000,
                                                          lambda results: None)
    return persist


def load(cluster: ClusterPort) -> dict[str, TransactionMetadata]:
    """Every transactional id's last logged state, read from the partitions' leaders."""
    topic = cluster.controller.topics.get(TXN_TOPIC)
    out: dict[str, TransactionMetadata] = {}
    for p in range(len(topic.partitions) if topic else 0):
        replica = cluster.leader_replica(TXN_TOPIC, p)
        if replica is None:
            continue
        for batch in replica.log.batches():
            for _, _, key, value, _ in batch.records:
                txn_id, meta = decode(key, value)
                if meta is None:
                    out.pop(txn_id, None)
                else:
                    out[txn_id] = meta
    return out
