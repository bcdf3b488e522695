"""DescribeProducers (key 61, kafka-transactions.sh describe-producers): the idempotent
and transactional producers a partition's leader remembers, with each one's epoch, last
sequence, the max timestamp of its last batch (what `kafka-transactions.sh find-hanging`
ages a transaction by) and the first offset of its open transaction (-1 when none).
minikafka keeps no coordinator epoch: it reads -1."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import errors

if TYPE_CHECKING:
    from .port import ClusterPort


@dataclass(frozen=True)
class ActiveProducer:
    producer_id: int
    producer_epoch: int
    last_sequence: int
    current_txn_start_offset: int = -1
    last_timestamp: int = -1
    coordinator_epoch: int = -1


@dataclass(frozen=True)
class PartitionProducers:
    topic: str
    partition: int
    error_code: int = errors.NONE
    producers: tuple[ActiveProducer, ...] = ()


def describe_producers(cluster: ClusterPort, broker_id: int,
                       partitions: Sequence[tuple[str, int]]) -> list[PartitionProducers]:
    """What ``broker_id`` knows of each partition's producers, in order: NOT_LEADER_OR_
    FOLLOWER unless it leads the partition, UNKNOWN_TOPIC_OR_PARTITION when it holds no
    replica of it."""
    broker = cluster.brokers[broker_id]
    out = []
    for topic, p in partitions:
        replica = broker.replicas.get((topic, p))
        if replica is None or not replica.is_leader:
            code = errors.NOT_LEADER_OR_FOLLOWER if replica is not None \
                else errors.UNKNOWN_TOPIC_OR_PARTITION
            out.append(PartitionProducers(topic, p, code))
            continue
        state = replica.producers
        out.append(PartitionProducers(topic, p, producers=tuple(
            ActiveProducer(pid, entry.epoch, entry.last_seq, state.ongoing.get(pid, -1),
                           entry.last_timestamp)
            for pid, entry in sorted(state.producers.items()))))
    return out
