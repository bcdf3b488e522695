"""DescribeConfigs (key 32), v1-v4, for topics (overrides over Kafka's defaults),
brokers and broker loggers: every setting with its source (DEFAULT_CONFIG,
STATIC_BROKER_CONFIG from server.properties, DYNAMIC_DEFAULT_BROKER_CONFIG once altered);
the default broker resource ("") lists the cluster-wide dynamic values only; a
BROKER_LOGGER lists each logger's level (handlers/_loggers.py)."""
from __future__ import annotations

from kafka.protocol.admin import DescribeConfigsRequest, DescribeConfigsResponse

from ...core import errors
from ..registry import RequestContext
from . import _loggers
from ._common import INVALID_REQUEST, serving_broker
from ._configs import (
    BROKER,
    BROKER_LOGGER,
    DYNAMIC_BROKER_LOGGER_CONFIG,
    STRING,
    TOPIC,
    ConfigEntry,
    broker_entries,
    topic_entries,
)

API_KEY = 32
MIN_VERSION = 1
MAX_VERSION = 4

_Result = DescribeConfigsResponse.DescribeConfigsResult
_Entry = _Result.DescribeConfigsResourceResult
_Synonym = _Entry.DescribeConfigsSynonym


def _entries(cluster, resource) -> tuple[int, str | None, list]:
    name = resource.resource_name
    if resource.resource_type == TOPIC:
        meta = cluster.controller.topics.get(name)
        if meta is None:
            return (errors.UNKNOWN_TOPIC_OR_PARTITION,
                    f"Topic {name} does not exist", [])
        return errors.NONE, None, topic_entries(meta, cluster)
    if resource.resource_type == BROKER:
        if name == "":  # the cluster-wide default: its dynamic values only
            return errors.NONE, None, broker_entries(cluster, None)
        if not name.lstrip("-").isdigit() or int(name) not in cluster.brokers:
            return INVALID_REQUEST, f"Unexpected broker id {name}", []
        return errors.NONE, None, broker_entries(cluster, int(name))
    if resource.resource_type == BROKER_LOGGER:
        if not name.isdigit() or int(name) not in cluster.brokers:
            return INVALID_REQUEST, f"Unexpected broker id {name}", []
        return errors.NONE, None, [
            ConfigEntry(logger, level, DYNAMIC_BROKER_LOGGER_CONFIG, STRING, None)
            for logger, level in _loggers.loggers().items()]
    return INVALID_REQUEST, f"Unsupported resource type {resource.resource_type}", []


def handle(ctx: RequestContext, request: DescribeConfigsRequest) -> DescribeConfigsResponse:
    cluster = ctx.cluster
    serving_broker(ctx)
    synonyms = request.include_synonyms
    documentation = ctx.api_version >= 3 and request.include_documentation
    results = []
    for resource in request.resources:
        code, message, entries = _entries(cluster, resource)
        keys = resource.configuration_keys  # null: every config
        if keys is not None:
            wanted = set(keys)
            entries = [e for e in entries if e.name in wanted]
        configs = [
            _Entry(name=e.name, value=e.value, read_only=e.read_only, config_source=e.source,
                   is_sensitive=False, config_type=e.config_type,
                   documentation=e.documentation if documentation else None,
                   synonyms=[_Synonym(name=e.name, value=e.value, source=e.source)]
                   if synonyms else [])
            for e in entries]
        results.append(_Result(error_code=code, error_message=message,
                               resource_type=resource.resource_type,
                               resource_name=resource.resource_name, configs=configs))
    return DescribeConfigsResponse(version=ctx.api_version, throttle_time_ms=0,
                                   results=results)
