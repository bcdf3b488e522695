"""Which partitions a subscription covers and their earliest/latest offsets, asked of the
cluster through a kafka-python KafkaConsumer that joins no group (Spark's
KafkaOffsetReader). Runs on the driver, where Spark plans each batch.

The planning code takes any object with these three methods, so tests can stand in
a fake cluster for the real one.
"""
from __future__ import annotations

import time
from collections.abc import Collection
from typing import Protocol

from kafka import KafkaConsumer
from kafka.errors import KafkaError
from kafka.structs import TopicPartition

from .offsets import PartitionOffsets
from .options import Assign, SourceOptions, Subscribe, SubscribePattern

__all__ = ["KafkaOffsetReader", "OffsetReader"]


class OffsetReader(Protocol):
    def partitions(self) -> set[TopicPartition]: ...

    def earliest(self, partitions: Collection[TopicPartition]) -> PartitionOffsets: ...

    def latest(self, partitions: Collection[TopicPartition]) -> PartitionOffsets: ...


class KafkaOffsetReader:
    """OffsetReader over a real cluster (minikafka's server or Kafka)."""

    def __init__(self, options: SourceOptions) -> None:
        self.options = options
        config = options.client_config()
        config.update(enable_auto_commit=False, group_id=None, allow_auto_create_topics=False)
        self._consumer = KafkaConsumer(**config)

    def partitions(self) -> set[TopicPartition]:
        sub = self.options.subscription
        if isinstance(sub, Assign):
            return {TopicPartition(topic, p) for topic, p in sub.partitions}
        topics = self._retry(self._consumer.topics)  # a fresh metadata request every time
        if isinstance(sub, Subscribe):
            wanted = [t for t in sub.topics if t in topics]
        else:
            assert isinstance(sub, SubscribePattern)
            wanted = sorted(t for t in topics if sub.matches(t))
        return {TopicPartition(t, p) for t in wanted
                for p in self._consumer.partitions_for_topic(t) or ()}

    def earliest(self, partitions: Collection[TopicPartition]) -> PartitionOffsets:
        if not partitions:
            return {}
        return dict(self._retry(self._consumer.beginning_offsets, list(partitions)))

    def latest(self, partitions: Collection[TopicPartition]) -> PartitionOffsets:
        """End offsets: the high watermark, or the last stable offset under read_committed."""
        if not partitions:
            return {}
        return dict(self._retry(self._consumer.end_offsets, list(partitions)))

    def close(self) -> None:
        self._consumer.close()

    def _retry(self, call, *args):
        # fetchOffset.numRetries / fetchOffset.retryIntervalMs, as in Spark.
        attempts = self.options.fetch_offset_retries + 1
        for attempt in range(attempts):
            try:
                return call(*args)
            except KafkaError:
                if attempt == attempts - 1:
                    raise
                time.sleep(self.options.fetch_offset_retry_interval_ms / 1000)
        raise AssertionError("unreachable")
