"""The labs' exercises: each check runs the student's answer against the lab's cluster
(``minikafka.course.lab_cluster.bootstrap_servers()``: minikafka's server or a real Kafka cluster) with
real kafka-python clients, on topics and groups of its own.

Nothing here reaches into minikafka: what a check asserts must hold on Apache Kafka too.
Group names carry a nanosecond stamp so a check can run again on a cluster that keeps
its data.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Callable
from typing import Any

from kafka import KafkaConsumer, KafkaProducer
from kafka.structs import OffsetAndMetadata, TopicPartition

from ..semantics import check as check_effects
from . import solutions
from .exercise_registry import Outcome, exercise
from .lab_admin import drop_topics, fresh_topic, partitions_table
from .lab_cluster import bootstrap_servers
from .shell import cli


def _group(name: str) -> str:
    return f"{name}-{time.time_ns()}"


def _send(topic: str, values: list[bytes], partitions: int | None = None, **config: Any) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap_servers(), **config)
    try:
        for i, value in enumerate(values):
            producer.send(topic, value=value,
                          partition=None if partitions is None else i % partitions)
        producer.flush(timeout=60)
    finally:
        producer.close()


def _values(values: Any, limit: int = 6) -> str:
    values = [v.decode() if isinstance(v, bytes) else str(v) for v in values]
    more = f" ... ({len(values)} in all)" if len(values) > limit else ""
    return "[" + ", ".join(values[:limit]) + more + "]"


def _caught_up(consumer: KafkaConsumer, topic: str) -> bool:
    """The consumer owns every partition of ``topic`` and has read to its end."""
    tps = {TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic) or ()}
    if not tps or tps != consumer.assignment():
        return False
    ends = consumer.end_offsets(list(tps))
    return all(consumer.position(tp) >= ends[tp] for tp in tps)


# -- lab 1 ----------------------------------------------------------------------------------------

LAB1_TOPIC = "lab1-orders"


@exercise("lab1-create-topic", "Lab 1 · create a topic from the command line",
          hint="kafka-topics takes --create --topic NAME --partitions N --replication-factor R, "
               "and each topic config as --config key=value (min.insync.replicas is a topic "
               "config).",
          solution=solutions.create_command)
def check_create_topic(create_command: Callable[[str], str]) -> Outcome:
    bootstrap = bootstrap_servers()
    command = create_command(bootstrap)
    drop_topics(LAB1_TOPIC)
    out = Outcome()
    if not isinstance(command, str) or not command.strip():
        # (shlex.split(None) would read the kernel's stdin instead of failing)
        out.wrong.append(f"create_command returned {command!r}, not a command line")
        command = "(none)"
    else:
        try:
            cli(command)
        except RuntimeError as exc:
            out.wrong.append(f"the command failed: {exc}")
    described = cli(f"topics --bootstrap-server {bootstrap} --describe --topic {LAB1_TOPIC}")
    head = next((line for line in described.splitlines()
                 if line.startswith(f"Topic: {LAB1_TOPIC}\t")), "")
    fields = dict(f.split(": ", 1) for f in head.split("\t") if ": " in f)
    out.history = [f"$ minikafka {command}", head or f"no topic {LAB1_TOPIC}"]
    out.expect(fields.get("PartitionCount") == "6", "6 partitions",
               f"{LAB1_TOPIC} has {fields.get('PartitionCount', 'no')} partitions, not 6")
    out.expect(fields.get("ReplicationFactor") == "3", "replication factor 3",
               f"replication factor {fields.get('ReplicationFactor', '-')}, not 3")
    out.expect("min.insync.replicas=2" in fields.get("Configs", ""),
               "min.insync.replicas=2 set on the topic",
               f"the topic's configs are {fields.get('Configs', '') or 'the defaults'}: "
               "min.insync.replicas=2 is missing")
    out.verdict = head or "the topic does not exist"
    return out


# -- lab 2 ----------------------------------------------------------------------------------------

@exercise("lab2-safe-producer", "Lab 2 · a producer for payments",
          hint="acks decides who must have a record before send() succeeds (the in-sync "
               "replicas, for payments), and enable_idempotence lets the producer retry without "
               "writing a record twice.",
          solution=solutions.make_producer)
def check_safe_producer(make_producer: Callable[[str], Any]) -> Outcome:
    topic = "lab2-exercise"
    fresh_topic(topic, partitions=3, replication_factor=3,
                     config={"min.insync.replicas": "2"})
    producer = make_producer(bootstrap_servers())
    out = Outcome()
    try:
        config = producer.config
        sent = [b"payment-%03d" % i for i in range(120)]
        acked = []
        for value in sent:
            md = producer.send(topic, key=value[-1:], value=value).get(timeout=30)
            acked.append((md.partition, md.offset))
    finally:
        producer.close()
    got = [r.value for r in _read(topic)]
    report = check_effects(sent, got)
    out.history = [f"producer acks={config['acks']!r}, "
                   f"enable_idempotence={config.get('enable_idempotence')}",
                   f"sent {len(sent)} payments; {len(acked)} acknowledged; read back {len(got)}"]
    out.expect(report.ok, "every payment was stored exactly once",
               f"{len(report.lost)} payments lost, {len(report.duplicated)} duplicated")
    out.expect(config["acks"] in ("all", -1),
               "acks=all: a payment is confirmed once every in-sync replica has it",
               f"acks={config['acks']!r}: the leader confirms alone, and a payment it "
               "acknowledged is lost if it dies before a follower copied it")
    out.expect(bool(config.get("enable_idempotence")),
               "idempotence on: a retried batch is written once, in order",
               "idempotence off: a batch retried after a lost response is written twice (the "
               "lab's resend_batch showed it)")
    out.verdict = f"{len(sent)} sent, {len(report.lost)} lost, {len(report.duplicated)} duplicated"
    return out


def _read(topic: str) -> list:
    """Every record of ``topic``, up to the end offsets seen at the start."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap_servers(),
                             enable_auto_commit=False)
    try:
        tps = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic))]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        ends = consumer.end_offsets(tps)
        out: list = []
        deadline = time.monotonic() + 60
        while any(consumer.position(tp) < ends[tp] for tp in tps):
            if time.monotonic() > deadline:
                raise TimeoutError(f"could not read {topic} to its end in 60 s")
            for records in consumer.poll(timeout_ms=1_000).values():
                out.extend(records)
        return out
    finally:
        consumer.close()


