"""What the handlers share: the broker a connection reached, the leader replica a
partition request needs, Kafka error codes from exceptions, the brokers metadata lists,
the cluster id and ACL operation sets.

Modules starting with "_" are not handlers (default_registry skips them).
"""
from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from kafka.errors import KafkaError

from ...core import errors
from ...core.acl import CLUSTER_NAME, AclOperation, ResourceType, all_operations
from ...core.api import authz
from ...core.api.metadata import cluster_id, controller_id, registered_brokers  # noqa: F401
from ...core.broker import Broker
from ...core.controller import NO_LEADER
from ...core.errors import UNKNOWN_SERVER_ERROR, KafkaCoreError
from ..compact import NodeEndpoint
from ..listeners import endpoint
from ..registry import CloseConnection, RequestContext

if TYPE_CHECKING:
    from ...core.api.port import ClusterPort

JOIN_GROUP_KEY = 11
# authorized_operations when the request did not ask for them (Integer.MIN_VALUE).
NOT_REQUESTED = -2**31

# What the cluster raises for a request Kafka would refuse (core codes or
# kafka-python's classes); anything else is a bug and closes the connection.
KAFKA_ERRORS = (KafkaCoreError, KafkaError)


# Kafka's AclOperation codes: READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8,
# CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12,
# CREATE_TOKENS 13, DESCRIBE_TOKENS 14. Without an authorizer everything is allowed.
# kafka-python's messages take them as sets of bits (None: "not requested", INT32_MIN).
TOPIC_OPERATION_SET = frozenset(all_operations(ResourceType.TOPIC))
CLUSTER_OPERATION_SET = frozenset(all_operations(ResourceType.CLUSTER))


def authorize(ctx: RequestContext, operation: AclOperation, resource_type: ResourceType,
              name: str = CLUSTER_NAME) -> bool:
    """Whether the connection's principal may do `operation` on the resource (the
    cluster's authorizer decides; without one, yes)."""
    return ctx.cluster.authorize(ctx.principal, ctx.client_host, operation, resource_type, name)


def caller(ctx: RequestContext) -> authz.Caller:
    """Who sent the request, as the core's authorization rules (core.api.authz) take it."""
    return authz.Caller(ctx.principal, ctx.client_host)


def may_call(ctx: RequestContext, api_name: str) -> bool:
    """Whether the connection's principal may call an operator's API
    (core.api.authz.CLUSTER_OPERATIONS, by Kafka's name)."""
    return not authz.cluster_api(ctx.cluster, caller(ctx), api_name)


def authorized_operations(ctx: RequestContext, resource_type: ResourceType,
                          name: str = CLUSTER_NAME) -> set[int]:
    """authorized_operations of a Metadata, DescribeGroups or DescribeCluster answer."""
    authorizer = ctx.cluster.authorizer
    if authorizer is None:
        return all_operations(resource_type)
    return authorizer.authorized_operations(ctx.principal, ctx.client_host, resource_type, name)


def serving_broker(ctx: RequestContext) -> Broker:
    """The broker this connection reached. A stopped broker answers nothing: its
    listener closes on the server's next tick, and until then its connections drop."""
    broker = ctx.cluster.brokers.get(ctx.broker_id)
    if broker is None or not broker.running:
        raise CloseConnection(f"broker {ctx.broker_id} is not running")
    return broker


def error_code(exc: BaseException) -> int:
    """Kafka's error code for a core error or a kafka-python exception."""
    if isinstance(exc, KafkaCoreError):
        return exc.code
    if isinstance(exc, KafkaError):
        return getattr(exc, "errno", UNKNOWN_SERVER_ERROR)
    return UNKNOWN_SERVER_ERROR


def error_message(exc: BaseException) -> str | None:
    if isinstance(exc, KafkaCoreError):
        return exc.message or None
    if isinstance(exc, KafkaError) and exc.args and isinstance(exc.args[0], str):
        # str() of kafka-python's errors adds "[Error 36] TopicAlreadyExistsError: ";
        # a broker sends the message alone (Kafka's tools print it after their own words).
        return exc.args[0] or None
    text = str(exc)
    return text or None


def group_coordinator(ctx: RequestContext, group_id: str) -> int:
    """The broker coordinating `group_id`; KafkaCoreError if none can. Until the
    group APIs are served (a JoinGroup handler is registered) no broker is named:
    COORDINATOR_NOT_AVAILABLE, which clients retry, rather than a coordinator they
    could not join."""
    if JOIN_GROUP_KEY not in ctx.registry:
        raise KafkaCoreError(errors.COORDINATOR_NOT_AVAILABLE,
                             "consumer groups are not served over the wire")
    return ctx.cluster.groups.find_coordinator(group_id)


def topic_uuid(topic: Any) -> uuid.UUID:
    return uuid.UUID(topic.topic_id)


def current_leader(cluster: ClusterPort, name: str, index: int) -> tuple[int, int] | None:
    """(leader id, leader epoch) of a partition as the controller has it, or None
    when it has no leader: the hint a NOT_LEADER_OR_FOLLOWER answer carries (KIP-951)."""
    meta = cluster.controller.topics.get(name)
    if meta is None or not 0 <= index < len(meta.partitions):
        return None
    registration = meta.partitions[index]
    if registration.leader == NO_LEADER:
        return None
    return registration.leader, registration.leader_epoch


def node_endpoints(cluster: ClusterPort, broker_ids: set[int], listener: str = "") -> list[NodeEndpoint]:
    """Where `broker_ids` listen, as KIP-951's NodeEndpoints list them."""
    return [(b, *endpoint(cluster, b, listener), cluster.brokers[b].rack) for b in sorted(broker_ids)]


def topic_name_for_id(cluster: ClusterPort, topic_id: uuid.UUID | None) -> str | None:
    """The name of the topic with `topic_id`, for requests that name topics by id
    (KIP-516); None if no topic has it (kafka-python reads the all-zero id as None).
    Compares the canonical strings the controller keeps: no UUID is built per topic."""
    wanted = str(topic_id)
    for name, topic in cluster.controller.topics.items():
        if topic.topic_id == wanted:
            return name
    return None

