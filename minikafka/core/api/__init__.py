"""The broker's Kafka APIs: one typed function per API, whichever door a request came in by.

The in-process clients (``cluster.producer()``, ``consumer()``, ``admin()``) and the wire
handlers (``minikafka serve``) both call these functions, so a lesson's ListOffsets and
kafka-python's ListOffsets get the same answer, and a Kafka behaviour is fixed once.
Each takes a frozen request dataclass and returns result dataclasses carrying Kafka's
error codes (minikafka.core.errors); time comes from the cluster's simulated clock.

    list_offsets     ListOffsets (key 2): earliest, latest, max-timestamp, by timestamp
    fetch            Fetch (key 1): the leader and leader-epoch checks, the fetch.min.bytes
                     wait (read_fetch, retry_fetch), the quota (fetch_throttle_ms);
                     fetch_partition reads one: batches, HW, LSO, log start, aborted txns;
                     authorize_fetch (fetch_access) asks READ on each topic first, and
                     fetch_at_leader is the in-process consumer's whole Fetch
    create_topics    CreateTopics (key 19), validate_only through the same checks
    delete_topics    DeleteTopics (key 20), by name
    create_partitions CreatePartitions (key 37), validate_only through the same checks
    elect_leaders    ElectLeaders (key 43), preferred or unclean
    alter_client_quotas, describe_client_quotas  AlterClientQuotas (49), DescribeClientQuotas
                     (48); quota_for: the quota a (user, client-id) gets
    describe_configs DescribeConfigs (key 32), topics and brokers, with sources
    incremental_alter_configs IncrementalAlterConfigs (key 44): SET, DELETE, APPEND, SUBTRACT
    alter_configs    AlterConfigs (key 33, legacy): the given configs replace the overrides
    describe_producers DescribeProducers (key 61): the producers a leader remembers
    write_txn_markers WriteTxnMarkers (key 27): a COMMIT/ABORT marker for one producer
    delete_records   DeleteRecords (key 21)
    describe_quorum  DescribeQuorum (key 55): the KRaft voters and observers
    update_features  UpdateFeatures (key 57): finalize feature levels, all or nothing
    describe_log_dirs, alter_replica_log_dirs  DescribeLogDirs (35), AlterReplicaLogDirs (34)
    list_transactions, describe_transactions  ListTransactions (66), DescribeTransactions (65)
    init_producer_id InitProducerId (key 22), journaled as ``producer.init``
    join_group, sync_group, heartbeat, leave_group, offset_commit, offset_fetch,
    describe_group, list_groups, delete_groups, consumer_group_heartbeat,
    consumer_group_describe, offset_delete  JoinGroup (11), ConsumerGroupHeartbeat (68),
                     ConsumerGroupDescribe (69), SyncGroup (14), Heartbeat (12),
                     LeaveGroup (13), OffsetCommit (8), OffsetFetch (9), OffsetDelete (47),
                     DescribeGroups (15), ListGroups
                     (16), DeleteGroups (42): authorization, then the group coordinator
                     (core.groups; share groups from the share-group coordinator)
    share_group_heartbeat, share_group_describe, describe_share_group_offsets,
    alter_share_group_offsets, delete_share_group_offsets  (share_groups) ShareGroupHeartbeat
                     (76), ShareGroupDescribe (77), DescribeShareGroupOffsets (90),
                     AlterShareGroupOffsets (91), DeleteShareGroupOffsets (92):
                     authorization, then the share-group coordinator
    record_acked     the ``produce.acked`` journal event for an answered Produce (key 0)
    txn_offset_commit.unverified  TxnOffsetCommit (key 28)'s partition verification (KIP-890)
    metadata         Metadata (key 3): brokers, controller, topics, auto-creation
    describe_cluster DescribeCluster (key 60): cluster id, controller, brokers

Who may call them is decided in ``authz`` (``from minikafka.core.api import authz``): one
rule per API, taking the caller (principal and host), asked by both doors before they act.
"""
from __future__ import annotations

