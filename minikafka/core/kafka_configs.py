"""Kafka 4.4.0's own config definitions (kafka_configdefs.json, dumped from its jars by
`minikafka kafka configdefs`): keys, types, defaults, validators, update modes, synonyms.

    >>> key = TOPIC["segment.bytes"]
    >>> key.type, key.default
    ('INT', 1073741824)
    >>> try:
    ...     key.parse("1024")
    ... except ConfigException as exc:
    ...     print(exc)
    Invalid value 1024 for configuration segment.bytes: Value must be at least 1048576
    >>> TOPIC["cleanup.policy"].parse("compact, delete")
    'compact,delete'
    >>> BROKER["log.retention.ms"].dynamic, TOPIC_SYNONYMS["retention.ms"][-1]
    ('cluster-wide', ('log.retention.hours', 3600000))

Values are held parsed: BOOLEAN as bool, INT/SHORT/LONG as int, DOUBLE as float, LIST as
its items joined by "," in the given order (Kafka keeps it), the rest as text.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["BROKER", "BROKER_DYNAMIC_ONLY", "FEATURES", "GROUP", "KAFKA_VERSION", "METADATA_RELEASES", "TOPIC",
           "TOPIC_SYNONYMS",
           "ConfigException", "KafkaConfigKey"]

_DATA = json.loads(Path(__file__).with_name("kafka_configdefs.json").read_text())
KAFKA_VERSION: str = _DATA["kafka_version"]
_INT_BITS = {"SHORT": 16, "INT": 32, "LONG": 64}


class ConfigException(ValueError):
    """Kafka's ConfigException: "Invalid value V for configuration K: why"."""

    def __init__(self, name: str, value: object, why: str | None = None) -> None:
        super().__init__(f"Invalid value {value} for configuration {name}"
                         + (f": {why}" if why else ""))
        self.name, self.value = name, value


@dataclass(frozen=True)
class KafkaConfigKey:
    name: str
    type: str  # ConfigDef.Type: BOOLEAN STRING INT SHORT LONG DOUBLE LIST CLASS PASSWORD
    default_text: str | None  # Kafka's default as text (None: null or no default)
    has_default: bool
    importance: str
    validator: dict[str, Any] | None
    internal: bool = False
    dynamic: str = "read-only"  # brokers: read-only, per-broker or cluster-wide
    synonyms: tuple[str, ...] = ()  # brokers: DynamicBrokerConfig.brokerConfigSynonyms
    doc: str = ""

    @property
    def default(self) -> object:
        """Kafka's default, parsed (None: none)."""
        if self.default_text is None:
            return None
        return self.parse(self.default_text, check=False)

    def parse(self, raw: object, check: bool = True) -> object:
        """`raw` (text, or a Python value) as this key holds it; raises ConfigException
        with Kafka's message for a value ConfigDef's type or validator refuses."""
        text = (("true" if raw else "false") if isinstance(raw, bool) else str(raw)).strip()
        kind = self.type
        if kind == "BOOLEAN":
            if text.lower() not in ("true", "false"):
                raise ConfigException(self.name, raw, "Expected value to be either true or false")
            value: object = text.lower() == "true"
        elif kind in _INT_BITS:
            try:
                value = int(text)
            except ValueError:
                raise ConfigException(self.name, raw, f"Not a number of type {kind}") from None
            bits = _INT_BITS[kind]
            if not -(1 << (bits - 1)) <= value < 1 << (bits - 1):
                raise ConfigException(self.name, raw, f"Not a number of type {kind}")
        elif kind == "DOUBLE":
            try:
                value = float(text)
            except ValueError:
                raise ConfigException(self.name, raw, "Not a number of type DOUBLE") from None
        elif kind == "LIST":
            value = ",".join(re.split(r"\s*,\s*", text)) if text else ""
        else:
            value = text
        if check:
            self.check(value, raw)
        return value

    def check(self, value: object, raw: object = None) -> None:
        """The validator's verdict on a parsed value (raises ConfigException)."""
        rule = self.validator
        if rule is None or value is None:
            return
        shown = value if raw is None else raw
        kind = rule["class"].rsplit("$", 1)[-1].rsplit(".", 1)[-1]
        if kind == "Range":
            low, high = rule["min"], rule["max"]
            if low is not None and value < low:  # type: ignore[operator]
                raise ConfigException(self.name, shown, f"Value must be at least {low}")
            if high is not None and value > high:  # type: ignore[operator]
                raise ConfigException(self.name, shown, f"Value must be no more than {high}")
        elif kind in ("ValidString", "CaseInsensitiveValidString"):
            valid = rule["valid"]
            text = str(value)
            if text not in valid if kind == "ValidString" else \
                    text.lower() not in [v.lower() for v in valid]:
                raise ConfigException(self.name, shown, "String must be one of: "
                                      + ", ".join(valid))
        elif kind == "ValidList":
            items = [v for v in str(value).split(",") if v]
            if not items and not rule.get("empty_allowed", True):
                raise ConfigException(self.name, shown, "Configuration '" + self.name
                                      + "' must not be empty. Valid values include: "
                                      + rule["text"])
            valid = rule.get("valid")
            for item in items:
                if valid and item not in valid:  # an empty list: any value
                    raise ConfigException(self.name, shown, "Invalid value " + item
                                          + " for configuration " + self.name
                                          + ": String must be one of: " + ", ".join(valid))
        elif kind == "NonEmptyString":
            if not str(value):
                raise ConfigException(self.name, shown, "String may not be empty")
        elif kind == "ThrottledReplicaListValidator":
            _check_throttled(self.name, str(value), shown)
        elif kind == "LambdaValidator":
            _check_lambda(self.name, rule["text"], value, shown)


