"""Lesson 23, transactions in operation: a late write that leaves a hanging transaction,
`kafka-transactions.sh find-hanging`'s search over the admin API, and the lesson's
exercise (find the hanging transactions of a topic and abort only those).

`find_hanging()` follows TransactionsCommand.FindHangingTransactionsCommand (Kafka 4.4.0):
DescribeProducers on every partition; an open transaction older than
--max-transaction-timeout (15 minutes) is a candidate; ListTransactions by producer id
and DescribeTransactions then ask the coordinator; the candidate hangs when no
transactional id has that producer id, or the coordinator's transaction does not list the
partition (so it will never write that partition's marker).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafka.admin import AbortTransactionSpec
from kafka.structs import TopicPartition

from ..cluster import Cluster
from ..core.api.produce import append
from ..core.records import RecordBatch
from .exercise_registry import Outcome, exercise
from .reading import read_topic

MAX_TRANSACTION_TIMEOUT_MS = 15 * 60_000  # find-hanging's --max-transaction-timeout default
# The broker setting of a cluster that appends a late transactional write (KIP-890 off).
NO_VERIFICATION = {"transaction.partition.verification.enable": False}
# A producer of transaction version 1 keeps its epoch across transactions, so its late
# write is appended there: any client on a cluster that finalizes version 1, and
# kafka-python 3.0.12 (a version-1 client) on any cluster.
TRANSACTION_VERSION_1 = {"transaction.version": 1}


@dataclass(frozen=True)
class HangingTransaction:
    """One row of `kafka-transactions.sh find-hanging`."""
    topic: str
    partition: int
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    start_offset: int
    last_timestamp: int
    duration_min: int


def late_produce(cluster: Cluster, producer: Any, topic: str, partition: int,
                 value: bytes, timestamp_ms: int | None = None, settle: bool = True,
                 epoch: int | None = None) -> int:
    """A Produce request of `producer` that was delayed in the network and reaches the
    partition's leader only now, after its transaction ended; returns Kafka's error code.
    The leader first asks the coordinator whether the partition is in the producer's
    ongoing transaction (KIP-890 partition verification, Kafka 3.6+): it is not, so the
    write is refused with INVALID_TXN_STATE (48, for kafka-python's Produce v9). With
    `transaction.partition.verification.enable=false` (or a broker before 3.6) the
    leader, which still knows the producer's epoch under transaction version 1, appends
    it: a transaction is open on the partition that no coordinator will end. Under
    transaction version 2 the abort bumped the epoch, so the request, which carries
    `epoch` (the producer's epoch when it was sent; its current one if not given), is
    refused with INVALID_PRODUCER_EPOCH (47) wherever the marker landed.
    `settle` lets the followers fetch it (not on a served cluster, whose clock runs)."""
    tp = (topic, partition)
    seq = producer._sequences.get(tp, 0)
    producer._sequences[tp] = seq + 1
    stamp = cluster.now_ms if timestamp_ms is None else timestamp_ms
    batch = RecordBatch([(0, stamp, None, value, ())], producer_id=producer.producer_id,
                        producer_epoch=producer.producer_epoch if epoch is None else epoch,
                        base_sequence=seq,
                        is_transactional=True, first_timestamp=stamp, max_timestamp=stamp)
    leader = cluster.describe_topic(topic).partitions[partition].leader
    answer: dict = {}
    append(cluster, cluster.brokers[leader], producer.transactional_id, 1, 30_000, {tp: batch},
           answer.update, producer._produce_version)
    if settle:
        cluster.advance(100)
    return answer[tp][0]


def find_hanging(admin: Any, topic: str, now_ms: int,
                 max_transaction_timeout_ms: int = MAX_TRANSACTION_TIMEOUT_MS
                 ) -> list[HangingTransaction]:
    """`kafka-transactions.sh find-hanging --topic TOPIC` at time `now_ms`."""
    partitions = [TopicPartition(topic, p.partition)
                  for p in admin.cluster.describe_topic(topic).partitions]
    candidates = [(tp, state)
                  for tp, found in admin.describe_producers(partitions).items()
                  for state in found.active_producers
                  if state.current_transaction_start_offset >= 0
                  and now_ms - state.last_timestamp > max_transaction_timeout_ms]
    pids = {state.producer_id for _, state in candidates}
    ids = {t.producer_id: t.transactional_id
           for listed in admin.list_transactions(producer_id_filters=pids).values()
           for t in listed} if pids else {}
    described = admin.describe_transactions(sorted(set(ids.values()))) if ids else {}
    hanging = []
    for tp, state in candidates:
        description = described.get(ids.get(state.producer_id))
        if description is not None and tp in description.topic_partitions:
            continue  # the coordinator will still write this partition's marker
        hanging.append(HangingTransaction(
            tp.topic, tp.partition, state.producer_id, state.producer_epoch,
            state.coordinator_epoch, state.current_transaction_start_offset,
            state.last_timestamp, (now_ms - state.last_timestamp) // 60_000))
    return hanging


def abort_hanging(admin: Any, topic: str) -> None:
    """The exercise's worked answer: abort every transaction open on `topic` that the
    coordinator does not know, and nothing else."""
    for row in find_hanging(admin, topic, admin.cluster.now_ms, max_transaction_timeout_ms=0):
        admin.abort_transaction(AbortTransactionSpec(
            TopicPartition(row.topic, row.partition), row.producer_id, row.producer_epoch,
            max(row.coordinator_epoch, 0)))


@exercise("23-hanging", "Lesson 23 · abort the hanging transaction, and only it",
          hint="describe_producers shows each partition's open transactions; "
               "list_transactions(producer_id_filters=...) and describe_transactions show "
               "which of them the coordinator still runs (its topic_partitions). Abort, with "
               "AbortTransactionSpec(tp, producer_id, producer_epoch, coordinator_epoch), "
               "only those it does not know.",
          solution=abort_hanging)
def check_hanging(clear_hanging: Callable[[Any, str], Any]) -> Outcome:
    out = Outcome()
    # Brokers that do not verify partitions (before Kafka 3.6, or with the setting off) and
    # a producer of transaction version 1: its delayed Produce lands on partition 2 after
    # its abort and hangs there.
    cluster = Cluster(brokers=3, seed=23, broker_config=NO_VERIFICATION,
                      features=TRANSACTION_VERSION_1)
    cluster.create_topic("payments", partitions=3, replication_factor=3)
    late = cluster.producer(transactional_id="refunds-1")
    late.init_transactions()
    late.begin_transaction()
    late.send("payments", value=b"refund-1", partition=1)
    late.abort_transaction()
    late_produce(cluster, late, "payments", 2, b"refund-1 (late)")
    # A healthy transaction, still open on partition 0: the coordinator will end it.
    live = cluster.producer(transactional_id="checkout-1", transaction_timeout_ms=900_000)
    live.init_transactions()
    live.begin_transaction()
    live.send("payments", value=b"pay-7", partition=0)
    live.flush()
    cluster.advance(5 * 60_000)
    lso_before = {p.partition: p.last_stable_offset
                  for p in cluster.describe_topic("payments").partitions}
    clear_hanging(cluster.admin(), "payments")
    cluster.advance(1_000)
    parts = {p.partition: p for p in cluster.describe_topic("payments").partitions}
    out.history.append(f"LSO before: {lso_before}; after: "
                       f"{ {n: p.last_stable_offset for n, p in parts.items()} }")
    stuck = parts[2].last_stable_offset < parts[2].high_watermark
    out.expect(not stuck, "the hanging transaction on payments-2 was aborted: its LSO "
               "reached the high watermark",
               "payments-2's LSO is still stuck at the late record: the hanging "
               "transaction is open")
    live.commit_transaction()
    cluster.advance(1_000)
    committed = [r.value for r in read_topic(cluster, "payments",
                                             isolation_level="read_committed").get(0, [])]
    out.expect(committed == [b"pay-7"], "checkout-1's open transaction was left alone and "
               "committed afterwards: read_committed sees pay-7",
               f"read_committed sees {committed} on payments-0, not [b'pay-7']: a "
               "transaction the coordinator was still running was aborted by hand, and its "
               "later commit found nothing to commit")
    out.verdict = (f"payments-2 LSO {parts[2].last_stable_offset} of high watermark "
                   f"{parts[2].high_watermark}; read_committed on payments-0: {committed}")
    return out