# -- lab 3 ----------------------------------------------------------------------------------------

@exercise("lab3-lag", "Lab 3 · how far behind is the group?",
          hint="Lag per partition is the end offset (KafkaConsumer.end_offsets) minus the "
               "group's committed offset (KafkaAdminClient.list_group_offsets(group)[group] in kafka-python 3).",
          solution=solutions.group_lag)
def check_lag(group_lag: Callable[[str, str, str], dict]) -> Outcome:
    topic = "lab3-exercise"
    fresh_topic(topic, partitions=3, replication_factor=3)
    _send(topic, [b"order-%d" % i for i in range(30)], partitions=3)  # 10 per partition
    group = _group("lab3-exercise")
    committed = {0: 10, 1: 4, 2: 0}  # partition 2: the group has read nothing yet
    consumer = KafkaConsumer(bootstrap_servers=bootstrap_servers(), group_id=group,
                             enable_auto_commit=False)
    try:
        consumer.commit({TopicPartition(topic, p): OffsetAndMetadata(o, "", -1)
                         for p, o in committed.items()})
    finally:
        consumer.close()
    want = {p: 10 - o for p, o in committed.items()}
    got = group_lag(bootstrap_servers(), group, topic)
    got = {int(p.partition if isinstance(p, TopicPartition) else p): v for p, v in got.items()}
    out = Outcome(history=[f"10 orders in each of 3 partitions; the group committed {committed}",
                           f"your lag per partition: {got}"])
    for p, lag in want.items():
        out.expect(got.get(p) == lag, f"partition {p}: lag {lag}",
                   f"partition {p}: you said {got.get(p)}, the lag is {lag} (end offset 10, "
                   f"committed {committed[p]})")
    out.verdict = f"total lag {sum(want.values())}; yours {sum(v or 0 for v in got.values())}"
    return out


