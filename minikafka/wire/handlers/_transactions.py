"""The transaction coordinator as the transaction handlers reach it."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...core import errors
from ...core.errors import KafkaCoreError
from ...core.transactions import TransactionCoordinator, TransactionMetadata

if TYPE_CHECKING:
    from ...core.api.port import ClusterPort

__all__ = ["check_producer", "coordinator"]


def coordinator(cluster: ClusterPort) -> TransactionCoordinator:
    """The cluster-wide coordinator (__transaction_state's role), made on first use.
    Any live broker serves it, so FindCoordinator may name any of them."""
    return cluster.transaction_coordinator


def check_producer(cluster: ClusterPort, transactional_id: str, producer_id: int,
                   epoch: int) -> TransactionMetadata:
    """The transaction of a producer that is who it says it is, or a KafkaCoreError."""
    meta = coordinator(cluster).transactions.get(transactional_id)
    if meta is None or meta.producer_id != producer_id:
        raise KafkaCoreError(errors.INVALID_PRODUCER_ID_MAPPING,
                             f"unknown transactional id {transactional_id}")
    if epoch < meta.producer_epoch:
        raise KafkaCoreError(errors.PRODUCER_FENCED,
                             f"producer epoch {epoch} is fenced by {meta.producer_epoch}")
    return meta
