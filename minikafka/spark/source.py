"""A PySpark Python data source that reads Kafka like Spark's own Kafka source.

Spark will not let a Python source be called "kafka" (KAFKA_DATA_SOURCE_NOT_ENABLED),
so it is registered as "kafka-python"; `minikafka.spark.kafka_format(spark)` picks
between it and the JVM connector so lab code reads the same either way.

Where each part runs:

- the driver's planner process: `schema`, `reader().partitions()` (batch), and for
  streams `initialOffset`, `latestOffset`, `partitions`, `prepareForTriggerAvailableNow`
  on one long-lived stream reader, which keeps its KafkaConsumer between calls;
- Python workers: `read(partition)`, on a pickled copy of the reader (so the consumer
  is left out of the pickle).

Streaming offsets are Spark's Kafka offset JSON ({"topic": {"0": 42}}), so a checkpoint
records exactly which offsets each micro-batch read; a restarted query replans the same
ranges and each record is counted once.
"""
from __future__ import annotations

from ..extras import require

require("labs", "pyspark", "pyarrow", what="minikafka.spark (the Python Spark source)")

import logging
from typing import Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    InputPartition,
)
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from .offset_reader import KafkaOffsetReader, OffsetReader
from .offsets import from_json, to_json
from .options import SourceOptions, parse_options
from .planning import (
    DataLossError,
    OffsetRange,
    plan_ranges,
    rate_limit,
    resolve_offsets,
    split_ranges,
)
from .schema import arrow_schema, kafka_schema

__all__ = ["FORMAT", "KafkaBatchReader", "KafkaInputPartition", "KafkaSource",
           "KafkaStreamReader"]

FORMAT = "kafka-python"

log = logging.getLogger(__name__)


class KafkaInputPartition(InputPartition):
    """One Spark task: an OffsetRange (in `.value`)."""

    def __init__(self, offset_range: OffsetRange) -> None:
        super().__init__(offset_range)


class KafkaSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> StructType:
        include = str(self.options.get("includeHeaders", "false")).strip().lower() == "true"
        return kafka_schema(include_headers=include)

    def reader(self, schema: StructType) -> KafkaBatchReader:
        return KafkaBatchReader(parse_options(self.options, streaming=False), schema)

    def streamReader(self, schema: StructType) -> KafkaStreamReader:
        return KafkaStreamReader(parse_options(self.options, streaming=True), schema)


class _Reading:
    """What batch and stream readers share: options, schema and reading a range."""

    def __init__(self, options: SourceOptions, schema: StructType,
                 offset_reader: OffsetReader | None = None) -> None:
        self.options = options
        self.schema = schema
        self._offset_reader = offset_reader

    @property
    def offset_reader(self) -> OffsetReader:
        if self._offset_reader is None:
            self._offset_reader = KafkaOffsetReader(self.options)
        return self._offset_reader

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_offset_reader"] = None  # sockets do not pickle; workers do not need it
        return state

    def read(self, partition: InputPartition):
        if not isinstance(partition.value, OffsetRange):
            return iter(())  # Spark's stand-in partition when there was nothing to read
        from .fetcher import read_range

        return read_range(self.options, partition.value, arrow_schema(self.schema))

    def _report_data_loss(self, message: str) -> None:
        if self.options.fail_on_data_loss:
            raise DataLossError(message)
        log.warning("%s (failOnDataLoss=false: the query goes on)", message)

    def _input_partitions(self, ranges: list[OffsetRange]) -> list[KafkaInputPartition]:
        return [KafkaInputPartition(r) for r in split_ranges(ranges, self.options.min_partitions)]

    def _close(self) -> None:
        reader = self._offset_reader
        self._offset_reader = None
        if reader is not None and hasattr(reader, "close"):
            reader.close()


class KafkaBatchReader(_Reading, DataSourceReader):
    """spark.read: offsets [startingOffsets, endingOffsets), resolved when the query runs."""

    def partitions(self) -> list[KafkaInputPartition]:
        try:
            reader = self.offset_reader
            parts = reader.partitions()
            earliest, latest = reader.earliest(parts), reader.latest(parts)
        finally:
            self._close()
        start = resolve_offsets(self.options.starting_offsets, parts, earliest, latest,
                                option="startingOffsets")
        end = resolve_offsets(self.options.ending_offsets, parts, earliest, latest,
                              option="endingOffsets")
        ranges = []
        for tp in sorted(parts):
            if end[tp] < start[tp]:
                raise ValueError(
                    f"Beginning offset {start[tp]} is after the ending offset {end[tp]} for "
                    f"topic {tp.topic} partition {tp.partition}. You either provided an invalid "
                    f"fromOffset, or the Kafka topic has been damaged")
            if end[tp] > start[tp]:
                ranges.append(OffsetRange(tp.topic, tp.partition, start[tp], end[tp]))
        return self._input_partitions(ranges)


class KafkaStreamReader(_Reading, DataSourceStreamReader, SupportsTriggerAvailableNow):
    """spark.readStream: micro-batches between offset maps kept in the checkpoint."""

    def __init__(self, options: SourceOptions, schema: StructType,
                 offset_reader: OffsetReader | None = None) -> None:
        super().__init__(options, schema, offset_reader)
        self._available_now: dict | None = None  # latest offsets when AvailableNow started
        self._latest: dict | None = None

    def initialOffset(self) -> dict:
        reader = self.offset_reader
        parts = reader.partitions()
        spec = self.options.starting_offsets
        earliest = reader.earliest(parts) if spec != "latest" else {}
        latest = reader.latest(parts) if spec != "earliest" else {}
        return to_json(resolve_offsets(spec, parts, earliest, latest, option="startingOffsets"))

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.options.max_offsets_per_trigger:
            return ReadMaxRows(self.options.max_offsets_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        reader = self.offset_reader
        self._available_now = reader.latest(reader.partitions())

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        reader = self.offset_reader
        begin = from_json(start)
        if self._available_now is not None:
            latest = dict(self._available_now)
        else:
            latest = reader.latest(reader.partitions())
        self._latest = to_json(latest)
        if isinstance(limit, ReadMaxRows):
            new = set(latest) - set(begin)
            end = rate_limit(limit.max_rows, begin, latest, reader.earliest(new) if new else {})
        else:
            end = latest
        return to_json(end)

    def reportLatestOffset(self) -> dict | None:
        return self._latest

    def partitions(self, start: dict, end: dict) -> list[KafkaInputPartition]:
        begin, until = from_json(start), from_json(end)
        new = set(until) - set(begin)
        earliest_of_new = self.offset_reader.earliest(new) if new else {}
        return self._input_partitions(
            plan_ranges(begin, until, earliest_of_new, self._report_data_loss))

    def commit(self, end: dict) -> None:
        pass  # offsets live in the checkpoint; nothing is committed to Kafka

    def stop(self) -> None:
        self._close()
