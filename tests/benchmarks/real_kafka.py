"""minikafka against Apache Kafka 4.4.0 itself: same machine, same run, the same clients.

    .venv/bin/python tests/benchmarks/real_kafka.py [--records 1000000] [--rounds 3]

Three parts, each printed as medians over --rounds rounds (which side goes first
alternates between rounds, so drift in the machine's load falls on both alike):

1. Start-up: `minikafka serve` (three brokers, a subprocess) until all three ports answer
   Metadata, against `minikafka kafka up` on a fresh data directory (kafka-storage format
   and three KRaft JVMs, until all three answer Metadata), with the native launcher's
   own fast-start JVM settings (small heaps, C1 only): what a student waits for.
2. Throughput: kafka-python and confluent-kafka each produce --records x --size-byte
   records (no key) to a fresh topic of 3 partitions, replication factor 3, acks=all,
   then consume them all (assigned partitions, from the beginning), against `minikafka
   serve` and against the native cluster. Both clusters run for the whole part; Kafka's
   JVMs run with MINIKAFKA_KAFKA_JVM_OPTS set to --kafka-jvm-opts (the full JIT, G1 and a
   1 GiB heap by default): throughput settings, not the start-up ones of part 1. The
   ratio is minikafka / Kafka (above 1: minikafka is faster), of the two medians and
   "paired" (the median of each round's own ratio). Broker CPU seconds (from /proc;
   Kafka's three JVMs summed) show which side was busy.
3. A lesson-sized workload: create a topic (3 partitions, RF 3), produce --lesson-records
   records with acks=all and read them back in a consumer group: minikafka.Cluster in
   this process (its kafka-python-shaped clients) against kafka-python on the native
   cluster.

Every ratio is minikafka / Kafka: for rates above 1 means minikafka is faster, for
seconds (start-up, CPU, the lesson) below 1 does.

With --records 1000000 --rounds 3 a run takes about 25 minutes on two busy cores.

The native cluster's data lives in a temporary directory (--data-dir to choose one) on
--kafka-port, --kafka-port+1, +2 (and +10000.., +20001..); everything is stopped at the end.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from minikafka.realkafka.nodes import NativeKafka  # noqa: E402

THROUGHPUT_JVM_OPTS = "-Xms1g -Xmx1g -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true"
SIDES = ("minikafka", "kafka")


# -- clusters --------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers_metadata(bootstrap: str) -> bool:
    """All three brokers listen and the first lists three in its Metadata."""
    from confluent_kafka.admin import AdminClient

    for address in bootstrap.split(","):
        host, port = address.rsplit(":", 1)
        try:
            socket.create_connection((host, int(port)), 1).close()
        except OSError:
            return False
    brokers = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).brokers
    return len(brokers) == 3


@contextlib.contextmanager
def minikafka_serve() -> Iterator[tuple[str, list[int], float]]:
    """`minikafka serve` on free ports: (bootstrap, pids, seconds until it answered)."""
    port = free_port()
    while any(not _free(port + i) for i in range(3)):
        port = free_port()
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "minikafka.cli", "serve", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, cwd=ROOT)
    bootstrap = ",".join(f"127.0.0.1:{port + i}" for i in range(3))
    try:
        while not answers_metadata(bootstrap):
            if proc.poll() is not None:
                raise SystemExit(f"minikafka serve exited with {proc.returncode}")
            time.sleep(0.05)
        yield bootstrap, [proc.pid], time.monotonic() - started
    finally:
        proc.terminate()
        proc.wait(20)


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@contextlib.contextmanager
def native_kafka(data_dir: Path, port: int, jvm_opts: str | None
                 ) -> Iterator[tuple[str, list[int], float]]:
    """The native cluster, fresh: (bootstrap, the JVMs' pids, seconds `up` took)."""
    shutil.rmtree(data_dir, ignore_errors=True)
    saved = os.environ.get("MINIKAFKA_KAFKA_JVM_OPTS")
    if jvm_opts:
        os.environ["MINIKAFKA_KAFKA_JVM_OPTS"] = jvm_opts
    cluster = NativeKafka(data_dir, port=port)
    try:
        seconds = cluster.up()
        pids = [s.pid for s in cluster.status() if s.pid]
        yield cluster.bootstrap_servers, pids, seconds
    finally:
        cluster.down()
        if jvm_opts:
            if saved is None:
                os.environ.pop("MINIKAFKA_KAFKA_JVM_OPTS", None)
            else:
                os.environ["MINIKAFKA_KAFKA_JVM_OPTS"] = saved


def cpu_seconds(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def create_topic(bootstrap: str, topic: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 3, 3)])[topic].result(60)
    # Every broker knows the topic before a client asks for its leaders.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        meta = admin.list_topics(topic, timeout=10).topics[topic]
        if meta.error is None and len(meta.partitions) == 3 and all(
                p.leader >= 0 for p in meta.partitions.values()):
            return
        time.sleep(0.1)
    raise SystemExit(f"topic {topic} has no leaders on {bootstrap}")


