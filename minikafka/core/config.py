"""Topic and broker configs with Kafka 4.x names, defaults and validation."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from . import errors
from .share.defaults import SHARE_DEFAULTS

DAY_MS = 24 * 3600 * 1000


@dataclass(frozen=True)
class ConfigDef:
    name: str
    default: object
    parse: Callable[[str], object]
    check: Callable[[object], bool] = lambda v: True
    doc: str = ""


def _bool(text: str) -> bool:
    low = str(text).strip().lower()
    if low not in ("true", "false"):
        raise ValueError(text)
    return low == "true"


def _int(text: str) -> int:
    return int(str(text).strip())


def _float(text: str) -> float:
    return float(str(text).strip())


def _policy(text: str) -> str:
    parts = sorted(p.strip() for p in str(text).split(",") if p.strip())
    if not parts or any(p not in ("delete", "compact") for p in parts):
        raise ValueError(text)
    return ",".join(parts)


def _choice(*options: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if str(text) not in options:
            raise ValueError(text)
        return str(text)
    return parse


def _throttled_replicas(text: str) -> str:
    """Kafka's ThrottledReplicaListValidator: '', '*' or partition:broker,... """
    value = str(text).strip()
    if value in ("", "*"):
        return value
    for item in value.split(","):
        partition, sep, broker = item.strip().partition(":")
        if not sep or not partition.strip().isdigit() or not broker.strip().isdigit():
            raise ValueError(text)
    return value


TOPIC_CONFIGS: dict[str, ConfigDef] = {c.name: c for c in [
    ConfigDef("cleanup.policy", "delete", _policy, doc="delete, compact or both"),
    ConfigDef("compression.type", "producer",
              _choice("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd")),
    ConfigDef("delete.retention.ms", DAY_MS, _int, lambda v: v >= 0),
    # fsync after this many messages / ms; Kafka's default (Long.MAX) leaves it to the
    # page cache, which a killed process does not lose.
    ConfigDef("flush.messages", 2**63 - 1, _int, lambda v: v >= 1),
    ConfigDef("flush.ms", 2**63 - 1, _int, lambda v: v >= 0),
    # The replicas a reassignment throttles (kafka-reassign-partitions.sh --throttle sets
    # them, --verify clears them): '*' or partition:broker pairs.
    ConfigDef("follower.replication.throttled.replicas", "", _throttled_replicas),
    ConfigDef("leader.replication.throttled.replicas", "", _throttled_replicas),
    ConfigDef("max.compaction.lag.ms", 2**63 - 1, _int, lambda v: v >= 1),
    ConfigDef("max.message.bytes", 1048588, _int, lambda v: v >= 0),
    ConfigDef("message.timestamp.type", "CreateTime", _choice("CreateTime", "LogAppendTime")),
    ConfigDef("min.cleanable.dirty.ratio", 0.5, _float, lambda v: 0 <= v <= 1),
    ConfigDef("min.compaction.lag.ms", 0, _int, lambda v: v >= 0),
    ConfigDef("min.insync.replicas", 1, _int, lambda v: v >= 1),
    ConfigDef("retention.bytes", -1, _int),
    ConfigDef("retention.ms", 7 * DAY_MS, _int, lambda v: v >= -1),
    # Kafka 4.0 raised the minimum segment.bytes to 1 MiB; minikafka allows small
    # segments so a lesson can show rolling with a handful of records.
    ConfigDef("segment.bytes", 1 << 30, _int, lambda v: v >= 14),
    ConfigDef("segment.ms", 7 * DAY_MS, _int, lambda v: v >= 1),
    ConfigDef("unclean.leader.election.enable", False, _bool),
]}

BROKER_DEFAULTS: dict[str, object] = {
    "replica.lag.time.max.ms": 30_000,
    "replica.fetch.wait.max.ms": 500,
    "replica.fetch.max.bytes": 1 << 20,
    "replica.fetch.backoff.ms": 1_000,
    "broker.session.timeout.ms": 9_000,
    "broker.heartbeat.interval.ms": 2_000,
    "leader.imbalance.check.interval.seconds": 300,
    "auto.leader.rebalance.enable": True,
    "default.replication.factor": 1,
    "num.partitions": 1,
    "offsets.topic.num.partitions": 50,
    "offsets.topic.replication.factor": 3,
    "offsets.topic.segment.bytes": 104_857_600,
    "offsets.retention.minutes": 10_080,
    "offsets.retention.check.interval.ms": 600_000,
    "offsets.commit.timeout.ms": 5_000,
    "offset.metadata.max.bytes": 4_096,
    "group.initial.rebalance.delay.ms": 3_000,
    "group.min.session.timeout.ms": 6_000,
    "group.max.session.timeout.ms": 1_800_000,
    "group.max.size": 2_147_483_647,
    # The consumer group protocol (KIP-848): the broker sets the session timeout and
    # the heartbeat interval; the assignors are Kafka's UniformAssignor and RangeAssignor.
    "group.consumer.session.timeout.ms": 45_000,
    "group.consumer.min.session.timeout.ms": 45_000,
    "group.consumer.max.session.timeout.ms": 60_000,
    "group.consumer.heartbeat.interval.ms": 5_000,
    "group.consumer.min.heartbeat.interval.ms": 5_000,
    "group.consumer.max.heartbeat.interval.ms": 15_000,
    "group.consumer.max.size": 2_147_483_647,
    "group.consumer.assignors": "org.apache.kafka.coordinator.group.assignor.UniformAssignor,"
                                "org.apache.kafka.coordinator.group.assignor.RangeAssignor",
    "group.consumer.migration.policy": "bidirectional",
    "transaction.state.log.num.partitions": 50,
    "transaction.max.timeout.ms": 900_000,
    # How often the transaction coordinator aborts transactions older than their
    # transaction.timeout.ms.
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": 10_000,
    "log.retention.check.interval.ms": 300_000,
    "log.cleaner.backoff.ms": 15_000,
    "socket.request.max.bytes": 104_857_600,
    # SO_SNDBUF / SO_RCVBUF of every accepted connection; -1 leaves the OS default.
    "socket.send.buffer.bytes": 102_400,
    "socket.receive.buffer.bytes": 102_400,
    "connections.max.idle.ms": 600_000,
    "auto.create.topics.enable": True,
    # Defaults of the topic configs (core.server_config.TOPIC_SYNONYMS); None: unset,
    # the next unit applies (log.retention.ms, then .minutes, then .hours).
    "log.cleanup.policy": "delete",
    "log.flush.interval.messages": 2**63 - 1,
    "log.flush.interval.ms": None,
    "compression.type": "producer",
    "log.cleaner.delete.retention.ms": DAY_MS,
    "log.cleaner.max.compaction.lag.ms": 2**63 - 1,
    "log.cleaner.min.cleanable.ratio": 0.5,
    "log.cleaner.min.compaction.lag.ms": 0,
    "log.message.timestamp.type": "CreateTime",
    "message.max.bytes": 1_048_588,
    "min.insync.replicas": 1,
    "log.retention.bytes": -1,
    "log.retention.ms": None,
    "log.retention.minutes": None,
    "log.retention.hours": 168,
    "log.segment.bytes": 1 << 30,
    "log.roll.ms": None,
    "log.roll.hours": 168,
    "unclean.leader.election.enable": False,
    # Share groups (KIP-932): sessions, locks, delivery counts, with their group-config bounds.
    **SHARE_DEFAULTS,
    # Replication quotas, bytes/s, per broker (dynamic only in Kafka; --throttle sets them).
    "leader.replication.throttled.rate": 2**63 - 1,
    "follower.replication.throttled.rate": 2**63 - 1,
    "replica.alter.log.dirs.io.max.bytes.per.second": 2**63 - 1,
}


