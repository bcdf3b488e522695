"""server.properties as `kafka.Kafka` reads it: Kafka's broker keys, parsed and checked.

    raw = read_properties(Path("server.properties").read_text())   # Java .properties syntax
    raw.update(parse_overrides(["num.partitions=3"]))              # --override key=value
    config = parse_server_config(raw)
    config.values        # the keys minikafka models, parsed, e.g. {"num.partitions": 3}
    config.security      # listeners' security, SASL, ssl.*, the authorizer (raw text)
    config.ignored       # real Kafka keys minikafka accepts but does not model
    config.unknown       # keys Kafka does not have either: worth a warning

A bad value raises ServerConfigError naming the key and the value. The same file
runs a real Kafka node: keys minikafka does not model (process.roles,
controller.quorum.voters, num.network.threads, ...) are accepted, not refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .config import BROKER_DEFAULTS, TOPIC_CONFIGS
from .kafka_keys import KAFKA_ONLY_KEYS
from .security_config import is_security_key

# Broker keys that set a topic config's default ("synonyms" in DescribeConfigs), as
# Kafka's LogConfig maps them. retention.ms and segment.ms have unit variants, ms first.
TOPIC_SYNONYMS: dict[str, tuple[str, ...]] = {
    "cleanup.policy": ("log.cleanup.policy",),
    "compression.type": ("compression.type",),
    "delete.retention.ms": ("log.cleaner.delete.retention.ms",),
    "flush.messages": ("log.flush.interval.messages",),
    "flush.ms": ("log.flush.interval.ms",),
    "max.compaction.lag.ms": ("log.cleaner.max.compaction.lag.ms",),
    "max.message.bytes": ("message.max.bytes",),
    "message.timestamp.type": ("log.message.timestamp.type",),
    "min.cleanable.dirty.ratio": ("log.cleaner.min.cleanable.ratio",),
    "min.compaction.lag.ms": ("log.cleaner.min.compaction.lag.ms",),
    "min.insync.replicas": ("min.insync.replicas",),
    "retention.bytes": ("log.retention.bytes",),
    "retention.ms": ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
    "segment.bytes": ("log.segment.bytes",),
    "segment.ms": ("log.roll.ms", "log.roll.hours"),
    "unclean.leader.election.enable": ("unclean.leader.election.enable",),
}
_UNIT_MS = {"log.retention.minutes": 60_000, "log.retention.hours": 3_600_000,
            "log.roll.hours": 3_600_000}

# Keys Kafka lets IncrementalAlterConfigs change on a running broker (DynamicBrokerConfig's
# reconfigurable log configs) among those minikafka models. The others are read-only.
DYNAMIC_KEYS = frozenset({
    "log.cleanup.policy", "compression.type", "log.cleaner.delete.retention.ms",
    "log.cleaner.max.compaction.lag.ms", "message.max.bytes", "log.message.timestamp.type",
    "log.cleaner.min.cleanable.ratio", "log.cleaner.min.compaction.lag.ms",
    "min.insync.replicas", "log.retention.bytes", "log.retention.ms", "log.segment.bytes",
    "log.roll.ms", "unclean.leader.election.enable", "log.cleaner.backoff.ms",
    "log.flush.interval.messages", "log.flush.interval.ms",
    "leader.replication.throttled.rate", "follower.replication.throttled.rate",
    "replica.alter.log.dirs.io.max.bytes.per.second",
})

# Keys set on the command line or by `minikafka serve` itself, not in Cluster.broker_config.
SERVER_KEYS: dict[str, object] = {
    "node.id": None,  # Kafka has no default; serve numbers its brokers from it (default 1)
    "listeners": "PLAINTEXT://:9092",
    "advertised.listeners": None,
    "log.dirs": None,
    "log.dir": "/tmp/kafka-logs",
}

# Real Kafka broker keys that minikafka accepts and does not model: threads, security,
# quorum wiring, tuning (all of Kafka 4.4's others). A file written for a Kafka node
# carries them.
IGNORED_KEYS = KAFKA_ONLY_KEYS


class ServerConfigError(ValueError):
    """A value Kafka would refuse: names the key and the value."""

    def __init__(self, key: str, value: str, reason: str = "") -> None:
        super().__init__(f"Invalid value {value} for configuration {key}"
                         + (f": {reason}" if reason else ""))
        self.key, self.value = key, value


@dataclass
class ServerConfig:
    values: dict[str, object] = field(default_factory=dict)  # what minikafka models, parsed
    server: dict[str, str] = field(default_factory=dict)     # node.id, listeners, log.dirs ...
    # listener security, SASL/JAAS, ssl.*, the authorizer (core.security_config reads them)
    security: dict[str, str] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)


def read_properties(text: str) -> dict[str, str]:
    """Java's Properties.load: '#'/'!' comments, 'key=value', 'key: value' or 'key value',
    a trailing backslash continues the line, backslash escapes. The last one wins."""
    out: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        line = line.lstrip()
        if not line or line[0] in "#!":
            continue
        while _continues(line):
            line = line[:-1] + next(lines, "").lstrip()
        key, i = _take_key(line)
        rest = line[i:].lstrip(" \t\f")
        if rest[:1] in ("=", ":"):
            rest = rest[1:].lstrip(" \t\f")
        out[_unescape(key)] = _unescape(rest)
    return out


def _continues(line: str) -> bool:
    backslashes = len(line) - len(line.rstrip("\\"))
    return backslashes % 2 == 1


def _take_key(line: str) -> tuple[str, int]:
    i = 0
    while i < len(line):
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c in "=: \t\f":
            break
        i += 1
    return line[:i], i


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "u" and i + 6 <= len(text):
                out.append(chr(int(text[i + 2:i + 6], 16)))
                i += 6
                continue
            out.append({"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(nxt, nxt))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def parse_overrides(items: Iterable[str]) -> dict[str, str]:
    """--override key=value, as kafka.Kafka takes them."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ServerConfigError(item, item, "expected key=value")
        out[key.strip()] = value.strip()
    return out


