"""ListOffsets (key 2): the offset for a timestamp, or for a special one.

-1 latest: the high watermark, or the last stable offset under read_committed;
-2 earliest and -4 earliest local: the log start offset; under tiered storage (core.tiered)
the earliest is the whole log's, remote segments included, and -4 the local log's;
-3 max timestamp (KIP-734): the record with the largest timestamp;
-5 latest tiered: the highest offset copied to remote storage (-1: none, or no tiered
storage); -6 earliest pending upload: offset -1.

A timestamp, or -3, is looked up in the whole log as Kafka's UnifiedLog.fetchOffsetByTimestamp
does, and the answer is then dropped (offset -1, timestamp -1, no error) when it lies at
or past what the isolation level may read (Kafka's ReplicaManager: offset >= the HW, or
the LSO for read_committed). So with a committed record at offset 0 and an open
transaction's later-stamped record at 1, max-timestamp answers offset 1 under
read_uncommitted and nothing under read_committed, never offset 0.

    >>> from minikafka.cluster import Cluster
    >>> cluster = Cluster(brokers=1)
    >>> _ = cluster.create_topic("t")
    >>> p = cluster.producer()
    >>> for ts in (100, 300, 200):
    ...     _ = p.send("t", b"v", timestamp_ms=ts).get()
    >>> [(r.offset, r.timestamp) for r in list_offsets_of(cluster, "t", 0, MAX_TIMESTAMP, 150)]
    [(1, 300), (1, 300)]
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import errors
from ..isolation import READ_UNCOMMITTED, IsolationLevel
from . import authz
from .leader import led_replica
from .port import epoch_at

if TYPE_CHECKING:
    from ..broker import Broker
    from ..controller import TopicMetadata
    from ..replica import Replica
    from .authz import Caller
    from .port import ClusterPort

LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED = -1, -2, -3, -4, -5


@dataclass(frozen=True)
class ListOffsetsPartition:
    topic: str
    partition: int
    timestamp: int  # a time in ms, or one of LATEST, EARLIEST, MAX_TIMESTAMP, ...
    current_leader_epoch: int = -1


@dataclass(frozen=True)
class ListOffsetsRequest:
    partitions: Sequence[ListOffsetsPartition]
    isolation_level: IsolationLevel = READ_UNCOMMITTED


@dataclass(frozen=True)
class ListOffsetsResult:
    topic: str
    partition: int
    error_code: int = errors.NONE
    timestamp: int = -1
    offset: int = -1
    leader_epoch: int = -1


def _max_timestamp(replica: Replica) -> tuple[int, int, int] | None:
    """(timestamp, offset, epoch) of the record with the largest timestamp in the log.

    Kafka's way: the first segment holding the largest timestamp, its first batch whose
    max timestamp is that one, that batch's first record carrying it (control batches,
    such as transaction markers, count like any other)."""
    segments = replica.log.segments
    best = max(segments, key=lambda s: s.max_timestamp)  # the first of equals, as maxBy
    target = best.max_timestamp
    if target < 0:
        return None
    for batch in best.batches:
        if batch.max_timestamp == target:
            for record in batch.iter_records():
                if record.timestamp == target:
                    return target, record.offset, batch.partition_leader_epoch
    return None


def _for_timestamp(replica: Replica, timestamp: int) -> tuple[int, int, int] | None:
    found = replica.log.offset_for_timestamp(timestamp)
    if found is None:
        return None
    offset, ts = found
    return ts, offset, epoch_at(replica, offset)


def lookup(replica: Replica, timestamp: int, isolation: IsolationLevel) -> tuple[int, int, int]:
    """(timestamp, offset, leader epoch) that ListOffsets answers for one led partition."""
    fetchable = replica.last_stable_offset if isolation == IsolationLevel.READ_COMMITTED \
        else replica.high_watermark
    if timestamp == LATEST:
        return -1, fetchable, replica.leader_epoch
    tier = replica.tier
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        start = tier.log_start_offset if tier is not None and timestamp == EARLIEST \
            else replica.log_start_offset
        return -1, start, epoch_at(replica, start)
    if timestamp == MAX_TIMESTAMP:
        found = _max_timestamp(replica)
    elif timestamp == LATEST_TIERED and tier is not None:
        highest = tier.highest_offset_in_remote
        return -1, highest, epoch_at(replica, highest) if highest >= 0 else -1
    elif timestamp < 0:  # latest tiered without tiered storage, earliest pending upload
        return -1, -1, -1
    else:
        found = _for_timestamp(replica, timestamp)
    if found is None or found[1] >= fetchable:
        return -1, -1, -1
    return found


def list_offsets(broker: Broker, topics: Mapping[str, TopicMetadata],
                 request: ListOffsetsRequest) -> list[ListOffsetsResult]:
    """ListOffsets as `broker` answers it: one result per asked partition, in order."""
    out = []
    for wanted in request.partitions:
        code, replica = led_replica(broker, topics, wanted.topic, wanted.partition,
                                    wanted.current_leader_epoch)
        if replica is None:
            out.append(ListOffsetsResult(wanted.topic, wanted.partition, code))
            continue
        ts, offset, epoch = lookup(replica, wanted.timestamp, request.isolation_level)
        out.append(ListOffsetsResult(wanted.topic, wanted.partition, errors.NONE, ts, offset,
                                     epoch))
    return out


def list_offsets_of(cluster: ClusterPort, topic: str, partition: int, *timestamps: int,
                    isolation_level: IsolationLevel = READ_UNCOMMITTED,
                    caller: Caller | None = None) -> list[ListOffsetsResult]:
    """ListOffsets sent to the partition's current leader, as a client sends it: one result
    per timestamp; LEADER_NOT_AVAILABLE when the partition has no running leader and
    UNKNOWN_TOPIC_OR_PARTITION when the cluster does not have it. A client's `caller`
    needs DESCRIBE on the topic (TOPIC_AUTHORIZATION_FAILED), as the wire handler asks."""
    refused = authz.describe_topics(cluster, caller, [topic]) if caller is not None else {}
    if refused:
        return [ListOffsetsResult(topic, partition, refused[topic]) for _ in timestamps]
    meta = cluster.controller.topics.get(topic)
    if meta is None or not 0 <= partition < len(meta.partitions):
        return [ListOffsetsResult(topic, partition, errors.UNKNOWN_TOPIC_OR_PARTITION)
                for _ in timestamps]
    broker = cluster.brokers.get(meta.partitions[partition].leader)
    if broker is None or not broker.running:
        return [ListOffsetsResult(topic, partition, errors.LEADER_NOT_AVAILABLE)
                for _ in timestamps]
    request = ListOffsetsRequest([ListOffsetsPartition(topic, partition, ts)
                                  for ts in timestamps], isolation_level)
    return list_offsets(broker, cluster.controller.topics, request)
