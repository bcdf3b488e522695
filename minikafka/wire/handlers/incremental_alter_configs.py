"""IncrementalAlterConfigs (key 44), v0-v1, for topics: SET, DELETE (back to the
default), and APPEND / SUBTRACT on list configs (cleanup.policy); and for BROKER resources,
the cluster-wide default ("") or one broker ("1", what kafka-python sends): SET and
DELETE of the keys Kafka can change on a running broker (log.retention.ms,
min.insync.replicas, ...; core.server_config.DYNAMIC_KEYS). minikafka's brokers share
one configuration, so a value set on one broker applies to all of them. BROKER_LOGGER
resources set or reset a logger's level (handlers/_loggers.py).
"""
from __future__ import annotations

from kafka.protocol.admin import IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse

from ...core import errors
from ...core.config import TOPIC_CONFIGS, TopicConfig
from ...core.errors import KafkaCoreError
from ..registry import RequestContext
from . import _loggers
from ._common import INVALID_REQUEST, KAFKA_ERRORS, error_code, error_message, serving_broker
from ._configs import BROKER, BROKER_LOGGER, TOPIC, is_list, render

API_KEY = 44
MIN_VERSION = 0
MAX_VERSION = 1

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3

_Result = IncrementalAlterConfigsResponse.AlterConfigsResourceResponse


def _changes(meta, configs) -> dict[str, str | None]:
    changes: dict[str, str | None] = {}
    for c in configs:
        name, op = c.name, c.config_operation
        if name in changes:
            raise KafkaCoreError(INVALID_REQUEST, f"Duplicate config {name}")
        if name not in TOPIC_CONFIGS:
            raise KafkaCoreError(errors.INVALID_CONFIG, f"Unknown topic config name: {name}")
        if op == SET:
            if c.value is None:
                raise KafkaCoreError(errors.INVALID_CONFIG, f"Null value for {name}")
            changes[name] = c.value
        elif op == DELETE:
            changes[name] = None
        elif op in (APPEND, SUBTRACT):
            if not is_list(name):
                raise KafkaCoreError(errors.INVALID_CONFIG,
                                     f"Config value append is not allowed for config key: {name}")
            current = [v for v in (render(meta.config[name]) or "").split(",") if v]
            given = [v.strip() for v in (c.value or "").split(",") if v.strip()]
            if op == APPEND:
                merged = current + [v for v in given if v not in current]
            else:
                merged = [v for v in current if v not in given]
            changes[name] = ",".join(merged) if merged else None
        else:
            raise KafkaCoreError(INVALID_REQUEST, f"Unknown config operation {op}")
    return changes


def _alter_broker(cluster, resource, validate_only: bool) -> None:
    name = resource.resource_name
    if name != "" and (not name.isdigit() or int(name) not in cluster.brokers):
        raise KafkaCoreError(INVALID_REQUEST, f"Unexpected broker id {name}")
    changes: dict[str, str | None] = {}
    for c in resource.configs:
        if c.name in changes:
            raise KafkaCoreError(INVALID_REQUEST, f"Duplicate config {c.name}")
        if c.config_operation == SET:
            if c.value is None:
                raise KafkaCoreError(errors.INVALID_CONFIG, f"Null value for {c.name}")
            changes[c.name] = c.value
        elif c.config_operation == DELETE:
            changes[c.name] = None
        else:
            raise KafkaCoreError(errors.INVALID_CONFIG,
                                 f"Config value append is not allowed for config key: {c.name}")
    cluster.alter_broker_config(changes, validate_only=validate_only,
                                broker_id=int(name) if name else None)


def handle(ctx: RequestContext,
           request: IncrementalAlterConfigsRequest) -> IncrementalAlterConfigsResponse:
    cluster = ctx.cluster
    serving_broker(ctx)
    results = []
    for resource in request.resources:
        result = _Result(error_code=errors.NONE, error_message=None,
                         resource_type=resource.resource_type,
                         resource_name=resource.resource_name)
        results.append(result)
        try:
            if resource.resource_type == BROKER:
                _alter_broker(cluster, resource, request.validate_only)
                continue
            if resource.resource_type == BROKER_LOGGER:
                name = resource.resource_name
                if not name.isdigit() or int(name) not in cluster.brokers:
                    raise KafkaCoreError(INVALID_REQUEST, f"Unexpected broker id {name}")
                _loggers.alter(resource.configs, request.validate_only)
                continue
            if resource.resource_type != TOPIC:
                raise KafkaCoreError(INVALID_REQUEST,
                                     f"Unsupported resource type {resource.resource_type}")
            meta = cluster.controller.topics.get(resource.resource_name)
            if meta is None:
                raise KafkaCoreError(errors.UNKNOWN_TOPIC_OR_PARTITION,
                                     f"Topic {resource.resource_name} does not exist")
            changes = _changes(meta, resource.configs)
            if request.validate_only:
                TopicConfig(meta.config.overrides).update(changes)
            else:
                cluster.alter_topic_config(resource.resource_name, changes)
        except KAFKA_ERRORS as exc:
            result.error_code = error_code(exc)
            result.error_message = error_message(exc)
    return IncrementalAlterConfigsResponse(version=ctx.api_version, throttle_time_ms=0,
                                           responses=results)
