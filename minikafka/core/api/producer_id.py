"""InitProducerId (key 22): a producer id and epoch, journaled as "producer.init".

Idempotent producers (no transactional id) get a fresh id at epoch 0, or, when they
send their current id and epoch (KIP-360, v3+), the same id at the next epoch.
Transactional producers get their transactional id's producer id with a bumped epoch
from the transaction coordinator, which fences older instances and aborts their open
transaction. Without an active controller no id can be allocated:
COORDINATOR_NOT_AVAILABLE, which clients retry.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import errors
from ..errors import KafkaCoreError

if TYPE_CHECKING:
    from .port import ClusterPort

MAX_EPOCH = 32767


@dataclass(frozen=True)
class InitProducerIdRequest:
    client: str  # the client id, for the journal
    transactional_id: str | None = None
    transaction_timeout_ms: int = 60_000
    producer_id: int = -1  # the current id and epoch, to bump (KIP-360)
    producer_epoch: int = -1


@dataclass(frozen=True)
class InitProducerIdResult:
    error_code: int = errors.NONE
    producer_id: int = -1
    producer_epoch: int = -1
    error_message: str = ""


def allocate_producer_id(cluster: ClusterPort) -> int:
    """A new producer id from the controller (KafkaCoreError when there is none)."""
    if cluster.controller.quorum.leader is None:
        raise KafkaCoreError(errors.COORDINATOR_NOT_AVAILABLE, "no active controller")
    pid = cluster.controller.allocate_producer_id()
    # The counter is a metadata record (Kafka's ProducerIdsRecord): published, and on disk
    # written, before the id is handed out, so no id is handed out twice across a restart.
    cluster.publish_metadata()
    return pid


def init_producer_id(cluster: ClusterPort, request: InitProducerIdRequest
                     ) -> InitProducerIdResult:
    now = cluster.now_ms
    try:
        if request.transactional_id is not None:
            current = (request.producer_id, request.producer_epoch) \
                if request.producer_id >= 0 else None
            pid, epoch = cluster.transaction_coordinator.init_producer_id(
                request.transactional_id, request.transaction_timeout_ms, now, current)
        elif request.producer_id >= 0 and 0 <= request.producer_epoch < MAX_EPOCH:
            pid, epoch = request.producer_id, request.producer_epoch + 1
        else:
            pid, epoch = allocate_producer_id(cluster), 0
    except KafkaCoreError as exc:
        return InitProducerIdResult(exc.code, error_message=exc.message)
    extra = {} if request.transactional_id is None else \
        {"transactional_id": request.transactional_id}
    cluster.journal.record(now, "producer.init", client=request.client, producer_id=pid,
                           epoch=epoch, **extra)
    return InitProducerIdResult(errors.NONE, pid, epoch)
