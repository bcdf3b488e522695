"""Configs as DescribeConfigs and CreateTopics report them: Kafka's string values,
sources and types, for topics (overrides over defaults) and brokers."""
from __future__ import annotations

from typing import Any, NamedTuple

from ...core.config import BROKER_DEFAULTS, TOPIC_CONFIGS
from ...core.server_config import DYNAMIC_KEYS, TOPIC_SYNONYMS
from ..listeners import endpoint

# ConfigSource
DYNAMIC_TOPIC_CONFIG = 1
DYNAMIC_BROKER_CONFIG = 2
DYNAMIC_DEFAULT_BROKER_CONFIG = 3
STATIC_BROKER_CONFIG = 4
DEFAULT_CONFIG = 5
DYNAMIC_BROKER_LOGGER_CONFIG = 6

# Which source wins when several broker keys could set a topic default
_SOURCE_RANK = (DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG,
                DEFAULT_CONFIG)

# ConfigType
BOOLEAN, STRING, INT, LONG, DOUBLE, LIST = 1, 2, 3, 5, 6, 7

# ConfigResource types
TOPIC = 2
BROKER = 4
BROKER_LOGGER = 8

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


def topic_entries(topic: Any, cluster: Any = None) -> list[ConfigEntry]:
    """Every topic config in name order: overrides marked DYNAMIC_TOPIC_CONFIG; a default
    that a broker key sets (log.retention.hours for retention.ms) has that key's source,
    as Kafka reports it (given `cluster`)."""
    config = topic.config
    out = []
    for name in sorted(TOPIC_CONFIGS):
        spec = TOPIC_CONFIGS[name]
        value = config[name]
        if name in config.overrides:
            source = DYNAMIC_TOPIC_CONFIG
        elif cluster is None:
            source = DEFAULT_CONFIG
        else:
            source = min((broker_source(cluster, key) for key in TOPIC_SYNONYMS.get(name, ())),
                         default=DEFAULT_CONFIG, key=_SOURCE_RANK.index)
        out.append(ConfigEntry(name, render(value), source, config_type(name, spec.default),
                               spec.doc or None))
    return out


def broker_source(cluster: Any, name: str) -> int:
    """Where a broker setting comes from: altered since start (on a broker, or the
    cluster-wide default; minikafka's brokers share one configuration),
    given at start (server.properties or Cluster(broker_config=...)), or Kafka's default."""
    if name in cluster.dynamic_broker_config:
        broker_id, _ = cluster.dynamic_broker_config[name]
        return DYNAMIC_DEFAULT_BROKER_CONFIG if broker_id is None else DYNAMIC_BROKER_CONFIG
    if name in cluster.static_broker_config:
        return STATIC_BROKER_CONFIG
    return DEFAULT_CONFIG


def broker_entries(cluster: Any, broker_id: int | None) -> list[ConfigEntry]:
    """The broker's settings with their sources; read-only unless Kafka can change the
    key on a running broker. `broker_id` None: the cluster-wide default resource,
    which lists only the dynamic values set on it (as Kafka does)."""
    if broker_id is None:
        return [ConfigEntry(name, render(value), DYNAMIC_DEFAULT_BROKER_CONFIG,
                            config_type(name, value), None, False)
                for name, (where, value) in sorted(cluster.dynamic_broker_config.items())
                if where is None]
    broker = cluster.brokers[broker_id]
    host, port = endpoint(cluster, broker_id)
    address = f"PLAINTEXT://{host}:{port}"  # where serve put this broker
    out = [ConfigEntry("node.id", str(broker_id), STATIC_BROKER_CONFIG, INT, None, True),
           ConfigEntry("broker.rack", broker.rack, STATIC_BROKER_CONFIG, STRING, None, True),
           ConfigEntry("listeners", address, STATIC_BROKER_CONFIG, LIST, None, True),
           ConfigEntry("advertised.listeners", address, STATIC_BROKER_CONFIG, LIST, None, True)]
    for name in sorted(cluster.broker_config):
        value = cluster.broker_config[name]
        kind = config_type(name, value if value is not None else BROKER_DEFAULTS.get(name, 0))
        out.append(ConfigEntry(name, render(value), broker_source(cluster, name), kind, None,
                               name not in DYNAMIC_KEYS))
    return out
