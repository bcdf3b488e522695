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
keeps for as long as it is stored. The journal's share counts what is allocated inside
Journal.record; the ints and objects its fields point to count as everything else.

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
WINDOWS = {
    "core/journal.py": "the journal's window (minikafka serve keeps its newest 100,000 events)",
    "core/metrics.py": "request metrics' window (the last 10 s of requests)",
    "core/clock.py": "timers (request timeouts, cancelled when answered, leave at their time)",
}
FRAMES = 12  # deep enough to reach journal.record from every caller


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=3_000)
    parser.add_argument("--top", type=int, default=8, help="source lines to list")
    args = parser.parse_args()
    cluster = Cluster(brokers=3, seed=1, journal_max_events=DEFAULT_JOURNAL_EVENTS)
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
        tracemalloc.start(FRAMES)
        before = tracemalloc.take_snapshot()
        start = time.monotonic()
        produce(args.batches)
        gc.collect()
        after = tracemalloc.take_snapshot()
        tracemalloc.stop()
        # The batches' own bytes: one bytes object per batch, which its replicas share.
        stored = {id(b): b.raw for broker in cluster.brokers.values()
                  for (topic, _), r in broker.replicas.items() if topic == "memory"
                  for b in r.log.batches()}
        own = sum(sys.getsizeof(raw) for raw in stored.values()) / len(stored)
    n = args.batches
    windows = dict.fromkeys(WINDOWS.values(), 0)
    for stat in after.compare_to(before, "traceback"):
        # The journal's by any frame (an event's tuple is built inside record()), the
        # others by the line that allocated.
        files = [frame.filename.replace("\\", "/") for frame in stat.traceback]
        for path, window in WINDOWS.items():
            if any(f.endswith(path) for f in (files if "journal" in path else files[-1:])):
                windows[window] += stat.size_diff
                break
    lines = after.compare_to(before, "lineno")
    total = sum(stat.size_diff for stat in lines)
    kept = total / n - own - sum(windows.values()) / n
    print(f"{n:,} one-record batches of 100 B in {time.monotonic() - start:.1f} s: "
          f"{total / n:,.0f} bytes of Python memory per batch (three replicas)")
    print(f"  {own:7,.0f} B  the batch's bytes (one copy, its replicas share it)")
    for window, size in windows.items():
        print(f"  {size / n:7,.0f} B  {window}")
    print(f"  {kept:7,.0f} B  everything else: what each stored batch keeps (target <= 300)")
    print("by line:")
    for stat in lines[:args.top]:
        print(f"  {stat.size_diff / n:7,.0f} B  {stat.traceback[0]}")


if __name__ == "__main__":
    main()
