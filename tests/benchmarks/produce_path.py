"""The broker's own cost per Produce request: recorded client requests replayed through a
Session (decode, authorization, validation, append, journal, response), no sockets.

    .venv/bin/python tests/benchmarks/produce_path.py [--requests 2000] [--runs 5]
    .venv/bin/python tests/benchmarks/produce_path.py --against /path/to/other/checkout

kafka-python (non-idempotent and idempotent) and confluent-kafka each produce 100-byte
records to `minikafka serve` once; their Produce requests are kept as the bytes they sent
and replayed, the same bytes every run, into a fresh one-broker cluster. That leaves out
the clients and the event loop, whose time hides the broker's in the wire benchmarks: the
figure is microseconds of the broker's Python per request (one batch of about 125 records
for kafka-python, a few hundred for confluent-kafka), median of --runs.

With --against, the same requests are also replayed by another checkout's code (its
`minikafka` package imported from there, in a subprocess), alternating with this one, and
the ratio other/this of each pair is printed: above 1, this checkout is faster.
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOPIC = "bench"


def record(requests: int) -> dict[str, list[bytes]]:
    """Each client's Produce request frames, as the broker received them."""
    from confluent_kafka import Producer
    from kafka import KafkaProducer

    import minikafka.wire.registry as registry_module
    from minikafka.cluster import Cluster

    frames: list[bytes] = []
    decode = registry_module.decode_request

    def keep(frame, *args):
        if bytes(frame[:2]) == b"\x00\x00":  # api key 0: Produce
            frames.append(bytes(frame))
        return decode(frame, *args)

    registry_module.decode_request = keep
    recorded: dict[str, list[bytes]] = {}
    try:
        for name in ("kafka-python", "kafka-python idempotent", "confluent-kafka"):
            cluster = Cluster(brokers=1)
            cluster.create_topic(TOPIC, partitions=1, replication_factor=1)
            with cluster.serve(port=0) as server:
                frames.clear()
                value = b"v" * 100
                if name.startswith("kafka-python"):
                    producer = KafkaProducer(bootstrap_servers=server.bootstrap_servers,
                                             acks="all", linger_ms=5,
                                             enable_idempotence=name.endswith("idempotent"))
                    for _ in range(requests * 125):
                        producer.send(TOPIC, value=value, partition=0)
                        if len(frames) >= requests:
                            break
                    producer.flush()
                    producer.close()
                else:
                    producer = Producer({"bootstrap.servers": server.bootstrap_servers,
                                         "acks": "all", "linger.ms": 5, "log_level": 0})
                    while len(frames) < requests:
                        for _ in range(1000):
                            while True:
                                try:
                                    producer.produce(TOPIC, value=value, partition=0)
                                    break
                                except BufferError:
                                    producer.poll(0.01)
                        producer.poll(0)
                    producer.flush(30)
                recorded[name] = frames[:requests]
    finally:
        registry_module.decode_request = decode
    return recorded


def replay(frames: list[bytes]) -> float:
    """Seconds of this process's CPU to run every frame through one Session, in order."""
    from minikafka.cluster import Cluster
    from minikafka.wire.registry import Session, default_registry

    cluster = Cluster(brokers=1)
    cluster.create_topic(TOPIC, partitions=1, replication_factor=1)
    session = Session(default_registry(), broker_id=cluster.leader_replica(TOPIC, 0).broker_id,
                      cluster=cluster, lock=cluster.lock)
    clock = cluster.clock
    started = time.process_time()
    for frame in frames:
        session.receive_data(len(frame).to_bytes(4, "big") + frame)
        out = session.process(clock.now_ms)
        assert out.close is None, out.close
    return time.process_time() - started


def replay_all(path: str, runs: int) -> dict[str, list[float]]:
    with open(path, "rb") as f:
        recorded = pickle.load(f)
    return {name: [replay(frames) / len(frames) * 1e6 for _ in range(runs)]
            for name, frames in recorded.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--against", help="another checkout's root, replayed alternately")
    parser.add_argument("--replay", help=argparse.SUPPRESS)  # a recording, in a subprocess
    args = parser.parse_args()
    if args.replay:
        print(json.dumps(replay_all(args.replay, 1)))
        return 0

    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "frames.pickle")
        recorded = record(args.requests)
        with open(path, "wb") as f:
            pickle.dump(recorded, f)
        sides = {"this": str(ROOT)}
        if args.against:
            sides["other"] = str(Path(args.against).resolve())
        times: dict[str, dict[str, list[float]]] = {side: {} for side in sides}
        for run in range(args.runs):
            order = list(sides) if run % 2 == 0 else list(reversed(sides))
            for side in order:
                env = dict(os.environ, PYTHONPATH=sides[side])
                done = subprocess.run([sys.executable, __file__, "--replay", path],
                                      env=env, capture_output=True, text=True, cwd=tmp)
                if done.returncode != 0:
                    print(done.stderr, file=sys.stderr)
                    return 1
                for name, us in json.loads(done.stdout).items():
                    times[side].setdefault(name, []).extend(us)
    for name, frames in recorded.items():
        records = f"requests of {int(statistics.median(map(len, frames))):,} bytes"
        line = f"{name:26} {len(frames)} {records}: this {statistics.median(times['this'][name]):.1f} us"
        if args.against:
            pairs = [o / t for o, t in zip(times["other"][name], times["this"][name])]
            line += (f", other {statistics.median(times['other'][name]):.1f} us; "
                     f"other/this {statistics.median(pairs):.2f} "
                     f"({min(pairs):.2f}-{max(pairs):.2f})")
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
