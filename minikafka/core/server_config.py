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
from .kafka_configs import BROKER, ConfigException
from .kafka_configs import TOPIC_SYNONYMS as _KAFKA_TOPIC_SYNONYMS
from .security_config import is_security_key

# Broker keys that set a topic config's default ("synonyms" in DescribeConfigs), as
# Kafka's ServerTopicConfigSynonyms maps them, among those minikafka models; retention.ms
# and segment.ms have unit variants, ms first.
TOPIC_SYNONYMS: dict[str, tuple[str, ...]] = {
    topic_key: keys for topic_key, synonyms in _KAFKA_TOPIC_SYNONYMS.items()
    if (keys := tuple(k for k, _ in synonyms if k in BROKER_DEFAULTS))}
_UNIT_MS = {k: unit for synonyms in _KAFKA_TOPIC_SYNONYMS.values() for k, unit in synonyms
            if unit != 1}

# Keys Kafka lets IncrementalAlterConfigs change on a running broker (DynamicBrokerConfig's
# update modes) among those minikafka models. The others are read-only.
DYNAMIC_KEYS = frozenset(k for k in BROKER_DEFAULTS if BROKER[k].dynamic != "read-only")

# Keys set on the command line or by `minikafka serve` itself, not in Cluster.broker_config.
SERVER_KEYS: dict[str, object] = {
    "node.id": None,  # Kafka has no default; serve numbers its brokers from it (default 1)
    "listeners": "PLAINTEXT://:9092",
    "advertised.listeners": None,
    "log.dirs": None,
    "log.dir": "/tmp/kafka-logs",
}

# Real Kafka broker keys that minikafka accepts and does not model: threads, security,
# quorum wiring, tuning (all of Kafka 4.4's others), and the StandardAuthorizer's own. A
# file written for a Kafka node carries them.
IGNORED_KEYS = (frozenset(BROKER) | {"super.users", "allow.everyone.if.no.acl.found"}) \
    - set(BROKER_DEFAULTS) - set(SERVER_KEYS)


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


def parse_broker_value(key: str, text: str) -> object:
    """`text` parsed as the Cluster.broker_config key `key` holds it (Kafka's ConfigDef
    type and validator); raises ServerConfigError with Kafka's reason."""
    try:
        return BROKER[key].parse(text)
    except ConfigException as exc:
        reason = str(exc).partition(f"for configuration {key}")[2].lstrip(": ")
        raise ServerConfigError(key, text.strip(), reason) from None


def parse_server_config(raw: Mapping[str, str]) -> ServerConfig:
    """Sort and parse `raw` (key -> text); raises ServerConfigError on a bad value."""
    config = ServerConfig()
    for key, text in raw.items():
        if key in SERVER_KEYS:
            config.server[key] = text.strip()
        elif key in BROKER_DEFAULTS:
            config.values[key] = value = parse_broker_value(key, text)
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
    """Kafka's checks of a broker value: its own validator, and the topic config's it
    sets the default of (hours and minutes checked as ms)."""
    try:
        BROKER[key].check(value, text)
        for topic_key, synonyms in TOPIC_SYNONYMS.items():
            if key in synonyms and value is not None:
                parsed = TOPIC_CONFIGS[topic_key].parse(value, check=False)
                if isinstance(parsed, int) and not isinstance(parsed, bool) and parsed > 0:
                    parsed *= _UNIT_MS.get(key, 1)
                TOPIC_CONFIGS[topic_key].check(parsed, text)
    except ConfigException as exc:
        reason = str(exc).partition(" for configuration ")[2].partition(": ")[2]
        raise ServerConfigError(key, text, reason) from None


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
                out[topic_key] = TOPIC_CONFIGS[topic_key].parse(value, check=False)
                break
    return out
