"""Lesson 20's scenario: one partition under tiered storage, sampled over time.

    samples = tiered_timeline(minutes=12, outage=(5, 8))

runs a seeded 3-broker cluster with `remote.log.storage.system.enable=true` and a topic
`trucks` with `remote.storage.enable=true`, segments rolling every minute (`segment.ms`),
two minutes on local disk (`local.retention.ms`) and ten in all (`retention.ms`); one
truck report every 10 s. Each sample (one a minute) is the partition's two tiers as the
leader's remote log manager left them (``core.tiered.TieredPartition.tiers()``), with the
copy lag and whether the remote store was up. During ``outage`` (minutes, from, to) the
remote store is down.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..cluster import Cluster
from ..core import errors
from ..core.api.fetch import FetchPartition, fetch_partition
from .trucks import truck_reports

__all__ = ["TOPIC", "TIERED_CONFIG", "TierSample", "fetch_error", "tiered_cluster",
           "tiered_timeline", "tier_rows"]

# Kafka's error names by code (core.errors holds one constant per error).
_ERROR_NAMES = {v: k for k, v in vars(errors).items() if k.isupper() and isinstance(v, int)}

TOPIC = "trucks"
TIERED_CONFIG = {"remote.storage.enable": "true", "segment.ms": "60000",
                 "local.retention.ms": "120000", "retention.ms": "600000"}


@dataclass(frozen=True)
class TierSample:
    """One partition's tiers at one moment (offsets; `highest_remote` -1: none yet)."""

    time_ms: int  # simulated ms since the scenario started
    store_up: bool
    log_start: int  # the whole log's: the earliest offset a consumer can read
    local_start: int  # the first offset on the leader's disk
    highest_remote: int  # the highest offset copied to the remote store
    log_end: int
    remote_segments: int
    local_segments: int
    lag_segments: int  # closed segments not yet remote


def tiered_cluster(seed: int = 20, config: dict[str, str] | None = None) -> Cluster:
    """A 3-broker cluster with tiered storage on, and the topic `trucks` (1 partition, RF 3)."""
    cluster = Cluster(brokers=3, seed=seed,
                      broker_config={"remote.log.storage.system.enable": True})
    cluster.create_topic(TOPIC, partitions=1, replication_factor=3,
                         config={**TIERED_CONFIG, **(config or {})})
    return cluster


def sample(cluster: Cluster, start_ms: int) -> TierSample:
    """The partition's tiers now (before the first pass: all local, nothing remote)."""
    rlm = cluster.remote_log_manager
    part = rlm.partition(TOPIC, 0)
    log = cluster.leader_replica(TOPIC, 0).log
    if part is None:
        closed = len(log.segments) - 1
        return TierSample(cluster.now_ms - start_ms, rlm.store.available, log.log_start_offset,
                          log.log_start_offset, -1, log.log_end_offset, 0,
                          sum(1 for s in log.segments if s.batches), closed)
    tiers: dict[str, Any] = part.tiers()
    return TierSample(cluster.now_ms - start_ms, rlm.store.available,
                      tiers["log_start_offset"], tiers["local_log_start_offset"],
                      tiers["highest_offset_in_remote"], tiers["log_end_offset"],
                      len(tiers["remote"]), len(tiers["local"]), part.copy_lag()[0])


def tiered_timeline(cluster: Cluster | None = None, *, minutes: int = 12,
                    outage: tuple[int, int] | None = None,
                    every_ms: int = 10_000) -> list[TierSample]:
    """Produce a truck report every `every_ms` for `minutes`, sampling once a minute;
    the remote store is down from minute outage[0] to outage[1]."""
    cluster = cluster or tiered_cluster()
    producer = cluster.producer(linger_ms=0)
    reports = truck_reports(trucks=1, reports=minutes * 60_000 // every_ms, every_ms=every_ms)
    start = cluster.now_ms
    samples = []
    for i, report in enumerate(reports):
        minute = i * every_ms // 60_000
        cluster.remote_log_manager.store.available = not (
            outage is not None and outage[0] <= minute < outage[1])
        key, value = report
        producer.send(TOPIC, key=key, value=value).get()
        cluster.advance(every_ms)
        if (i + 1) * every_ms % 60_000 == 0:
            samples.append(sample(cluster, start))
    return samples


def tier_rows(samples: list[TierSample]) -> list[dict[str, object]]:
    """The samples as table rows."""
    return [{"minute": s.time_ms // 60_000, "remote store": "up" if s.store_up else "DOWN",
             "log start": s.log_start, "local log start": s.local_start,
             "highest remote": s.highest_remote, "log end": s.log_end,
             "remote segments": s.remote_segments, "local segments": s.local_segments,
             "copy lag (segments)": s.lag_segments} for s in samples]


def fetch_error(cluster: Cluster, offset: int) -> str:
    """The error name a consumer's fetch of `trucks-0` at `offset` gets from the leader."""
    leader = cluster.leader_replica(TOPIC, 0)
    code = fetch_partition(leader, FetchPartition(TOPIC, 0, offset)).error_code
    return _ERROR_NAMES.get(code, str(code))
