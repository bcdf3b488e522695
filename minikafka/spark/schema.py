"""The Kafka source's fixed schema, the same as Spark's own Kafka source.

    key binary, value binary, topic string, partition int, offset long,
    timestamp timestamp, timestampType int  [, headers array<struct<key string, value binary>>]

timestampType is 0 for CreateTime (the producer's clock) and 1 for LogAppendTime (the
broker's, when the topic sets message.timestamp.type=LogAppendTime).
"""
from __future__ import annotations

from ..extras import require

require("labs", "pyspark", what="minikafka.spark (the Python Spark source)")

from typing import TYPE_CHECKING

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["arrow_schema", "kafka_schema"]


def kafka_schema(include_headers: bool = False) -> StructType:
    fields = [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestampType", IntegerType()),
    ]
    if include_headers:
        header = StructType([StructField("key", StringType()), StructField("value", BinaryType())])
        fields.append(StructField("headers", ArrayType(header)))
    return StructType(fields)


def arrow_schema(schema: StructType) -> pa.Schema:
    """The Arrow schema Spark checks a Python source's record batches against."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(schema, timezone="UTC")
