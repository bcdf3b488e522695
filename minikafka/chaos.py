"""Seeded fault schedules and the durability experiment of the course.

run_trial() builds a 3-broker cluster, produces while injecting random faults
(crashes, restarts, isolated brokers, stuck followers), heals everything, reads every
partition back and asks the history checker what was lost or duplicated. The same
seed gives the same schedule and the same verdict.

    >>> run_trial(seed=1, acks="all", min_insync_replicas=2).ok
    True
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

from .cluster import Cluster
from .core.checkers import CheckResult, acknowledged_writes, check

FAULTS = ("crash", "restart", "isolate", "heal", "pause_follower", "resume", "wait")


@dataclass(frozen=True)
class Step:
    records: int
    fault: str
    broker: int
    wait_ms: int


def schedule(seed: int, steps: int = 12, brokers: int = 3) -> list[Step]:
    """A random but reproducible fault schedule."""
    import random
    rng = random.Random(seed)
    return [Step(rng.randint(1, 6), rng.choice(FAULTS), rng.randint(1, brokers),
                 rng.choice((0, 1, 2, 3, 5, 50, 500, 10_000, 40_000))) for _ in range(steps)]


def read_partitions(cluster: Cluster, topic: str) -> dict[tuple[str, int], list]:
    """(offset, value) of every committed record, read from each partition's leader."""
    out = {}
    for p in range(cluster.partitions_for(topic)):
        replica = cluster.leader_replica(topic, p)
        recs = []
        if replica is not None:
            for batch in replica.log.read(replica.log_start_offset, replica.high_watermark, 1 << 62):
                if not batch.is_control:
                    recs.extend((r.offset, r.value) for r in batch.iter_records())
        out[(topic, p)] = recs
    return out


def run_trial(seed: int, acks: str | int = "all", min_insync_replicas: int = 2,
              unclean: bool = False, steps: int = 12, partitions: int = 2,
              idempotent: bool | None = None, lose_responses: bool = False) -> CheckResult:
    cluster = Cluster(brokers=3, seed=seed)
    cluster.create_topic("chaos", partitions=partitions, replication_factor=3, config={
        "min.insync.replicas": str(min_insync_replicas),
        "unclean.leader.election.enable": str(unclean).lower()})
    producer = cluster.producer(acks=acks, enable_idempotence=idempotent, linger_ms=0,
                                delivery_timeout_ms=30_000, request_timeout_ms=5_000)
    sent: dict[tuple[str, int], list[bytes]] = {}
    futures = []
    n = 0
    for step in schedule(seed, steps):
        for _ in range(step.records):
            value = b"v%d" % n
            n += 1
            futures.append(producer.send("chaos", value=value, key=b"k%d" % (n % 7)))
        if lose_responses:
            leader = cluster.describe_topic("chaos").partitions[0].leader
            if leader is not None:
                cluster.lose_produce_responses(leader, producer.client_id)
        _inject(cluster, step)
        cluster.advance(step.wait_ms)
    cluster.heal()
    for b in cluster.broker_ids:
        cluster.start_broker(b)
        cluster.resume_follower(b)
    cluster.advance(60_000)
    with contextlib.suppress(Exception):
        producer.flush(timeout=120)
    cluster.advance(60_000)
    for f in futures:
        if f.succeeded():
            md = f.value
            sent.setdefault((md.topic, md.partition), [])
    for f in futures:
        if f.is_done and f.succeeded():
            md = f.value
            rec = f._batch.records[f._index]
            sent.setdefault((md.topic, md.partition), []).append(rec[3])
    return check(acknowledged_writes(cluster.journal), read_partitions(cluster, "chaos"), sent)


def _inject(cluster: Cluster, step: Step) -> None:
    b = step.broker
    if step.fault == "crash":
        if len(cluster.live_brokers()) > 1:
            cluster.crash_broker(b)
    elif step.fault == "restart":
        cluster.start_broker(b)
    elif step.fault == "isolate":
        cluster.isolate(b)
    elif step.fault == "heal":
        cluster.heal()
    elif step.fault == "pause_follower":
        cluster.pause_follower(b)
    elif step.fault == "resume":
        cluster.resume_follower(b)


def sweep(seeds: range, **kwargs) -> Iterator[tuple[int, CheckResult]]:
    for seed in seeds:
        yield seed, run_trial(seed, **kwargs)
