"""DescribeConfigs (key 32), IncrementalAlterConfigs (key 44) and the legacy AlterConfigs
(key 33), for topics, brokers, broker loggers and groups (core.group_config).

Configs as Kafka reports them: string values, sources and types, for topics (overrides
over defaults) and brokers (the cluster-wide default resource "" lists its dynamic values
only). An alter SETs, DELETEs (back to the default) and, on list configs such as
cleanup.policy, APPENDs and SUBTRACTs; on a BROKER resource only the keys Kafka can change
on a running broker (core.server_config.DYNAMIC_KEYS), SET and DELETE, on one broker
(resource name its id) or on the cluster-wide default (""). A broker's value comes, as in
Kafka, from the first of: its own dynamic config, the cluster-wide dynamic default, its
static config (server.properties), Kafka's default; its synonyms list them in that order.
A topic config's synonyms are its override, then those of the broker key that sets its
default (log.retention.ms for retention.ms), as the answering broker has them.
A BROKER_LOGGER resource (a broker id) lists each logger's level, and SETs or DELETEs one
(core.api.loggers). DescribeConfigs of a broker names where it listens when the caller
says (the wire layer knows its listeners; `listeners` below).

    >>> from minikafka.cluster import Cluster
    >>> cluster = Cluster(brokers=3)
    >>> _ = cluster.create_topic("t", 1, 3)
    >>> r, = incremental_alter_configs(cluster, [AlterConfigsResource(
    ...     TOPIC, "t", [AlterableConfig("retention.ms", SET, "60000")])])
    >>> r.error_code
    0
    >>> d, = describe_configs(cluster, [ConfigResource(TOPIC, "t", ["retention.ms"])])
    >>> [(e.name, e.value, e.source == DYNAMIC_TOPIC_CONFIG) for e in d.entries]
    [('retention.ms', '60000', True)]
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from .. import errors, group_config, kafka_configs
from ..config import BROKER_DEFAULTS, TOPIC_CONFIGS, TopicConfig
from ..errors import KafkaCoreError
from ..server_config import DYNAMIC_KEYS, TOPIC_SYNONYMS
from ..tiered import validate_topic as validate_tiered_topic
from . import loggers

if TYPE_CHECKING:
    from .port import ClusterPort

# ConfigSource
DYNAMIC_TOPIC_CONFIG = 1
DYNAMIC_BROKER_CONFIG = 2
DYNAMIC_DEFAULT_BROKER_CONFIG = 3
STATIC_BROKER_CONFIG = 4
DEFAULT_CONFIG = 5
DYNAMIC_BROKER_LOGGER_CONFIG = 6
DYNAMIC_GROUP_CONFIG = 8


# ConfigType
BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD = 1, 2, 3, 4, 5, 6, 7, 8, 9

# ConfigResource types
TOPIC = 2
BROKER = 4
BROKER_LOGGER = 8
GROUP = 32

_TYPES = {"BOOLEAN": BOOLEAN, "STRING": STRING, "INT": INT, "SHORT": SHORT, "LONG": LONG,
          "DOUBLE": DOUBLE, "LIST": LIST, "CLASS": CLASS, "PASSWORD": PASSWORD}


class ConfigSynonym(NamedTuple):
    name: str
    value: str | None
    source: int


class ConfigEntry(NamedTuple):
    name: str
    value: str | None
    source: int
    config_type: int
    documentation: str | None
    read_only: bool = False
    # Where the value could come from, highest precedence first (include_synonyms);
    # None: the entry itself is its only synonym.
    synonyms: tuple[ConfigSynonym, ...] | None = None
    sensitive: bool = False  # a PASSWORD key: Kafka never shows its value


def render(value: Any) -> str | None:
    """A parsed config value in Kafka's text form (true/false, 0.5, 604800000)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


def config_type(name: str, value: Any = None) -> int:
    """Kafka's ConfigDef type of a topic or broker key (`value`'s, for a key Kafka lacks)."""
    spec = kafka_configs.TOPIC.get(name) or kafka_configs.BROKER.get(name)
    if spec is not None:
        return _TYPES[spec.type]
    if isinstance(value, bool):
        return BOOLEAN
    if isinstance(value, float):
        return DOUBLE
    return LONG if isinstance(value, int) else STRING


def is_list(name: str) -> bool:
    spec = kafka_configs.TOPIC.get(name)
    return spec is not None and spec.type == "LIST"


