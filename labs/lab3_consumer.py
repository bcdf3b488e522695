"""Lab 3: one consumer process of a consumer group, writing down everything it does.

    python lab3_consumer.py --bootstrap localhost:9092 --topic lab3-orders \
        --group lab3-shipping --name c1 --log c1.jsonl

Each line of the log file is one JSON event, with the time it happened:

    {"t": ..., "event": "assigned", "partitions": [0, 1]}     the rebalance listener
    {"t": ..., "event": "revoked", "partitions": [0, 1]}
    {"t": ..., "event": "records", "records": [[0, 17], [0, 18]]}   (partition, offset) done
    {"t": ..., "event": "committed"}
    {"t": ..., "event": "commit-failed", "error": "CommitFailedError"}

Offsets are committed after each poll's records are processed (at-least-once): if the
process dies between processing and committing, whoever takes over its partitions
processes those records again. A commit also fails when the group rebalanced while the
records were being processed (this process paused longer than session.timeout.ms, or
another member joined): the partitions may belong to someone else by then. That is no
reason to stop: the failure is logged, the next poll rejoins the group, and whoever owns
those partitions now processes the uncommitted records again. SIGTERM stops the process
cleanly (it leaves the group at once); SIGKILL is a crash (the group waits
session.timeout.ms before rebalancing).
"""
from __future__ import annotations

import argparse
import json
import signal
import time

from kafka import ConsumerRebalanceListener, KafkaConsumer
from kafka.errors import CommitFailedError, RebalanceInProgressError


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--group", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--work-ms", type=float, default=2.0, help="time spent per record")
    args = parser.parse_args()

    log_file = open(args.log, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 - lives as long as the process

    def log(event: str, **fields) -> None:
        log_file.write(json.dumps({"t": time.time(), "event": event, **fields}) + "\n")

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked):
            log("revoked", partitions=sorted(tp.partition for tp in revoked))

        def on_partitions_assigned(self, assigned):
            log("assigned", partitions=sorted(tp.partition for tp in assigned))

    stopping = False

    def stop(*_):
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    consumer = KafkaConsumer(
        bootstrap_servers=args.bootstrap.split(","), group_id=args.group, client_id=args.name,
        enable_auto_commit=False, auto_offset_reset="earliest",
        # Kafka's default session timeout is 45 s; a short one makes a crash visible sooner.
        session_timeout_ms=6_000, heartbeat_interval_ms=1_000, max_poll_records=25)
    # The topic's partitions before joining, and polls of a second: kafka-python 3.0.12
    # can lose an assignment for good (the member owns nothing until restarted) when a
    # leader that joined without the topic's metadata rejoins and a poll's time runs out
    # during that rejoin (docs/fidelity.md, "Open observations"). With 200 ms polls and no
    # metadata first, 6 of 30 trials of three members joining ended so; with 1 s, none.
    consumer.partitions_for_topic(args.topic)
    consumer.subscribe([args.topic], listener=Listener())
    log("started")
    while not stopping:
        batch = consumer.poll(timeout_ms=1000)
        done = []
        for tp, records in batch.items():
            for record in records:
                time.sleep(args.work_ms / 1000)  # the work a real consumer would do
                done.append([tp.partition, record.offset])
        if done:
            log("records", records=done)
            try:
                consumer.commit()
            except (CommitFailedError, RebalanceInProgressError) as exc:
                log("commit-failed", error=type(exc).__name__)
            else:
                log("committed")
    consumer.close()  # leaves the group: the others rebalance at once
    log("closed")


if __name__ == "__main__":
    main()
