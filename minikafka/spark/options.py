"""The Kafka source's options, parsed and checked the way Spark's own Kafka source does.

Spark hands a Python data source its options as a case-insensitive map whose keys
arrive lower-cased; `parse_options` reads it through `.items()` (a `dict(...)` copy
would lose the case-insensitivity Spark's callers rely on) and returns a frozen,
picklable `SourceOptions`.

Option names and defaults follow the Structured Streaming + Kafka integration guide:

    kafka.bootstrap.servers   required
    subscribe | subscribePattern | assign   exactly one
    startingOffsets           "earliest" | "latest" | JSON  (streaming default latest,
                              batch default earliest)
    endingOffsets             "latest" | JSON, batch only (default latest)
    maxOffsetsPerTrigger      streaming only
    minPartitions             split large offset ranges over more Spark tasks
    failOnDataLoss            default true
    includeHeaders            default false
    kafka.*                   passed to kafka-python (kafka.isolation.level ->
                              isolation_level, ...)
"""
from __future__ import annotations

import json
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kafka import KafkaConsumer

from .offsets import EARLIEST, LATEST, parse_offsets_json

__all__ = ["Assign", "OffsetSpec", "SourceOptions", "Subscribe", "SubscribePattern",
           "parse_options"]

# What the JSON forms of startingOffsets/endingOffsets hold: topic -> partition -> offset,
# with -2 for earliest and -1 for latest (Spark's convention).
OffsetSpec = str | dict


@dataclass(frozen=True)
class Subscribe:
    topics: tuple[str, ...]


@dataclass(frozen=True)
class SubscribePattern:
    pattern: str

    def matches(self, topic: str) -> bool:
        # Java's Pattern.matcher(topic).matches(): the whole name must match.
        return re.fullmatch(self.pattern, topic) is not None


@dataclass(frozen=True)
class Assign:
    partitions: tuple[tuple[str, int], ...]


Subscription = Subscribe | SubscribePattern | Assign


@dataclass(frozen=True)
class SourceOptions:
    bootstrap_servers: str
    subscription: Subscription
    starting_offsets: OffsetSpec
    ending_offsets: OffsetSpec
    max_offsets_per_trigger: int | None = None
    min_partitions: int | None = None
    fail_on_data_loss: bool = True
    include_headers: bool = False
    poll_timeout_ms: int = 120_000
    fetch_offset_retries: int = 3
    fetch_offset_retry_interval_ms: int = 10
    # kafka-python keyword arguments from the kafka.* options (bootstrap servers excluded).
    consumer_config: tuple[tuple[str, Any], ...] = field(default_factory=tuple)

    @property
    def read_committed(self) -> bool:
        return dict(self.consumer_config).get("isolation_level") == "read_committed"

    def client_config(self) -> dict[str, Any]:
        """Keyword arguments for kafka-python's clients."""
        return {"bootstrap_servers": self.bootstrap_servers.split(","),
                **dict(self.consumer_config)}


# The Kafka consumer settings Spark's source refuses, with its reasons.
_REFUSED = {
    "group.id": None,  # allowed, see below
    "auto.offset.reset": "Instead set the source option 'startingOffsets' to 'earliest' or "
                         "'latest' to specify where to start.",
    "key.deserializer": "Keys are always read as bytes. Use DataFrame operations "
                        "(e.g. CAST(key AS STRING)) to deserialize them.",
    "value.deserializer": "Values are always read as bytes. Use DataFrame operations "
                          "(e.g. CAST(value AS STRING)) to deserialize them.",
    "enable.auto.commit": "The source does not commit any offsets: the query's checkpoint "
                          "holds them.",
    "interceptor.classes": "Interceptors are not supported.",
}
_UNSUPPORTED = ("startingoffsetsbytimestamp", "endingoffsetsbytimestamp", "startingtimestamp",
                "endingtimestamp", "minoffsetspertrigger", "maxtriggerdelay")
_SUBSCRIPTIONS = ("subscribe", "subscribepattern", "assign")


