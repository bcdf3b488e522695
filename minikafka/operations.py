"""Operating a cluster, in process: what Kafka's operator tools print, read from a
minikafka cluster, and the measurements lesson 14 makes around a rolling restart.

- ``steady_traffic`` / ``availability``: an acks=all producer sending on the simulated
  clock, and what it suffered (refused writes, the longest pause between
  acknowledgements, failures) with the history checker's verdict on lost writes.
- ``metadata_quorum_status`` / ``metadata_quorum_replication``: ``kafka-metadata-quorum
  describe --status`` and ``--replication``, from DescribeQuorum's answer
  (minikafka.core.api.describe_quorum).
- ``features_describe``: ``kafka-features describe``, from the finalized feature levels.
- ``reassignment_plan`` / ``reassignment_states``: the JSON ``kafka-reassign-partitions``
  takes, and the states a partition really passes through while the controller moves it
  (KIP-455: replicas, adding, removing), read on the simulated clock.

The wire versions (DescribeQuorum, DescribeFeatures, AlterPartitionReassignments) and
the move of replicas itself belong in minikafka.core; these read the same state.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .chaos import read_partitions
from .core.api import describe_quorum
from .core.checkers import acknowledged_writes, check

if TYPE_CHECKING:
    from .cluster import Cluster


@dataclass
class Traffic:
    """Sends scheduled on the simulated clock: one record every `every_ms`."""

    topic: str
    futures: list[Any] = field(default_factory=list)
    values: list[bytes] = field(default_factory=list)
    journal_mark: int = 0


def steady_traffic(cluster: Cluster, topic: str, *, every_ms: int = 100, count: int = 1_500,
                   producer: Any = None) -> Traffic:
    """An acks=all producer writing `count` distinct records, one every `every_ms`, as
    the clock runs (the sends happen while the caller advances the cluster)."""
    producer = producer or cluster.producer(linger_ms=0)
    traffic = Traffic(topic, journal_mark=cluster.journal.next_seq)

    def send(i: int) -> None:
        value = b"payment-%d" % i
        traffic.values.append(value)
        traffic.futures.append(producer.send(topic, key=b"account-%d" % (i % 9), value=value))

    for i in range(count):
        cluster.clock.call_later(every_ms * (i + 1), send, i)
    return traffic


def availability(cluster: Cluster, traffic: Traffic) -> dict[str, Any]:
    """What the traffic went through since it started: writes the leaders refused
    (NOT_ENOUGH_REPLICAS, retried by the producer), the longest time without any
    acknowledgement, sends that failed for good, and acknowledged writes lost."""
    events = cluster.journal.since(traffic.journal_mark)
    refused = [e for e in events if e.kind == "produce.rejected" and e.fields["topic"] == traffic.topic
               and e.fields.get("error") == "NOT_ENOUGH_REPLICAS"]
    acked = [e.time_ms for e in events if e.kind == "produce.acked"
             and e.fields["topic"] == traffic.topic]
    pauses = [b - a for a, b in zip(acked, acked[1:])]
    verdict = check(acknowledged_writes(events), read_partitions(cluster, traffic.topic), {})
    return {"sent": len(traffic.futures),
            "acknowledged": sum(1 for f in traffic.futures if f.is_done and f.succeeded()),
            "failed": sum(1 for f in traffic.futures if f.is_done and not f.succeeded()),
            "refused": len(refused),
            "longest pause ms": max(pauses, default=0),
            "lost": len(verdict.lost)}


# -- kafka-metadata-quorum ------------------------------------------------------------------

def metadata_quorum_status(cluster: Cluster) -> str:
    """``kafka-metadata-quorum describe --status``: the quorum's leader and epoch, the
    metadata log's high watermark, the followers' largest lag (in records and in ms since
    they were last caught up), the voters and the observers."""
    info = describe_quorum(cluster, cluster.cluster_id)
    followers = [r for r, status in info.replicas() if status == "Follower"]
    now = cluster.now_ms
    rows = [("ClusterId", cluster.cluster_id),
            ("LeaderId", info.leader_id),
            ("LeaderEpoch", info.leader_epoch),
            ("HighWatermark", info.high_watermark),
            ("MaxFollowerLag", max((info.lag(r) for r in followers), default=0)),
            ("MaxFollowerLagTimeMs", max((now - r.last_caught_up_timestamp if
                                          r.last_caught_up_timestamp >= 0 else now
                                          for r in followers), default=0)),
            ("CurrentVoters", json.dumps([{"id": r.replica_id} for r in info.voters])),
            ("CurrentObservers", json.dumps([{"id": r.replica_id} for r in info.observers]))]
    return "\n".join(f"{name + ':':<24}{value}" for name, value in rows)


def metadata_quorum_replication(cluster: Cluster) -> list[dict[str, Any]]:
    """``kafka-metadata-quorum describe --replication``: one row per voter and observer,
    its metadata log end offset and lag behind the leader (None: unknown to the leader),
    when it last fetched and was last caught up (-1: not from this leader), its status."""
    info = describe_quorum(cluster, cluster.cluster_id)
    rows = []
    for r, status in info.replicas():
        known = r.log_end_offset >= 0
        rows.append({"NodeId": r.replica_id,
                     "LogEndOffset": r.log_end_offset if known else None,
                     "Lag": info.lag(r) if known else None,
                     "LastFetchTimestamp": r.last_fetch_timestamp,
                     "LastCaughtUpTimestamp": r.last_caught_up_timestamp,
                     "Status": status})
    return rows


# -- kafka-features -------------------------------------------------------------------------

def features_describe(cluster: Cluster) -> str:
    """``kafka-features describe``: each feature minikafka models, the levels the
    brokers support and the level the cluster has finalized."""
    from .core.features import SUPPORTED_FEATURES
    from .core.kafka_configs import METADATA_RELEASES

    def shown(name: str, level: int) -> object:
        # metadata.version's levels by release name (33: 4.4-IV2), as FeatureCommand does
        return METADATA_RELEASES.get(level, level) if name == "metadata.version" else level

    lines = []
    for name in sorted(cluster.features):
        low, high = (shown(name, v) for v in SUPPORTED_FEATURES[name])
        level = shown(name, cluster.features[name])
        # Kafka 4.4's FeatureCommand pads the columns this way.
        lines.append(f"Feature: {name:<42}SupportedMinVersion: {low:<17}SupportedMaxVersion: "
                     f"{high:<17}FinalizedVersionLevel: {level:<17}Epoch: "
                     f"{len(cluster.controller.log)}")
    return "\n".join(lines)


# -- kafka-reassign-partitions --------------------------------------------------------------

def reassignment_plan(moves: dict[tuple[str, int], Sequence[int]]) -> str:
    """The --reassignment-json-file kafka-reassign-partitions --execute reads."""
    return json.dumps({"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": list(r), "log_dirs": ["any"] * len(r)}
        for (t, p), r in sorted(moves.items())]})


def reassignment_states(cluster: Cluster, topic: str, partition: int, *, every_ms: int = 500,
                        max_ms: int = 600_000) -> list[dict[str, Any]]:
    """Watch a move under way (started with AlterPartitionReassignments): the partition
    as ``kafka-topics --describe`` and ``kafka-reassign-partitions --list`` show it now
    and every `every_ms` of the simulated clock, until the move is no longer listed
    (KIP-455: replicas, adding, removing), with each replica's log end offset."""
    start, rows = cluster.now_ms, []
    while True:
        moving = cluster.list_partition_reassignments().get((topic, partition))
        part = cluster.describe_topic(topic).partitions[partition]
        replicas, adding, removing = moving or (list(part.replicas), [], [])
        rows.append({"ms": cluster.now_ms - start, "replicas": replicas, "adding": adding,
                     "removing": removing, "isr": sorted(part.isr), "leader": part.leader,
                     "log end offsets": {b: leo for b, (leo, _) in sorted(part.replica_offsets.items())}})
        if moving is None or cluster.now_ms - start >= max_ms:
            return rows
        cluster.advance(every_ms)


# -- controller nodes -----------------------------------------------------------------------

def stop_controller(cluster: Cluster, node: int) -> None:
    """Take a controller node (one of `controllers=[...]`) off the network, as a dead
    machine: the other voters notice when its fetches stop."""
    if node not in cluster.controller.quorum.voters or node in cluster.brokers:
        raise ValueError(f"{node} is not a controller-only node of this cluster")
    cluster.network.down.add(node)
    cluster.journal.record(cluster.now_ms, "controller.stopped", controller=node)
    cluster._topology_changed()


def start_controller(cluster: Cluster, node: int) -> None:
    if node not in cluster.controller.quorum.voters or node in cluster.brokers:
        raise ValueError(f"{node} is not a controller-only node of this cluster")
    cluster.network.down.discard(node)
    cluster.journal.record(cluster.now_ms, "controller.started", controller=node)
    cluster._topology_changed()
