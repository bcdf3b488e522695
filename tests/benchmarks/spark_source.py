"""Benchmark: the Python Spark Kafka source against parquet, on the same records and query.

    python tests/benchmarks/spark_source.py [--records 1000000] [--partitions 4] [--runs 3]

1,000,000 records (100-byte values, 1,000 distinct keys) go into a topic of a 3-broker
minikafka server in this process; the same records are written to parquet. Then the
same query, a count by key, runs over each source `--runs` times after one warm-up
run each (the first Spark job of a session spends 15-25 s warming up, and the first
fetch of a batch produced in-process encodes it once on the broker). Prints records/s
for both and the ratio; the target is Kafka at least half as fast as parquet.

--profile adds a cProfile of one task's worth of reading (fetch, decode, Arrow) in this
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

TOPIC = "bench"


def fill(cluster, records: int, partitions: int, value_bytes: int, keys: int) -> None:
    """Produce in-process before serving: batches as large as a busy producer's (1 MiB),
    timestamped now (so retention keeps them once the server's clock follows real time)."""
    rng = random.Random(1)
    values = [rng.randbytes(value_bytes) for _ in range(256)]  # incompressible
    cluster.advance_to(time.time_ns() // 1_000_000)
    cluster.create_topic(TOPIC, partitions=partitions, replication_factor=1)
    producer = cluster.producer(acks=1, batch_size=1 << 20, linger_ms=5)
    for i in range(records):
        producer.send(TOPIC, key=b"key-%04d" % (i % keys), value=values[i & 255])
        if i % 100_000 == 99_999:
            # Stay under buffer.memory: past it the in-process producer sends tiny batches.
            producer.flush()
    producer.flush()


def timed(action, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return times


def profile_read(servers: str, partitions: int) -> None:
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
    from minikafka.labs import spark_session
    from minikafka.spark import kafka_format

    cluster = Cluster(brokers=3, seed=0)
    t = time.perf_counter()
    fill(cluster, args.records, args.partitions, args.value_bytes, args.keys)
    print(f"produced {args.records:,} records x {args.value_bytes} B into {args.partitions} "
          f"partitions in {time.perf_counter() - t:.1f} s (in-process producer)")
    server = cluster.serve(port=0)
    workdir = tempfile.mkdtemp(prefix="spark-source-bench-")
    try:
        spark = spark_session("spark-source-bench", conf={"spark.sql.shuffle.partitions": "4"})
        kafka = (spark.read.format(kafka_format(spark))
                 .option("kafka.bootstrap.servers", server.bootstrap_servers)
                 .option("subscribe", TOPIC).load())
        parquet_path = os.path.join(workdir, "bench.parquet")
        t = time.perf_counter()
        kafka.select("key", "value").write.parquet(parquet_path)  # also warms the Kafka path
        print(f"wrote parquet (read through the Kafka source) in {time.perf_counter() - t:.1f} s")
        parquet = spark.read.parquet(parquet_path)

        def count_by_key(df):
            def run():
                rows = df.groupBy("key").count().collect()
                total = sum(r["count"] for r in rows)
                assert total == args.records and len(rows) == args.keys, (total, len(rows))
            return run

        timed(count_by_key(kafka), 1)
        timed(count_by_key(parquet), 1)
        kafka_times = timed(count_by_key(kafka), args.runs)
        parquet_times = timed(count_by_key(parquet), args.runs)
        spark.stop()

        k, p = statistics.median(kafka_times), statistics.median(parquet_times)
        print(f"\ncount by key over {args.records:,} records (median of {args.runs}, "
              f"local[2], {os.cpu_count()} cores):")
        print(f"  kafka (Python source, minikafka server): {k:6.2f} s  "
              f"{args.records / k:>12,.0f} records/s  runs {[round(x, 2) for x in kafka_times]}")
        print(f"  parquet:                                 {p:6.2f} s  "
              f"{args.records / p:>12,.0f} records/s  runs {[round(x, 2) for x in parquet_times]}")
        print(f"  kafka / parquet throughput: {p / k:.2f} (target >= 0.5)")
        if args.profile:
            profile_read(server.bootstrap_servers, args.partitions)
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