from ..isolation import READ_COMMITTED, READ_UNCOMMITTED, IsolationLevel
from .client_quotas import (
    QuotaAlteration,
    QuotaAlterationResult,
    QuotaFilterComponent,
    QuotaOp,
    alter_client_quotas,
    describe_client_quotas,
    entity_of,
    quota_for,
    record_and_get_throttle_ms,
)
from .configs import (
    AlterableConfig,
    AlterConfigsResource,
    AlterConfigsResult,
    ConfigEntry,
    ConfigResource,
    ConfigSynonym,
    DescribeConfigsResult,
    alter_configs,
    describe_configs,
    entry_synonyms,
    incremental_alter_configs,
)
from .elections import PREFERRED, UNCLEAN, ElectionResult, ElectionType, elect_leaders
from .features import update_features
from .fetch import (
    FetchedPartition,
    FetchPartition,
    FetchRequest,
    FetchResult,
    fetch,
    fetch_partition,
    fetch_ready,
    fetch_throttle_ms,
    read_fetch,
    retry_fetch,
)
from .fetch_access import AuthorizedFetch, authorize_fetch, fetch_at_leader
from .groups import (
    DEFAULT_LEAVE_REASON,
    commit_timed_out,
    consumer_group_describe,
    consumer_group_heartbeat,
    delete_groups,
    describe_group,
    heartbeat,
    join_group,
    leave_group,
    list_groups,
    offset_commit,
    offset_delete,
    offset_fetch,
    sync_group,
)
from .groups import (
    SHARE as SHARE_GROUP_TYPE,
)
from .leader import led_replica
from .log_dirs import (
    LogDirDescription,
    LogDirReplica,
    alter_replica_log_dirs,
    describe_log_dirs,
)
from .metadata import (
    BrokerDescription,
    ClusterDescription,
    MetadataResult,
    PartitionMetadata,
    TopicMetadata,
    describe_cluster,
    metadata,
    partition_metadata,
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
from .partitions import CreatePartitionsResult, NewPartitions, create_partitions
from .port import ClusterPort
from .produce import record_acked
from .producer_id import InitProducerIdRequest, InitProducerIdResult, init_producer_id
from .producers import ActiveProducer, PartitionProducers, describe_producers
from .quorum import QuorumInfo, QuorumReplica, describe_quorum
from .records import DeleteRecordsPartition, DeleteRecordsResult, delete_records
from .share_groups import (
    alter_share_group_offsets,
    delete_share_group_offsets,
    describe_share_group_offsets,
    share_group_describe,
    share_group_heartbeat,
)
from .topics import (
    CreatableTopic,
    CreateTopicsRequest,
    CreateTopicsResult,
    DeleteTopicsResult,
    create_topics,
    delete_topics,
)
from .transactions import (
    TransactionDescription,
    TransactionListing,
    describe_transactions,
    list_transactions,
    live_brokers,
    transaction_coordinator_id,
)
from .txn_markers import TxnMarker, write_txn_markers

__all__ = [
    "QuotaAlteration", "QuotaAlterationResult", "QuotaFilterComponent", "QuotaOp",
    "alter_client_quotas", "describe_client_quotas", "entity_of", "quota_for",
    "record_and_get_throttle_ms",
    "BrokerDescription",
    "ClusterDescription",
    "MetadataResult",
    "PartitionMetadata",
    "TopicMetadata",
    "describe_cluster",
    "metadata",
    "partition_metadata",
    "ActiveProducer",
    "LogDirDescription",
    "PartitionProducers",
    "AlterConfigsResource",
    "AlterConfigsResult",
    "AlterableConfig",
    "ConfigEntry",
    "ConfigResource",
    "ConfigSynonym",
    "DescribeConfigsResult",
    "EARLIEST",
    "LATEST",
    "MAX_TIMESTAMP",
    "PREFERRED",
    "READ_COMMITTED",
    "READ_UNCOMMITTED",
    "UNCLEAN",
    "ClusterPort",
    "CreatableTopic",
    "CreatePartitionsResult",
    "CreateTopicsRequest",
    "CreateTopicsResult",
    "DeleteRecordsPartition",
    "DeleteRecordsResult",
    "DeleteTopicsResult",
    "ElectionResult",
    "ElectionType",
    "FetchPartition",
    "FetchedPartition",
    "InitProducerIdRequest",
    "InitProducerIdResult",
    "IsolationLevel",
    "ListOffsetsPartition",
    "ListOffsetsRequest",
    "ListOffsetsResult",
    "NewPartitions",
    "LogDirDescription",
    "LogDirReplica",
    "QuorumInfo",
    "QuorumReplica",
    "TransactionDescription",
    "TransactionListing",
    "alter_replica_log_dirs",
    "create_partitions",
    "create_topics",
    "delete_records",
    "delete_topics",
    "describe_configs",
    "entry_synonyms",
    "describe_log_dirs",
    "describe_producers",
    "TxnMarker",
    "write_txn_markers",
    "describe_quorum",
    "describe_transactions",
    "elect_leaders",
    "update_features",
    "fetch_partition",
    "DEFAULT_LEAVE_REASON",
    "SHARE_GROUP_TYPE",
    "commit_timed_out",
    "heartbeat",
    "join_group",
    "leave_group",
    "delete_groups",
    "consumer_group_heartbeat",
    "consumer_group_describe",
    "offset_delete",
    "share_group_heartbeat",
    "share_group_describe",
    "describe_share_group_offsets",
    "alter_share_group_offsets",
    "delete_share_group_offsets",
    "describe_group",
    "list_groups",
    "sync_group",
    "offset_commit",
    "offset_fetch",
    "FetchRequest",
    "FetchResult",
    "fetch",
    "AuthorizedFetch",
    "authorize_fetch",
    "fetch_at_leader",
    "fetch_ready",
    "fetch_throttle_ms",
    "read_fetch",
    "retry_fetch",
    "incremental_alter_configs",
    "alter_configs",
    "init_producer_id",
    "led_replica",
    "list_offsets",
    "list_offsets_of",
    "list_transactions",
    "live_brokers",
    "record_acked",
    "transaction_coordinator_id",
]
