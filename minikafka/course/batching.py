"""Lesson 7's experiment: one producer's batching and compression, measured on the
simulated clock."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from minikafka.course.tables import Table
from minikafka.course.trucks import truck_reports


def producer_run(linger_ms: int = 5, batch_size: int = 16_384, compression: str | None = None,
                 records: int = 300, every_ms: int = 1, seed: int = 7) -> dict[str, Any]:
    """One producer on a fresh 3-broker cluster sends ``records`` truck reports (JSON,
    keyed by truck, 10 trucks, 3 partitions), one every ``every_ms`` simulated ms, and
    reports how they travelled: batches (produce requests' worth of records), records
    per batch, average and worst latency from send() to acknowledgement, and the bytes
    the log stores (compressed batches are stored as they arrived)."""
    from minikafka.cluster import Cluster
    from minikafka.core.clock import EPOCH_MS

    cluster = Cluster(brokers=3, seed=seed)
    cluster.create_topic("trucks_gps", partitions=3, replication_factor=3)
    producer = cluster.producer(linger_ms=linger_ms, batch_size=batch_size,
                                compression_type=compression)
    reports = truck_reports(trucks=10, reports=-(-records // 10), seed=seed)[:records]
    sent_at: list[int] = []
    futures = []
    for key, value in reports:
        sent_at.append(cluster.now_ms)
        futures.append(producer.send("trucks_gps", key=key, value=value))
        if every_ms:
            cluster.advance(every_ms)
    producer.flush()
    acked_at: dict[tuple[int, int], int] = {}
    for e in cluster.journal.of_kind("produce.acked"):
        for delta, *_ in e.fields["records"]:
            acked_at[(e.fields["partition"], e.fields["base_offset"] + delta)] = e.time_ms
    latencies = [acked_at[(f.get().partition, f.get().offset)] - t
                 for f, t in zip(futures, sent_at)]
    batches = [b for p in range(3) for b in cluster.leader_replica("trucks_gps", p).log.batches()]
    raw = sum(len(k) + len(v) for k, v in reports)
    stored = sum(b.size_bytes for b in batches)
    return {"linger.ms": linger_ms, "batch.size": batch_size,
            "compression": compression or "none", "records": len(reports),
            "batches": len(batches), "records per batch": round(len(reports) / len(batches), 1),
            "avg latency ms": round(sum(latencies) / len(latencies), 1),
            "max latency ms": max(latencies), "payload bytes": raw, "stored bytes": stored,
            "ratio": round(raw / stored, 2),
            "sim seconds": round((cluster.now_ms - EPOCH_MS) / 1000, 1)}


def producer_table(*, linger_ms: Sequence[int] = (5,), batch_size: Sequence[int] = (16_384,),
                   compression: Sequence[str | None] = (None,), records: int = 300,
                   every_ms: int = 1) -> Table:
    """producer_run() for every combination; one row each."""
    rows = [producer_run(lg, bs, comp, records, every_ms)
            for lg in linger_ms for bs in batch_size for comp in compression]
    return Table(rows, columns=["linger.ms", "batch.size", "compression", "batches",
                                "records per batch", "avg latency ms", "max latency ms",
                                "payload bytes", "stored bytes", "ratio"],
                 title=f"{records} JSON truck reports, one every {every_ms} ms")