def topic_entries(topic: Any, cluster: ClusterPort | None = None, broker_id: int | None = None
                  ) -> list[ConfigEntry]:
    """Every topic config in name order, as Kafka's ConfigHelper describes it (given
    `cluster`, on broker `broker_id`: the one that answers; None: the cluster-wide view):
    its synonyms are the topic's override (DYNAMIC_TOPIC_CONFIG) if any, then the broker
    synonyms of the broker key that sets its default (log.retention.ms for retention.ms,
    see broker_synonyms); its source is the first synonym's, DEFAULT_CONFIG if none."""
    config = topic.config
    if cluster is not None and broker_id is not None:
        config = config.on_broker(cluster.brokers[broker_id].topic_defaults)
    out = []
    # Kafka lists its internal keys (internal.segment.bytes) only where a topic sets them.
    names = sorted({*TOPIC_CONFIGS, *(n for n in config.overrides if n in kafka_configs.TOPIC)})
    for name in names:
        spec = kafka_configs.TOPIC[name]
        value = render(config[name])
        synonyms: tuple[ConfigSynonym, ...] | None = None
        if cluster is not None:
            keys = TOPIC_SYNONYMS.get(name)
            synonyms = broker_synonyms(cluster, keys[0], broker_id) if keys else ()
            if name in config.overrides:
                synonyms = (ConfigSynonym(name, value, DYNAMIC_TOPIC_CONFIG), *synonyms)
            source = synonyms[0].source if synonyms else DEFAULT_CONFIG
        else:
            source = DYNAMIC_TOPIC_CONFIG if name in config.overrides else DEFAULT_CONFIG
        out.append(ConfigEntry(name, value, source, config_type(name, spec.default),
                               spec.doc or None, synonyms=synonyms))
    return out


def _layers(cluster: ClusterPort, broker_id: int | None) -> list[tuple[int, dict[str, Any]]]:
    """A broker's settings by source, highest precedence first (Kafka's DynamicBrokerConfig:
    its own dynamic configs, the cluster-wide dynamic default, static, Kafka's default)."""
    dynamic = cluster.dynamic_broker_config
    return [(DYNAMIC_BROKER_CONFIG, dynamic.get(broker_id, {}) if broker_id is not None else {}),
            (DYNAMIC_DEFAULT_BROKER_CONFIG, dynamic.get(None, {})),
            (STATIC_BROKER_CONFIG, cluster.static_broker_config),
            (DEFAULT_CONFIG, {k: v for k, v in BROKER_DEFAULTS.items() if v is not None})]


def broker_source(cluster: ClusterPort, name: str, broker_id: int | None = None) -> int:
    """Where broker `broker_id`'s setting comes from (None: the cluster-wide view, which
    no broker's own dynamic config reaches)."""
    for source, values in _layers(cluster, broker_id):
        if name in values:
            return source
    return DEFAULT_CONFIG


def _synonym_keys(name: str) -> tuple[str, ...]:
    """The broker keys that set the same thing (log.retention.ms, .minutes, .hours), as
    Kafka's DynamicBrokerConfig.brokerConfigSynonyms lists them."""
    for keys in TOPIC_SYNONYMS.values():
        if name in keys:
            return keys
    return (name,)


def broker_synonyms(cluster: ClusterPort, name: str, broker_id: int | None) -> tuple[ConfigSynonym, ...]:
    """Kafka's synonyms of a broker config: source by source (highest precedence first),
    each synonym key set there, from the first entry that is `name` itself."""
    found = [ConfigSynonym(key, render(values[key]), source)
             for source, values in _layers(cluster, broker_id)
             for key in _synonym_keys(name) if key in values]
    while found and found[0].name != name:
        found.pop(0)
    return tuple(found)