# -- lab 4 ----------------------------------------------------------------------------------------

# What partitions_table showed during the lab (topic of three partitions, brokers 1-3).
LAB4_MOMENTS = {
    "broker 2 stopped": [
        {"partition": 0, "leader": 1, "replicas": [1, 2, 3], "isr": [1, 3]},
        {"partition": 1, "leader": 3, "replicas": [2, 3, 1], "isr": [1, 3]},
        {"partition": 2, "leader": 3, "replicas": [3, 1, 2], "isr": [1, 3]}],
    "broker 2 catching up": [
        {"partition": 0, "leader": 1, "replicas": [1, 2, 3], "isr": [1, 2, 3]},
        {"partition": 1, "leader": 3, "replicas": [2, 3, 1], "isr": [1, 3]},
        {"partition": 2, "leader": 3, "replicas": [3, 1, 2], "isr": [1, 2, 3]}],
    "a topic with one replica per partition": [
        {"partition": 0, "leader": 1, "replicas": [1], "isr": [1]},
        {"partition": 1, "leader": 2, "replicas": [2], "isr": [2]}],
}


@exercise("lab4-under-replicated", "Lab 4 · find the under-replicated partitions",
          hint="A partition is under-replicated when fewer replicas are in sync than it has: "
               "compare the ISR with the replica list, not with a fixed number.",
          solution=solutions.under_replicated)
def check_under_replicated(under_replicated: Callable[[list], list]) -> Outcome:
    topic = "lab4-exercise"
    fresh_topic(topic, partitions=3, replication_factor=3)
    moments = {f"{topic} now (healthy)": partitions_table(topic), **LAB4_MOMENTS}
    out = Outcome()
    for moment, table in moments.items():
        want = sorted(p["partition"] for p in table if len(p["isr"]) < len(p["replicas"]))
        got = sorted(under_replicated([dict(p) for p in table]))
        out.expect(got == want, f"{moment}: {want or 'none'}",
                   f"{moment}: you said {got}, the under-replicated partitions are {want}")
        out.history.append(f"{moment}: " + "; ".join(
            f"p{p['partition']} replicas {p['replicas']} isr {p['isr']}" for p in table))
    out.verdict = f"{len(out.right)} of {len(moments)} tables right"
    return out


# -- lab 5 ----------------------------------------------------------------------------------------

@exercise("lab5-starting-offsets", "Lab 5 · start a stream at a point in time",
          hint="KafkaConsumer.offsets_for_times({tp: ts, ...}) gives each partition's first "
               "offset at or after ts (None when there is none: use -1, 'latest'); Spark wants "
               'JSON like {"topic": {"0": 12, "1": 7}}.',
          solution=solutions.starting_offsets)
