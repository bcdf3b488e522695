"""Memory of `minikafka serve` as records pile up, with and without retention.

    .venv/bin/python tests/benchmarks/memory.py [--records 10000000] [--chunk 1000000] [--size 100]

minikafka keeps every retained record in memory (its log dir is the durable copy), so the
server's resident memory should follow the retained data: grow with the records while
retention keeps them, and level off once retention deletes old segments. Two runs of
`minikafka serve --brokers 3 --log-dir` (replication factor 3, 6 partitions):

- "kept": retention off (retention.ms=-1): memory per record should stay flat as the log
  grows (no per-record leak on top of the records themselves);
- "bounded": retention.bytes per partition and small segments, checked every second:
  memory should stop growing once the log reaches its bound.

kcat produces each chunk (acks=all); after each chunk the script waits for retention to
catch up, then prints the records produced, the records retained (sum of log end minus log
start offsets), the server's VmRSS, RSS per retained record and kcat's produce rate for the
chunk. The last line compares the two runs' final RSS.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from soak import free_port_block, rss_mb
from wire_throughput import kcat_env, librdkafka_dir

TOPIC = "memory"
PARTITIONS = 6


def start_server(work: Path, port: int, overrides: list[str]) -> subprocess.Popen:
    args = [sys.executable, "-c", "from minikafka.cli import main; raise SystemExit(main())",
            "serve", "--brokers", "3", "--port", str(port), "--log-dir", str(work / "data")]
    for o in overrides:
        args += ["--override", o]
    server = subprocess.Popen(args, stdout=open(work / "server.log", "ab"),  # noqa: SIM115
                              stderr=subprocess.STDOUT)
    from kafka.admin import KafkaAdminClient, NewTopic

    deadline = time.time() + 120
    while True:
        try:
            admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{port}")
            break
        except Exception:
            if time.time() > deadline or server.poll() is not None:
                raise SystemExit(f"serve did not start: see {work / 'server.log'}") from None
            time.sleep(0.5)
    admin.create_topics([NewTopic(TOPIC, PARTITIONS, 3)])
    admin.close()
    return server


def retained(bootstrap: str) -> int:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    tps = [TopicPartition(TOPIC, p) for p in range(PARTITIONS)]
    ends = consumer.end_offsets(tps)
    starts = consumer.beginning_offsets(tps)
    consumer.close()
    return sum(ends[tp] - starts[tp] for tp in tps)


def run(name: str, overrides: list[str], args: argparse.Namespace, work: Path,
        env: dict[str, str], data: Path) -> float:
    run_dir = work / name
    run_dir.mkdir()
    port = free_port_block(3)
    bootstrap = f"127.0.0.1:{port}"
    server = start_server(run_dir, port, overrides)
    print(f"\n{name}: {' '.join(overrides) or 'defaults'}")
    print(f"{'produced':>12} {'retained':>12} {'RSS MB':>8} {'B/retained':>11} {'records/s':>10}")
    try:
        produced = 0
        while produced < args.records:
            started = time.perf_counter()
            subprocess.run(["kcat", "-P", "-b", bootstrap, "-t", TOPIC, "-X", "acks=all",
                            "-l", str(data)], env=env, check=True, timeout=1800)
            rate = args.chunk / (time.perf_counter() - started)
            produced += args.chunk
            time.sleep(args.settle)  # a retention check and its segment deletions
            kept = retained(bootstrap)
            rss = rss_mb(server.pid)
            print(f"{produced:>12,} {kept:>12,} {rss:>8.0f} {rss * 2**20 / max(kept, 1):>11.0f} {rate:>10,.0f}",
                  flush=True)
        return rss
    finally:
        server.terminate()
        server.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000_000)
    parser.add_argument("--chunk", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=100, help="value bytes per record")
    parser.add_argument("--bound-mb", type=int, default=64,
                        help="retention.bytes per partition in the bounded run (MiB)")
    parser.add_argument("--settle", type=float, default=3.0,
                        help="seconds to wait after each chunk for retention")
    parser.add_argument("--only", choices=["kept", "bounded"], help="run one of the two")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="minikafka-memory-") as tmp:
        work = Path(tmp)
        env = kcat_env(librdkafka_dir(work))
        data = work / "chunk.txt"
        line = b"x" * (args.size - 1) + b"\n"
        data.write_bytes(line * args.chunk)
        bound = args.bound_mb * 2**20
        runs = {"kept": ["log.retention.ms=-1"],
                "bounded": [f"log.retention.bytes={bound}", f"log.segment.bytes={bound // 4}",
                            "log.retention.check.interval.ms=1000"]}
        if args.only:
            run(args.only, runs[args.only], args, work, env, data)
            return
        kept = run("kept", runs["kept"], args, work, env, data)
        bounded = run("bounded", runs["bounded"], args, work, env, data)
        print(f"\nfinal RSS: kept {kept:.0f} MB, bounded {bounded:.0f} MB "
              f"(ratio {bounded / kept:.2f}); {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
