"""A local Spark session for the labs."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from minikafka.course.lab_cluster import ENV
from minikafka.course.workdir import work_dir
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
    fetch` has fetched it, goes on spark.jars (minikafka.spark.connector.session_jars).
    The JVM's own output on stderr (start-up notices, log4j warnings) goes to
    ``spark_log(app_name)``, not into the notebook."""
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
               .config("spark.ui.showConsoleProgress", "false"))
    if small_jobs:
        builder = builder.config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1")
    from minikafka.spark.connector import session_jars

    if jars := session_jars():
        builder = builder.config("spark.jars", ",".join(str(j) for j in jars))
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    with _stderr_to(spark_log(app_name)):
        session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    _reap_when_it_ends(session)
    return session


def _reap_when_it_ends(session: SparkSession) -> None:
    """Wait on the session's JVM in a thread, so it is reaped as soon as it exits. A Jupyter
    kernel that shuts down terminates its children and waits until none is left; the JVM
    pyspark started, terminated but unreaped, still counted, and kept the kernel 2.5 s
    past its shutdown."""
    proc = getattr(getattr(session.sparkContext, "_gateway", None), "proc", None)
    # A JVM started elsewhere has no process here; getOrCreate's same JVM has its waiter.
    if proc is None or getattr(proc, "_minikafka_reaper", None) is not None:
        return
    proc._minikafka_reaper = threading.Thread(target=proc.wait, name="spark-jvm-reaper",
                                              daemon=True)
    proc._minikafka_reaper.start()


def spark_log(app_name: str) -> Path:
    """Where the JVM of ``spark_session(app_name)`` writes its stderr."""
    return work_dir("spark-logs", fresh=False) / f"{app_name}.log"


@contextmanager
def _stderr_to(path: Path) -> Iterator[None]:
    """Point this process's file descriptor 2 at `path` while the JVM starts. The JVM and
    the Python workers it starts inherit it, so its notices and warnings land in the file;
    a notebook's kernel forwards descriptor 2 to the page, where they would show in red as
    if the student had caused an error."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(path, "ab") as log:
        os.dup2(log.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