def broker_entries(cluster: ClusterPort, broker_id: int | None,
                   listeners: Callable[[int], str] | None = None) -> list[ConfigEntry]:
    """The broker's settings with their sources and synonyms; read-only unless Kafka can
    change the key on a running broker. `broker_id` None: the cluster-wide default
    resource, which lists only the dynamic values set on it (as Kafka does). `listeners`
    gives a broker's listeners and advertised.listeners value (where serve put it)."""
    if broker_id is None:
        return [ConfigEntry(name, render(value), DYNAMIC_DEFAULT_BROKER_CONFIG,
                            config_type(name, value), None, False,
                            (ConfigSynonym(name, render(value), DYNAMIC_DEFAULT_BROKER_CONFIG),))
                for name, value in sorted(cluster.dynamic_broker_config.get(None, {}).items())]
    broker = cluster.brokers[broker_id]
    def static(name: str, value: str | None, kind: int) -> ConfigEntry:
        return ConfigEntry(name, value, STATIC_BROKER_CONFIG, kind, None,
                           kafka_configs.BROKER[name].dynamic == "read-only")
    out = [static("node.id", str(broker_id), INT), static("broker.rack", broker.rack, STRING)]
    if listeners is not None:
        address = listeners(broker_id)
        out += [static("listeners", address, LIST), static("advertised.listeners", address, LIST)]
    # Kafka lists KafkaConfig's keys; those only a dynamic config sets (the replication
    # throttle rates) only where one is set
    for name in sorted(broker.config):
        value = broker.config[name]
        source = broker_source(cluster, name, broker_id)
        if name in kafka_configs.BROKER_DYNAMIC_ONLY and source == DEFAULT_CONFIG:
            continue
        kind = config_type(name, value if value is not None else BROKER_DEFAULTS.get(name, 0))
        synonyms = broker_synonyms(cluster, name, broker_id)
        # A PASSWORD key (delegation.token.secret.key): Kafka never shows its value.
        sensitive = name in kafka_configs.BROKER and kafka_configs.BROKER[name].type == "PASSWORD"
        if sensitive:
            synonyms = tuple(s._replace(value=None) for s in synonyms)
        out.append(ConfigEntry(name, None if sensitive else render(value), source, kind, None,
                               name not in DYNAMIC_KEYS, synonyms, sensitive))
    listed = {e.name for e in out}
    out += [_unmodelled_entry(spec) for name, spec in sorted(kafka_configs.BROKER.items())
            if name not in listed and not spec.internal
            and name not in kafka_configs.BROKER_DYNAMIC_ONLY]
    return sorted(out, key=lambda e: e.name)


def _unmodelled_entry(spec: kafka_configs.KafkaConfigKey) -> ConfigEntry:
    """A broker key minikafka does not model, as Kafka lists it on a broker that leaves it
    unset (Kafka's ConfigHelper lists every non-internal KafkaConfig key): its default,
    read-only unless DynamicBrokerConfig can update it, a PASSWORD's value hidden."""
    sensitive = spec.type == "PASSWORD"
    value = None if sensitive else spec.default_text
    return ConfigEntry(spec.name, value, DEFAULT_CONFIG, _TYPES[spec.type], None,
                       spec.dynamic == "read-only",
                       (ConfigSynonym(spec.name, value, DEFAULT_CONFIG),), sensitive)


def group_entries(cluster: ClusterPort, group_id: str, broker_id: int | None = None
                  ) -> list[ConfigEntry]:
    """A group's configs as Kafka's ConfigHelper describes a GROUP resource, for any group
    id (one nobody joined lists its defaults): every GroupConfig key but the internal ones,
    its synonyms the group's own value (DYNAMIC_GROUP_CONFIG) if set, then those of the
    broker key that gives its default (group.consumer.session.timeout.ms for
    consumer.session.timeout.ms), or Kafka's default where no broker key does."""
    own = cluster.share_groups.group_configs.get(group_id, {})
    out = []
    for name, spec in sorted(kafka_configs.GROUP.items()):
        if spec.internal:
            continue
        key = group_config.broker_key(name)
        synonyms: tuple[ConfigSynonym, ...] = ()
        if key is not None:
            synonyms = broker_synonyms(cluster, key, broker_id) or (ConfigSynonym(
                key, render(kafka_configs.BROKER[key].default), DEFAULT_CONFIG),)
            value = group_config.default_from_broker(name, synonyms[0].value)
        else:
            value = render(spec.default)
            synonyms = (ConfigSynonym(name, value, DEFAULT_CONFIG),)
        if name in own:
            value = render(own[name])
            synonyms = (ConfigSynonym(name, value, DYNAMIC_GROUP_CONFIG), *synonyms)
        out.append(ConfigEntry(name, value, synonyms[0].source, _TYPES[spec.type],
                               spec.doc or None, synonyms=synonyms))
    return out


def entry_synonyms(entry: ConfigEntry) -> tuple[ConfigSynonym, ...]:
    """An entry's synonyms, highest precedence first."""
    if entry.synonyms is not None:
        return entry.synonyms
    return (ConfigSynonym(entry.name, entry.value, entry.source),)


# AlterConfigOp
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


@dataclass(frozen=True)
class ConfigResource:
    resource_type: int  # TOPIC or BROKER
    name: str  # a topic, a broker id, or "" for the cluster-wide broker default
    keys: Sequence[str] | None = None  # None: every config


@dataclass(frozen=True)
class AlterConfigsResult:
    resource_type: int
    name: str
    error_code: int = errors.NONE
    error_message: str | None = None


