"""DeleteRecords (key 21), kafka-delete-records.sh and KafkaAdminClient.delete_records:
move a partition's log start offset forward. Offset -1 means the high watermark;
beyond it is OFFSET_OUT_OF_RANGE; a topic without the delete cleanup policy answers
POLICY_VIOLATION. Records below the new start are no longer served, and retention
deletes the segments wholly below it on its next pass.

In Kafka the followers learn the new start from their fetches and the request waits
for them; here every replica of the partition moves at once.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import errors
from ..cleaner import policies
from .leader import led_replica

if TYPE_CHECKING:
    from ..broker import Broker
    from ..replica import Replica
    from .port import ClusterPort

HIGH_WATERMARK = -1


@dataclass(frozen=True)
class DeleteRecordsPartition:
    topic: str
    partition: int
    offset: int  # the new log start offset, or HIGH_WATERMARK


@dataclass(frozen=True)
class DeleteRecordsResult:
    topic: str
    partition: int
    error_code: int = errors.NONE
    low_watermark: int = -1


def _delete(cluster: ClusterPort, leader: Replica, wanted: DeleteRecordsPartition
            ) -> DeleteRecordsResult:
    tp = (wanted.topic, wanted.partition)
    if "delete" not in policies(leader.config):
        # Kafka: records of a compact-only topic stay.
        return DeleteRecordsResult(*tp, errors.POLICY_VIOLATION)
    hw = leader.high_watermark
    offset = hw if wanted.offset == HIGH_WATERMARK else wanted.offset
    if offset < 0 or offset > hw:
        return DeleteRecordsResult(*tp, errors.OFFSET_OUT_OF_RANGE)
    for broker in cluster.brokers.values():
        replica = broker.replicas.get(tp)
        if replica is None:
            continue
        if replica.log.maybe_increment_log_start_offset(min(offset, replica.log_end_offset)):
            start = replica.log_start_offset
            producers = replica.producers
            producers.ongoing = {p: max(o, start) for p, o in producers.ongoing.items()}
            producers.aborted = [a for a in producers.aborted if a.last_offset >= start]
    cluster.journal.record(cluster.now_ms, "records.deleted", topic=tp[0], partition=tp[1],
                           log_start_offset=leader.log_start_offset)
    return DeleteRecordsResult(*tp, errors.NONE, leader.log_start_offset)


def delete_records(cluster: ClusterPort, broker: Broker,
                   partitions: Sequence[DeleteRecordsPartition]) -> list[DeleteRecordsResult]:
    """DeleteRecords as `broker` answers it: only a partition's leader may."""
    out = []
    for wanted in partitions:
        code, replica = led_replica(broker, cluster.controller.topics, wanted.topic,
                                    wanted.partition)
        if replica is None:
            out.append(DeleteRecordsResult(wanted.topic, wanted.partition, code))
        else:
            out.append(_delete(cluster, replica, wanted))
    return out