def parse_options(options: Mapping[str, Any], *, streaming: bool) -> SourceOptions:
    """Check and parse the source's options; errors say which option and why (ValueError)."""
    opts = {str(k).lower(): str(v) for k, v in options.items()}

    servers = opts.get("kafka.bootstrap.servers", "").strip()
    if not servers:
        raise ValueError("Option 'kafka.bootstrap.servers' must be specified for configuring "
                         "Kafka consumer")
    for name in _UNSUPPORTED:
        if name in opts:
            raise ValueError(f"Option '{name}' is not supported by minikafka's Python Kafka "
                             "source; use startingOffsets/endingOffsets with offsets, or the "
                             "JVM connector (spark-sql-kafka-0-10).")

    given = [name for name in _SUBSCRIPTIONS if name in opts]
    if not given:
        raise ValueError("One of the following options must be specified for Kafka source: "
                         "subscribe, subscribePattern, assign. See the docs for more details.")
    if len(given) > 1:
        raise ValueError("Only one of the following options can be specified for Kafka "
                         "source: subscribe, subscribePattern, assign. See the docs for more "
                         "details.")
    subscription = _subscription(given[0], opts[given[0]])

    if streaming and "endingoffsets" in opts:
        raise ValueError("Ending offset not valid in streaming queries")
    starting = _offset_spec(opts.get("startingoffsets", "latest" if streaming else "earliest"),
                            "startingOffsets")
    ending = _offset_spec(opts.get("endingoffsets", "latest"), "endingOffsets")
    if not streaming:
        if starting == "latest" or _has(starting, LATEST):
            raise ValueError("starting offset can't be latest for batch queries on Kafka")
        if ending == "earliest" or _has(ending, EARLIEST):
            raise ValueError("ending offset can't be earliest for batch queries on Kafka")
    if "maxoffsetspertrigger" in opts and not streaming:
        warnings.warn("maxOffsetsPerTrigger is ignored in batch queries", stacklevel=2)

    return SourceOptions(
        bootstrap_servers=servers,
        subscription=subscription,
        starting_offsets=starting,
        ending_offsets=ending,
        max_offsets_per_trigger=_positive(opts, "maxoffsetspertrigger", "maxOffsetsPerTrigger"),
        min_partitions=_positive(opts, "minpartitions", "minPartitions"),
        fail_on_data_loss=_boolean(opts, "failondataloss", True),
        include_headers=_boolean(opts, "includeheaders", False),
        poll_timeout_ms=_positive(opts, "kafkaconsumer.polltimeoutms",
                                  "kafkaConsumer.pollTimeoutMs") or 120_000,
        fetch_offset_retries=_positive(opts, "fetchoffset.numretries",
                                       "fetchOffset.numRetries", zero=True) or 3,
        fetch_offset_retry_interval_ms=_positive(opts, "fetchoffset.retryintervalms",
                                                 "fetchOffset.retryIntervalMs") or 10,
        consumer_config=tuple(sorted(_consumer_config(opts).items())),
    )


def _subscription(name: str, value: str) -> Subscription:
    if name == "subscribe":
        topics = tuple(t.strip() for t in value.split(",") if t.strip())
        if not topics:
            raise ValueError(f"No topics to subscribe to as specified value for option "
                             f"'subscribe' is '{value}'")
        return Subscribe(topics)
    if name == "subscribepattern":
        if not value.strip():
            raise ValueError(f"Pattern to subscribe is empty as specified value for option "
                             f"'subscribePattern' is '{value}'")
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"Option 'subscribePattern' is not a valid pattern: {exc}") from exc
        return SubscribePattern(value.strip())
    try:
        parsed = json.loads(value)
        if not isinstance(parsed, dict) or not parsed:
            raise ValueError
        pairs = sorted((str(topic), int(p)) for topic, parts in parsed.items() for p in parts)
    except (ValueError, TypeError):
        raise ValueError(f"""Expected e.g. {{"topicA":[0,1],"topicB":[0,1]}}, got {value}"""
                         ) from None
    return Assign(tuple(pairs))


def _offset_spec(value: str, name: str) -> OffsetSpec:
    text = value.strip()
    if text.lower() in ("earliest", "latest"):
        return text.lower()
    try:
        return parse_offsets_json(text)
    except ValueError:
        raise ValueError(f"""Option '{name}' must be "earliest", "latest" or JSON like """
                         f"""{{"topicA":{{"0":23,"1":-1}},"topicB":{{"0":-2}}}}, got {value}"""
                         ) from None


def _has(spec: OffsetSpec, marker: int) -> bool:
    return isinstance(spec, dict) and marker in spec.values()


def _positive(opts: dict[str, str], key: str, name: str, zero: bool = False) -> int | None:
    if key not in opts:
        return None
    try:
        number = int(opts[key])
    except ValueError:
        number = -1
    if number < (0 if zero else 1):
        raise ValueError(f"Option '{name}' must be a {'non-negative' if zero else 'positive'} "
                         f"integer, got {opts[key]!r}")
    return number


def _boolean(opts: dict[str, str], key: str, default: bool) -> bool:
    if key not in opts:
        return default
    value = opts[key].strip().lower()
    if value not in ("true", "false"):
        raise ValueError(f"Option '{key}' must be 'true' or 'false', got {opts[key]!r}")
    return value == "true"


def _consumer_config(opts: dict[str, str]) -> dict[str, Any]:
    """kafka.* options as kafka-python KafkaConsumer keyword arguments."""
    out: dict[str, Any] = {}
    defaults = KafkaConsumer.DEFAULT_CONFIG
    for key, value in opts.items():
        if not key.startswith("kafka.") or key == "kafka.bootstrap.servers":
            continue
        name = key[len("kafka."):]
        if name in _REFUSED and _REFUSED[name] is not None:
            raise ValueError(f"Kafka option '{name}' is not supported. {_REFUSED[name]}")
        if name == "group.id":
            continue  # no group is joined: offsets live in the checkpoint
        kwarg = name.replace(".", "_")
        if kwarg not in defaults:
            warnings.warn(f"Kafka option '{key}' has no kafka-python equivalent and is ignored",
                          stacklevel=3)
            continue
        out[kwarg] = _typed(value, defaults[kwarg], key)
    if out.get("isolation_level", "read_uncommitted") not in ("read_uncommitted",
                                                              "read_committed"):
        raise ValueError("Option 'kafka.isolation.level' must be read_uncommitted or "
                         "read_committed")
    return out


def _typed(value: str, default: Any, key: str) -> Any:
    if isinstance(default, bool):
        if value.lower() not in ("true", "false"):
            raise ValueError(f"Option '{key}' must be 'true' or 'false', got {value!r}")
        return value.lower() == "true"
    if isinstance(default, int):
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"Option '{key}' must be an integer, got {value!r}") from None
    return value