@dataclass(frozen=True)
class DescribeConfigsResult(AlterConfigsResult):
    entries: tuple[ConfigEntry, ...] = ()


def _entries(cluster: ClusterPort, resource: ConfigResource,
             listeners: Callable[[int], str] | None, broker_id: int | None
             ) -> list[ConfigEntry]:
    name = resource.name
    if resource.resource_type == TOPIC:
        meta = cluster.controller.topics.get(name)
        if meta is None:
            raise KafkaCoreError(errors.UNKNOWN_TOPIC_OR_PARTITION, f"Topic {name} does not exist")
        return topic_entries(meta, cluster, broker_id)
    if resource.resource_type == BROKER:
        if name == "":  # the cluster-wide default: its dynamic values only
            return broker_entries(cluster, None)
        return broker_entries(cluster, _broker_id(cluster, name), listeners)
    if resource.resource_type == BROKER_LOGGER:
        _broker_id(cluster, name)
        return [ConfigEntry(logger, level, DYNAMIC_BROKER_LOGGER_CONFIG, STRING, None)
                for logger, level in loggers.loggers().items()]
    if resource.resource_type == GROUP:
        return group_entries(cluster, name, broker_id)
    raise KafkaCoreError(errors.INVALID_REQUEST,
                         f"Unsupported resource type {resource.resource_type}")


def _broker_id(cluster: ClusterPort, name: str) -> int:
    if not name.lstrip("-").isdigit() or int(name) not in cluster.brokers:
        raise KafkaCoreError(errors.INVALID_REQUEST, f"Unexpected broker id {name}")
    return int(name)


def describe_configs(cluster: ClusterPort, resources: Sequence[ConfigResource],
                     listeners: Callable[[int], str] | None = None,
                     broker_id: int | None = None) -> list[DescribeConfigsResult]:
    """One result per resource, in order: its configs in name order (only ``keys`` when
    given), or the error. `listeners`: a broker id's listeners value, for BROKER
    resources (None: not listed). A topic's defaults are those of broker `broker_id` (the
    broker that answers, as in Kafka), or the cluster-wide ones (None)."""
    out = []
    for resource in resources:
        try:
            entries = _entries(cluster, resource, listeners, broker_id)
        except KafkaCoreError as exc:
            out.append(DescribeConfigsResult(resource.resource_type, resource.name, exc.code,
                                             exc.message or None))
            continue
        if resource.keys is not None:
            wanted = set(resource.keys)
            entries = [e for e in entries if e.name in wanted]
        out.append(DescribeConfigsResult(resource.resource_type, resource.name,
                                         entries=tuple(entries)))
    return out


@dataclass(frozen=True)
class AlterableConfig:
    name: str
    op: int = SET
    value: str | None = None


@dataclass(frozen=True)
class AlterConfigsResource:
    resource_type: int
    name: str
    configs: Sequence[AlterableConfig] = field(default_factory=tuple)


def _topic_changes(meta: Any, configs: Sequence[AlterableConfig]) -> dict[str, str | None]:
    changes: dict[str, str | None] = {}
    for c in configs:
        name, op = c.name, c.op
        if name in changes:
            raise KafkaCoreError(errors.INVALID_REQUEST, f"Duplicate config {name}")
        if name not in kafka_configs.TOPIC:
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
            # Kafka's order: APPEND adds the items not there yet at the end, SUBTRACT
            # removes; an emptied list stays the topic's own (empty) value.
            current = [v for v in (render(meta.config[name]) or "").split(",") if v]
            given = [v.strip() for v in (c.value or "").split(",") if v.strip()]
            if op == APPEND:
                merged = list(dict.fromkeys(current + given))
            else:
                merged = [v for v in current if v not in given]
            changes[name] = ",".join(merged)
        else:
            raise KafkaCoreError(errors.INVALID_REQUEST, f"Unknown config operation {op}")
    return changes


def _broker_changes(configs: Sequence[AlterableConfig]) -> dict[str, str | None]:
    changes: dict[str, str | None] = {}
    for c in configs:
        if c.name in changes:
            raise KafkaCoreError(errors.INVALID_REQUEST, f"Duplicate config {c.name}")
        if c.op == SET:
            if c.value is None:
                raise KafkaCoreError(errors.INVALID_CONFIG, f"Null value for {c.name}")
            changes[c.name] = c.value
        elif c.op == DELETE:
            changes[c.name] = None
        else:
            raise KafkaCoreError(errors.INVALID_CONFIG,
                                 f"Config value append is not allowed for config key: {c.name}")
    return changes


