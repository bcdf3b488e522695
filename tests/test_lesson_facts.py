"""Every default a lesson states is Kafka's documented default, and minikafka's.

The lessons give defaults in a few fixed ways: "`name` (30 s)", "`name`, 2 minutes",
"`name`: **7 days**", "`name` (1 GiB by default)", "`name` defaults to **45 s**", "the
default `name` of 5 ms", "`name=value` (the default)", "`name`, on by default", and
tables with a default column or "1 (default)". This test finds them all in the markdown,
converts each to the setting's unit, and checks it against minikafka.course.facts (Kafka's
defaults for the target release, with kafka-python's where it differs) and against
minikafka's own config tables. A wrong default in a lesson, a fact or the simulator fails.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import nbformat
import pytest

from minikafka.client.consumer import DEFAULTS as CONSUMER_DEFAULTS
from minikafka.client.producer import DEFAULTS as PRODUCER_DEFAULTS
from minikafka.core.config import BROKER_DEFAULTS, TOPIC_CONFIGS
from minikafka.core.log import INDEX_INTERVAL_BYTES
from minikafka.course.facts import DEFAULTS, Default

LESSONS = sorted((Path(__file__).resolve().parent.parent / "lessons").glob("[0-9][0-9]-*.ipynb"))

NAME = r"`(?P<name>[a-z]+(?:[._][a-z0-9]+)*)`"
VALUE = r"\*{0,2}(?P<value>[-\w.\"']+(?:\s(?:ms|s|seconds?|min|minutes?|hours?|days?|bytes?|" \
        r"[KMG]i?B))?)\*{0,2}"
# "`name` (VALUE", "`name`, VALUE", "`name`: VALUE", "`name` defaults to VALUE",
# "`name` is VALUE" (the present tense of a default: "`heartbeat.interval.ms` is 3 s").
AFTER_NAME = re.compile(NAME + r"\*{0,2}(?: \(|, (?:default )?|: | defaults to | is (?:still )?)"
                        + VALUE)
# "the default `name` of VALUE", "the default `name` from OLD to VALUE"
DEFAULT_OF = re.compile(r"\bdefault " + NAME + r" (?:of|from \S+ to) " + VALUE)
# "`name=value` (the default)", "`name=value`, the producer default"
ASSIGNED = re.compile(r"`(?P<name>[a-z]+(?:[._][a-z0-9]+)*)=(?P<value>[^`]+)`"
                      r"(?:,| \()\s*the (?:\w+ )?default")
# "defaults to `name=value`", "own default is `name=value`"
DEFAULT_IS = re.compile(r"\bdefaults? (?:to|is) `(?P<name>[a-z]+(?:[._][a-z0-9]+)*)=(?P<value>[^`]+)`")
ON_OFF = re.compile(NAME + r"(?:=\w+`)?`?, (?P<value>on|off) by default")
TABLE_ROW = re.compile(r"^\|\s*" + NAME + r"\s*\|(?P<rest>.*)$", re.M)

UNITS_MS = {"ms": 1, "s": 1_000, "second": 1_000, "seconds": 1_000, "min": 60_000,
            "minute": 60_000, "minutes": 60_000, "hour": 3_600_000, "hours": 3_600_000,
            "day": 86_400_000, "days": 86_400_000}
UNITS_BYTES = {"byte": {1}, "bytes": {1}, "KB": {1_000, 1 << 10}, "KiB": {1 << 10},
               "MB": {10**6, 1 << 20}, "MiB": {1 << 20}, "GB": {10**9, 1 << 30},
               "GiB": {1 << 30}}


def fact_name(name: str) -> str:
    return name.replace("_", ".")


def expected(name: str) -> object:
    """Kafka's default, or kafka-python's when the lesson names the setting its way."""
    fact = DEFAULTS[fact_name(name)]
    if "_" in name and fact.kafka_python is not None:
        return fact.kafka_python
    return fact.kafka


def values(name: str, text: str) -> set[object]:
    """What a stated value can mean in the setting's unit (KB may be 1000 or 1024)."""
    text = text.strip().strip("\"'").rstrip(".,;:)")
    number = re.fullmatch(r"(-?[\d_]+(?:\.\d+)?)(?:\s?(\w+))?", text)
    if number is None:
        return {{"true": True, "false": False, "on": True, "off": False}.get(text, text)}
    amount, unit = float(number.group(1).replace("_", "")), number.group(2)
    key = fact_name(name)
    if unit is None:
        return {int(amount) if amount.is_integer() else amount}
    if unit in UNITS_BYTES:
        return {int(amount * f) for f in UNITS_BYTES[unit]}
    if unit in UNITS_MS:
        ms = amount * UNITS_MS[unit]
        scale = {"ms": 1, "seconds": 1_000, "minutes": 60_000, "hours": 3_600_000}
        per = next((v for k, v in scale.items() if key.endswith("." + k)), None)
        if per is None:
            raise AssertionError(f"{name}: a duration ({text}) for a setting without a time unit")
        return {int(ms / per)}
    raise AssertionError(f"{name}: cannot read the value {text!r}")