# -- the clients -------------------------------------------------------------------------

def kafka_python_produce(bootstrap: str, topic: str, count: int, size: int) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    value = b"v" * size
    for _ in range(count):
        producer.send(topic, value=value)
    producer.flush()
    producer.close()


def kafka_python_consume(bootstrap: str, topic: str, count: int) -> None:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
    consumer.assign([TopicPartition(topic, p) for p in range(3)])
    consumer.seek_to_beginning()
    seen, deadline = 0, time.monotonic() + 600
    while seen < count and time.monotonic() < deadline:
        seen += sum(len(r) for r in consumer.poll(timeout_ms=500).values())
    consumer.close()
    assert seen == count, f"kafka-python consumed {seen} of {count}"


def confluent_produce(bootstrap: str, topic: str, count: int, size: int) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all",
                         "queue.buffering.max.messages": 1_000_000})
    value, failed = b"v" * size, []

    def delivered(err, _msg) -> None:
        if err is not None:
            failed.append(err)

    for _ in range(count):
        while True:
            try:
                producer.produce(topic, value, on_delivery=delivered)
                break
            except BufferError:
                producer.poll(0.01)
        producer.poll(0)
    assert producer.flush(120) == 0 and not failed, failed[:3]


def confluent_consume(bootstrap: str, topic: str, count: int) -> None:
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-{uuid.uuid4()}",
                         "enable.auto.commit": False, "fetch.queue.backoff.ms": 10})
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(3)])
    seen, deadline = 0, time.monotonic() + 600
    while seen < count and time.monotonic() < deadline:
        seen += sum(1 for m in consumer.consume(10_000, 1.0) if m.error() is None)
    consumer.close()
    assert seen == count, f"confluent-kafka consumed {seen} of {count}"


PHASES: dict[str, Callable[..., None]] = {
    "kafka-python produce": kafka_python_produce,
    "kafka-python consume": kafka_python_consume,
    "confluent-kafka produce": confluent_produce,
    "confluent-kafka consume": confluent_consume,
}


# -- the lesson-sized workload ---------------------------------------------------------------

def lesson_in_process(count: int) -> None:
    from minikafka import Cluster

    cluster = Cluster(brokers=3)
    cluster.create_topic("lesson", partitions=3, replication_factor=3)
    producer = cluster.producer(acks="all")
    for i in range(count):
        producer.send("lesson", key=b"k%d" % i, value=b"v" * 100)
    producer.flush()
    consumer = cluster.consumer("lesson", group_id="lesson", auto_offset_reset="earliest")
    seen = 0
    while seen < count:
        seen += sum(len(r) for r in consumer.poll(timeout_ms=100).values())
    consumer.close()


def lesson_on_kafka(bootstrap: str, count: int) -> None:
    from kafka import KafkaConsumer, KafkaProducer

    topic = f"lesson-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic)
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for i in range(count):
        producer.send(topic, key=b"k%d" % i, value=b"v" * 100)
    producer.flush()
    producer.close()
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=topic,
                             auto_offset_reset="earliest")
    seen, deadline = 0, time.monotonic() + 120
    while seen < count and time.monotonic() < deadline:
        seen += sum(len(r) for r in consumer.poll(timeout_ms=100).values())
    consumer.close()
    assert seen == count


# -- main ----------------------------------------------------------------------------------

def median_row(label: str, values: dict[str, list[float]], unit: str, fmt: str) -> str:
    mini, kafka = (statistics.median(values[s]) for s in SIDES)
    paired = [m / k for m, k in zip(values["minikafka"], values["kafka"])]
    return (f"{label:<26} {format(mini, fmt):>14} {format(kafka, fmt):>14} {unit:<10} "
            f"{mini / kafka:>8.2f} {statistics.median(paired):>8.2f}  "
            f"({min(paired):.2f}-{max(paired):.2f})")


