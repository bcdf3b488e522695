"""Which Kafka source a Spark session reads with: the JVM connector or the Python one.

    fmt = kafka_format(spark)          # "kafka" where spark-sql-kafka-0-10 is on the
    df = (spark.readStream.format(fmt) #  classpath (the course's Docker image), else
          .option("kafka.bootstrap.servers", servers)   # "kafka-python", registered here
          .option("subscribe", "trucks").load())

Both take the same options and give the same columns, so a lab is written once.
MINIKAFKA_SPARK_SOURCE=jvm|python forces a choice (auto by default).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["CONNECTOR_CLASS", "PYTHON_FORMAT", "connector_jars", "jvm_connector_loaded",
           "kafka_format"]

CONNECTOR_CLASS = "org.apache.spark.sql.kafka010.KafkaSourceProvider"
PYTHON_FORMAT = "kafka-python"
ENV = "MINIKAFKA_SPARK_SOURCE"


def kafka_format(spark: Any) -> str:
    """The format name to pass to spark.read/readStream.format() for Kafka."""
    choice = os.environ.get(ENV, "auto").strip().lower()
    if choice not in ("auto", "jvm", "python"):
        raise ValueError(f"{ENV} must be auto, jvm or python, not {choice!r}")
    if choice == "jvm" or (choice == "auto" and jvm_connector_loaded(spark)):
        return "kafka"
    from .source import KafkaSource

    spark.dataSource.register(KafkaSource)
    return PYTHON_FORMAT


def jvm_connector_loaded(spark: Any) -> bool:
    """Whether this session's JVM can load Spark's Kafka connector."""
    jvm = getattr(spark, "_jvm", None)
    if jvm is not None:
        return bool(jvm.org.apache.spark.util.Utils.classIsLoadable(CONNECTOR_CLASS))
    # Spark Connect has no py4j gateway: ask the server to resolve the format instead.
    try:
        spark.read.format("kafka").load().schema  # noqa: B018
    except Exception as exc:  # any answer but "not found" means it is there
        text = str(exc)
        return "KAFKA_DATA_SOURCE_NOT_ENABLED" not in text and "Failed to find data source" not in text
    return True


def connector_jars() -> list[Path]:
    """spark-sql-kafka-0-10 jars where pyspark (or SPARK_HOME) puts its classpath."""
    places = []
    try:
        import pyspark

        places.append(Path(pyspark.__file__).parent / "jars")
    except ImportError:
        pass
    if os.environ.get("SPARK_HOME"):
        places.append(Path(os.environ["SPARK_HOME"]) / "jars")
    return sorted(jar for place in places if place.is_dir()
                  for jar in place.glob("spark-sql-kafka-0-10_*.jar"))
