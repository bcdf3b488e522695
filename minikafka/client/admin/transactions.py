"""The admin client's producer and transaction calls: DescribeProducers,
WriteTxnMarkers (abort), ListTransactions, DescribeTransactions."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kafka import errors as Errors
from kafka.admin import (
    AbortTransactionSpec,
    PartitionProducerState,
    ProducerState,
    TransactionDescription,
    TransactionListing,
    TransactionState,
)
from kafka.structs import TopicPartition

from ... import errors as kerrors
from ...core import api
from ...core.api import authz
from ..security import refused_error
from .base import AdminBase


class TransactionsAdmin(AdminBase):
    """Producer-state and transaction calls (kafka-transactions.sh)."""

    # -- brokers' views -------------------------------------------------------------------------
    def describe_producers(self, partitions: Iterable[TopicPartition],
                           broker_id: int | None = None) -> dict[TopicPartition, Any]:
        """DescribeProducers: {tp: PartitionProducerState} from each partition's leader (or
        from broker_id); raises the first partition's error, as kafka-python does."""
        out = {}
        partitions = list(partitions)
        refused = authz.describe_producers(self.cluster, self.caller,
                                           {tp.topic for tp in partitions})
        for tp in partitions:
            if tp.topic in refused:
                raise type(refused_error(refused[tp.topic], tp.topic))(
                    f"DescribeProducersRequest failed for {tp}: None")
            node = broker_id
            if node is None:
                meta = self.cluster.controller.topics.get(tp.topic)
                node = meta.partitions[tp.partition].leader if meta is not None and \
                    0 <= tp.partition < len(meta.partitions) else None
            if node not in self.cluster.brokers:
                raise Errors.LeaderNotAvailableError(f"no leader for {tp}")
            r, = api.describe_producers(self.cluster, node, [(tp.topic, tp.partition)])
            if r.error_code:
                raise type(kerrors.for_code(r.error_code))(
                    f"DescribeProducersRequest failed for {tp}: None")
            out[tp] = PartitionProducerState(active_producers=[ProducerState(
                producer_id=p.producer_id, producer_epoch=p.producer_epoch,
                last_sequence=p.last_sequence, last_timestamp=p.last_timestamp,
                coordinator_epoch=p.coordinator_epoch,
                current_transaction_start_offset=p.current_txn_start_offset)
                for p in r.producers])
        return out

    def abort_transaction(self, spec: AbortTransactionSpec) -> None:
        """WriteTxnMarkers to the partition's leader: an ABORT marker for the producer's
        open transaction there (kafka-transactions.sh abort); raises the partition's error,
        as kafka-python does."""
        tp = spec.topic_partition
        code = authz.write_txn_markers(self.cluster, self.caller)
        if not code:
            meta = self.cluster.controller.topics.get(tp.topic)
            leader = meta.partitions[tp.partition].leader if meta is not None and \
                0 <= tp.partition < len(meta.partitions) else None
            if leader not in self.cluster.brokers:
                raise Errors.LeaderNotAvailableError(f"no leader for {tp}")
            marker = api.TxnMarker(spec.producer_id, spec.producer_epoch, False,
                                   ((tp.topic, tp.partition),), spec.coordinator_epoch)
            (results,) = api.write_txn_markers(self.cluster, leader, [marker])
            code = results[(tp.topic, tp.partition)]
        if code:
            raise type(kerrors.for_code(code))(f"WriteTxnMarkersRequest failed for {tp}")

    # -- transactions (kafka-transactions.sh list / describe) -------------------------------------
    def list_transactions(self, broker_ids: Iterable[int] | None = None,
                          producer_id_filters: Iterable[int] | None = None,
                          state_filters: Iterable[Any] | None = None,
                          duration_filter_ms: int | None = None,
                          transactional_id_pattern: str | None = None
                          ) -> dict[int, list[TransactionListing]]:
        """{broker id: [TransactionListing]}: the transactions each broker coordinates."""
        cluster = self.cluster
        states = [str(getattr(s, "value", s)) for s in state_filters or ()]
        out = {}
        for broker in (api.live_brokers(cluster) if broker_ids is None else broker_ids):
            _, listed = api.list_transactions(
                cluster, broker, states, producer_id_filters or (),
                -1 if duration_filter_ms is None else duration_filter_ms,
                transactional_id_pattern)
            hidden = authz.hidden_transactions(cluster, self.caller,
                                               [t.transactional_id for t in listed])
            out[broker] = [TransactionListing(t.transactional_id, t.producer_id,
                                              TransactionState(t.state))
                           for t in listed if t.transactional_id not in hidden]
        return out

    def describe_transactions(self, transactional_ids: Iterable[str]
                              ) -> dict[str, TransactionDescription]:
        """{transactional id: TransactionDescription}; TransactionalIdNotFoundError for an
        id no coordinator knows, as kafka-python raises."""
        cluster = self.cluster
        out = {}
        transactional_ids = list(transactional_ids)
        refused = authz.describe_transactions(cluster, self.caller, transactional_ids)
        for transactional_id in transactional_ids:
            if transactional_id in refused:
                raise type(refused_error(refused[transactional_id], transactional_id))(
                    f"DescribeTransactionsRequest failed for transactional id "
                    f"'{transactional_id}'.")
        for d in api.describe_transactions(cluster, None, transactional_ids):
            if d.error_code:
                raise type(kerrors.for_code(d.error_code))(
                    f"DescribeTransactionsRequest failed for transactional id "
                    f"'{d.transactional_id}'.")
            out[d.transactional_id] = TransactionDescription(
                api.transaction_coordinator_id(cluster, d.transactional_id),
                TransactionState(d.state), d.producer_id, d.producer_epoch, d.timeout_ms,
                d.start_time_ms,
                {TopicPartition(t, p) for t, ps in d.partitions.items() for p in ps
                 if t not in authz.describe_topics(cluster, self.caller, [t])})
        return out
