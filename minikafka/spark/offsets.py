"""Partition offsets and their JSON form, the one Spark's Kafka source writes to checkpoints:

    {"trucks": {"0": 1200, "1": 1187, "2": 1213}}

JSON object keys are strings, so partition numbers come back from a checkpoint as "0",
"1", ...; everything here turns them into ints on the way in and strings on the way out.
In startingOffsets/endingOffsets, -2 means earliest and -1 latest.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kafka.structs import TopicPartition

__all__ = ["EARLIEST", "LATEST", "PartitionOffsets", "from_json", "parse_offsets_json",
           "to_json"]

EARLIEST = -2
LATEST = -1

PartitionOffsets = dict[TopicPartition, int]


def to_json(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """{TopicPartition: offset} as Spark's offset JSON (topics and partitions sorted)."""
    out: dict[str, dict[str, int]] = {}
    for tp in sorted(offsets):
        out.setdefault(tp.topic, {})[str(tp.partition)] = int(offsets[tp])
    return out


def from_json(data: Mapping[str, Any]) -> PartitionOffsets:
    """Spark's offset JSON (already loaded; string or int partition keys) as {TopicPartition: offset}."""
    out: PartitionOffsets = {}
    for topic, partitions in data.items():
        if not isinstance(partitions, Mapping):
            raise ValueError(f"offsets of topic {topic!r} must be an object, got {partitions!r}")
        for partition, offset in partitions.items():
            if isinstance(offset, bool) or not isinstance(offset, int):
                raise ValueError(f"offset of {topic}-{partition} must be an integer, got {offset!r}")
            out[TopicPartition(str(topic), int(partition))] = offset
    return out


def parse_offsets_json(text: str) -> PartitionOffsets:
    """startingOffsets/endingOffsets JSON text as {TopicPartition: offset or -1/-2}."""
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("offsets JSON must be an object")
    offsets = from_json(data)
    bad = [tp for tp, offset in offsets.items() if offset < EARLIEST]
    if bad:
        raise ValueError(f"offsets below -2 for {bad}")
    return offsets