def _parse_value(key: str, text: str, default: object) -> object:
    """Parse `text` as the type of `default` (Kafka's ConfigDef types)."""
    text = text.strip()
    try:
        if isinstance(default, bool):
            if text.lower() not in ("true", "false"):
                raise ValueError(text)
            return text.lower() == "true"
        if isinstance(default, int) or default is None and key.endswith((".ms", ".hours",
                                                                         ".minutes")):
            return int(text)
        if isinstance(default, float):
            return float(text)
    except ValueError:
        raise ServerConfigError(key, text, f"expected {_type_name(key, default)}") from None
    return text


def parse_broker_value(key: str, text: str) -> object:
    """`text` parsed as the Cluster.broker_config key `key` holds it."""
    return _parse_value(key, text, BROKER_DEFAULTS[key])


def _type_name(key: str, default: object) -> str:
    if isinstance(default, bool):
        return "true or false"
    if isinstance(default, float):
        return "a number"
    return "an integer"


def parse_server_config(raw: Mapping[str, str]) -> ServerConfig:
    """Sort and parse `raw` (key -> text); raises ServerConfigError on a bad value."""
    config = ServerConfig()
    for key, text in raw.items():
        if key in SERVER_KEYS:
            config.server[key] = text.strip()
        elif key in BROKER_DEFAULTS:
            config.values[key] = value = _parse_value(key, text, BROKER_DEFAULTS[key])
            check_broker_value(key, text, value)
        elif is_security_key(key):
            config.security[key] = text.strip()
        elif key in IGNORED_KEYS:
            config.ignored.append(key)
        else:
            config.unknown.append(key)
    node = config.server.get("node.id")
    if node is not None and (not node.isdigit()):
        raise ServerConfigError("node.id", node, "expected a non-negative integer")
    return config


def check_broker_value(key: str, text: str, value: object) -> None:
    """Range checks: those of the topic config a key defaults, and Kafka's own."""
    if isinstance(value, int) and not isinstance(value, bool) and key in _AT_LEAST \
            and value < _AT_LEAST[key]:
        raise ServerConfigError(key, text, f"value must be at least {_AT_LEAST[key]}")
    for topic_key, synonyms in TOPIC_SYNONYMS.items():
        if key in synonyms and value is not None:
            spec = TOPIC_CONFIGS[topic_key]
            try:
                parsed = spec.parse(str(value).lower() if isinstance(value, bool) else str(value))
            except ValueError:
                raise ServerConfigError(key, text) from None
            if isinstance(parsed, int) and not isinstance(parsed, bool) and parsed > 0:
                parsed *= _UNIT_MS.get(key, 1)  # hours and minutes checked as ms
            if not spec.check(parsed):
                raise ServerConfigError(key, text)


_AT_LEAST = {
    "num.partitions": 1, "default.replication.factor": 1, "offsets.topic.num.partitions": 1,
    "offsets.topic.replication.factor": 1, "transaction.state.log.num.partitions": 1,
    "socket.request.max.bytes": 1, "message.max.bytes": 0, "group.min.session.timeout.ms": 0,
    "group.initial.rebalance.delay.ms": 0, "replica.lag.time.max.ms": 0,
    "log.retention.hours": -1, "log.roll.hours": 1, "transaction.max.timeout.ms": 1,
    "connections.max.idle.ms": -1, "log.flush.interval.messages": 1,
}


def topic_defaults(broker_config: Mapping[str, object]) -> dict[str, object]:
    """The topic config defaults `broker_config` sets (log.retention.hours=24 gives
    retention.ms=86400000); Kafka's own where it sets none."""
    out: dict[str, object] = {}
    for topic_key, synonyms in TOPIC_SYNONYMS.items():
        for key in synonyms:
            value = broker_config.get(key)
            if value is not None:
                if key in _UNIT_MS and isinstance(value, int) and value >= 0:
                    value *= _UNIT_MS[key]
                out[topic_key] = TOPIC_CONFIGS[topic_key].parse(
                    str(value).lower() if isinstance(value, bool) else str(value))
                break
    return out
