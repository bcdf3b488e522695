"""TxnOffsetCommit (key 28): the group coordinator's partition verification, which the
wire handler and the in-process producer's send_offsets_to_transaction both run.

A transactional offset commit writes to the group's __consumer_offsets partition, so
Kafka's group coordinator verifies it as a leader verifies a Produce (KIP-890; the same
`transaction.partition.verification.enable`): it asks the transaction coordinator whether
AddOffsetsToTxn put that partition in the producer's ongoing transaction
(CoordinatorRuntime.scheduleTransactionalWriteOperation). Not added: every partition of
the request gets INVALID_TXN_STATE (48) below v4, TRANSACTION_ABORTABLE (120) from v4,
and no offset is written. From v5 (transaction version 2, whose client sends no
AddOffsetsToTxn) the partition is added instead. kafka-python sends v3; the Java client
v4, or v5 once the cluster finalizes transaction.version 2.

With verification off the offsets are written, but no marker ever reaches a partition the
transaction never held: after the commit they stay pending (OffsetFetch with
require_stable answers UNSTABLE_OFFSET_COMMIT) and the group's committed offset does not
move.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .. import errors
from ..transactions import TV_2
from .transactions import verification_enabled, verify_in_transaction

if TYPE_CHECKING:
    from ..broker import Broker
    from .port import ClusterPort

# TxnOffsetCommit versions as AddPartitionsToTxnManager
# .txnOffsetCommitRequestVersionToTransactionSupportedOperation reads them.
FIRST_GENERIC_ERROR_VERSION = 4
FIRST_ADD_PARTITION_VERSION = 5
# The in-process producer is shaped like kafka-python's, which sends TxnOffsetCommit v3; under
# transaction version 2 it sends v5, as the Java client does.
IN_PROCESS_VERSION = 3

# What the group coordinator turns a verification failure into
# (CoordinatorOperationExceptionHelper.handleOperationException): NETWORK_EXCEPTION, which
# older clients do not retry well, becomes a retry at the same coordinator.
_AS_COORDINATOR_ERROR = {
    errors.NETWORK_EXCEPTION: errors.COORDINATOR_LOAD_IN_PROGRESS,
    errors.UNKNOWN_TOPIC_OR_PARTITION: errors.COORDINATOR_NOT_AVAILABLE,
    errors.NOT_ENOUGH_REPLICAS: errors.COORDINATOR_NOT_AVAILABLE,
    errors.REQUEST_TIMED_OUT: errors.COORDINATOR_NOT_AVAILABLE,
    errors.NOT_LEADER_OR_FOLLOWER: errors.NOT_COORDINATOR,
    errors.KAFKA_STORAGE_ERROR: errors.NOT_COORDINATOR,
}


def _as_txn_offset_commit_error(code: int, version: int) -> int:
    """A coordinator's verification answer as the TxnOffsetCommit response gives it
    (AddPartitionsToTxnManager, then the group coordinator's error mapping)."""
    if code == errors.PRODUCER_FENCED:
        return errors.INVALID_PRODUCER_EPOCH
    if code == errors.TRANSACTION_ABORTABLE and version < FIRST_GENERIC_ERROR_VERSION:
        return errors.INVALID_TXN_STATE
    return _AS_COORDINATOR_ERROR.get(code, code)


def unverified(cluster: ClusterPort, broker: Broker, transactional_id: str, group_id: str,
               producer_id: int, epoch: int, version: int = IN_PROCESS_VERSION) -> int:
    """The error every partition of a TxnOffsetCommit gets when the transaction coordinator
    does not vouch for the group's __consumer_offsets partition, or NONE (also when
    `broker`, the group's coordinator, has verification off)."""
    if not transactional_id or (not verification_enabled(broker)
                                and version < FIRST_ADD_PARTITION_VERSION):
        return errors.NONE
    coordinator = cluster.transaction_coordinator
    add = None
    if version >= FIRST_ADD_PARTITION_VERSION:
        def add() -> None:
            coordinator.add_offsets(transactional_id, producer_id, epoch, group_id,
                                    cluster.now_ms, TV_2)
    tp = coordinator.group_partition(group_id)
    code = verify_in_transaction(cluster, transactional_id, producer_id, epoch, {tp}, add)[tp]
    return errors.NONE if code == errors.NONE else _as_txn_offset_commit_error(code, version)
