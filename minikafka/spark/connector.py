"""Which Kafka source a Spark session reads with: the JVM connector or the Python one.

    fmt = kafka_format(spark)          # "kafka" where spark-sql-kafka-0-10 is on the
    df = (spark.readStream.format(fmt) #  classpath, else "kafka-python", registered here
          .option("kafka.bootstrap.servers", servers)
          .option("subscribe", "trucks").load())

Both take the same options and give the same columns, so a lab is written once.
MINIKAFKA_SPARK_SOURCE=jvm|python forces a choice (auto by default).

Spark's connector reaches the classpath in one of two ways: the Docker image copies it into
pyspark's own jars/, and elsewhere `minikafka kafka fetch` (or ./setup.sh --real-kafka)
fetches it from Maven Central into the course's cache, whence `session_jars()` hands it to
a new session's `spark.jars` (minikafka.course.spark.spark_session does). Without Maven or a
network the Python source takes over, so the labs still run on an offline laptop.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["CONNECTOR_CLASS", "PYTHON_FORMAT", "connector_jars", "fetched_connector",
           "jvm_connector_loaded", "kafka_format", "session_jars", "source_choice"]

CONNECTOR_CLASS = "org.apache.spark.sql.kafka010.KafkaSourceProvider"
PYTHON_FORMAT = "kafka-python"
ENV = "MINIKAFKA_SPARK_SOURCE"


def source_choice() -> str:
    """MINIKAFKA_SPARK_SOURCE: auto (the default), jvm or python."""
    choice = os.environ.get(ENV, "auto").strip().lower() or "auto"
    if choice not in ("auto", "jvm", "python"):
        raise ValueError(f"{ENV} must be auto, jvm or python, not {choice!r}")
    return choice


def kafka_format(spark: Any) -> str:
    """The format name to pass to spark.read/readStream.format() for Kafka."""
    choice = source_choice()
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
    """spark-sql-kafka-0-10 jars on Spark's classpath: pyspark's (or SPARK_HOME's) jars/,
    then the one fetched into the course's cache for this pyspark."""
    from ..realkafka.jars import pyspark_jars

    places = [p for p in (pyspark_jars(),) if p is not None]
    if os.environ.get("SPARK_HOME"):
        places.append(Path(os.environ["SPARK_HOME"]) / "jars")
    if (fetched := fetched_connector()) is not None:
        places.append(fetched)
    return sorted(jar for place in places if place.is_dir()
                  for jar in place.glob("spark-sql-kafka-0-10_*.jar"))


def fetched_connector() -> Path | None:
    """The cache folder with Spark's connector for the installed pyspark, once fetched."""
    from ..realkafka.jars import STAMP, FetchError, spark_libs

    try:
        libs = spark_libs()
    except FetchError:  # no pyspark
        return None
    return libs if (libs.parent / STAMP).exists() else None


def session_jars() -> list[Path]:
    """Jars for a new session's spark.jars so that format("kafka") resolves: the fetched
    connector and its dependencies. Empty when Spark's jars/ has the connector already
    (the Docker image), when MINIKAFKA_SPARK_SOURCE=python, or when nothing was fetched
    (then the Python source reads Kafka). MINIKAFKA_SPARK_SOURCE=jvm fetches it if need be."""
    from ..realkafka.jars import fetch_spark, pyspark_jars

    choice = source_choice()
    builtin = pyspark_jars()
    if choice == "python" or (builtin is not None and any(
            builtin.glob("spark-sql-kafka-0-10_*.jar"))):
        return []
    libs = fetched_connector()
    if libs is None and choice == "jvm":
        libs = fetch_spark()
    return sorted(libs.glob("*.jar")) if libs is not None else []
