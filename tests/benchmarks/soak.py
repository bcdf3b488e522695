"""Soak: `minikafka serve --log-dir` under producers and a consumer group whose processes are
killed at random, for minutes on end. Nothing acknowledged may be lost.

    .venv/bin/python tests/benchmarks/soak.py [--minutes 10] [--kill-every 3] [--seed 1]

The server runs as its own process with a log dir and a bounded journal (serve's default).
Beside it run two producers (one kafka-python, one confluent-kafka; acks=all, idempotent)
and a consumer group of two kafka-python consumers committing after each poll. Every
--kill-every seconds one of those client processes, drawn with the seed, gets SIGKILL and a
new one takes its place. Each producer writes a value only once and appends it to its
"acked" file when its delivery is confirmed, so a killed producer loses at most records
that were never acknowledged.

Every 10 s the script prints the records acknowledged and consumed in that interval and
the server's resident memory (VmRSS); at the end it stops the clients, reads the whole
topic back, and prints how many acknowledged records are missing (must be 0), how many
values appear twice in the log (idempotent producers: must be 0), and whether the
group's committed offsets are within the log.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOPIC = "soak"
GROUP = "soak-readers"
PARTITIONS = 6


def free_port_block(count: int) -> int:
    """A first port with `count` free ports after it."""
    for _ in range(100):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base + count > 65000:
            continue
        try:
            socks = []
            for p in range(base, base + count):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", p))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError("no free ports")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


# -- the client processes (this file run with --role) ------------------------------------------

def run_producer(bootstrap: str, name: str, acked: Path, library: str) -> None:
    count = 0
    out = open(acked, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 - the process's lifetime
    if library == "confluent":
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": bootstrap, "acks": "all",
                             "enable.idempotence": True, "linger.ms": 5})

        def done(err, msg):
            if err is None:
                out.write(msg.value().decode() + "\n")

        while True:
            value = f"{name}-{count}"
            producer.produce(TOPIC, key=str(count % 97).encode(), value=value.encode(),
                             on_delivery=done)
            count += 1
            producer.poll(0)
            if count % 200 == 0:
                producer.flush(10)
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap.split(","), acks="all",
                             enable_idempotence=True, linger_ms=5)
    while True:
        value = f"{name}-{count}"
        future = producer.send(TOPIC, key=str(count % 97).encode(), value=value.encode())
        future.add_callback(lambda _md, v=value: out.write(v + "\n"))
        count += 1
        if count % 200 == 0:
            producer.flush(10)


def run_consumer(bootstrap: str, name: str, consumed: Path) -> None:
    from kafka import KafkaConsumer

    out = open(consumed, "a", buffering=1, encoding="utf-8")  # noqa: SIM115
    consumer = KafkaConsumer(TOPIC, bootstrap_servers=bootstrap.split(","), group_id=GROUP,
                             client_id=name, enable_auto_commit=False,
                             auto_offset_reset="earliest", session_timeout_ms=6_000,
                             heartbeat_interval_ms=1_000)
    while True:
        batch = consumer.poll(timeout_ms=500)
        n = sum(len(records) for records in batch.values())
        if n:
            out.write(f"{n}\n")
            consumer.commit()


# -- the soak --------------------------------------------------------------------------------

class Soak:
    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        self.args, self.work = args, work
        self.rng = random.Random(args.seed)
        self.port = free_port_block(3)
        self.bootstrap = ",".join(f"127.0.0.1:{self.port + i}" for i in range(3))
        self.clients: dict[str, subprocess.Popen] = {}
        self.generation = 0

    def start_server(self) -> subprocess.Popen:
        server = subprocess.Popen(
            [sys.executable, "-c", "from minikafka.cli import main; raise SystemExit(main())",
             "serve", "--brokers", "3", "--port", str(self.port), "--log-dir",
             str(self.work / "data")],
            stdout=open(self.work / "server.log", "ab"), stderr=subprocess.STDOUT)  # noqa: SIM115
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return server
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("minikafka serve did not start (see server.log)")

    def create_topic(self) -> None:
        from kafka.admin import KafkaAdminClient, NewTopic

        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap.split(","))
        admin.create_topics([NewTopic(TOPIC, PARTITIONS, 3,
                                      topic_configs={"min.insync.replicas": "2"})])
        admin.close()

    def spawn(self, role: str) -> None:
        self.generation += 1
        name = f"{role}-{self.generation}"
        library = "confluent" if role == "producer-c" else "kafka-python"
        target = self.work / ("acked" if role.startswith("producer") else "consumed") / f"{name}.txt"
        target.parent.mkdir(exist_ok=True)
        self.clients[role] = subprocess.Popen(
            [sys.executable, __file__, "--role", role.split("-")[0], "--bootstrap",
             self.bootstrap, "--name", name, "--out", str(target), "--library", library],
            stdout=subprocess.DEVNULL, stderr=open(self.work / "clients.log", "ab"))  # noqa: SIM115

    def kill_one(self) -> str:
        role = self.rng.choice(sorted(self.clients))
        self.clients[role].send_signal(signal.SIGKILL)
        self.clients[role].wait()
        self.spawn(role)
        return role

    def acked(self) -> list[str]:
        return [line for f in sorted((self.work / "acked").glob("*.txt"))
                for line in f.read_text().splitlines() if line]

    def consumed(self) -> int:
        return sum(int(line) for f in (self.work / "consumed").glob("*.txt")
                   for line in f.read_text().splitlines() if line.strip().isdigit())

    def read_back(self) -> tuple[list[str], dict[int, int], dict[int, int]]:
        from kafka import KafkaConsumer, TopicPartition
        from kafka.admin import KafkaAdminClient

        tps = [TopicPartition(TOPIC, p) for p in range(PARTITIONS)]
        reader = KafkaConsumer(bootstrap_servers=self.bootstrap.split(","),
                               enable_auto_commit=False)
        reader.assign(tps)
        reader.seek_to_beginning(*tps)
        ends = reader.end_offsets(tps)
        values = []
        deadline = time.time() + 300
        while any(reader.position(tp) < ends[tp] for tp in tps) and time.time() < deadline:
            for records in reader.poll(timeout_ms=1000).values():
                values += [r.value.decode() for r in records]
        reader.close()
        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap.split(","))
        committed = {tp.partition: om.offset
                     for tp, om in admin.list_group_offsets(GROUP)[GROUP].items()}
        admin.close()
        return values, {tp.partition: end for tp, end in ends.items()}, committed

    def run(self) -> int:
        args = self.args
        server = self.start_server()
        try:
            self.create_topic()
            for role in ("producer-k", "producer-c", "consumer-1", "consumer-2"):
                self.spawn(role)
            started = time.time()
            last_report, next_kill = started, started + args.kill_every
            acked_before = consumed_before = 0
            kills: dict[str, int] = {}
            print(f"{'time':>6} {'acked/s':>9} {'consumed/s':>11} {'server RSS MB':>14} kills")
            while time.time() - started < args.minutes * 60:
                time.sleep(0.2)
                now = time.time()
                if now >= next_kill:
                    role = self.kill_one()
                    kills[role] = kills.get(role, 0) + 1
                    next_kill = now + args.kill_every
                if now - last_report >= 10:
                    acked, consumed = len(self.acked()), self.consumed()
                    span = now - last_report
                    print(f"{now - started:6.0f} {(acked - acked_before) / span:9.0f} "
                          f"{(consumed - consumed_before) / span:11.0f} "
                          f"{rss_mb(server.pid):14.1f} {sum(kills.values())}", flush=True)
                    acked_before, consumed_before, last_report = acked, consumed, now
            for proc in self.clients.values():
                proc.send_signal(signal.SIGKILL)
                proc.wait()
            acked = self.acked()
            values, ends, committed = self.read_back()
            in_log = set(values)
            lost = [v for v in acked if v not in in_log]
            twice = len(values) - len(in_log)
            beyond = {p: o for p, o in committed.items() if o > ends[p]}
            print(json.dumps({
                "minutes": args.minutes, "kills": kills, "acked": len(acked),
                "in_log": len(values), "acked_lost": len(lost), "duplicates_in_log": twice,
                "committed_beyond_log_end": beyond, "server_rss_mb": round(rss_mb(server.pid), 1),
            }, indent=1))
            if lost:
                print("lost, e.g.:", lost[:10])
            return 1 if lost or twice or beyond else 0
        finally:
            for proc in self.clients.values():
                if proc.poll() is None:
                    proc.kill()
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--kill-every", type=float, default=3, help="seconds between kills")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work", help="keep the server's data and the clients' files here")
    # the client processes
    parser.add_argument("--role", choices=["producer", "consumer"], help=argparse.SUPPRESS)
    parser.add_argument("--bootstrap", help=argparse.SUPPRESS)
    parser.add_argument("--name", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--library", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "producer":
        run_producer(args.bootstrap, args.name, Path(args.out), args.library)
        return 0
    if args.role == "consumer":
        run_consumer(args.bootstrap, args.name, Path(args.out))
        return 0
    if args.work:
        work = Path(args.work)
        work.mkdir(parents=True, exist_ok=True)
        return Soak(args, work).run()
    with tempfile.TemporaryDirectory(prefix="soak-") as tmp:
        return Soak(args, Path(tmp)).run()


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
