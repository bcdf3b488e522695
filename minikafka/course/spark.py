"""A local Spark session for the labs."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from minikafka.course.lab_cluster import ENV
from minikafka.extras import require

require("labs", "pyspark", what="minikafka.course.spark (the labs' Spark session)")

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def spark_session(app_name: str = "kafka-lab", *, cores: int = 2, ui: bool | None = None,
                  small_jobs: bool = True, conf: dict[str, str] | None = None) -> SparkSession:
    """A local Spark session for the labs (local[cores], UTC, few shuffle partitions).

    Spark's Python workers must import minikafka, so they run this interpreter. Off
    Docker, Spark binds to 127.0.0.1 only. ui=None keeps Spark's web UI on unless
    MINIKAFKA_SPARK_UI=0 (the tests turn it off). small_jobs keeps the JVM on its first JIT
    tier, which compiles sooner: the labs' jobs are over before the optimising tier pays
    off (pass False for long or heavy jobs). Spark's Kafka connector, when `minikafka kafka
    fetch` has fetched it, goes on spark.jars (minikafka.spark.connector.session_jars)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if not os.environ.get(ENV):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    if ui is None:
        ui = os.environ.get("MINIKAFKA_SPARK_UI", "1") != "0"
    builder = (SparkSession.builder.appName(app_name)
               .master(os.environ.get("SPARK_MASTER", f"local[{cores}]"))
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.shuffle.partitions", str(2 * cores))
               .config("spark.ui.enabled", str(ui).lower())
               .config("spark.ui.showConsoleProgress", "true"))
    if small_jobs:
        builder = builder.config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1")
    from minikafka.spark.connector import session_jars

    if jars := session_jars():
        builder = builder.config("spark.jars", ",".join(str(j) for j in jars))
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session
