"""Lab 7: a consumer that copies payments from Kafka into SQLite, naively or idempotently.

    python lab7_sink.py --bootstrap localhost:9092 --topic lab7-payments --db sink.db \
        --mode idempotent [--crash-after 1234]

--mode naive       joins a consumer group, INSERTs each record as a new row, and commits
                   the group's offsets to Kafka after each poll. Two stores, two writes:
                   a crash between them writes some rows twice after the restart.
--mode idempotent  assigns itself every partition and keeps its offsets in SQLite, in
                   the same transaction as the rows, which are upserted by payment_id.
                   A crash rolls the transaction back; the restart resumes from the
                   offsets stored with the data. No duplicates, no gaps.

--crash-after N kills the process (SIGKILL: no clean-up, like a power cut) right after
it has written its N-th row in this run, in the middle of a poll's batch.
The process stops by itself once it has read up to the end offsets it saw at start.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sqlite3
import time

from kafka import KafkaConsumer, TopicPartition
from kafka.errors import CommitFailedError, RebalanceInProgressError

SCHEMA = """
CREATE TABLE IF NOT EXISTS payments_naive (payment_id TEXT, amount REAL);
CREATE TABLE IF NOT EXISTS payments (
    payment_id TEXT PRIMARY KEY, amount REAL, topic TEXT, partition INTEGER, "offset" INTEGER);
CREATE TABLE IF NOT EXISTS kafka_offsets (
    topic TEXT, partition INTEGER, next_offset INTEGER, PRIMARY KEY (topic, partition));
"""


class Crash:
    """Counts rows written in this run and kills the process at the chosen one."""

    def __init__(self, after: int | None) -> None:
        self.after, self.written = after, 0

    def row_written(self) -> None:
        self.written += 1
        if self.after is not None and self.written == self.after:
            os.kill(os.getpid(), signal.SIGKILL)


def run_naive(args, db: sqlite3.Connection, crash: Crash) -> None:
    consumer = KafkaConsumer(args.topic, bootstrap_servers=args.bootstrap.split(","),
                             group_id=args.group, enable_auto_commit=False,
                             auto_offset_reset="earliest", max_poll_records=args.batch,
                             # A crashed run's member stays in the group until its session
                             # times out (45 s by default): keep the restart quick.
                             session_timeout_ms=6_000, heartbeat_interval_ms=1_000)
    ends = _ends(consumer, args.topic)
    while not _caught_up(consumer, ends):
        for records in consumer.poll(timeout_ms=500).values():
            for record in records:
                payment = json.loads(record.value)
                db.execute("INSERT INTO payments_naive VALUES (?, ?)",
                           (payment["payment_id"], payment["amount"]))  # autocommitted
                crash.row_written()
        # Only now does Kafka learn how far we got. Had the group rebalanced meanwhile, the
        # commit fails: the next poll rejoins and these records come again.
        with contextlib.suppress(CommitFailedError, RebalanceInProgressError):
            consumer.commit()
    consumer.close()


def run_idempotent(args, db: sqlite3.Connection, crash: Crash) -> None:
    consumer = KafkaConsumer(bootstrap_servers=args.bootstrap.split(","), group_id=None,
                             enable_auto_commit=False, max_poll_records=args.batch)
    ends = _ends(consumer, args.topic)
    consumer.assign(list(ends))
    stored = dict(db.execute("SELECT partition, next_offset FROM kafka_offsets WHERE topic = ?",
                             (args.topic,)))
    for tp in ends:
        consumer.seek(tp, stored.get(tp.partition, 0))  # where the data says we stopped
    while not _caught_up(consumer, ends):
        batch = consumer.poll(timeout_ms=500)
        if not batch:
            continue
        db.execute("BEGIN")
        for tp, records in batch.items():
            for record in records:
                payment = json.loads(record.value)
                db.execute(
                    "INSERT INTO payments VALUES (?, ?, ?, ?, ?) ON CONFLICT (payment_id) DO "
                    "UPDATE SET amount = excluded.amount, topic = excluded.topic, "
                    "partition = excluded.partition, \"offset\" = excluded.\"offset\"",
                    (payment["payment_id"], payment["amount"], tp.topic, tp.partition,
                     record.offset))
                crash.row_written()
            db.execute("INSERT INTO kafka_offsets VALUES (?, ?, ?) ON CONFLICT (topic, partition) "
                       "DO UPDATE SET next_offset = excluded.next_offset",
                       (tp.topic, tp.partition, records[-1].offset + 1))
        db.execute("COMMIT")  # rows and offsets together, or neither
    consumer.close()


def _ends(consumer: KafkaConsumer, topic: str) -> dict[TopicPartition, int]:
    partitions = sorted(consumer.partitions_for_topic(topic) or ())
    return consumer.end_offsets([TopicPartition(topic, p) for p in partitions])


def _caught_up(consumer: KafkaConsumer, ends: dict[TopicPartition, int]) -> bool:
    assigned = consumer.assignment()
    return len(assigned) == len(ends) and all(
        consumer.position(tp) >= end for tp, end in ends.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--db", required=True)
    parser.add_argument("--mode", choices=("naive", "idempotent"), required=True)
    parser.add_argument("--group", default="lab7-naive-sink")
    parser.add_argument("--batch", type=int, default=200, help="max.poll.records")
    parser.add_argument("--crash-after", type=int, default=None)
    args = parser.parse_args()

    db = sqlite3.connect(args.db, isolation_level=None)  # we say when transactions begin
    # No fsync per commit: the lab kills processes, not the machine, and a killed process
    # loses nothing the operating system already has. (The naive sink commits every row.)
    db.execute("PRAGMA synchronous = OFF")
    db.executescript(SCHEMA)
    crash = Crash(args.crash_after)
    started = time.monotonic()
    (run_naive if args.mode == "naive" else run_idempotent)(args, db, crash)
    db.close()
    print(json.dumps({"mode": args.mode, "rows_written": crash.written,
                      "seconds": round(time.monotonic() - started, 2)}))


if __name__ == "__main__":
    main()
