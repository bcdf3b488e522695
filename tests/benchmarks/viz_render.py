"""Redraw time of the pictures for a 6-broker, 50-partition cluster (budget: 100 ms).

    .venv/bin/python tests/benchmarks/viz_render.py [--runs 15]

Prints the median over --runs of:
- cluster view: build the Digraph from a snapshot and draw it to SVG with `dot`,
  through the long-running `dot` processes to_svg() keeps (what panels use), and
  with a fresh `dot` per drawing (what Digraph.pipe does), for comparison;
- panel action: one Panel action (stop or start a broker, advance 1 s): the redraw of
  every picture (cluster, partition log with all replicas, produce sequence, a
  two-consumer group over the 50 partitions), and the
  whole action from the click (the cluster's work, snapshot and log recording, redraw);
and each figure's ratio to the 100 ms budget (below 1.0 is within budget).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from minikafka.cluster import Cluster
from minikafka.viz import cluster_view, to_svg
from minikafka.viz.panels import Panel

BUDGET_MS = 100.0


def build_cluster() -> Cluster:
    racks = {b: "abc"[(b - 1) // 2] for b in range(1, 7)}
    cluster = Cluster(brokers=6, seed=11, racks=racks)
    cluster.create_topic("orders", partitions=50, replication_factor=3)
    producer = cluster.producer(acks="all")
    for i in range(500):
        producer.send("orders", key=f"key-{i}".encode(), value=b"x" * 50)
    producer.flush()
    cluster.settle()
    return cluster


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def report(label: str, ms: float) -> None:
    print(f"{label:<48} {ms:7.1f} ms   ratio to budget {ms / BUDGET_MS:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    cluster = build_cluster()
    snapshots = []
    for b in (2, 2, 4, 4):  # a few different states, so no drawing is a repeat
        if cluster.brokers[b].running:
            cluster.stop_broker(b)
        else:
            cluster.start_broker(b)
        cluster.advance(1_000)
        snapshots.append(cluster.snapshot())

    to_svg(cluster_view(snapshots[0]), cache=False)  # start the long-running dot
    for reuse, label in ((True, "cluster view, long-running dot"),
                         (False, "cluster view, fresh dot per drawing")):
        samples = []
        for i in range(args.runs):
            start = time.perf_counter()
            to_svg(cluster_view(snapshots[i % len(snapshots)]), cache=False, reuse=reuse)
            samples.append(time.perf_counter() - start)
        report(label, median_ms(samples))

    panel = Panel(cluster, "orders", 0, group_id="bench")
    panel.produce(5)
    panel.add_consumer()
    panel.add_consumer()
    actions = [lambda: panel.stop_broker(3), lambda: panel.advance(1_000),
               lambda: panel.start_broker(3), lambda: panel.advance(1_000)]
    drawing, whole = [], []
    for i in range(args.runs):
        start = time.perf_counter()
        actions[i % len(actions)]()
        whole.append(time.perf_counter() - start)
        drawing.append(panel.render_ms / 1000)
    report("panel action: redraw of all pictures", median_ms(drawing))
    report("panel action: click to redrawn, cluster work too", median_ms(whole))
    parts = cluster.partitions_for("orders")  # __consumer_offsets is not drawn
    print(f"(6 brokers, {parts} partitions x 3 replicas, {args.runs} runs, "
          f"{len(panel.history)} panel frames)")


if __name__ == "__main__":
    main()
