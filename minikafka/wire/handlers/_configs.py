"""Configs as DescribeConfigs and CreateTopics report them: Kafka's string values,
sources and types, for topics (overrides over defaults) and brokers."""
from __future__ import annotations

from typing import Any, NamedTuple

from ...core.config import BROKER_DEFAULTS, TOPIC_CONFIGS

# ConfigSource
DYNAMIC_TOPIC_CONFIG = 1
STATIC_BROKER_CONFIG = 4
DEFAULT_CONFIG = 5

# ConfigType
BOOLEAN, STRING, INT, LONG, DOUBLE, LIST = 1, 2, 3, 5, 6, 7

# ConfigResource types
TOPIC = 2
BROKER = 4

_LIST_CONFIGS = frozenset({"cleanup.policy"})
_INT_CONFIGS = frozenset({"max.message.bytes", "min.insync.replicas", "segment.bytes",
                          "socket.request.max.bytes", "socket.send.buffer.bytes",
                          "socket.receive.buffer.bytes", "replica.fetch.max.bytes",
                          "replica.fetch.wait.max.ms", "num.partitions",
                          "default.replication.factor", "offsets.topic.num.partitions",
                          "offsets.topic.replication.factor",
                          "transaction.state.log.num.partitions",
                          "broker.session.timeout.ms", "broker.heartbeat.interval.ms",
                          "leader.imbalance.check.interval.seconds", "node.id"})


class ConfigEntry(NamedTuple):
    name: str
    value: str | None
    source: int
    config_type: int
    documentation: str | None
    read_only: bool = False


def render(value: Any) -> str | None:
    """A parsed config value in Kafka's text form (true/false, 0.5, 604800000)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def config_type(name: str, value: Any) -> int:
    if name in _LIST_CONFIGS:
        return LIST
    if isinstance(value, bool):
        return BOOLEAN
    if isinstance(value, float):
        return DOUBLE
    if isinstance(value, int):
        return INT if name in _INT_CONFIGS else LONG
    return STRING


def is_list(name: str) -> bool:
    return name in _LIST_CONFIGS


def topic_entries(topic: Any) -> list[ConfigEntry]:
    """Every topic config, overrides marked DYNAMIC_TOPIC_CONFIG, in name order."""
    config = topic.config
    out = []
    for name in sorted(TOPIC_CONFIGS):
        spec = TOPIC_CONFIGS[name]
        value = config[name]
        source = DYNAMIC_TOPIC_CONFIG if name in config.overrides else DEFAULT_CONFIG
        out.append(ConfigEntry(name, render(value), source, config_type(name, spec.default),
                               spec.doc or None))
    return out


def broker_entries(cluster: Any, broker_id: int) -> list[ConfigEntry]:
    """The broker's settings: those given to Cluster(broker_config=...) are
    STATIC_BROKER_CONFIG (server.properties), the rest Kafka's defaults."""
    broker = cluster.brokers[broker_id]
    out = [ConfigEntry("node.id", str(broker_id), STATIC_BROKER_CONFIG, INT, None, True),
           ConfigEntry("broker.rack", broker.rack, STATIC_BROKER_CONFIG, STRING, None, True)]
    for name in sorted(cluster.broker_config):
        value = cluster.broker_config[name]
        default = BROKER_DEFAULTS.get(name)
        source = DEFAULT_CONFIG if value == default else STATIC_BROKER_CONFIG
        out.append(ConfigEntry(name, render(value), source, config_type(name, value), None,
                               True))
    return out
