"""ConsumerGroupHeartbeat (key 68), v0-v1: the consumer group protocol of KIP-848.

A thin codec over ``core.api.consumer_group_heartbeat`` (the authorization, then the
coordinator's protocol in minikafka.core.groups.consumer_protocol): the member joins (epoch 0), heartbeats with the partitions it owns,
and gets its assignment and epoch back; -1 leaves, -2 is a static member leaving for a
while. v1 (Kafka 4.0) has the client make its member id and adds topic regexes.
"""
from __future__ import annotations

import uuid

from ...core import api
from ...core.groups.consumer_protocol import ConsumerHeartbeat
from ..messages import ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse
from ..registry import RequestContext
from ._common import caller, serving_broker
from ._groups import member_host

API_KEY = 68
MIN_VERSION = 0
MAX_VERSION = 1

_Assignment = ConsumerGroupHeartbeatResponse.Assignment
_TopicPartitions = _Assignment.TopicPartitions


def handle(ctx: RequestContext,
           request: ConsumerGroupHeartbeatRequest) -> ConsumerGroupHeartbeatResponse:
    serving_broker(ctx)
    version = ctx.api_version
    owned = None if request.topic_partitions is None else tuple(
        (str(t.topic_id), tuple(t.partitions)) for t in request.topic_partitions)
    names = request.subscribed_topic_names
    answer = api.consumer_group_heartbeat(ctx.cluster, caller(ctx), ctx.broker_id, ConsumerHeartbeat(
        group_id=request.group_id, member_id=request.member_id,
        member_epoch=request.member_epoch, instance_id=request.instance_id,
        rack_id=request.rack_id, rebalance_timeout_ms=request.rebalance_timeout_ms,
        subscribed_topic_names=None if names is None else tuple(names),
        subscribed_topic_regex=request.subscribed_topic_regex if version >= 1 else None,
        server_assignor=request.server_assignor, owned=owned,
        client_id=ctx.client_id or "", client_host=member_host(ctx), version=version))
    assignment = None if answer.assignment is None else _Assignment(topic_partitions=[
        _TopicPartitions(topic_id=uuid.UUID(t), partitions=list(ps))
        for t, ps in answer.assignment])
    return ConsumerGroupHeartbeatResponse(
        version=version, throttle_time_ms=0, error_code=answer.error,
        error_message=answer.error_message, member_id=answer.member_id,
        member_epoch=answer.member_epoch, heartbeat_interval_ms=answer.heartbeat_interval_ms,
        assignment=assignment)