def validate_topic_config(config: Mapping[str, object] | None) -> dict[str, object]:
    """Parse a topic's overrides; unknown names or bad values raise INVALID_CONFIG."""
    parsed: dict[str, object] = {}
    for name, raw in (config or {}).items():
        spec = TOPIC_CONFIGS.get(name)
        if spec is None:
            raise errors.KafkaCoreError(errors.INVALID_CONFIG, f"Unknown topic config name: {name}")
        try:
            value = spec.parse(raw) if isinstance(raw, str) else spec.parse(str(raw).lower()
                                                                            if isinstance(raw, bool)
                                                                            else str(raw))
        except (ValueError, TypeError):
            raise errors.KafkaCoreError(
                errors.INVALID_CONFIG, f"Invalid value {raw!r} for configuration {name}"
            ) from None
        if not spec.check(value):
            raise errors.KafkaCoreError(
                errors.INVALID_CONFIG, f"Invalid value {raw!r} for configuration {name}"
            )
        parsed[name] = value
    return parsed


class TopicConfig:
    """Effective config of a topic: overrides over the broker's defaults (`defaults`, shared
    with the cluster or with one broker, so a dynamic broker config reaches every topic
    without an override of its own) over Kafka's."""

    def __init__(self, overrides: Mapping[str, object] | None = None,
                 defaults: Mapping[str, object] | None = None) -> None:
        self.overrides: dict[str, object] = dict(overrides or {})
        self.defaults: Mapping[str, object] = defaults if defaults is not None else {}

    def __getitem__(self, name: str) -> object:
        if name in self.overrides:
            return self.overrides[name]
        if name in self.defaults:
            return self.defaults[name]
        return TOPIC_CONFIGS[name].default

    def as_dict(self) -> dict[str, object]:
        return {name: self[name] for name in TOPIC_CONFIGS}

    def on_broker(self, defaults: Mapping[str, object]) -> TopicConfig:
        """The same topic as one broker's logs see it: these overrides (shared, so an
        altered topic config reaches them) over that broker's own defaults."""
        view = TopicConfig(defaults=defaults)
        view.overrides = self.overrides
        return view

    def update(self, changes: Mapping[str, object | None]) -> None:
        """Set (or, with None, delete) overrides, as IncrementalAlterConfigs does."""
        sets = validate_topic_config({k: v for k, v in changes.items() if v is not None})
        for name, value in changes.items():
            if value is None:
                if name not in TOPIC_CONFIGS:
                    raise errors.KafkaCoreError(errors.INVALID_CONFIG, f"Unknown config {name}")
                self.overrides.pop(name, None)
        self.overrides.update(sets)


_LEGAL = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


def validate_topic_name(name: object) -> None:
    """Kafka's Topic.validate: 1-249 chars of [a-zA-Z0-9._-], not '.' or '..'."""
    if not isinstance(name, str) or not name:
        raise errors.KafkaCoreError(errors.INVALID_TOPIC_EXCEPTION, "Topic name is illegal, it can't be empty")
    if name in (".", ".."):
        raise errors.KafkaCoreError(errors.INVALID_TOPIC_EXCEPTION,
                                    "Topic name cannot be \".\" or \"..\"")
    if len(name) > 249:
        raise errors.KafkaCoreError(
            errors.INVALID_TOPIC_EXCEPTION,
            f"Topic name is illegal, it can't be longer than 249 characters, topic name: {name}")
    bad = set(name) - _LEGAL
    if bad:
        raise errors.KafkaCoreError(
            errors.INVALID_TOPIC_EXCEPTION,
            f"Topic name \"{name}\" is illegal, it contains a character other than "
            "ASCII alphanumerics, '.', '_' and '-'")