def _group_changes(configs: Sequence[AlterableConfig]) -> dict[str, str | None]:
    changes: dict[str, str | None] = {}
    for c in configs:
        if c.op not in (SET, DELETE):
            raise KafkaCoreError(errors.INVALID_CONFIG,
                                 f"Config value append is not allowed for config key: {c.name}")
        changes[c.name] = c.value if c.op == SET else None
    return changes


def _alter(cluster: ClusterPort, resource: AlterConfigsResource, validate_only: bool) -> None:
    if resource.resource_type == BROKER:
        broker_id = _broker_id(cluster, resource.name) if resource.name else None
        cluster.apply_broker_config(_broker_changes(resource.configs), validate_only,
                                    broker_id)
        return
    if resource.resource_type == BROKER_LOGGER:
        _broker_id(cluster, resource.name)
        loggers.alter(resource.configs, validate_only)
        return
    if resource.resource_type == GROUP:  # a share group's own configs (KIP-932)
        changes = _group_changes(resource.configs)
        if not validate_only:
            cluster.share_groups.alter_group_config(resource.name, changes)
        return
    if resource.resource_type != TOPIC:
        raise KafkaCoreError(errors.INVALID_REQUEST,
                             f"Unsupported resource type {resource.resource_type}")
    meta = cluster.controller.topics.get(resource.name)
    if meta is None:
        raise KafkaCoreError(errors.UNKNOWN_TOPIC_OR_PARTITION,
                             f"Topic {resource.name} does not exist")
    changes = _topic_changes(meta, resource.configs)
    after = TopicConfig(meta.config.overrides, cluster.controller.topic_defaults)
    after.update(changes)  # each value's own check, then tiered storage's over the result
    validate_tiered_topic(after, cluster.controller.remote_storage_system_enabled)
    if not validate_only:
        cluster.apply_topic_config(resource.name, changes)


def incremental_alter_configs(cluster: ClusterPort, resources: Sequence[AlterConfigsResource],
                              validate_only: bool = False) -> list[AlterConfigsResult]:
    """One result per resource, in order; a resource's changes apply all or none."""
    out = []
    for resource in resources:
        try:
            _alter(cluster, resource, validate_only)
            out.append(AlterConfigsResult(resource.resource_type, resource.name))
        except KafkaCoreError as exc:
            out.append(AlterConfigsResult(resource.resource_type, resource.name, exc.code,
                                          exc.message or None))
    return out


def alter_configs(cluster: ClusterPort, resources: Sequence[AlterConfigsResource],
                  validate_only: bool = False) -> list[AlterConfigsResult]:
    """The legacy AlterConfigs (key 33): each resource's configs become its whole set of
    overrides, as Kafka's ConfigAdminManager.alterConfigs does. Keys given are SET (a
    null value is INVALID_REQUEST); a topic override or a dynamic broker value not given
    is removed. Topics and brokers only (Kafka refuses BROKER_LOGGER and GROUP here)."""
    out = []
    for resource in resources:
        try:
            out.append(_legacy_alter(cluster, resource, validate_only))
        except KafkaCoreError as exc:
            out.append(AlterConfigsResult(resource.resource_type, resource.name, exc.code,
                                          exc.message or None))
    return out


def _legacy_alter(cluster: ClusterPort, resource: AlterConfigsResource,
                  validate_only: bool) -> AlterConfigsResult:
    names = [c.name for c in resource.configs]
    if len(set(names)) != len(names):
        raise KafkaCoreError(errors.INVALID_REQUEST, "Error due to duplicate config keys")
    for c in resource.configs:
        if c.value is None:
            raise KafkaCoreError(errors.INVALID_REQUEST, f"Null value not supported for : {c.name}")
    if resource.resource_type == TOPIC:
        meta = cluster.controller.topics.get(resource.name)
        current = set(meta.config.overrides) if meta is not None else set()
    elif resource.resource_type == BROKER:
        broker_id = _broker_id(cluster, resource.name) if resource.name else None
        current = set(cluster.dynamic_broker_config.get(broker_id, {}))
    else:
        raise KafkaCoreError(errors.INVALID_REQUEST, "AlterConfigs is deprecated and does "
                             f"not support the resource type {resource.resource_type}")
    ops = [AlterableConfig(c.name, SET, c.value) for c in resource.configs]
    ops += [AlterableConfig(name, DELETE) for name in sorted(current - set(names))]
    _alter(cluster, AlterConfigsResource(resource.resource_type, resource.name, ops),
           validate_only)
    return AlterConfigsResult(resource.resource_type, resource.name)
