"""Produce-and-consume throughput of the in-process cluster against mockafka-py.

200,000 keyed 100-byte records into a 3-partition topic (minikafka: replication
factor 3, acks=all, min.insync.replicas=2, so every record is hashed, batched,
replicated to two followers and committed), flushed, then consumed back by a group
consumer (joined, assigned, heartbeating). mockafka-py
(an in-memory fake of confluent-kafka) gets the same records with explicit partitions
in the same run. Runs alternate between the two; the figures are medians of CPU time
(time.process_time), which other work on a shared machine disturbs far less than wall time.
Each run starts after a full garbage collection, so neither library pays for freeing
the other's (or its own previous run's) objects inside its timed window.

    .venv/bin/python tests/benchmarks/core_throughput.py [--records N] [--runs K]

Where the time goes: --profile prints cProfile's top functions over one minikafka run
(deterministic, but it inflates small functions); a sampling profiler shows the same run
without that bias, e.g. (pip install py-spy into .venv first):

    .venv/bin/py-spy record -r 500 -f raw -o /tmp/core.txt -- \
        .venv/bin/python tests/benchmarks/core_throughput.py --runs 3
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import statistics
import time

N_KEYS = 10_000  # trucks: keys repeat, as real keyed traffic does


def payloads(n: int) -> tuple[list[bytes], list[bytes]]:
    keys = [b"truck-%05d" % (i % N_KEYS) for i in range(n)]
    values = [(b"%08d" % i) * 12 + b"gps:" for i in range(n)]  # 100 bytes each
    return keys, values


def run_minikafka(keys: list[bytes], values: list[bytes]) -> tuple[float, float]:
    from minikafka import Cluster

    cluster = Cluster(brokers=3, seed=1)
    cluster.create_topic("bench", partitions=3, replication_factor=3,
                         config={"min.insync.replicas": "2"})
    producer = cluster.producer(acks="all")
    send = producer.send
    gc.collect()
    t0 = time.process_time()
    for key, value in zip(keys, values, strict=True):
        send("bench", key=key, value=value)
    producer.flush()
    t1 = time.process_time()
    # A group member, as a lesson's consumer is: it joins, is assigned the three
    # partitions, heartbeats while it polls (mockafka-py's consumer subscribes too).
    consumer = cluster.consumer("bench", group_id="bench", auto_offset_reset="earliest")
    n = 0
    while n < len(keys):
        for records in consumer.poll(timeout_ms=1000).values():
            n += len(records)
    t2 = time.process_time()
    assert n == len(keys)
    return t1 - t0, t2 - t1


def run_mockafka(keys: list[bytes], values: list[bytes]) -> tuple[float, float]:
    from mockafka import FakeAdminClientImpl, FakeConsumer, FakeProducer
    from mockafka.admin_client import NewTopic
    from mockafka.kafka_store import KafkaStore

    KafkaStore(clean=True)
    FakeAdminClientImpl().create_topics([NewTopic(topic="bench", num_partitions=3)])
    producer = FakeProducer()
    produce = producer.produce
    gc.collect()
    t0 = time.process_time()
    for i, (key, value) in enumerate(zip(keys, values, strict=True)):
        produce("bench", key=key, value=value, partition=i % 3)
    producer.flush()
    t1 = time.process_time()
    consumer = FakeConsumer()
    consumer.subscribe(["bench"])
    n = 0
    while consumer.poll() is not None:
        n += 1
    t2 = time.process_time()
    assert n == len(keys)
    return t1 - t0, t2 - t1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--profile", action="store_true",
                        help="cProfile one minikafka run (after a warm-up run) and stop")
    args = parser.parse_args()
    keys, values = payloads(args.records)
    if args.profile:
        run_minikafka(keys, values)
        profiler = cProfile.Profile()
        profiler.runcall(run_minikafka, keys, values)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
        return
    results: dict[str, list[tuple[float, float]]] = {"minikafka": [], "mockafka-py": []}
    for _ in range(args.runs):
        results["minikafka"].append(run_minikafka(keys, values))
        results["mockafka-py"].append(run_mockafka(keys, values))
    n = args.records
    print(f"{n:,} records x 100 B, 3 partitions; median of {args.runs} runs")
    print(f"{'':14}{'produce/s':>12}{'consume/s':>12}{'total/s':>12}")
    rates = {}
    for name, runs in results.items():
        produce = statistics.median(n / p for p, _ in runs)
        consume = statistics.median(n / c for _, c in runs)
        total = statistics.median(n / (p + c) for p, c in runs)
        rates[name] = total
        print(f"{name:14}{produce:12,.0f}{consume:12,.0f}{total:12,.0f}")
    print(f"ratio minikafka / mockafka-py (produce+consume): "
          f"{rates['minikafka'] / rates['mockafka-py']:.2f}x (target >= 5x)")
    # The same records read by a consumer group of three (join, fetch, heartbeats).
    from consumer_group import consume, produce

    group = statistics.median(n / consume(produce(n), n)[0] for _ in range(args.runs))
    print(f"minikafka 3-consumer group consume/s: {group:,.0f} (wall time)")


if __name__ == "__main__":
    main()
