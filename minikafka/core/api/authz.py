"""Who may call each Kafka API: the rules of Kafka's KafkaApis, written once for both doors.

A wire handler and an in-process client ask the same function here before they act, so
a principal refused by `minikafka serve` is refused in a notebook too, with the same
error code (the in-process clients raise kafka-python's class for it):

    refusals = authz.produce(cluster, caller, transactional_id, topics)
    # {"orders-eu": TOPIC_AUTHORIZATION_FAILED} when the caller may not WRITE it

Without an authorizer (cluster.authorizer is None) every rule allows everything.
Rules answer error codes (0 for allowed): a code for the request, or one per refused
topic, as the API's response carries them.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import errors
from ..acl import ANONYMOUS, CLUSTER_NAME, AclOperation, ResourceType

if TYPE_CHECKING:
    from .port import ClusterPort

# FindCoordinator's key types.
GROUP_KEY = 0
TRANSACTION_KEY = 1

Refusals = dict[str, int]  # topic -> TOPIC_/GROUP_/TRANSACTIONAL_ID_AUTHORIZATION_FAILED


@dataclass(frozen=True)
class Caller:
    """Who sent a request: the principal authentication gave, and the client's host
    (what host-scoped ACLs match)."""
    principal: str = ANONYMOUS
    host: str = "127.0.0.1"


def allowed(cluster: ClusterPort, caller: Caller, operation: AclOperation, kind: ResourceType,
            name: str = CLUSTER_NAME) -> bool:
    """Whether the caller may do `operation` on the resource (no authorizer: yes)."""
    return cluster.authorize(caller.principal, caller.host, operation, kind, name)


def refused(cluster: ClusterPort, caller: Caller, operation: AclOperation, kind: ResourceType,
            names: Iterable[str]) -> set[str]:
    """The resources among `names` the caller may not `operation`."""
    if cluster.authorizer is None:
        return set()
    return {n for n in names if not allowed(cluster, caller, operation, kind, n)}


def _code(ok: bool, code: int) -> int:
    return errors.NONE if ok else code


def _per_topic(cluster: ClusterPort, caller: Caller, topics: Iterable[str], operation: AclOperation,
               refused_all: int = errors.NONE) -> Refusals:
    """`refused_all` for every topic when the request's group or transactional id was
    refused, else TOPIC_AUTHORIZATION_FAILED for each topic without `operation`."""
    topics = list(topics)
    if refused_all:
        return dict.fromkeys(topics, refused_all)
    return dict.fromkeys(refused(cluster, caller, operation, ResourceType.TOPIC, topics),
                         errors.TOPIC_AUTHORIZATION_FAILED)


# -- producing ---------------------------------------------------------------------------
def produce(cluster: ClusterPort, caller: Caller, transactional_id: str | None,
            topics: Iterable[str]) -> Refusals:
    """Produce (key 0): WRITE on each topic; transactional records also need WRITE on
    the transactional id, without which every partition fails."""
    if cluster.authorizer is None:  # the in-process producer asks for every new batch
        return {}
    txn = errors.NONE if transactional_id is None else \
        transaction(cluster, caller, transactional_id)
    return _per_topic(cluster, caller, topics, AclOperation.WRITE, txn)


def init_producer_id(cluster: ClusterPort, caller: Caller, transactional_id: str | None) -> int:
    """InitProducerId (key 22): a transactional producer needs WRITE on its transactional
    id; an idempotent one IDEMPOTENT_WRITE on the cluster or WRITE on some topic (since
    Kafka 3.0, KIP-679, WRITE on a topic is enough)."""
    if transactional_id is not None:
        return transaction(cluster, caller, transactional_id)
    authorizer = cluster.authorizer
    ok = authorizer is None or allowed(cluster, caller, AclOperation.IDEMPOTENT_WRITE,
                                       ResourceType.CLUSTER) or \
        authorizer.authorize_by_resource_type(caller.principal, caller.host,
                                              AclOperation.WRITE, ResourceType.TOPIC)
    return _code(ok, errors.CLUSTER_AUTHORIZATION_FAILED)


def transaction(cluster: ClusterPort, caller: Caller, transactional_id: str) -> int:
    """WRITE on the transactional id: InitProducerId, EndTxn, and the first check of
    AddPartitionsToTxn, AddOffsetsToTxn and TxnOffsetCommit."""
    return _code(allowed(cluster, caller, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID,
                         transactional_id), errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)


def add_partitions_to_txn(cluster: ClusterPort, caller: Caller, transactional_id: str,
                          topics: Iterable[str]) -> Refusals:
    """AddPartitionsToTxn (key 24): WRITE on the transactional id, then on each topic."""
    return _per_topic(cluster, caller, topics, AclOperation.WRITE,
                      transaction(cluster, caller, transactional_id))


def add_offsets_to_txn(cluster: ClusterPort, caller: Caller, transactional_id: str,
                       group_id: str) -> int:
    """AddOffsetsToTxn (key 25): WRITE on the transactional id, READ on the group."""
    return transaction(cluster, caller, transactional_id) or group(cluster, caller, group_id)


def txn_offset_commit(cluster: ClusterPort, caller: Caller, transactional_id: str, group_id: str,
                      topics: Iterable[str]) -> Refusals:
    """TxnOffsetCommit (key 28): as AddOffsetsToTxn, then READ on each topic."""
    return _per_topic(cluster, caller, topics, AclOperation.READ,
                      add_offsets_to_txn(cluster, caller, transactional_id, group_id))


# -- consuming ---------------------------------------------------------------------------
def fetch(cluster: ClusterPort, caller: Caller, topics: Iterable[str]) -> Refusals:
    """Fetch (key 1) for a consumer: READ on each topic."""
    return _per_topic(cluster, caller, topics, AclOperation.READ)


def describe_topics(cluster: ClusterPort, caller: Caller, topics: Iterable[str]) -> Refusals:
    """ListOffsets (key 2), OffsetForLeaderEpoch (key 23), Metadata (key 3): DESCRIBE on
    each topic. A topic the caller may not describe is refused whether it exists or not,
    so its existence stays hidden."""
    return _per_topic(cluster, caller, topics, AclOperation.DESCRIBE)


def metadata(cluster: ClusterPort, caller: Caller) -> tuple[Callable[[str], bool],
                                                     Callable[[str], bool]]:
    """Metadata (key 3): may the caller describe a topic (DESCRIBE on it), and may its
    request auto-create one (CREATE on the cluster or on the topic). core.api.metadata
    asks them topic by topic."""
    return (lambda name: not describe_topics(cluster, caller, [name]),
            lambda name: not create_topics(cluster, caller, [name]))


def find_coordinator(cluster: ClusterPort, caller: Caller, key_type: int, key: str) -> int:
    """FindCoordinator (key 10): DESCRIBE on the group or the transactional id."""
    if key_type == GROUP_KEY:
        return _code(allowed(cluster, caller, AclOperation.DESCRIBE, ResourceType.GROUP, key),
                     errors.GROUP_AUTHORIZATION_FAILED)
    if key_type == TRANSACTION_KEY:
        return _code(allowed(cluster, caller, AclOperation.DESCRIBE,
                             ResourceType.TRANSACTIONAL_ID, key),
                     errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    return errors.NONE


def group(cluster: ClusterPort, caller: Caller, group_id: str) -> int:
    """READ on the group: JoinGroup, SyncGroup, Heartbeat, LeaveGroup (keys 11-14) and
    ConsumerGroupHeartbeat (key 68) of a member."""
    return _code(allowed(cluster, caller, AclOperation.READ, ResourceType.GROUP, group_id),
                 errors.GROUP_AUTHORIZATION_FAILED)


def group_heartbeat(cluster: ClusterPort, caller: Caller, group_id: str,
                    topics: Iterable[str] | None) -> int:
    """ConsumerGroupHeartbeat (key 68) and ShareGroupHeartbeat (key 76): READ on the
    group, then DESCRIBE on every subscribed topic."""
    return group(cluster, caller, group_id) or \
        max(describe_topics(cluster, caller, topics or ()).values(), default=errors.NONE)


def offset_commit(cluster: ClusterPort, caller: Caller, group_id: str,
                  topics: Iterable[str]) -> Refusals:
    """OffsetCommit (key 8): READ on the group (else every partition fails), then READ
    on each topic."""
    return _per_topic(cluster, caller, topics, AclOperation.READ,
                      group(cluster, caller, group_id))


def offset_fetch(cluster: ClusterPort, caller: Caller, group_id: str) -> int:
    """OffsetFetch (key 9): DESCRIBE on the group; each topic then needs DESCRIBE
    (describe_topics): one asked for is refused, and an all-topics fetch leaves it out."""
    return _code(allowed(cluster, caller, AclOperation.DESCRIBE, ResourceType.GROUP, group_id),
                 errors.GROUP_AUTHORIZATION_FAILED)


# -- topics ------------------------------------------------------------------------------
REFUSED_MESSAGE = "Authorization failed."  # the error_message Kafka's admin APIs answer


def create_topics(cluster: ClusterPort, caller: Caller, topics: Iterable[str]) -> Refusals:
    """CreateTopics (key 19): CREATE on the cluster, or else on each topic."""
    if allowed(cluster, caller, AclOperation.CREATE, ResourceType.CLUSTER):
        return {}
    return _per_topic(cluster, caller, topics, AclOperation.CREATE)


def delete_topics(cluster: ClusterPort, caller: Caller, topics: Iterable[str]) -> Refusals:
    """DeleteTopics (key 20): DESCRIBE on each topic first, so a refusal does not tell
    whether the topic exists, then DELETE on those that exist."""
    topics = list(topics)
    hidden = refused(cluster, caller, AclOperation.DESCRIBE, ResourceType.TOPIC, topics)
    existing = [t for t in topics if t not in hidden and t in cluster.controller.topics]
    return dict.fromkeys(hidden | refused(cluster, caller, AclOperation.DELETE,
                                          ResourceType.TOPIC, existing),
                         errors.TOPIC_AUTHORIZATION_FAILED)


def create_partitions(cluster: ClusterPort, caller: Caller, topics: Iterable[str]) -> Refusals:
    """CreatePartitions (key 37): ALTER on each topic."""
    return _per_topic(cluster, caller, topics, AclOperation.ALTER)


def delete_records(cluster: ClusterPort, caller: Caller, topics: Iterable[str]) -> Refusals:
    """DeleteRecords (key 21): DELETE on each topic."""
    return _per_topic(cluster, caller, topics, AclOperation.DELETE)


# -- configs -----------------------------------------------------------------------------
# What guards each DescribeConfigs/AlterConfigs resource type (Kafka's ConfigResource.Type
# codes: TOPIC 2, BROKER 4, BROKER_LOGGER 8, CLIENT_METRICS 16, GROUP 32), and the error.
_CONFIG_ACL = {
    2: (ResourceType.TOPIC, errors.TOPIC_AUTHORIZATION_FAILED),
    4: (ResourceType.CLUSTER, errors.CLUSTER_AUTHORIZATION_FAILED),
    8: (ResourceType.CLUSTER, errors.CLUSTER_AUTHORIZATION_FAILED),
    16: (ResourceType.CLUSTER, errors.CLUSTER_AUTHORIZATION_FAILED),
    32: (ResourceType.GROUP, errors.GROUP_AUTHORIZATION_FAILED),
}


def configs(cluster: ClusterPort, caller: Caller, operation: AclOperation, config_type: int,
            name: str) -> int:
    """DescribeConfigs (key 32, DESCRIBE_CONFIGS) and IncrementalAlterConfigs (key 44,
    ALTER_CONFIGS): the operation on the topic or group, or on the cluster for brokers
    and loggers; a type Kafka does not guard is allowed."""
    acl = _CONFIG_ACL.get(config_type)
    if acl is None:
        return errors.NONE
    kind, code = acl
    return _code(allowed(cluster, caller, operation, kind,
                         CLUSTER_NAME if kind == ResourceType.CLUSTER else name), code)


# -- groups (the admin's views) ----------------------------------------------------------
def describe_group(cluster: ClusterPort, caller: Caller, group_id: str) -> int:
    """DescribeGroups (key 15): DESCRIBE on the group."""
    return offset_fetch(cluster, caller, group_id)


def hidden_groups(cluster: ClusterPort, caller: Caller, group_ids: Iterable[str]) -> set[str]:
    """ListGroups (key 16): DESCRIBE on the cluster lists every group, else only those
    the caller may DESCRIBE; the others are left out."""
    if allowed(cluster, caller, AclOperation.DESCRIBE, ResourceType.CLUSTER):
        return set()
    return refused(cluster, caller, AclOperation.DESCRIBE, ResourceType.GROUP, group_ids)


def delete_groups(cluster: ClusterPort, caller: Caller, group_ids: Iterable[str]) -> dict[str, int]:
    """DeleteGroups (key 42): DELETE on each group; {group: GROUP_AUTHORIZATION_FAILED}."""
    return dict.fromkeys(refused(cluster, caller, AclOperation.DELETE, ResourceType.GROUP,
                                 group_ids), errors.GROUP_AUTHORIZATION_FAILED)


def offset_delete(cluster: ClusterPort, caller: Caller, group_id: str,
                  topics: Iterable[str]) -> tuple[int, Refusals]:
    """OffsetDelete (key 47): (the request's error: DELETE on the group, then the
    refused topics: READ on each)."""
    code = _code(allowed(cluster, caller, AclOperation.DELETE, ResourceType.GROUP, group_id),
                 errors.GROUP_AUTHORIZATION_FAILED)
    return code, {} if code else _per_topic(cluster, caller, topics, AclOperation.READ)


# -- the operator's APIs -----------------------------------------------------------------
# The APIs one operation on the cluster guards (CLUSTER_AUTHORIZATION_FAILED without it).
CLUSTER_OPERATIONS: dict[str, AclOperation] = {
    "CreateAcls": AclOperation.ALTER,
    "DeleteAcls": AclOperation.ALTER,
    "DescribeAcls": AclOperation.DESCRIBE,
    "ElectLeaders": AclOperation.ALTER,
    "AlterPartitionReassignments": AclOperation.ALTER,
    "ListPartitionReassignments": AclOperation.DESCRIBE,
    "AlterReplicaLogDirs": AclOperation.ALTER,
    "DescribeLogDirs": AclOperation.DESCRIBE,
    "DescribeQuorum": AclOperation.DESCRIBE,
    "UpdateFeatures": AclOperation.ALTER,
    "AlterClientQuotas": AclOperation.ALTER_CONFIGS,
    "DescribeClientQuotas": AclOperation.DESCRIBE_CONFIGS,
    "ListConfigResources": AclOperation.DESCRIBE_CONFIGS,
    "AlterUserScramCredentials": AclOperation.ALTER,
    "DescribeUserScramCredentials": AclOperation.DESCRIBE,
}


def cluster_api(cluster: ClusterPort, caller: Caller, api_name: str) -> int:
    """An operator's API (CLUSTER_OPERATIONS, by Kafka's name): its operation on the
    cluster."""
    return _code(allowed(cluster, caller, CLUSTER_OPERATIONS[api_name], ResourceType.CLUSTER),
                 errors.CLUSTER_AUTHORIZATION_FAILED)


# -- producers and transactions (kafka-transactions) -------------------------------------
def write_txn_markers(cluster: ClusterPort, caller: Caller) -> int:
    """WriteTxnMarkers (key 27): ALTER on the cluster (an operator running
    kafka-transactions.sh abort, KIP-664) or else CLUSTER_ACTION (a broker)."""
    if allowed(cluster, caller, AclOperation.ALTER, ResourceType.CLUSTER):
        return errors.NONE
    return _code(allowed(cluster, caller, AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER),
                 errors.CLUSTER_AUTHORIZATION_FAILED)


def describe_producers(cluster: ClusterPort, caller: Caller, topics: Iterable[str]) -> Refusals:
    """DescribeProducers (key 61): READ on each topic."""
    return _per_topic(cluster, caller, topics, AclOperation.READ)


def describe_transactions(cluster: ClusterPort, caller: Caller,
                          transactional_ids: Iterable[str]) -> dict[str, int]:
    """DescribeTransactions (key 65): DESCRIBE on each transactional id
    ({id: TRANSACTIONAL_ID_AUTHORIZATION_FAILED}); a transaction's topics the caller may
    not DESCRIBE are left out of its answer (describe_topics)."""
    return dict.fromkeys(refused(cluster, caller, AclOperation.DESCRIBE,
                                 ResourceType.TRANSACTIONAL_ID, transactional_ids),
                         errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)


def hidden_transactions(cluster: ClusterPort, caller: Caller,
                        transactional_ids: Iterable[str]) -> set[str]:
    """ListTransactions (key 66): only the transactional ids the caller may DESCRIBE are
    listed."""
    return set(describe_transactions(cluster, caller, transactional_ids))


# -- share groups (KIP-932) --------------------------------------------------------------
def share_group_offsets(cluster: ClusterPort, caller: Caller, group_id: str, topics: Iterable[str],
                        operation: AclOperation = AclOperation.READ) -> tuple[int, Refusals]:
    """ShareFetch and ShareAcknowledge (keys 78, 79), AlterShareGroupOffsets (key 91):
    (READ on the group, the topics without READ). DeleteShareGroupOffsets (key 92) asks
    DELETE on the group (`operation`)."""
    code = _code(allowed(cluster, caller, operation, ResourceType.GROUP, group_id),
                 errors.GROUP_AUTHORIZATION_FAILED)
    return code, {} if code else _per_topic(cluster, caller, topics, AclOperation.READ)
