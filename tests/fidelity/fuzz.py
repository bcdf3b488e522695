"""A differential fuzzer: seeded short programs of client calls (kafka-python) run against real
Apache Kafka and against `minikafka serve`, their normalised observations compared.

    python -m tests.fidelity.fuzz --kafka HOST:PORT --serve HOST:PORT --programs 2000

runs programs 0..1999 (seed = program number) against both clusters and prints how many
programs and operations ran and every observation that differed. Without --serve it starts
`minikafka serve docker/server.properties` in process with the real cluster's test settings.
CI runs a few fixed seeds (test_fuzz.py).

A program creates a few topics (some with bad partition counts, replication factors or
configs), produces with acks 0/1/all, keys or none, explicit timestamps (old, now, ahead) and
sizes up to past max.message.bytes, reads partitions back, lists and deletes offsets, alters
and describes configs, commits and fetches group offsets, joins and leaves a group and
deletes topics. An observation is what a student could see: error names, offsets, records,
config values; never a broker's id, a timestamp the broker chose or a topic id. Topic and
group names are the program's own (`t0`, `g0`), rewritten per cluster.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import random
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

TOPIC_CONFIGS = {  # key -> values to try, good and bad
    "cleanup.policy": ["delete", "compact", "compact,delete", "bogus"],
    "retention.ms": ["60000", "-1", "abc", "-5"],
    "max.message.bytes": ["2000", "1048588", "0"],
    "min.insync.replicas": ["1", "2", "3", "0"],
    "compression.type": ["producer", "gzip", "lz4", "brotli"],
    "message.timestamp.type": ["CreateTime", "LogAppendTime", "Other"],
}
DESCRIBED = ("cleanup.policy", "retention.ms", "max.message.bytes", "min.insync.replicas",
             "compression.type", "message.timestamp.type")
HOUR_MS = 3_600_000
ROOT = Path(__file__).resolve().parents[2]
FUZZ_RESULTS = ROOT / "tests" / "fidelity" / "fuzz_results.json"  # the long run's figures


def generate(seed: int, length: int = 8) -> list[dict]:
    """A program: a list of operations, the same for the same seed."""
    rng = random.Random(seed)
    ops: list[dict] = []
    topics = 0
    for _ in range(rng.randint(1, 2)):  # every program starts with a topic or two
        ops.append(_create(rng, topics))
        topics += 1
    for _ in range(length):
        kind = rng.choices(
            ["create", "produce", "read", "offsets", "delete_records", "alter", "describe",
             "commit", "group", "delete_topic"],
            weights=[1, 8, 3, 2, 1, 2, 1, 2, 1, 1])[0]
        t = rng.randrange(topics)
        if kind == "create":
            ops.append(_create(rng, topics))
            topics += 1
        elif kind == "produce":
            ops.append({"op": "produce", "t": t, "p": rng.choice([0, 0, 1, 5]),
                        "acks": rng.choice([0, 1, 1, "all", "all"]),
                        "count": rng.choice([1, 1, 3, 10]),
                        "key": rng.choice([None, "k", "key-2"]),
                        "size": rng.choice([0, 10, 100, 1500, 1_100_000]),
                        "ts": rng.choice([None, "now", "old", "ahead"])})
        elif kind == "read":
            ops.append({"op": "read", "t": t, "p": rng.choice([0, 0, 1])})
        elif kind == "offsets":
            ops.append({"op": "offsets", "t": t, "p": rng.choice([0, 0, 1, 7]),
                        "spec": rng.choice(["earliest", "latest", "max_timestamp"])})
        elif kind == "delete_records":
            ops.append({"op": "delete_records", "t": t, "p": 0,
                        "before": rng.choice([0, 1, 2, 50, -1])})
        elif kind == "alter":
            key = rng.choice(sorted(TOPIC_CONFIGS))
            ops.append({"op": "alter", "t": t, "key": key,
                        "value": rng.choice(TOPIC_CONFIGS[key])})
        elif kind == "describe":
            ops.append({"op": "describe", "t": t})
        elif kind == "commit":
            ops.append({"op": "commit", "t": t, "g": rng.randrange(2), "p": rng.choice([0, 3]),
                        "offset": rng.choice([0, 1, 5, -1])})
        elif kind == "group":
            ops.append({"op": "group", "t": t, "g": 2 + rng.randrange(2)})
        else:
            ops.append({"op": "delete_topic", "t": t})
    return ops


def _create(rng: random.Random, index: int) -> dict:
    configs = {}
    if rng.random() < 0.4:
        key = rng.choice(sorted(TOPIC_CONFIGS))
        configs[key] = rng.choice(TOPIC_CONFIGS[key])
    return {"op": "create", "t": index, "partitions": rng.choice([1, 1, 2, 3, 0, -1]),
            "rf": rng.choice([1, 2, 3, 3, 4]), "configs": configs}


def _err(exc: BaseException) -> str:
    name = getattr(exc, "__class__", type(exc)).__name__
    return "Timeout" if name in ("KafkaTimeoutError", "TimeoutError") else name


class Runner:
    """One cluster's clients, kept across programs (a client's start-up costs more than a
    program's calls)."""

    def __init__(self, bootstrap: str) -> None:
        from kafka import KafkaConsumer
        from kafka.admin import KafkaAdminClient
        self.bootstrap = bootstrap
        common = {"bootstrap_servers": bootstrap, "request_timeout_ms": 8000}
        self.admin = KafkaAdminClient(**common)
        self.common = common
        self.producers: dict = {}
        self.reader = KafkaConsumer(enable_auto_commit=False, allow_auto_create_topics=False,
                                    **common)
        self._group_coordinator_ready()

    def _group_coordinator_ready(self, timeout_s: float = 30) -> None:
        """On a new Kafka cluster the first FindCoordinator creates __consumer_offsets and
        answers COORDINATOR_NOT_AVAILABLE until it has leaders (kafka-python's admin raises
        it); minikafka creates it at once (docs/fidelity.md). Wait, as a user would retry."""
        from kafka.errors import CoordinatorNotAvailableError
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                self.admin.describe_groups(["fuzz-warm-up"])
                return
            except CoordinatorNotAvailableError:
                time.sleep(0.2)

    def producer(self, acks: Any) -> Any:
        """A producer per acks, made when first needed and dropped when a topic is deleted:
        a producer's metadata refresh would create a deleted topic again."""
        from kafka import KafkaProducer
        if acks not in self.producers:
            self.producers[acks] = KafkaProducer(acks=acks, retries=0, linger_ms=0,
                                                 max_request_size=2_000_000,
                                                 max_block_ms=8000, **self.common)
        return self.producers[acks]

    def drop_producers(self) -> None:
        """...and a fresh reader: kafka-python 3.0.12 keeps a deleted topic's leader and,
        once the topic is created again elsewhere, asks the old leader until time-out (on
        Kafka and minikafka alike)."""
        from kafka import KafkaConsumer
        for p in self.producers.values():
            with contextlib.suppress(Exception):  # kafka-python: "Future not done"
                p.close(timeout=2)
        self.producers.clear()
        with contextlib.suppress(Exception):
            self.reader.close()
        self.reader = KafkaConsumer(enable_auto_commit=False, allow_auto_create_topics=False,
                                    **self.common)

    def close(self) -> None:
        self.drop_producers()
        self.reader.close()
        self.admin.close()

    def run(self, ops: list[dict], prefix: str, now_ms: int) -> list:
        """Each operation's observation; `now_ms` is the program's clock for timestamps."""
        self.now_ms = now_ms
        names = {}
        out = []
        for op in ops:
            t = names.setdefault(op["t"], f"{prefix}-t{op['t']}")
            try:
                seen = getattr(self, "_" + op["op"])(op, t, prefix)
            except Exception as exc:
                seen = {"error": _err(exc)}
            out.append(seen)
        self.drop_producers()
        for t in names.values():  # leave nothing behind
            with contextlib.suppress(Exception):
                self.admin.delete_topics([t], timeout_ms=5000)
        return out

    # -- the operations ----------------------------------------------------------------------
    def _create(self, op: dict, t: str, prefix: str) -> Any:
        from kafka.errors import for_code
        result = self.admin.create_topics(
            {t: {"num_partitions": op["partitions"], "replication_factor": op["rf"],
                 "configs": op["configs"]}}, raise_errors=False)
        code = result["topics"][0]["error_code"]
        if code == 0:  # Kafka's brokers learn of a topic a moment after the controller
            _wait_for_leaders(self.admin, t)
            _settled(lambda: self._usable(t), 0.05)
        return for_code(code).__name__

    def _usable(self, t: str) -> bool:
        from kafka import TopicPartition
        from kafka.admin import OffsetSpec
        try:
            tp = TopicPartition(t, 0)
            self.admin.list_partition_offsets({tp: OffsetSpec.LATEST}, timeout_ms=1000)
            return True
        except Exception:
            return False

    def _produce(self, op: dict, t: str, prefix: str) -> Any:
        producer = self.producer(op["acks"])
        # Within Kafka 4.x's message.timestamp.after.max.ms (1 h) and retention (7 days),
        # so what is kept does not depend on when the retention check runs.
        ts = {None: None, "now": self.now_ms, "old": self.now_ms - 24 * HOUR_MS,
              "ahead": self.now_ms + HOUR_MS // 2}[op["ts"]]
        key = op["key"] and op["key"].encode()
        futures = [producer.send(t, key=key, value=b"v" * op["size"], partition=op["p"],
                                 timestamp_ms=ts) for _ in range(op["count"])]
        producer.flush(timeout=10)
        seen = []
        for f in futures:
            try:
                meta = f.get(timeout=10)
                seen.append("sent" if op["acks"] == 0 else meta.offset)
            except Exception as exc:
                seen.append(_err(exc))
        self._replicated(t, op["p"], [o for o in seen if isinstance(o, int)], op["acks"])
        return seen

    def _replicated(self, t: str, partition: int, offsets: list[int], acks: Any) -> None:
        """acks=0 and acks=1 answer before the followers copy the records (the high
        watermark moves a fetch later, up to replica.fetch.wait.max.ms on Kafka): wait for
        it, so what later operations see does not depend on the followers' timing."""
        from kafka import TopicPartition
        if acks == "all":
            return
        tp = TopicPartition(t, partition)

        def end() -> int:
            try:
                return self.reader.end_offsets([tp], timeout_ms=2000)[tp]
            except Exception:
                return -1
        if offsets:
            deadline = time.monotonic() + 5
            while end() <= max(offsets) and time.monotonic() < deadline:
                time.sleep(0.05)
        elif acks == 0:
            _settled(end, 0.3)

    def _read(self, op: dict, t: str, prefix: str) -> Any:
        from kafka import TopicPartition
        tp = TopicPartition(t, op["p"])
        described = self.admin.describe_topics([t])[0]
        if described["error_code"] or op["p"] >= len(described["partitions"]):
            return {"no_partition": True}  # (the consumer would wait for it until time-out)
        # acks=0 and acks=1 answer before the high watermark moves: wait until it stops
        end = _settled(lambda: self.reader.end_offsets([tp], timeout_ms=5000)[tp])
        start = self.reader.beginning_offsets([tp], timeout_ms=5000)[tp]
        self.reader.assign([tp])
        self.reader.seek(tp, start)
        records: list = []
        deadline = time.monotonic() + 10
        while start < end and (not records or records[-1].offset + 1 < end) \
                and time.monotonic() < deadline:
            for batch in self.reader.poll(timeout_ms=200).values():
                records.extend(batch)
        return {"start": start, "end": end,
                "records": [[r.offset, r.key and r.key.decode(), len(r.value or b""),
                             self._timestamp(r)] for r in records]}

    def _timestamp(self, record: Any) -> Any:
        """The program's own timestamps by name; one the producer or broker chose is not
        compared (only which kind it is)."""
        if record.timestamp_type == 1:
            return "log-append"
        return self._named(record.timestamp)

    def _named(self, timestamp: int) -> str:
        named = {self.now_ms: "now", self.now_ms - 24 * HOUR_MS: "old",
                 self.now_ms + HOUR_MS // 2: "ahead"}
        return named.get(timestamp, "producer's clock")

    def _offsets(self, op: dict, t: str, prefix: str) -> Any:
        from kafka import TopicPartition
        from kafka.admin import OffsetSpec
        spec = {"earliest": OffsetSpec.EARLIEST, "latest": OffsetSpec.LATEST,
                "max_timestamp": OffsetSpec.MAX_TIMESTAMP}[op["spec"]]
        tp = TopicPartition(t, op["p"])
        found = self.admin.list_partition_offsets({tp: spec}, timeout_ms=5000)[tp]
        if op["spec"] == "max_timestamp" and found.offset >= 0 and \
                self._named(found.timestamp) == "producer's clock":
            # which record has the newest producer-chosen time depends on the clock's ticks
            return "a record stamped by the producer"
        return found.offset

    def _delete_records(self, op: dict, t: str, prefix: str) -> Any:
        from kafka import TopicPartition
        tp = TopicPartition(t, op["p"])
        result = self.admin.delete_records({tp: op["before"]}, timeout_ms=5000)
        return {"low_watermark": result[tp]["low_watermark"]} if isinstance(result[tp], dict) \
            else str(result[tp])

    def _alter(self, op: dict, t: str, prefix: str) -> Any:
        from kafka.admin import ConfigResource, ConfigResourceType
        result = self.admin.alter_configs(
            [ConfigResource(ConfigResourceType.TOPIC, t, configs={op["key"]: op["value"]})],
            incremental=True)
        # 'OK' or the error, by name: the messages are compared nowhere (docs/fidelity.md)
        answer = _name(next(iter(result["topic"].values()))).split(":")[0]
        if answer == "OK":  # Kafka's brokers apply a change a moment later
            deadline = time.monotonic() + 5
            while self._describe(op, t, prefix).get(op["key"]) != op["value"] and \
                    time.monotonic() < deadline:
                time.sleep(0.05)
        return answer

    def _describe(self, op: dict, t: str, prefix: str) -> Any:
        from kafka.admin import ConfigResource, ConfigResourceType
        found = self.admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, t, configs=list(DESCRIBED))],
            config_filter="all")
        entries = next(iter(next(iter(found.values())).values()))
        return {k: entries[k]["value"] for k in DESCRIBED if k in entries}

    def _commit(self, op: dict, t: str, prefix: str) -> Any:
        from kafka import TopicPartition
        from kafka.structs import OffsetAndMetadata
        group = f"{prefix}-g{op['g']}"
        tp = TopicPartition(t, op["p"])
        result = self.admin.alter_group_offsets(group, {tp: OffsetAndMetadata(op["offset"], "",
                                                                              -1)})
        committed = self.admin.list_group_offsets(group)[group]
        def label(tp: Any) -> str:
            return f"{tp.topic.removeprefix(prefix)}:{tp.partition}"
        return {"commit": {label(k): _name(v) for k, v in result.items()},
                "committed": {label(k): v.offset for k, v in committed.items()}}

    def _group(self, op: dict, t: str, prefix: str) -> Any:
        from kafka import KafkaConsumer
        if self.admin.describe_topics([t])[0]["error_code"]:
            return {"no_topic": True}  # (subscribing would auto-create it, or wait)
        consumer = KafkaConsumer(t, bootstrap_servers=self.bootstrap,
                                 group_id=f"{prefix}-g{op['g']}", enable_auto_commit=False,
                                 request_timeout_ms=8000, session_timeout_ms=10000,
                                 allow_auto_create_topics=False)
        try:
            # Join once the client knows the topic: kafka-python 3.0.12 can drop a JoinGroup
            # when the topic's metadata arrives mid-join (docs/fidelity.md, open observations).
            deadline = time.monotonic() + 15
            while not consumer.partitions_for_topic(t) and time.monotonic() < deadline:
                time.sleep(0.05)
            while not consumer.assignment() and time.monotonic() < deadline:
                consumer.poll(timeout_ms=100)
            return sorted(tp.partition for tp in consumer.assignment())
        finally:
            consumer.close()

    def _delete_topic(self, op: dict, t: str, prefix: str) -> Any:
        from kafka.errors import for_code
        self.drop_producers()
        result = self.admin.delete_topics([t], raise_errors=False)
        # Kafka's brokers learn of a deletion a moment after the controller, each in its
        # own time: wait until three answers in a row (from any broker) say it is gone
        deadline, gone = time.monotonic() + 8, 0
        while gone < 3 and time.monotonic() < deadline:
            gone = gone + 1 if self.admin.describe_topics([t])[0]["error_code"] else 0
            time.sleep(0.05)
        return [for_code(r["error_code"]).__name__ for r in result["topics"]]


