"""The broker's Kafka APIs: one typed function per API, whichever door a request came in by.

The in-process clients (``cluster.producer()``, ``consumer()``, ``admin()``) and the wire
handlers (``minikafka serve``) both call these functions, so a lesson's ListOffsets and
kafka-python's ListOffsets get the same answer, and a Kafka behaviour is fixed once.
Each takes a frozen request dataclass and returns result dataclasses carrying Kafka's
error codes (minikafka.core.errors); time comes from the cluster's simulated clock.

    list_offsets     ListOffsets (key 2): earliest, latest, max-timestamp, by timestamp
    fetch_partition  Fetch (key 1), one partition: batches, HW, LSO, log start, aborted txns
    create_topics    CreateTopics (key 19), validate_only through the same checks
    delete_records   DeleteRecords (key 21)
    describe_quorum  DescribeQuorum (key 55): the KRaft voters and observers
    describe_log_dirs, alter_replica_log_dirs  DescribeLogDirs (35), AlterReplicaLogDirs (34)
    list_transactions, describe_transactions  ListTransactions (66), DescribeTransactions (65)
    init_producer_id InitProducerId (key 22), journaled as ``producer.init``
    record_acked     the ``produce.acked`` journal event for an answered Produce (key 0)
"""
from __future__ import annotations

from .fetch import FetchedPartition, FetchPartition, fetch_partition
from .log_dirs import (
    LogDirDescription,
    LogDirReplica,
    alter_replica_log_dirs,
    describe_log_dirs,
)
from .offsets import (
    EARLIEST,
    LATEST,
    MAX_TIMESTAMP,
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsResult,
    list_offsets,
    list_offsets_of,
)
from .port import READ_COMMITTED, READ_UNCOMMITTED, ClusterPort, IsolationLevel, led_replica
from .produce import record_acked
from .producer_id import InitProducerIdRequest, InitProducerIdResult, init_producer_id
from .quorum import QuorumInfo, QuorumReplica, describe_quorum
from .records import DeleteRecordsPartition, DeleteRecordsResult, delete_records
from .topics import CreatableTopic, CreateTopicsRequest, CreateTopicsResult, create_topics
from .transactions import (
    TransactionDescription,
    TransactionListing,
    describe_transactions,
    list_transactions,
    live_brokers,
    transaction_coordinator_id,
)

__all__ = [
    "EARLIEST",
    "LATEST",
    "MAX_TIMESTAMP",
    "READ_COMMITTED",
    "READ_UNCOMMITTED",
    "ClusterPort",
    "CreatableTopic",
    "CreateTopicsRequest",
    "CreateTopicsResult",
    "DeleteRecordsPartition",
    "DeleteRecordsResult",
    "FetchPartition",
    "FetchedPartition",
    "InitProducerIdRequest",
    "InitProducerIdResult",
    "IsolationLevel",
    "ListOffsetsPartition",
    "ListOffsetsRequest",
    "ListOffsetsResult",
    "LogDirDescription",
    "LogDirReplica",
    "QuorumInfo",
    "QuorumReplica",
    "TransactionDescription",
    "TransactionListing",
    "alter_replica_log_dirs",
    "create_topics",
    "delete_records",
    "describe_log_dirs",
    "describe_quorum",
    "describe_transactions",
    "fetch_partition",
    "init_producer_id",
    "led_replica",
    "list_offsets",
    "list_offsets_of",
    "list_transactions",
    "live_brokers",
    "record_acked",
    "transaction_coordinator_id",
]