def check_starting_offsets(starting_offsets: Callable[[str, str, int], str]) -> Outcome:
    topic = "lab5-exercise"
    fresh_topic(topic, partitions=3, replication_factor=3)
    base = (int(time.time() * 1000) // 60_000 - 60) * 60_000  # an hour ago, on the minute
    producer = KafkaProducer(bootstrap_servers=bootstrap_servers())
    try:
        for minute in range(30):  # partition 2 only gets the first 10 minutes
            partition = minute % 3 if minute < 10 else minute % 2
            producer.send(topic, value=b"minute-%d" % minute, partition=partition,
                          timestamp_ms=base + minute * 60_000)
        producer.flush(timeout=60)
    finally:
        producer.close()
    from_minute = 15
    records = _read(topic)
    want: dict[str, int] = {}
    for p in range(3):
        later = [r.offset for r in records
                 if r.partition == p and r.timestamp >= base + from_minute * 60_000]
        want[str(p)] = min(later) if later else -1
    answer = starting_offsets(bootstrap_servers(), topic, base + from_minute * 60_000)
    out = Outcome(history=[f"30 records, one a minute; from minute {from_minute} the first "
                           f"offsets are {want} (-1: none that new)",
                           f"your startingOffsets: {answer}"])
    try:
        got = json.loads(answer)
    except (TypeError, ValueError):
        out.wrong.append(f"{answer!r} is not JSON: Spark's startingOffsets option is a string "
                         'like {"topic": {"0": 12}}')
        out.verdict = "not JSON"
        return out
    if out.expect(isinstance(got, dict) and list(got) == [topic], "JSON keyed by the topic",
                  f'the JSON must be {{"{topic}": {{...}}}}, got keys {list(got) if isinstance(got, dict) else got}'):
        per = {str(k): v for k, v in got[topic].items()}
        for p, offset in want.items():
            out.expect(per.get(p) == offset, f"partition {p}: offset {offset}",
                       f"partition {p}: you said {per.get(p)}, the first record at or after "
                       f"minute {from_minute} is at offset {offset}")
    out.verdict = f"{sum(1 for r in out.right if r.startswith('partition'))} of 3 partitions right"
    return out


# -- lab 6 ----------------------------------------------------------------------------------------

@exercise("lab6-read-all", "Lab 6 · read a whole topic as a batch, without Spark",
          hint="A batch read assigns every partition (no group), seeks to the beginning, notes "
               "the end offsets and polls until its position reaches them: one poll is not "
               "enough, and a subscribe with the default 'latest' reads nothing old.",
          solution=solutions.read_all)
def check_read_all(read_all: Callable[[str, str], list]) -> Outcome:
    topic = "lab6-exercise"
    fresh_topic(topic, partitions=3, replication_factor=3)
    rows = [json.dumps({"customer_id": f"C{i:04d}", "country": "NL"}).encode()
            for i in range(1_500)]
    _send(topic, rows, linger_ms=5)
    got = read_all(bootstrap_servers(), topic)
    got = [g if isinstance(g, bytes) else getattr(g, "value", g) for g in got]
    report = check_effects(rows, got)
    out = Outcome(history=[f"{len(rows)} customers in 3 partitions; you returned {len(got)} "
                           "values"])
    out.expect(not report.lost, f"all {len(rows)} rows read",
               f"{len(report.lost)} of {len(rows)} rows missing, e.g. "
               f"{_values(report.lost, 2)}")
    out.expect(not report.duplicated, "no row read twice",
               f"{len(report.duplicated)} rows read more than once")
    out.verdict = f"{len(report.lost)} lost, {len(report.duplicated)} duplicated"
    return out


# -- lab 7 ----------------------------------------------------------------------------------------

@exercise("lab7-upsert", "Lab 7 · an idempotent write",
          hint="The sink replays records after a crash, so the same payment arrives again: "
               "write it so that a second copy overwrites its row (SQLite: INSERT ... ON "
               "CONFLICT (payment_id) DO UPDATE SET ..., or INSERT OR REPLACE).",
          solution=solutions.save_payment)
def check_upsert(save_payment: Callable[[Any, dict], None]) -> Outcome:
    topic = "lab7-exercise"
    fresh_topic(topic, partitions=3, replication_factor=3)
    payments = [{"payment_id": f"P{i:04d}", "amount": i + 0.5} for i in range(300)]
    _send(topic, [json.dumps(p).encode() for p in payments])
    group = _group("lab7-exercise")
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE payments (payment_id TEXT PRIMARY KEY, amount REAL)")
    out = Outcome()
    problems: list[str] = []
    writes = 0
    for run in (1, 2):
        consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap_servers(),
                                 group_id=group, auto_offset_reset="earliest",
                                 enable_auto_commit=False, max_poll_records=50)
        try:
            done = 0
            deadline = time.monotonic() + 60
            while not _caught_up(consumer, topic) and time.monotonic() < deadline:
                for records in consumer.poll(timeout_ms=1_000).values():
                    for r in records:
                        try:
                            save_payment(db, json.loads(r.value))
                        except sqlite3.IntegrityError as exc:
                            problems.append(f"offset {r.offset} of partition {r.partition}: "
                                            f"{exc}")
                        writes += 1
                        done += 1
                db.commit()
                if run == 1 and done >= 120:
                    break  # the process dies here: rows written, offsets never committed
                consumer.commit()
        finally:
            with contextlib.suppress(Exception):
                consumer.close(autocommit=False)
    rows = db.execute("SELECT count(*), count(DISTINCT payment_id) FROM payments").fetchone()
    out.history = ["300 payments; the first run wrote 120+ rows and died before committing; "
                   f"the second run replayed from the last commit: {writes} writes in all",
                   f"the table holds {rows[0]} rows, {rows[1]} distinct payments"]
    if problems:
        out.history.append(f"the replay hit the primary key {len(problems)} times, first at "
                           f"{problems[0]}")
    out.expect(not problems, "replayed payments overwrote their rows",
               f"{len(problems)} replayed payments failed with IntegrityError: a plain INSERT "
               "cannot take the same payment twice")
    out.expect(rows[0] == rows[1] == len(payments), "one row per payment, none missing",
               f"{rows[0]} rows for {len(payments)} payments")
    out.verdict = f"{writes} writes, {rows[0]} rows, {rows[1]} distinct payments"
    return out