def _name(value: Any) -> str:
    if isinstance(value, type):
        return value.__name__
    return type(value).__name__ if isinstance(value, BaseException) else str(value)


def _settled(read: Callable[[], Any], step_s: float = 0.6, timeout_s: float = 5) -> Any:
    """read() once it gives the same value twice in a row (or after timeout_s)."""
    last, deadline = read(), time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        time.sleep(step_s)
        value = read()
        if value == last:
            return value
        last = value
    return last


def _wait_for_leaders(admin: Any, topic: str, timeout_s: float = 10) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            described = admin.describe_topics([topic])[0]
            if described["error_code"] == 0 and described["partitions"] and all(
                    p["leader_id"] >= 0 for p in described["partitions"]):
                return
        except Exception:
            pass
        time.sleep(0.1)


def _run(runner: Runner, ops: list[dict], prefix: str, now_ms: int) -> list:
    """runner.run, or the error that stopped the program, for every operation."""
    try:
        return runner.run(ops, prefix, now_ms)
    except Exception as exc:
        return [{"program failed": _err(exc)}] * len(ops)


def differences(a: list, b: list, ops: list[dict]) -> list[tuple[int, dict, Any, Any]]:
    """(operation index, operation, Kafka's observation, minikafka's) where they differ."""
    return [(i, op, x, y) for i, (op, x, y) in enumerate(zip(ops, a, b, strict=True)) if x != y]


