"""Consumer-group consumption rate: a 3-consumer group reads 200,000 records.

200,000 keyed 100-byte records are produced into a 3-partition topic (replication
factor 3), then three consumers in one group (Kafka 4.x defaults: range assignment,
auto-commit every 5 s of simulated time, heartbeats every 3 s) join, get a partition
each and read everything, polled round-robin from one thread. The timed part is from
creating the consumers to the last record, so it includes joining the group (the
simulated initial rebalance delay costs no wall time), fetching and heartbeats.
Prints the median of the runs.

    .venv/bin/python tests/benchmarks/consumer_group.py [--records N] [--runs K]
"""

from __future__ import annotations

import argparse
import statistics
import time

N_KEYS = 10_000


def produce(records: int):
    from minikafka.cluster import Cluster

    cluster = Cluster(brokers=3, seed=1)
    cluster.create_topic("bench", partitions=3, replication_factor=3)
    producer = cluster.producer(acks="all")
    send = producer.send
    for i in range(records):
        send("bench", key=b"truck-%05d" % (i % N_KEYS), value=(b"%08d" % i) * 12 + b"gps:")
    producer.flush()
    return cluster


def consume(cluster, records: int) -> tuple[float, int]:
    """(seconds, simulated ms) for the group to read every record once."""
    consumers = [cluster.consumer("bench", group_id="bench-group", client_id=f"c{i}",
                                  auto_offset_reset="earliest") for i in range(3)]
    start_ms = cluster.now_ms
    t0 = time.perf_counter()
    seen = 0
    while seen < records:
        for c in consumers:
            for batch in c.poll(timeout_ms=100).values():
                seen += len(batch)
    elapsed = time.perf_counter() - t0
    assert seen == records, seen
    assert all(len(c.assignment()) == 1 for c in consumers)
    sim_ms = cluster.now_ms - start_ms
    for c in consumers:
        c.close()
    return elapsed, sim_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    times, sims = [], []
    for _ in range(args.runs):
        cluster = produce(args.records)
        elapsed, sim_ms = consume(cluster, args.records)
        times.append(elapsed)
        sims.append(sim_ms)
    median = statistics.median(times)
    print(f"3-consumer group, {args.records:,} records, median of {args.runs} runs:")
    print(f"  {median:.3f} s wall, {args.records / median:,.0f} records/s "
          f"(runs: {', '.join(f'{t:.3f}' for t in times)})")
    print(f"  simulated time {statistics.median(sims) / 1000:.1f} s, of which about 6 s is the "
          "join (group.initial.rebalance.delay.ms, extended while members arrive)")


if __name__ == "__main__":
    main()
