"""Topic and broker configs with Kafka 4.x names, defaults and validation."""

from __future__ import annotations

from collections.abc import Mapping

from . import errors
from .kafka_configs import BROKER, TOPIC, ConfigException, KafkaConfigKey

DAY_MS = 24 * 3600 * 1000

# The topic configs DescribeConfigs lists: Kafka's LogConfig less its internal keys. The
# internal ones (internal.segment.bytes: segments below segment.bytes' 1 MiB minimum, for
# tests and lessons) are accepted as Kafka accepts them, and not listed.
TOPIC_CONFIGS: dict[str, KafkaConfigKey] = {n: k for n, k in TOPIC.items() if not k.internal}
_TOPIC_DEFAULTS: dict[str, object] = {n: k.default for n, k in TOPIC.items()}

# The broker keys minikafka models (Cluster.broker_config), with Kafka's defaults; None:
# unset, the next unit applies (log.retention.ms, then .minutes, then .hours). The other
# keys of Kafka's KafkaConfig are accepted and not modelled (core.server_config).
MODELLED_BROKER_KEYS = (
    "replica.lag.time.max.ms", "replica.fetch.wait.max.ms", "replica.fetch.max.bytes",
    "replica.fetch.backoff.ms", "broker.session.timeout.ms", "broker.heartbeat.interval.ms",
    "leader.imbalance.check.interval.seconds", "auto.leader.rebalance.enable",
    "default.replication.factor", "num.partitions", "offsets.topic.num.partitions",
    "offsets.topic.replication.factor", "offsets.topic.segment.bytes",
    "offsets.retention.minutes", "offsets.retention.check.interval.ms",
    "offsets.commit.timeout.ms", "offset.metadata.max.bytes",
    "group.initial.rebalance.delay.ms", "group.min.session.timeout.ms",
    "group.max.session.timeout.ms", "group.max.size",
    # The consumer group protocol (KIP-848): the broker sets the session timeout and
    # the heartbeat interval; the assignors are Kafka's uniform and range.
    "group.consumer.session.timeout.ms", "group.consumer.min.session.timeout.ms",
    "group.consumer.max.session.timeout.ms", "group.consumer.heartbeat.interval.ms",
    "group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms",
    "group.consumer.max.size", "group.consumer.assignors", "group.consumer.migration.policy",
    "transaction.state.log.num.partitions", "transaction.max.timeout.ms",
    # How often the transaction coordinator aborts transactions older than their
    # transaction.timeout.ms.
    "transaction.abort.timed.out.transaction.cleanup.interval.ms",
    # KIP-890: a leader asks the coordinator before it appends a transactional batch
    # (core.api.produce.unverified); off, a late write can leave a hanging transaction.
    "transaction.partition.verification.enable",
    "log.retention.check.interval.ms", "log.cleaner.backoff.ms", "socket.request.max.bytes",
    # SO_SNDBUF / SO_RCVBUF of every accepted connection; -1 leaves the OS default.
    "socket.send.buffer.bytes", "socket.receive.buffer.bytes", "connections.max.idle.ms",
    "auto.create.topics.enable",
    # Tiered storage (KIP-405, core.tiered): the system switch and the remote log
    # manager's period.
    "remote.log.storage.system.enable", "remote.log.manager.task.interval.ms",
    # Defaults of the topic configs (core.server_config.TOPIC_SYNONYMS).
    "log.cleanup.policy", "log.flush.interval.messages", "log.flush.interval.ms",
    "compression.type", "log.cleaner.delete.retention.ms",
    "log.cleaner.max.compaction.lag.ms", "log.cleaner.min.cleanable.ratio",
    "log.cleaner.min.compaction.lag.ms", "log.message.timestamp.type",
    "log.message.timestamp.before.max.ms", "log.message.timestamp.after.max.ms",
    "message.max.bytes", "min.insync.replicas", "log.retention.bytes", "log.retention.ms",
    "log.retention.minutes", "log.retention.hours", "log.segment.bytes", "log.roll.ms",
    "log.roll.hours", "unclean.leader.election.enable",
    # Share groups (KIP-932): sessions, locks, delivery counts, with their group-config bounds.
    "group.share.session.timeout.ms", "group.share.heartbeat.interval.ms",
    "group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms",
    "group.share.max.size", "group.share.record.lock.duration.ms",
    "group.share.min.record.lock.duration.ms", "group.share.max.record.lock.duration.ms",
    "group.share.delivery.count.limit", "group.share.min.delivery.count.limit",
    "group.share.max.delivery.count.limit", "group.share.partition.max.record.locks",
    "group.share.min.partition.max.record.locks",
    "group.share.max.partition.max.record.locks",
    # Replication quotas, bytes/s, per broker (dynamic only in Kafka; --throttle sets them).
    "leader.replication.throttled.rate", "follower.replication.throttled.rate",
    "replica.alter.log.dirs.io.max.bytes.per.second",
    # Delegation tokens (KIP-48, core.api.delegation_tokens): on with a secret key.
    "delegation.token.secret.key", "delegation.token.max.lifetime.ms",
    "delegation.token.expiry.time.ms", "delegation.token.expiry.check.interval.ms",
)
BROKER_DEFAULTS: dict[str, object] = {n: BROKER[n].default for n in MODELLED_BROKER_KEYS}


def validate_topic_config(config: Mapping[str, object] | None) -> dict[str, object]:
    """Parse a topic's overrides as Kafka's LogConfig.validate does; an unknown name or a
    value its ConfigDef refuses raises INVALID_CONFIG with Kafka's message."""
    parsed: dict[str, object] = {}
    for name, raw in (config or {}).items():
        spec = TOPIC.get(name)
        if spec is None:
            raise errors.KafkaCoreError(errors.INVALID_CONFIG, f"Unknown topic config name: {name}")
        try:
            parsed[name] = spec.parse(raw)
        except ConfigException as exc:
            raise errors.KafkaCoreError(errors.INVALID_CONFIG, str(exc)) from None
    return parsed


def segment_bytes(config: TopicConfig) -> int:
    """The size a log's segments roll at: internal.segment.bytes when set (Kafka's
    LogConfig.segmentSize), else segment.bytes."""
    internal = config["internal.segment.bytes"]
    return int(internal if internal is not None else config["segment.bytes"])  # type: ignore[call-overload]


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
        return _TOPIC_DEFAULTS[name]

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
                if name not in TOPIC:
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
