"""Benchmark: the Python Spark Kafka source against parquet, on the same records and query.

    python tests/benchmarks/spark_source.py [--records 1000000] [--partitions 4] [--runs 3]

1,000,000 records (100-byte values, 1,000 distinct keys) go into a topic of a 3-broker
minikafka server in this process; the same records are written to parquet. Then the
same query, a count by key, runs over each source `--runs` times after one warm-up
run each (the first Spark job of a session spends 15-25 s warming up, and the first
fetch of a batch produced in-process encodes it once on the broker). Prints records/s
for both and the ratio; the target is Kafka at least half as fast as parquet.

A third line runs the query over a Python data source that makes the same records in
memory and only hands Spark ready Arrow batches: no Kafka, no decoding. It is the
fastest any Python data source with Kafka's schema can be here, so it separates the
Kafka source's own cost from what Spark's Python data source path costs (Arrow from the
Python worker to the JVM, then every column of every row copied into a row: Spark 4.3
gives Python sources neither column pruning nor columnar reads). Two more lines show
where that floor comes from: the same in-memory source with the key column only, and
the fixed cost of one query (4,000 records) through a Python source and from parquet.

--profile adds a cProfile of one partition's read (fetch, decode, Arrow) in this
process, to see where a worker's time goes.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import shutil
import statistics
import sys
import tempfile
import time

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

TOPIC = "bench"
TINY = 4_000  # records in the fixed-cost query


def record_values(value_bytes: int) -> list[bytes]:
    rng = random.Random(1)
    return [rng.randbytes(value_bytes) for _ in range(256)]  # incompressible


def fill(cluster, records: int, partitions: int, value_bytes: int, keys: int) -> None:
    """Produce in-process before serving: batches as large as a busy producer's (1 MiB),
    timestamped now (so retention keeps them once the server's clock follows real time)."""
    values = record_values(value_bytes)
    cluster.advance_to(time.time_ns() // 1_000_000)
    cluster.create_topic(TOPIC, partitions=partitions, replication_factor=1)
    producer = cluster.producer(acks=1, batch_size=1 << 20, linger_ms=5)
    for i in range(records):
        producer.send(TOPIC, key=b"key-%04d" % (i % keys), value=values[i & 255])
        if i % 100_000 == 99_999:
            # Stay under buffer.memory: past it the in-process producer sends tiny batches.
            producer.flush()
    producer.flush()


class InMemorySource(DataSource):
    """The same records, made in the Python worker and handed over as Arrow batches.
    (Defined in __main__, so Spark ships the class by value: no import needed.)"""

    @classmethod
    def name(cls) -> str:
        return "bench-in-memory"

    def schema(self):
        from minikafka.spark.schema import kafka_schema

        return "key binary" if self.options.get("key_only") == "true" else kafka_schema()

    def reader(self, schema):
        return InMemoryReader(schema, dict(self.options.items()))


class InMemoryReader(DataSourceReader):
    def __init__(self, schema, options: dict[str, str]) -> None:
        self.schema = schema
        self.records = int(options["records"])
        self.partitions_n = int(options["partitions"])
        self.value_bytes = int(options["value_bytes"])
        self.keys = int(options["keys"])
        self.key_only = options.get("key_only") == "true"

    def partitions(self):
        return [InputPartition(p) for p in range(self.partitions_n)]

    def read(self, partition):
        import numpy as np
        import pyarrow as pa

        from minikafka.spark.schema import arrow_schema

        schema = arrow_schema(self.schema)
        values = record_values(self.value_bytes)
        mine = range(partition.value, self.records, self.partitions_n)
        for start in range(0, len(mine), 65_536):
            ids = mine[start:start + 65_536]
            n = len(ids)
            keys = pa.array([b"key-%04d" % (i % self.keys) for i in ids], pa.binary())
            if self.key_only:
                yield pa.RecordBatch.from_arrays([keys], names=["key"])
                continue
            yield pa.RecordBatch.from_arrays([
                keys,
                pa.array([values[i & 255] for i in ids], pa.binary()),
                pa.array([TOPIC] * n, pa.string()),
                pa.array(np.full(n, partition.value, dtype=np.int32)),
                pa.array(np.arange(start, start + n, dtype=np.int64)),
                pa.array(np.zeros(n, dtype=np.int64), schema.field("timestamp").type),
                pa.array(np.zeros(n, dtype=np.int32))], schema=schema)


def timed(action, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return times


def profile_read(servers: str) -> None:
    from minikafka.spark.fetcher import read_range
    from minikafka.spark.offset_reader import KafkaOffsetReader
    from minikafka.spark.options import parse_options
    from minikafka.spark.planning import OffsetRange
    from minikafka.spark.schema import arrow_schema, kafka_schema

    options = parse_options({"kafka.bootstrap.servers": servers, "subscribe": TOPIC},
                            streaming=False)
    reader = KafkaOffsetReader(options)
    tp = sorted(reader.partitions())[0]
    end = reader.latest([tp])[tp]
    reader.close()
    schema = arrow_schema(kafka_schema())
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.enable()
    rows = sum(b.num_rows for b in read_range(options, OffsetRange(tp.topic, tp.partition, 0, end),
                                              schema))
    profiler.disable()
    took = time.perf_counter() - start
    print(f"\none partition read in this process (broker in the same process): {rows:,} records "
          f"in {took:.2f} s = {rows / took:,.0f} records/s")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(12)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--value-bytes", type=int, default=100)
    parser.add_argument("--keys", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()

    os.environ.setdefault("MINIKAFKA_SPARK_UI", "0")
    os.environ["MINIKAFKA_SPARK_SOURCE"] = "python"
    from minikafka.cluster import Cluster
    from minikafka.course.spark import spark_session
    from minikafka.spark import kafka_format

    cluster = Cluster(brokers=3, seed=0)
    t = time.perf_counter()
    fill(cluster, args.records, args.partitions, args.value_bytes, args.keys)
    print(f"produced {args.records:,} records x {args.value_bytes} B into {args.partitions} "
          f"partitions in {time.perf_counter() - t:.1f} s (in-process producer)")
    server = cluster.serve(port=0)
    workdir = tempfile.mkdtemp(prefix="spark-source-bench-")
    try:
        spark = spark_session("spark-source-bench", small_jobs=False,
                              conf={"spark.sql.shuffle.partitions": "4"})
        kafka = (spark.read.format(kafka_format(spark))
                 .option("kafka.bootstrap.servers", server.bootstrap_servers)
                 .option("subscribe", TOPIC).load())
        parquet_path = os.path.join(workdir, "bench.parquet")
        t = time.perf_counter()
        kafka.select("key", "value").write.parquet(parquet_path)  # also warms the Kafka path
        print(f"wrote parquet (read through the Kafka source) in {time.perf_counter() - t:.1f} s")
        parquet = spark.read.parquet(parquet_path)
        spark.dataSource.register(InMemorySource)

        def in_memory(records: int, key_only: bool = False):
            return (spark.read.format("bench-in-memory").option("records", records)
                    .option("partitions", args.partitions).option("value_bytes", args.value_bytes)
                    .option("keys", args.keys).option("key_only", str(key_only).lower()).load())

        tiny_path = os.path.join(workdir, "tiny.parquet")
        in_memory(TINY).select("key", "value").write.parquet(tiny_path)

        def count_by_key(df, records: int):
            def run():
                rows = df.groupBy("key").count().collect()
                total = sum(r["count"] for r in rows)
                assert total == records and len(rows) == min(records, args.keys), (total, len(rows))
            return run

        sources = {
            "kafka (Python source, minikafka server)": (kafka, args.records),
            "parquet": (parquet, args.records),
            "in-memory Python source (the floor)": (in_memory(args.records), args.records),
            "in-memory Python source, key column only": (in_memory(args.records, True),
                                                         args.records),
            f"in-memory Python source, {TINY:,} records": (in_memory(TINY), TINY),
            f"parquet, {TINY:,} records": (spark.read.parquet(tiny_path), TINY),
        }
        for df, records in sources.values():
            timed(count_by_key(df, records), 1)  # warm-up
        times = {name: [] for name in sources}
        for _ in range(args.runs):  # interleaved, so a busy moment hits every source alike
            for name, (df, records) in sources.items():
                times[name] += timed(count_by_key(df, records), 1)
        spark.stop()

        load = os.getloadavg()[0]
        print(f"\ncount by key over {args.records:,} records (median of {args.runs}, local[2], "
              f"{os.cpu_count()} cores, load average {load:.1f}):")
        medians = {name: statistics.median(ts) for name, ts in times.items()}
        for name, ts in times.items():
            records = sources[name][1]
            print(f"  {name:<42} {medians[name]:6.2f} s  {records / medians[name]:>12,.0f} "
                  f"records/s  runs {[round(x, 2) for x in ts]}")
        k, p, m, key_only, tiny_m, tiny_p = medians.values()
        print(f"  kafka / parquet throughput: {p / k:.2f} (target >= 0.5); in-memory Python "
              f"source / parquet: {p / m:.2f}; kafka / in-memory Python source: {m / k:.2f}")
        print(f"  with the key column only, a Python source reaches {p / key_only:.2f} of "
              f"parquet; one query costs {tiny_m:.2f} s through a Python source and {tiny_p:.2f} s "
              f"from parquet before any record is read")
        if args.profile:
            profile_read(server.bootstrap_servers)
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
