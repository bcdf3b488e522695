"""Metadata (key 3), v0-v13: brokers, controller, and each topic's partitions with
leader, leader epoch, replicas, ISR and offline replicas, from the controller's state.

An unknown topic is created on the spot when the request allows it (v4+ flag; always
before v4) and auto.create.topics.enable is true (the default), with num.partitions and
default.replication.factor (capped at the live brokers, as the in-process producer
does). Internal topics are never auto-created.

With an authorizer, as Kafka's KafkaApis: a topic listing leaves out the topics the
principal may not DESCRIBE; a topic asked for by name without DESCRIBE gets
TOPIC_AUTHORIZATION_FAILED (whether it exists or not); auto-creation needs CREATE on
the cluster or the topic. authorized_operations are the principal's when asked for.
"""
from __future__ import annotations

import uuid

from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from ...core import errors
from ...core.acl import AclOperation, ResourceType
from ...core.api import authz
from ...core.controller import MAX_PARTITIONS_PER_BATCH, NO_LEADER
from ..listeners import endpoint
from ..registry import RequestContext
from ._common import (
    KAFKA_ERRORS,
    authorize,
    authorized_operations,
    caller,
    cluster_id,
    controller_id,
    error_code,
    live_brokers,
    serving_broker,
    topic_name_for_id,
    topic_uuid,
)

API_KEY = 3
MIN_VERSION = 0
MAX_VERSION = 13

_Broker = MetadataResponse.MetadataResponseBroker
_Topic = MetadataResponse.MetadataResponseTopic
_Partition = _Topic.MetadataResponsePartition
_ZERO_UUID = uuid.UUID(int=0)


def _auto_create(cluster, name: str) -> int:
    """Create `name` as auto.create.topics.enable does; returns an error code."""
    if name.startswith("__"):
        return errors.UNKNOWN_TOPIC_OR_PARTITION
    config = cluster.broker_config
    live = len(live_brokers(cluster))
    rf = max(1, min(int(config["default.replication.factor"]), live))
    try:
        cluster.create_topic(name, int(config["num.partitions"]), rf)
    except KAFKA_ERRORS as exc:  # invalid name, no controller, no brokers
        code = error_code(exc)
        return code if code != errors.TOPIC_ALREADY_EXISTS else errors.NONE
    return errors.NONE


def _may_create(ctx: RequestContext, name: str) -> bool:
    """Auto-creation needs CREATE on the cluster or on the topic."""
    return not authz.create_topics(ctx.cluster, caller(ctx), [name])


def _topic(cluster, name: str, live: set[int], version: int,
           operations: set[int] | None) -> _Topic:
    meta = cluster.controller.topics[name]
    partitions = []
    for p, reg in enumerate(meta.partitions):
        partitions.append(_Partition(
            error_code=errors.LEADER_NOT_AVAILABLE if reg.leader == NO_LEADER else errors.NONE,
            partition_index=p, leader_id=reg.leader, leader_epoch=reg.leader_epoch,
            replica_nodes=list(reg.replicas), isr_nodes=list(reg.isr),
            offline_replicas=[b for b in reg.replicas if b not in live]))
    return _Topic(error_code=errors.NONE, name=name, topic_id=topic_uuid(meta),
                  is_internal=meta.internal, partitions=partitions,
                  authorized_operations=operations)


def _unknown(name: str | None, code: int, topic_id: uuid.UUID = _ZERO_UUID) -> _Topic:
    return _Topic(error_code=code, name=name, topic_id=topic_id, is_internal=False,
                  partitions=[], authorized_operations=None)


def handle(ctx: RequestContext, request: MetadataRequest) -> MetadataResponse:
    cluster = ctx.cluster
    serving_broker(ctx)
    version = ctx.api_version
    controller = cluster.controller
    live_ids = live_brokers(cluster)
    live = set(live_ids)
    brokers = []
    for b in live_ids:
        host, port = endpoint(cluster, b, ctx.listener)
        brokers.append(_Broker(node_id=b, host=host, port=port, rack=cluster.brokers[b].rack))
    want_operations = version >= 8 and request.include_topic_authorized_operations

    def operations(name: str) -> set[int] | None:  # None encodes INT32_MIN, "not requested"
        return authorized_operations(ctx, ResourceType.TOPIC, name) if want_operations else None

    who = caller(ctx)

    def describable(name: str) -> bool:
        return not authz.describe_topics(ctx.cluster, who, [name])

    requested = request.topics
    topics = []
    if requested is None or (version == 0 and not requested):
        # All topics: those the principal may not DESCRIBE are left out, unmentioned.
        topics = [_topic(cluster, name, live, version, operations(name))
                  for name in cluster.list_topics(internal=True) if describable(name)]
    else:
        auto = (version < 4 or request.allow_auto_topic_creation) \
            and cluster.broker_config["auto.create.topics.enable"]
        # One request auto-creates at most MAX_PARTITIONS_PER_BATCH partitions, the
        # controller's limit for the CreateTopics Kafka sends it; the rest stay unknown.
        budget = MAX_PARTITIONS_PER_BATCH
        for wanted in requested:
            name = wanted.name
            if name is None:  # v10+: by topic id
                topic_id = wanted.topic_id
                name = topic_name_for_id(cluster, topic_id)
                if name is None:
                    topics.append(_unknown(None, errors.UNKNOWN_TOPIC_ID, topic_id))
                    continue
                if not describable(name):
                    topics.append(_unknown(None, errors.TOPIC_AUTHORIZATION_FAILED, topic_id))
                    continue
            if not describable(name):
                # Kafka does not say whether a topic the principal may not see exists.
                topics.append(_unknown(name, errors.TOPIC_AUTHORIZATION_FAILED))
                continue
            if name not in controller.topics:
                wanted_partitions = int(cluster.broker_config["num.partitions"])
                if auto and wanted_partitions <= budget and not _may_create(ctx, name):
                    topics.append(_unknown(name, errors.TOPIC_AUTHORIZATION_FAILED))
                    continue
                if auto and wanted_partitions <= budget:
                    code = _auto_create(cluster, name)
                    budget -= wanted_partitions
                else:
                    code = errors.UNKNOWN_TOPIC_OR_PARTITION
                if code != errors.NONE or name not in controller.topics:
                    topics.append(_unknown(name, code or errors.UNKNOWN_TOPIC_OR_PARTITION))
                    continue
            topics.append(_topic(cluster, name, live, version, operations(name)))
    cluster_operations = None
    if 8 <= version <= 10 and request.include_cluster_authorized_operations:
        # Kafka computes them only for a principal that may DESCRIBE the cluster.
        cluster_operations = authorized_operations(ctx, ResourceType.CLUSTER) \
            if authorize(ctx, AclOperation.DESCRIBE, ResourceType.CLUSTER) else set()
    return MetadataResponse(
        version=version, throttle_time_ms=0, brokers=brokers, cluster_id=cluster_id(cluster),
        controller_id=controller_id(cluster), topics=topics,
        authorized_operations=cluster_operations, error_code=errors.NONE)