def _check_throttled(name: str, value: str, shown: object) -> None:
    """Kafka's ThrottledReplicaListValidator: '', '*' or partition:broker,... """
    if value.strip() in ("", "*"):
        return
    for item in value.split(","):
        partition, sep, broker = item.strip().partition(":")
        if not sep or not partition.strip().isdigit() or not broker.strip().isdigit():
            raise ConfigException(name, shown, "must be the literal '*' or a list of replicas "
                                  "in the following format: "
                                  "[partitionId]:[brokerId],[partitionId]:[brokerId],...")


def _check_lambda(name: str, text: str, value: object, shown: object) -> None:
    """The lambda validators Kafka describes as "[low,...,high] or other" (the gzip level)."""
    found = re.fullmatch(r"\[(-?\d+),\.\.\.,(-?\d+)\] or (-?\d+)", text)
    if found and isinstance(value, int):
        low, high, other = (int(g) for g in found.groups())
        if not (low <= value <= high or value == other):
            raise ConfigException(name, shown, f"Value must be between {low} and {high}"
                                  f" or equal to {other}")


def _keys(section: str) -> dict[str, KafkaConfigKey]:
    return {name: KafkaConfigKey(name, spec["type"], spec.get("default"), "default" in spec,
                                 spec["importance"], spec.get("validator"),
                                 spec.get("internal", False),
                                 spec.get("dynamic", "read-only"),
                                 tuple(spec.get("synonyms", ())), spec.get("doc", ""))
            for name, spec in _DATA[section].items()}


TOPIC: dict[str, KafkaConfigKey] = _keys("topic")
BROKER: dict[str, KafkaConfigKey] = _keys("broker")
GROUP: dict[str, KafkaConfigKey] = _keys("group")
# Broker keys only a dynamic config sets (DynamicConfig.Broker's, not KafkaConfig's: the
# replication throttle rates); DescribeConfigs lists them only where one is set.
BROKER_DYNAMIC_ONLY: frozenset[str] = frozenset(_DATA.get("broker_dynamic_only", ()))
# A topic config's broker synonyms, highest precedence first, each with what one unit of
# it is in the topic's unit (log.retention.hours: 3600000 ms).
TOPIC_SYNONYMS: dict[str, tuple[tuple[str, int], ...]] = {
    name: tuple((key, int(unit)) for key, unit in synonyms)
    for name, synonyms in _DATA["topic_synonyms"].items()}
# Each feature's supported range and the level a new cluster finalizes.
FEATURES: dict[str, dict[str, int]] = {
    name: {k: v for k, v in spec.items() if k in ("min", "max", "default")}
    for name, spec in _DATA["features"].items()}
# metadata.version's levels by release name, as kafka-features.sh shows them (33: 4.4-IV2).
METADATA_RELEASES: dict[int, str] = {
    int(level): name for level, name in _DATA["features"]["metadata.version"]["releases"].items()}