def header(what: str) -> None:
    print(f"\n{what:<26} {'minikafka':>14} {'Kafka 4.4.0':>14} {'':<10} "
          f"{'ratio':>8} {'paired':>8}  (range)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=100, help="record value bytes")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--lesson-records", type=int, default=1000)
    parser.add_argument("--kafka-port", type=int, default=9492)
    parser.add_argument("--data-dir", help="the native cluster's data (default: a temporary "
                        "directory, removed at the end)")
    parser.add_argument("--kafka-jvm-opts", default=THROUGHPUT_JVM_OPTS,
                        help=f"the Kafka JVMs' options in part 2 (default: {THROUGHPUT_JVM_OPTS})")
    parser.add_argument("--parts", default="startup,throughput,lesson",
                        help="a comma-separated subset of startup, throughput, lesson")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    work = Path(args.data_dir or tempfile.mkdtemp(prefix="javatools-bench-"))
    data_dir = work / "kafka"
    began = time.monotonic()
    try:
        if "startup" in parts:
            startup: dict[str, list[float]] = {s: [] for s in SIDES}
            for round_ in range(args.rounds):
                for side in (SIDES if round_ % 2 == 0 else SIDES[::-1]):
                    opener = (minikafka_serve() if side == "minikafka"
                              else native_kafka(data_dir, args.kafka_port, None))
                    with opener as (_, _, seconds):
                        startup[side].append(seconds)
                    print(f"  round {round_ + 1} start-up {side:<10} {seconds:6.2f} s", flush=True)
            header("start-up")
            print(median_row("until Metadata answers", startup, "s", ".2f"))

        if "throughput" in parts:
            rates: dict[str, dict[str, list[float]]] = {p: {s: [] for s in SIDES} for p in PHASES}
            busy: dict[str, dict[str, list[float]]] = {p: {s: [] for s in SIDES} for p in PHASES}
            with minikafka_serve() as mini, native_kafka(data_dir, args.kafka_port,
                                                         args.kafka_jvm_opts) as kafka:
                clusters = {"minikafka": mini, "kafka": kafka}
                print(f"\nKafka's JVMs: MINIKAFKA_KAFKA_JVM_OPTS={args.kafka_jvm_opts!r}")
                for round_ in range(args.rounds):
                    order = SIDES if round_ % 2 == 0 else SIDES[::-1]
                    topics = {}
                    for side in order:
                        for client in ("kafka-python", "confluent-kafka"):
                            topics[side, client] = f"bench-{round_}-{client}-{uuid.uuid4().hex[:6]}"
                            create_topic(clusters[side][0], topics[side, client])
                    for phase, step in PHASES.items():
                        client = phase.split()[0]
                        for side in order:
                            bootstrap, pids, _ = clusters[side]
                            extra = (args.size,) if phase.endswith("produce") else ()
                            cpu = cpu_seconds(pids)
                            started = time.perf_counter()
                            step(bootstrap, topics[side, client], args.records, *extra)
                            wall = time.perf_counter() - started
                            cpu = cpu_seconds(pids) - cpu
                            rates[phase][side].append(args.records / wall)
                            busy[phase][side].append(cpu)
                            print(f"  round {round_ + 1} {phase:<24} {side:<10} "
                                  f"{args.records / wall:>11,.0f} records/s  "
                                  f"(broker CPU {cpu:.2f} s of {wall:.2f} s)", flush=True)
            header(f"{args.records:,} x {args.size} B")
            for phase in PHASES:
                print(median_row(phase, rates[phase], "records/s", ",.0f"))
            header("broker CPU")
            for phase in PHASES:
                print(median_row(phase, busy[phase], "s", ".2f"))

        if "lesson" in parts:
            lesson: dict[str, list[float]] = {s: [] for s in SIDES}
            with native_kafka(data_dir, args.kafka_port, None) as kafka:
                for round_ in range(args.rounds):
                    for side in (SIDES if round_ % 2 == 0 else SIDES[::-1]):
                        started = time.perf_counter()
                        if side == "minikafka":
                            lesson_in_process(args.lesson_records)
                        else:
                            lesson_on_kafka(kafka[0], args.lesson_records)
                        lesson[side].append(time.perf_counter() - started)
                        print(f"  round {round_ + 1} lesson {side:<10} {lesson[side][-1]:6.2f} s",
                              flush=True)
            header(f"lesson ({args.lesson_records:,} records)")
            print(median_row("create, produce, group read", lesson, "s", ".2f"))
            print("(minikafka: Cluster in this process; Kafka: kafka-python over loopback)")
    finally:
        if not args.data_dir:
            shutil.rmtree(work, ignore_errors=True)
    print(f"\nwhole run: {time.monotonic() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
