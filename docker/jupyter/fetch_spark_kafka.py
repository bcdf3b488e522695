"""Put Spark's Kafka connector into pyspark's own jars/ directory at image build time.

Used by docker/jupyter/Dockerfile; see the comment there for why.

    python fetch_spark_kafka.py fetch org.apache.spark:spark-sql-kafka-0-10_2.13:4.3.0
    python fetch_spark_kafka.py verify

``fetch`` lets Spark's own resolver (Ivy, through ``spark.jars.packages``) download the
connector and its dependencies into a scratch directory, then copies every jar whose
artifact Spark does not already ship into ``pyspark/jars``. Jars Spark already has
(hadoop-client-*, lz4-java, snappy-java, slf4j-api, ...) are skipped, so there is one
version of each library on the classpath: Spark's.

``verify`` must run in a NEW process (a JVM's classpath is fixed when it starts): it opens
a session without any packages option and checks that ``readStream.format("kafka")`` now
resolves, which is exactly what fails with "Failed to find data source: kafka" when the
connector is missing. No broker is contacted: ``load()`` only builds the plan.
"""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
from pathlib import Path

KAFKA_COLUMNS = ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]

# "<artifact>-<version>.jar", where the version starts with digits and a dot. Greedy on the
# artifact so "spark-sql-kafka-0-10_2.13-4.3.0.jar" gives "spark-sql-kafka-0-10_2.13".
_JAR = re.compile(r"^(?P<artifact>.+)-(?P<version>\d+\.\d+[^/]*)\.jar$")


def without_organisation(jar_name: str) -> str:
    """Drop Ivy's "<organisation>_" prefix from a jar file name, if it has one.

    Ivy names resolved jars "<organisation>_<artifact>-<revision>.jar"; Spark's jars/ holds
    "<artifact>-<version>.jar". An organisation has dots and no dashes ("org.apache.kafka").

    >>> without_organisation("org.apache.kafka_kafka-clients-3.9.1.jar")
    'kafka-clients-3.9.1.jar'
    >>> without_organisation("spark-sql-kafka-0-10_2.13-4.3.0.jar")
    'spark-sql-kafka-0-10_2.13-4.3.0.jar'
    """
    head, sep, tail = jar_name.partition("_")
    if sep and "." in head and "-" not in head:
        return tail
    return jar_name


def artifact_of(jar_name: str) -> str:
    """The artifact name of a jar file name, from Spark's jars/ or from Ivy's cache.

    >>> artifact_of("org.apache.kafka_kafka-clients-3.9.1.jar")
    'kafka-clients'
    >>> artifact_of("zstd-jni-1.5.7-7.jar")
    'zstd-jni'
    >>> artifact_of("org.apache.spark_spark-sql-kafka-0-10_2.13-4.3.0.jar")
    'spark-sql-kafka-0-10_2.13'
    """
    name = without_organisation(jar_name)
    m = _JAR.match(name)
    return m.group("artifact") if m else name.removesuffix(".jar")


def copy_missing_jars(resolved: list[Path], spark_jars: Path) -> tuple[list[str], list[str]]:
    """Copy the resolved jars whose artifact is not in ``spark_jars``; return (copied, skipped)."""
    present = {artifact_of(p.name) for p in spark_jars.glob("*.jar")}
    copied, skipped = [], []
    for jar in sorted(resolved):
        artifact = artifact_of(jar.name)
        if artifact in present:
            skipped.append(jar.name)
            continue
        shutil.copy2(jar, spark_jars / without_organisation(jar.name))
        present.add(artifact)
        copied.append(jar.name)
    return copied, skipped


def _spark_jars_dir() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent / "jars"


def fetch(package: str) -> None:
    import pyspark
    from pyspark.sql import SparkSession

    version = package.rsplit(":", 1)[-1]
    if version != pyspark.__version__:
        sys.exit(f"connector {package} does not match pyspark {pyspark.__version__}")
    ivy = Path(tempfile.mkdtemp(prefix="spark-ivy-"))
    spark = (
        SparkSession.builder.master("local[1]")
        .appName("fetch-kafka-connector")
        .config("spark.jars.packages", package)
        .config("spark.jars.ivy", str(ivy))
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    spark.stop()
    resolved = list((ivy / "jars").glob("*.jar"))
    if not any("spark-sql-kafka" in p.name for p in resolved):
        sys.exit(f"Ivy did not resolve {package}; found {[p.name for p in resolved]}")
    copied, skipped = copy_missing_jars(resolved, _spark_jars_dir())
    print("copied into pyspark/jars:", *copied, sep="\n  ")
    print("already shipped by Spark, skipped:", *skipped, sep="\n  ")
    shutil.rmtree(ivy, ignore_errors=True)


def verify() -> None:
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[1]")
        .appName("verify-kafka-connector")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    try:
        df = (
            spark.readStream.format("kafka")
            .option("kafka.bootstrap.servers", "localhost:9092")
            .option("subscribe", "connector-check")
            .load()
        )
        if df.columns != KAFKA_COLUMNS:
            sys.exit(f"unexpected Kafka source schema: {df.columns}")
        print("Spark's Kafka source is on the classpath:", df.columns)
    finally:
        spark.stop()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "fetch":
        fetch(sys.argv[2])
    elif len(sys.argv) == 2 and sys.argv[1] == "verify":
        verify()
    else:
        sys.exit(__doc__)