# -- lab 8 ----------------------------------------------------------------------------------------

@exercise("lab8-window-counts", "Lab 8 · which windows does append mode write?",
          hint="The watermark a run uses comes from the earlier runs (newest event time minus "
               "the delay); a record is dropped only when its window ended at or before it; "
               "append mode writes a window once, when the watermark after a run has passed "
               "its end, and never an open one.",
          solution=solutions.window_counts)
def check_window_counts(window_counts: Callable[[list, int, int], dict]) -> Outcome:
    window_s, delay_s = 120, 60
    # Four runs of orders 10 s apart, each with late ones: 115 s and 235 s are behind the
    # newest of their run but in windows the watermark has not closed; 30 s comes after
    # [0, 120) was written.
    runs = [list(range(0, 180, 10)), list(range(180, 300, 10)) + [115],
            list(range(300, 420, 10)) + [30, 235], list(range(420, 500, 10)) + [355]]
    want = solutions.window_counts(runs, window_s, delay_s)
    got = window_counts([list(r) for r in runs], window_s, delay_s)
    out = Outcome(history=[f"runs of event times (s): {runs}; windows of {window_s} s, "
                           f"watermark delay {delay_s} s",
                           f"Spark writes {want}; you returned {got}"])
    if not out.expect(isinstance(got, dict), "a dict {window_start: count}",
                      f"{type(got).__name__} returned, not a dict {{window_start: count}}"):
        out.verdict = "not a dict"
        return out
    got = {int(k): v for k, v in got.items()}
    for start in sorted(set(want) | set(got)):
        if start not in want:
            out.expect(False, "", f"window [{start}, {start + window_s}) is still open after "
                                  "the last run: append mode has not written it")
        elif start not in got:
            out.expect(False, "", f"window [{start}, {start + window_s}) is missing: the "
                                  "watermark has closed it, so it was written")
        else:
            out.expect(got[start] == want[start],
                       f"window [{start}, {start + window_s}): {want[start]} records",
                       f"window [{start}, {start + window_s}): you counted {got[start]}, Spark "
                       f"{want[start]}")
    out.verdict = f"{sum(1 for r in out.right if r.startswith('window'))} of {len(want)} windows right"
    return out
