"""The native Apache Kafka cluster's start-up, as `minikafka kafka up` and the tests start it:
the storage format of three nodes, the three nodes up until each answers Metadata, one node
stopped and started again (a fault scenario's restart), and the cluster stopped.

    .venv/bin/python tests/benchmarks/native_start.py [--rounds 3] [--port 12600]
    .venv/bin/python tests/benchmarks/native_start.py --against /path/to/other/checkout

Each round starts a fresh cluster in a temporary folder (Kafka's jars from this checkout's
cache). With --against, every round runs once with this checkout's `minikafka` and once with
the other's (imported from there, in a subprocess), alternating, and the ratio this/other
of each phase's medians is printed: below 1, this checkout is faster. The load average is
printed before and after: the machine is shared.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PHASES = ("format", "up", "restart", "down")


def one_round(port: int) -> dict[str, float]:
    """Seconds of each phase for one fresh cluster, with the minikafka on sys.path."""
    from minikafka.realkafka.jars import fetch_kafka
    from minikafka.realkafka.nodes import NODE_IDS, NativeKafka

    with tempfile.TemporaryDirectory(prefix="native-start-") as data:
        cluster = NativeKafka(data, port=port)
        libs = fetch_kafka()
        cluster._write_configs()
        prepare = getattr(cluster, "_archive", None)
        if prepare is not None:
            prepare(libs)  # made once, outside the timed phases
        seconds: dict[str, float] = {}
        started = time.monotonic()
        cluster._format(libs, NODE_IDS)
        seconds["format"] = time.monotonic() - started
        try:
            seconds["up"] = cluster.up()
            started = time.monotonic()
            cluster.stop(3)
            cluster.start(3)
            seconds["restart"] = time.monotonic() - started
        finally:
            started = time.monotonic()
            cluster.down()
            seconds["down"] = time.monotonic() - started
    return seconds


def run_in(checkout: Path, port: int) -> dict[str, float]:
    """One round in a subprocess importing `minikafka` from CHECKOUT."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "MINIKAFKA_CACHE": str(ROOT / ".cache")}
    done = subprocess.run([sys.executable, __file__, "--one", "--port", str(port)], env=env,
                          capture_output=True, text=True, timeout=900, cwd=checkout)
    if done.returncode != 0:
        raise SystemExit(f"a round in {checkout} failed:\n{done.stdout}\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--port", type=int, default=12600)
    parser.add_argument("--against", type=Path, help="another checkout, alternating")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_round(args.port)))
        return
    print(f"load average before: {os.getloadavg()}")
    checkouts = {"this": ROOT, **({"other": args.against.resolve()} if args.against else {})}
    rounds: dict[str, list[dict[str, float]]] = {name: [] for name in checkouts}
    for number in range(args.rounds):
        for name, checkout in checkouts.items():
            seconds = run_in(checkout, args.port)
            rounds[name].append(seconds)
            print(f"round {number + 1} {name}: "
                  + ", ".join(f"{p} {seconds[p]:.2f} s" for p in PHASES), flush=True)
    medians = {name: {p: statistics.median(r[p] for r in runs) for p in PHASES}
               for name, runs in rounds.items()}
    for name, values in medians.items():
        print(f"median {name}: " + ", ".join(f"{p} {values[p]:.2f} s" for p in PHASES))
    if args.against:
        print("this/other: " + ", ".join(
            f"{p} {medians['this'][p] / medians['other'][p]:.2f}" for p in PHASES))
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
