"""Which offsets a batch or micro-batch reads: pure functions over offset maps.

They mirror Spark's Kafka source (KafkaMicroBatchStream, KafkaOffsetReader,
KafkaOffsetRangeCalculator): resolving startingOffsets/endingOffsets against the
partitions that exist, spreading maxOffsetsPerTrigger over partitions in proportion
to their backlog, turning two offset maps into one range per partition (new
partitions from their earliest offset; vanished or rewound partitions reported as
possible data loss), and splitting ranges for minPartitions.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass

from kafka.structs import TopicPartition

from .offsets import EARLIEST, LATEST, PartitionOffsets

__all__ = ["DataLossError", "OffsetRange", "plan_ranges", "rate_limit", "resolve_offsets",
           "split_ranges"]

LONG_MAX = 2**63 - 1

DATA_LOSS_HINT = (
    "Some data may have been lost because they are not available in Kafka any more; either "
    "the data was aged out by Kafka or the topic may have been deleted before all the data "
    "in the topic was processed. If you don't want your streaming query to fail on such "
    "cases, set the source option \"failOnDataLoss\" to \"false\".")


class DataLossError(RuntimeError):
    """Offsets a query planned to read are gone (failOnDataLoss=true)."""


# reportDataLoss(message): raises when failOnDataLoss, logs a warning otherwise.
ReportDataLoss = Callable[[str], None]


@dataclass(frozen=True, order=True)
class OffsetRange:
    """Offsets [from_offset, until_offset) of one partition: one Spark task."""

    topic: str
    partition: int
    from_offset: int
    until_offset: int

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)

    @property
    def size(self) -> int:
        return self.until_offset - self.from_offset


def resolve_offsets(spec: str | Mapping[TopicPartition, int], partitions: Collection[TopicPartition],
                    earliest: Mapping[TopicPartition, int], latest: Mapping[TopicPartition, int],
                    *, option: str) -> PartitionOffsets:
    """startingOffsets/endingOffsets ("earliest", "latest" or {tp: offset|-2|-1}) as offsets.

    As in Spark, a JSON spec must name exactly the partitions the subscription has."""
    if spec == "earliest":
        return {tp: earliest[tp] for tp in partitions}
    if spec == "latest":
        return {tp: latest[tp] for tp in partitions}
    assert isinstance(spec, Mapping)
    if set(spec) != set(partitions):
        raise ValueError(
            f"If {option} contains specific offsets, you must specify all TopicPartitions.\n"
            f"Use -1 for latest, -2 for earliest.\n"
            f"Specified: {_names(spec)} Assigned: {_names(partitions)}")
    out: PartitionOffsets = {}
    for tp, offset in spec.items():
        if offset == EARLIEST:
            out[tp] = earliest[tp]
        elif offset == LATEST:
            out[tp] = latest[tp]
        else:
            out[tp] = offset
    return out


def rate_limit(limit: int, start: Mapping[TopicPartition, int],
               latest: Mapping[TopicPartition, int],
               earliest_of_new: Mapping[TopicPartition, int]) -> PartitionOffsets:
    """End offsets that read at most about `limit` records, shared out by backlog size.

    Spark's KafkaMicroBatchStream.rateLimit: each partition gets limit * size / total,
    rounded down, except that a share below 1 rounds up so small partitions are not
    starved; so the total can exceed `limit` by at most the number of partitions."""
    sizes: dict[TopicPartition, int] = {}
    for tp, end in latest.items():
        begin = start.get(tp, earliest_of_new.get(tp))
        if begin is not None and end - begin > 0:
            sizes[tp] = end - begin
    total = float(sum(sizes.values()))
    if total < 1:
        return dict(latest)
    out: PartitionOffsets = {}
    for tp, end in latest.items():
        if tp not in sizes:
            out[tp] = end
            continue
        begin = start.get(tp, earliest_of_new.get(tp))
        assert begin is not None
        prorate = limit * (sizes[tp] / total)
        share = math.ceil(prorate) if prorate < 1 else math.floor(prorate)
        offset = LONG_MAX if share > LONG_MAX - begin else begin + share
        out[tp] = min(end, offset)
    return out


def plan_ranges(start: Mapping[TopicPartition, int], end: Mapping[TopicPartition, int],
                earliest_of_new: Mapping[TopicPartition, int],
                report_data_loss: ReportDataLoss) -> list[OffsetRange]:
    """One range per partition of `end` that has records to read, in partition order.

    Partitions missing from `start` are new: they are read from their earliest offset,
    which should be 0 (anything else means records were deleted before we saw them).
    Partitions in `start` but not in `end` were deleted; a partition whose end is
    before its start was truncated or recreated. Both are reported as data loss."""
    ranges = []
    for tp in sorted(set(start) - set(end)):
        report_data_loss(f"{tp.topic}-{tp.partition} is gone. {DATA_LOSS_HINT}")
    for tp in sorted(end):
        until = end[tp]
        if tp in start:
            begin = start[tp]
        else:
            if tp not in earliest_of_new:
                report_data_loss(f"Cannot find earliest offsets of {tp.topic}-{tp.partition}. "
                                 f"{DATA_LOSS_HINT}")
                continue
            begin = earliest_of_new[tp]
            if begin != 0:
                report_data_loss(f"Added partition {tp.topic}-{tp.partition} starts from "
                                 f"{begin} instead of 0. {DATA_LOSS_HINT}")
        if until < begin:
            report_data_loss(f"Partition {tp.topic}-{tp.partition}'s offset was changed from "
                             f"{begin} to {until}, some data may have been missed. "
                             f"{DATA_LOSS_HINT}")
            continue
        if until > begin:
            ranges.append(OffsetRange(tp.topic, tp.partition, begin, until))
    return ranges


def split_ranges(ranges: Iterable[OffsetRange], min_partitions: int | None) -> list[OffsetRange]:
    """Spark's KafkaOffsetRangeCalculator: with minPartitions above the number of
    ranges, cut each range into parts in proportion to its share of all offsets."""
    ranges = [r for r in ranges if r.size > 0]
    if not min_partitions or len(ranges) >= min_partitions:
        return ranges
    total = sum(r.size for r in ranges)
    out = []
    for r in ranges:
        parts = max(round(r.size / total * min_partitions), 1)
        remaining = r.size
        begin = r.from_offset
        for part in range(parts):
            this = remaining // (parts - part)  # the last part takes the round-off
            remaining -= this
            until = min(begin + this, r.until_offset)
            if until > begin:
                out.append(OffsetRange(r.topic, r.partition, begin, until))
            begin = until
    return out


def _names(tps: Iterable[TopicPartition]) -> str:
    return "[" + ", ".join(f"{tp.topic}-{tp.partition}" for tp in sorted(tps)) + "]"
