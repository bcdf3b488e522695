"""Metadata (key 3), v0-v13: a codec over minikafka.core.api.metadata, which answers
(brokers, controller, topics and partitions, auto-creation). Auto-creation is allowed by
the request's v4+ flag (always before v4).

With an authorizer, as Kafka's KafkaApis: a topic listing leaves out the topics the
principal may not DESCRIBE; a topic asked for by name without DESCRIBE gets
TOPIC_AUTHORIZATION_FAILED (whether it exists or not); auto-creation needs CREATE on
the cluster or the topic. authorized_operations are the principal's when asked for.
"""
from __future__ import annotations

from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from ...core import errors
from ...core.acl import AclOperation, ResourceType
from ...core.api import authz
from ...core.api.metadata import metadata
from ..listeners import endpoint
from ..registry import RequestContext
from ._common import authorize, authorized_operations, caller, serving_broker

API_KEY = 3
MIN_VERSION = 0
MAX_VERSION = 13

_Broker = MetadataResponse.MetadataResponseBroker
_Topic = MetadataResponse.MetadataResponseTopic
_Partition = _Topic.MetadataResponsePartition


def handle(ctx: RequestContext, request: MetadataRequest) -> MetadataResponse:
    cluster = ctx.cluster
    serving_broker(ctx)
    version = ctx.api_version
    want_operations = version >= 8 and request.include_topic_authorized_operations

    may_describe, may_create = authz.metadata(cluster, caller(ctx))
    requested = request.topics
    if requested is None or (version == 0 and not requested):
        names = None
    else:  # v10+ may name a topic by id alone
        names = [t.name if t.name is not None else t.topic_id for t in requested]
    answer = metadata(
        cluster, names, allow_auto_create=version < 4 or request.allow_auto_topic_creation,
        may_describe=may_describe, may_create=may_create)
    brokers = []
    for b in answer.brokers:
        host, port = endpoint(cluster, b.broker_id, ctx.listener)
        brokers.append(_Broker(node_id=b.broker_id, host=host, port=port, rack=b.rack))
    topics = []
    for t in answer.topics:
        described = t.error_code == errors.NONE
        # None encodes INT32_MIN, "not requested"
        operations = authorized_operations(ctx, ResourceType.TOPIC, t.name) \
            if described and want_operations else None
        topics.append(_Topic(
            error_code=t.error_code, name=t.name, topic_id=t.topic_id,
            is_internal=t.is_internal, authorized_operations=operations,
            partitions=[_Partition(
                error_code=p.error_code, partition_index=p.partition, leader_id=p.leader,
                leader_epoch=p.leader_epoch, replica_nodes=p.replicas, isr_nodes=p.isr,
                offline_replicas=p.offline_replicas) for p in t.partitions]))
    cluster_operations = None
    if 8 <= version <= 10 and request.include_cluster_authorized_operations:
        # Kafka computes them only for a principal that may DESCRIBE the cluster.
        cluster_operations = authorized_operations(ctx, ResourceType.CLUSTER) \
            if authorize(ctx, AclOperation.DESCRIBE, ResourceType.CLUSTER) else set()
    return MetadataResponse(
        version=version, throttle_time_ms=0, brokers=brokers, cluster_id=answer.cluster_id,
        controller_id=answer.controller_id, topics=topics,
        authorized_operations=cluster_operations, error_code=errors.NONE)
