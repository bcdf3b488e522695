"""A group's own configs (IncrementalAlterConfigs on a GROUP resource, `kafka-configs
--entity-type groups`), checked as Kafka 4.4.0's GroupConfig.validate checks them: every
name must be a GroupConfig key, every value parse by its ConfigDef (kafka_configdefs.json),
and then lie within the bounds the broker's own settings give (consumer.session.timeout.ms
between group.consumer.min.session.timeout.ms and group.consumer.max.session.timeout.ms),
a session timeout above its heartbeat interval. All errors are INVALID_CONFIG.

    >>> from minikafka.core.kafka_configs import BROKER
    >>> def broker(key): return BROKER[key].default
    >>> validate({"consumer.session.timeout.ms": "50000"}, broker)
    {'consumer.session.timeout.ms': 50000}
    >>> try:
    ...     validate({"consumer.session.timeout.ms": "1000"}, broker)
    ... except KafkaCoreError as exc:
    ...     print(exc.code, exc.message)
    40 consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from .errors import INVALID_CONFIG, KafkaCoreError
from .kafka_configs import BROKER, GROUP, ConfigException

__all__ = ["broker_key", "default_from_broker", "validate"]

# Each bounded key with the broker keys of its lower and upper bound (None: unbounded on
# that side), in the order GroupConfig.validateValues checks them.
BOUNDS: dict[str, tuple[str | None, str | None]] = {
    "consumer.heartbeat.interval.ms": ("group.consumer.min.heartbeat.interval.ms",
                                       "group.consumer.max.heartbeat.interval.ms"),
    "consumer.session.timeout.ms": ("group.consumer.min.session.timeout.ms",
                                    "group.consumer.max.session.timeout.ms"),
    "consumer.assignment.interval.ms": ("group.consumer.min.assignment.interval.ms",
                                        "group.consumer.max.assignment.interval.ms"),
    "share.heartbeat.interval.ms": ("group.share.min.heartbeat.interval.ms",
                                    "group.share.max.heartbeat.interval.ms"),
    "share.session.timeout.ms": ("group.share.min.session.timeout.ms",
                                 "group.share.max.session.timeout.ms"),
    "share.record.lock.duration.ms": ("group.share.min.record.lock.duration.ms",
                                      "group.share.max.record.lock.duration.ms"),
    "share.delivery.count.limit": ("group.share.min.delivery.count.limit",
                                   "group.share.max.delivery.count.limit"),
    "share.partition.max.record.locks": ("group.share.min.partition.max.record.locks",
                                         "group.share.max.partition.max.record.locks"),
    "share.assignment.interval.ms": ("group.share.min.assignment.interval.ms",
                                     "group.share.max.assignment.interval.ms"),
    "streams.heartbeat.interval.ms": ("group.streams.min.heartbeat.interval.ms",
                                      "group.streams.max.heartbeat.interval.ms"),
    "streams.session.timeout.ms": ("group.streams.min.session.timeout.ms",
                                   "group.streams.max.session.timeout.ms"),
    "streams.num.standby.replicas": (None, "group.streams.max.standby.replicas"),
    "streams.assignment.interval.ms": ("group.streams.min.assignment.interval.ms",
                                       "group.streams.max.assignment.interval.ms"),
    "streams.task.offset.interval.ms": ("group.streams.min.task.offset.interval.ms", None),
    "streams.num.warmup.replicas": (None, "group.streams.max.warmup.replicas"),
}
# (session key, its broker default, heartbeat key, its broker default)
_SESSIONS = [(f"{kind}.session.timeout.ms", f"group.{kind}.session.timeout.ms",
              f"{kind}.heartbeat.interval.ms", f"group.{kind}.heartbeat.interval.ms")
             for kind in ("consumer", "share", "streams")]
_RESET = "share.auto.offset.reset"
_DURATION = re.compile(r"P(?:\d+D)?(?:T(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?", re.I)


def validate(config: Mapping[str, Any], broker: Callable[[str], Any]) -> dict[str, Any]:
    """A group's whole set of own configs (after the alter), parsed; raises
    KafkaCoreError(INVALID_CONFIG) with Kafka's message for the first fault, as Kafka
    looks for them: unknown names, duplicate rack tags, values ConfigDef refuses, then
    bounds from `broker` (a broker key's value)."""
    for name in config:
        if name not in GROUP:
            raise KafkaCoreError(INVALID_CONFIG, f"Unknown group config name: {name}")
    tags = str(config.get("streams.rack.aware.assignment.tags") or "").strip()
    if tags and len(set(re.split(r"\s*,\s*", tags))) != len(re.split(r"\s*,\s*", tags)):
        raise KafkaCoreError(INVALID_CONFIG, "streams.rack.aware.assignment.tags must not "
                             "contain duplicate tag keys.")
    parsed: dict[str, Any] = {}
    try:
        for name, raw in config.items():
            parsed[name] = _parse(name, raw)
    except ConfigException as exc:
        raise KafkaCoreError(INVALID_CONFIG, str(exc)) from None
    for name, (low_key, high_key) in BOUNDS.items():
        if name not in parsed:
            continue
        value = parsed[name]
        low = None if low_key is None else int(broker(low_key))
        high = None if high_key is None else int(broker(high_key))
        if low is not None and high is not None and not low <= value <= high:
            raise KafkaCoreError(INVALID_CONFIG,
                                 f"{name} must be in the range {low} to {high} inclusive.")
        if high is not None and low is None and value > high:
            raise KafkaCoreError(INVALID_CONFIG, f"{name} must be less than or equal to {high}")
        if low is not None and high is None and value < low:
            raise KafkaCoreError(INVALID_CONFIG,
                                 f"{name} must be greater than or equal to {low}")
    if "streams.assignor.name" in parsed:
        names = [n for n in str(broker("group.streams.assignors")).split(",") if n]
        if parsed["streams.assignor.name"] not in names:
            raise KafkaCoreError(INVALID_CONFIG, "streams.assignor.name '"
                                 f"{parsed['streams.assignor.name']}' is not a registered "
                                 "task assignor. Registered assignors are: ["
                                 + ", ".join(names) + "].")
    for session, session_default, heartbeat, heartbeat_default in _SESSIONS:
        if session in parsed or heartbeat in parsed:
            timeout = parsed.get(session, int(broker(session_default)))
            interval = parsed.get(heartbeat, int(broker(heartbeat_default)))
            if timeout <= interval:
                raise KafkaCoreError(INVALID_CONFIG,
                                     f"{session} must be greater than {heartbeat}")
    dlq = str(parsed.get("errors.deadletterqueue.topic.name") or "")
    if dlq.startswith("__"):
        raise KafkaCoreError(INVALID_CONFIG, "errors.deadletterqueue.topic.name: DLQ topic "
                             "name must not start with '__'")
    return parsed


def broker_key(name: str) -> str | None:
    """The broker setting that gives group config `name` its default, as Kafka's
    GroupConfig takes it from the broker (group.share.record.lock.duration.ms for
    share.record.lock.duration.ms); None where Kafka's own default applies."""
    if name == "streams.assignor.name":
        return "group.streams.assignors"
    key = f"group.{name}"
    return key if key in BROKER else None


def default_from_broker(name: str, broker_value: str | None) -> str | None:
    """A group config's default from its broker key's value: the first of the broker's
    group.streams.assignors for streams.assignor.name, the value itself otherwise."""
    if name == "streams.assignor.name":
        return (broker_value or "").split(",")[0].strip() or None
    return broker_value


def _parse(name: str, raw: Any) -> Any:
    """One value as GroupConfig's ConfigDef parses it (raises ConfigException, or
    KafkaCoreError for share.auto.offset.reset, whose validator words its own message)."""
    if name == _RESET:  # ShareGroupAutoOffsetResetStrategy.Validator
        text = str(raw).strip()
        kind, _, duration = text.partition(":")
        if text.lower() in ("earliest", "latest") or (
                kind.lower() == "by_duration" and _DURATION.fullmatch(duration.strip())
                and duration.strip() not in ("P", "PT")):
            return text
        # ConfigDef wraps the validator's own message in its "Invalid value" prefix
        raise KafkaCoreError(INVALID_CONFIG, f"Invalid value {raw} for configuration {name}: "
                             f"Invalid value `{raw}` for configuration {name}. The value must "
                             "be either 'earliest', 'latest' or of the format "
                             "'by_duration:<PnDTnHnMn.nS>'.")
    return GROUP[name].parse(raw)