def run(kafka: str, serve: str, seeds: range, report: Callable[[str], None] = print,
        save: Path | None = None) -> dict:
    """Run the programs of `seeds` on both clusters; the figures and every difference
    (written to `save` after every program too, so a run cut short still counts)."""
    real, mini = Runner(kafka), Runner(serve)
    found: list[dict] = []
    operations = programs = 0
    started = time.monotonic()
    pool = ThreadPoolExecutor(2)  # the two clusters side by side
    try:
        for seed in seeds:
            ops = generate(seed)
            prefix = f"fz{seed}-{uuid.uuid4().hex[:6]}"
            now_ms = int(time.time() * 1000)
            a, b = pool.map(lambda runner, o=ops, p=prefix, n=now_ms: _run(runner, o, p, n),
                            (real, mini))
            operations += len(ops)
            for i, op, x, y in differences(a, b, ops):
                found.append({"seed": seed, "index": i, "op": op, "kafka": x, "minikafka": y})
                report(f"seed {seed} op {i} {op}: Kafka {x!r}, minikafka {y!r}")
            programs += 1
            if save is not None:
                save.write_text(json.dumps(
                    {"programs": programs, "operations": operations, "first_seed": seeds[0],
                     "seconds": round(time.monotonic() - started), "differences": found},
                    indent=1) + "\n")
    finally:
        pool.shutdown()
        real.close()
        mini.close()
    return {"programs": programs, "operations": operations, "differences": found}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kafka", required=True, help="real Kafka's bootstrap servers")
    parser.add_argument("--serve", help="minikafka serve's (default: start one in process)")
    parser.add_argument("--programs", type=int, default=100)
    parser.add_argument("--first", type=int, default=0, help="the first seed")
    parser.add_argument("--save", type=Path, help="the figures and differences as JSON "
                        f"(docs/fidelity.md reads {FUZZ_RESULTS.relative_to(ROOT)})")
    args = parser.parse_args()
    seeds = range(args.first, args.first + args.programs)
    started = time.monotonic()
    if args.serve:
        result = run(args.kafka, args.serve, seeds, save=args.save)
    else:
        from minikafka import Cluster

        from .doors import SHARED_BROKER_SETTINGS
        with Cluster(brokers=3, seed=0, broker_config=SHARED_BROKER_SETTINGS).serve(
                port=0) as server:
            result = run(args.kafka, server.bootstrap_servers, seeds, save=args.save)
    kinds: dict[str, int] = {}
    for d in result["differences"]:
        kinds[d["op"]["op"]] = kinds.get(d["op"]["op"], 0) + 1
    print(f"{result['programs']} programs, {result['operations']} operations in "
          f"{time.monotonic() - started:.0f} s: {len(result['differences'])} differences "
          f"{dict(sorted(kinds.items()))}")


if __name__ == "__main__":
    main()