def stated_defaults(markdown: str) -> list[tuple[str, str]]:
    """(name, value text) for every default the text states about a setting we know."""
    found = []
    for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z*>(`])|\n", markdown):
        for pattern in (AFTER_NAME, DEFAULT_OF, ASSIGNED, DEFAULT_IS, ON_OFF):
            for m in pattern.finditer(sentence):
                if fact_name(m["name"]) not in DEFAULTS:
                    continue
                if pattern is AFTER_NAME and not re.match(r"-?\d|\*\*|true|false|all", m["value"]):
                    continue  # "`acks`, which ..." states nothing
                found.append((m["name"], m["value"]))
    # Tables: the cell under a "default" heading, or a cell that says "(default)".
    for block in re.findall(r"(?:^\|.*\n?)+", markdown, re.M):
        lines = block.strip().splitlines()
        heads = [h.strip().lower() for h in lines[0].strip("|").split("|")]
        for m in TABLE_ROW.finditer(block):
            if fact_name(m["name"]) not in DEFAULTS:
                continue
            cells = [c.strip() for c in m["rest"].strip().strip("|").split("|")]
            if "default" in heads:
                found.append((m["name"], cells[heads.index("default") - 1]))
                continue
            for cell in cells:
                said = re.match(r"`?([^`(]+?)`? \(default\)", cell)
                if said:
                    found.append((m["name"], said.group(1)))
    return found


def lesson_statements() -> list[tuple[str, str, str]]:
    out = []
    for path in LESSONS:
        nb = nbformat.read(path, as_version=4)
        text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        out += [(path.stem[:2], name, value) for name, value in stated_defaults(text)]
    return out


STATEMENTS = lesson_statements()


def test_the_lessons_state_many_defaults() -> None:
    # The extractor must keep finding the lessons' defaults, or this test checks nothing.
    names = {fact_name(n) for _, n, _ in STATEMENTS}
    assert len(STATEMENTS) >= 40 and len(names) >= 30, sorted(names)
    assert {"acks", "linger.ms", "session.timeout.ms", "replica.lag.time.max.ms",
            "segment.bytes", "auto.commit.interval.ms", "max.poll.records"} <= names


@pytest.mark.parametrize("lesson,name,value", STATEMENTS,
                         ids=[f"{lesson}-{name}-{value}" for lesson, name, value in STATEMENTS])
def test_every_stated_default_is_kafkas(lesson: str, name: str, value: str) -> None:
    assert expected(name) in values(name, value), (
        f"lesson {lesson} says {name} defaults to {value}; Kafka's default is {expected(name)}")


def minikafka_defaults(name: str) -> list[object]:
    """Every value minikafka's config tables give this setting (none if it has none)."""
    key, under = fact_name(name), fact_name(name).replace(".", "_")
    out = []
    for table in (PRODUCER_DEFAULTS, CONSUMER_DEFAULTS):
        if under in table:
            value = table[under]
            if under == "enable_idempotence" and value is None:
                value = True  # None: on unless the settings conflict, Kafka 3.0+'s rule
            out.append(value)
    if key in TOPIC_CONFIGS:
        out.append(TOPIC_CONFIGS[key].default)
    if key in BROKER_DEFAULTS:
        out.append(BROKER_DEFAULTS[key])
    if key == "index.interval.bytes":
        out.append(INDEX_INTERVAL_BYTES)  # a constant in minikafka, not a topic config
    return out


@pytest.mark.parametrize("name", sorted(DEFAULTS))
def test_minikafka_uses_kafkas_defaults(name: str) -> None:
    for value in minikafka_defaults(name):
        want = DEFAULTS[name].kafka
        assert value == want or (isinstance(want, float) and math.isclose(value, want)), (
            name, value, want)


def test_minikafka_has_most_of_the_settings_the_lessons_state() -> None:
    stated = {fact_name(n) for _, n, _ in STATEMENTS}
    covered = {n for n in stated if minikafka_defaults(n)}
    assert len(covered) >= 0.7 * len(stated), sorted(stated - covered)


def test_a_wrong_default_in_a_lesson_is_caught() -> None:
    # The forms the lessons use, each with a wrong value: every one must be found and fail.
    wrong = ("`session.timeout.ms` (10 s). `linger.ms`, 0 ms. `segment.bytes` (1 MiB by "
             "default). The default `batch.size` of 32 KB. `max.poll.records` defaults to "
             "**100**. `offsets.retention.minutes`: **1 day**. `acks=1` (the default). "
             "`auto.create.topics.enable`, off by default.\n\n"
             "| setting | default |\n|---|---|\n| `fetch.max.wait.ms` | 100 ms |\n\n"
             "| setting | scope | values |\n|---|---|---|\n"
             "| `min.insync.replicas` | topic | 2 (default), 3 |\n")
    found = stated_defaults(wrong)
    assert len(found) == 10, found
    assert not any(expected(n) in values(n, v) for n, v in found), found
    right = "`linger_ms` (0 ms); `linger.ms` (5 ms); `retention.ms` (7 days); `acks=all` (the default)"
    assert all(expected(n) in values(n, v) for n, v in stated_defaults(right))
    # A setting chosen in an experiment is not a default.
    assert stated_defaults("a topic with `retention.ms` = 1 hour and a tiny `segment.bytes` "
                           "of 2000") == []


def test_facts_cover_their_kafka_python_differences() -> None:
    assert DEFAULTS["linger.ms"] == Default(5, kafka_python=0)
    assert expected("linger_ms") == 0 and expected("linger.ms") == 5


# Version facts the lessons state, as checked against Kafka's sources, docs and KIPs: the
# phrase each lesson must carry, and the earlier wrong one it must not.
VERSION_FACTS = [
    ("01", "removed the `--zookeeper` flag from `kafka-topics.sh`", "from the command-line tools"),
    ("03", "dates from Kafka 4.0 (KIP-1030)", "Kafka 4.4 also rejects a CreateTime"),
    ("10", "Kafka 0.8.2 added storage in `__consumer_offsets`", "(before Kafka 0.9) stored"),
    ("12", "`kafka-configs.sh` kept it, deprecated, until 4.0", "in 0.9, for the `__consumer"),
    ("12", "Kafka 0.8.2 added offset storage", "removed that flag from the command-line tools"),
    ("14", "upgrade --feature metadata.version=", "--release-version 4.4` finalizes"),
    ("14", "also raises `kraft.version`", None),
    ("15", "every controller publishes `OfflinePartitionsCount`", "only the active controller"),
    ("15", "`metrics.num.samples`, 2, of `metrics.sample.window.ms`, 30 s", "window (`metrics"),
    ("16", "Since Kafka 3.8 (KIP-1036)", "Kafka 3.9 (KIP-1036)"),
    ("18", "RENEW (Kafka 4.2, KIP-1222)", "RENEW in Kafka 4.4's clients"),
    ("22", "until Kafka 2.8 renamed it `delegation.token.secret.key` (KIP-681)", None),
    ("22", "came in Kafka 3.1 (KIP-768)", None),
    ("23", "with INVALID_TXN_STATE (48)", "NOT_ENOUGH_REPLICAS (19), the retriable error older"),
    ("23", "which a cluster formatted on Kafka 4.4.0 finalizes", "minikafka finalizes `transaction.version` at 1"),
    ("23", "INVALID_TXN_STATE (kafka-python's version 3) or TRANSACTION_ABORTABLE (the Java", None),
]


@pytest.mark.parametrize("lesson,says,not_says", VERSION_FACTS,
                         ids=[f"{n}-{s[:30]}" for n, s, _ in VERSION_FACTS])
def test_version_facts_are_stated_as_checked(lesson: str, says: str, not_says: str | None) -> None:
    path = next(p for p in LESSONS if p.stem.startswith(lesson))
    text = " ".join(c.source for c in nbformat.read(path, as_version=4).cells
                    if c.cell_type == "markdown")
    assert says in text
    assert not_says is None or not_says not in text
