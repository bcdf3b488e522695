"""Memory a served cluster keeps per stored batch, measured with one-record batches.

A 3-broker cluster (6 partitions, RF 3, the journal bounded as `minikafka serve` bounds it)
is served on loopback; confluent-kafka produces 100-byte records with acks=all, one record
per batch. tracemalloc counts the Python memory the server holds after a warm-up and
after the run (both after a full collection), so the figure is what each batch leaves
behind: its bytes on three replicas, the log and journal entries, and anything a request
keeps alive. confluent-kafka's own memory is C memory, which tracemalloc does not see.

The figure is split into the batch's own bytes, the windows that stop growing once full
(the journal's newest 100,000 events, the last 10 s of request metrics, request timeouts
waiting for their time; a run of 3,000 batches is inside all three, so they grow here as
they would not in a long-running server), and everything else: what each stored batch
keeps for as long as it is stored. The journal's share is the difference between the run
and a second one whose journal keeps a single event.

    .venv/bin/python tests/benchmarks/batch_memory.py [--batches N] [--top K]
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc

from confluent_kafka import Producer

from minikafka.cli import DEFAULT_JOURNAL_EVENTS
from minikafka.cluster import Cluster

# Windows that stop growing once full: memory while a run fills them, none per batch after.
TIME_WINDOWS = {
    "core/request_metrics.py": "request metrics' window (the last 10 s of requests)",
    "core/clock.py": "timers (request timeouts, cancelled when answered, leave at their time)",
}


def measure(batches: int, journal_events: int) -> tuple[int, float, dict[str, int], list]:
    """(bytes grown, bytes of one stored batch, bytes per time window, stats by line)
    over `batches` one-record batches."""
    cluster = Cluster(brokers=3, seed=1, journal_max_events=journal_events)
    cluster.create_topic("memory", partitions=6, replication_factor=3)
    with cluster.serve(port=0) as server:
        producer = Producer({"bootstrap.servers": server.bootstrap_servers, "acks": "all",
                             "linger.ms": 0, "batch.num.messages": 1, "log_level": 3})

        def produce(n: int) -> None:
            for i in range(n):
                producer.produce("memory", key=b"key-%d" % i, value=b"v" * 100)
                producer.poll(0)
                if i % 20 == 0:  # a few batches in flight, each of one record
                    producer.flush()
            producer.flush()

        produce(200)  # connections, metadata, producer ids
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.take_snapshot()
        produce(batches)
        gc.collect()
        after = tracemalloc.take_snapshot()
        tracemalloc.stop()
        # The batches' own bytes: one bytes object per batch, which its replicas share.
        stored = {id(b): b.raw for broker in cluster.brokers.values()
                  for (topic, _), r in broker.replicas.items() if topic == "memory"
                  for b in r.log.batches()}
        own = sum(sys.getsizeof(raw) for raw in stored.values()) / len(stored)
    lines = after.compare_to(before, "lineno")
    windows = dict.fromkeys(TIME_WINDOWS.values(), 0)
    for stat in lines:
        filename = stat.traceback[0].filename.replace("\\", "/")
        for path, window in TIME_WINDOWS.items():
            if filename.endswith(path):
                windows[window] += stat.size_diff
    return sum(stat.size_diff for stat in lines), own, windows, lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=3_000)
    parser.add_argument("--top", type=int, default=8, help="source lines to list")
    args = parser.parse_args()
    n = args.batches
    start = time.monotonic()
    total, own, windows, lines = measure(n, DEFAULT_JOURNAL_EVENTS)
    # The same run with a journal of one event: the difference is the journal's window.
    bare, _, bare_windows, _ = measure(n, 1)
    print(f"{n:,} one-record batches of 100 B, twice, in {time.monotonic() - start:.1f} s: "
          f"{total / n:,.0f} bytes of Python memory per batch (three replicas)")
    print(f"  {own:7,.0f} B  the batch's bytes (one copy, its replicas share it)")
    print(f"  {(total - bare) / n:7,.0f} B  the journal's window (minikafka serve keeps "
          f"its newest {DEFAULT_JOURNAL_EVENTS:,} events): the run with it against one "
          f"without")
    for window, size in bare_windows.items():
        print(f"  {size / n:7,.0f} B  {window}")
    kept = bare / n - own - sum(bare_windows.values()) / n
    print(f"  {kept:7,.0f} B  everything else: what each stored batch keeps (target <= 300)")
    print("by line, with the journal:")
    for stat in lines[:args.top]:
        print(f"  {stat.size_diff / n:7,.0f} B  {stat.traceback[0]}")


if __name__ == "__main__":
    main()
