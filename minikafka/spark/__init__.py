"""Spark Structured Streaming and batch reads from Kafka, with or without the JVM connector.

    from minikafka.spark import kafka_format
    df = (spark.readStream.format(kafka_format(spark))
          .option("kafka.bootstrap.servers", servers)
          .option("subscribe", "trucks")
          .load())     # key, value, topic, partition, offset, timestamp, timestampType

`kafka_format` answers "kafka" where Spark's own connector is on the classpath and
otherwise registers this package's Python data source ("kafka-python"), which reads
through kafka-python with the same options and columns.
"""
from __future__ import annotations

from .connector import PYTHON_FORMAT, kafka_format

__all__ = ["PYTHON_FORMAT", "kafka_format"]
