"""A class-data-sharing (CDS) archive of the classes Spark's JVM loads, for grading.

Every graded submission of a PySpark assignment starts its own Spark session, and most of
that time is the JVM loading and verifying Spark's classes. A dynamic CDS archive (JDK 13+,
-XX:ArchiveClassesAtExit, then -XX:SharedArchiveFile) maps them ready-made instead: on two
cores a session plus its first job goes from about 20 s to about 11 s.

The grader makes the archive once per machine, with a short Spark job in a child process,
and hands its path to the kernels in GRADING_SPARK_CDS; the notebook's setup cell adds the
flag when the variable names an existing file. Students never see it. A stale archive (another
Java or PySpark) is refused by the JVM, which then starts the slow way; the file names carry
the PySpark version and the Java binary so an upgrade makes a new one.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ENV = "GRADING_SPARK_CDS"

# The kinds of work the notebooks do, so the archive holds the classes they load.
WARM_UP = """
import os, sys, warnings
warnings.filterwarnings("ignore")
os.environ["PYSPARK_PYTHON"] = sys.executable
import pandas as pd
from pyspark.sql import SparkSession, functions as F
spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.execution.arrow.pyspark.enabled", "true")
         .config("spark.sql.session.timeZone", "UTC")
         .config("spark.driver.extraJavaOptions", sys.argv[1]).getOrCreate())
frame = pd.DataFrame({"value": [b'{"k": "a", "ts": 1000, "v": 1.5}'] * 4,
                      "timestamp": pd.to_datetime([1, 2, 3, 4], unit="s")})
df = spark.createDataFrame(frame)
parsed = df.select(F.from_json(F.col("value").cast("string"), "k string, ts long, v double")
                   .alias("r")).select("r.*").withColumn("t", F.timestamp_millis("ts"))
parsed.groupBy(F.window("t", "1 minute"), "k").agg(F.count("*"), F.avg("v")).collect()
jvm = spark.sparkContext._gateway.proc
spark.stop()
jvm.stdin.close()  # the JVM exits on EOF, writing the archive on its way out
jvm.wait()
"""


def archive_path() -> Path:
    import pyspark

    java = shutil.which("java") or os.environ.get("JAVA_HOME", "java")
    tag = hashlib.sha1(os.path.realpath(java).encode()).hexdigest()[:8]
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return cache / "minikafka-grading" / f"spark-{pyspark.__version__}-{tag}.jsa"


def ensure_archive(timeout_s: int = 600) -> Path | None:
    """The archive, made now if missing; None when it cannot be made (no Java, an old JDK)."""
    path = archive_path()
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    options = f"-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:ArchiveClassesAtExit={partial}"
    try:
        done = subprocess.run([sys.executable, "-c", WARM_UP, options], timeout=timeout_s,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0 or not partial.exists():
        partial.unlink(missing_ok=True)
        return None
    os.replace(partial, path)  # atomic: a kernel never maps a half-written archive
    return path


def uses_spark(notebooks: list[Path]) -> bool:
    return any("pyspark" in p.read_text() for p in notebooks)


def share_with_kernels(notebooks: list[Path]) -> Path | None:
    """Before grading an assignment: make the archive if it uses Spark, and tell the
    kernels (they inherit this process's environment) where it is."""
    if os.environ.get(ENV) or not uses_spark(notebooks):
        return None
    path = ensure_archive()
    if path is not None:
        os.environ[ENV] = str(path)
    return path
