"""Worked answers to the "Your turn" exercises, one function each.

A notebook never contains these: ``exercises.solution(id)`` (or the feedback's "Show a
solution" button) prints a function's source on request, and the tests check that each
one passes its exercise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka.structs import OffsetAndMetadata

from ..core.share.partition import AcknowledgeType

if TYPE_CHECKING:
    from ..cluster import Cluster

# -- lessons ----------------------------------------------------------------------------------


def billing_settings() -> dict:
    # A group of its own (billing's progress is not shipping's), starting from the
    # oldest order the first time; committed offsets make a restart resume.
    return {"group_id": "billing", "auto_offset_reset": "earliest"}


def last_report(partitions: dict, truck: bytes) -> tuple[int, int]:
    # A key always lands in the same partition, and offsets grow within a partition:
    # the truck's last report is its highest offset in that one partition.
    found = [(p, r.offset) for p, records in partitions.items()
             for r in records if r.key == truck]
    return max(found, key=lambda po: po[1])


def broker_racks() -> dict:
    # broker.rack names where a broker really is: the placer then spreads each
    # partition's replicas over both rooms.
    return {1: "room-a", 2: "room-a", 3: "room-a", 4: "room-b", 5: "room-b", 6: "room-b"}


def key_for(report: dict) -> str:
    # All reports of one truck share a key, so they share a partition and stay in order.
    return report["truck_id"]


def high_watermark(log_end_offsets: dict, isr: list) -> int:
    # A record is committed once every in-sync replica has it: the smallest log end
    # offset among the ISR.
    return min(log_end_offsets[b] for b in isr)


def durability_settings() -> dict:
    # acks=all waits for the whole ISR; min.insync.replicas=2 refuses a write that only
    # one replica would hold; no unclean election lets a stale replica lead.
    return {"acks": "all", "min.insync.replicas": 2, "unclean.leader.election.enable": False}


def process_batch(consumer: Any, producer: Any, batch: dict) -> None:
    # The outputs and the input offsets commit in one transaction: both or neither.
    producer.begin_transaction()
    for records in batch.values():
        for record in records:
            producer.send("invoices", key=record.key, value=record.value)
    offsets = {tp: OffsetAndMetadata(records[-1].offset + 1, "", None)
               for tp, records in batch.items()}
    producer.send_offsets_to_transaction(offsets, consumer.group_metadata())
    producer.commit_transaction()


def batching_settings() -> dict:
    # Wait a little so batches fill, and compress them: a batch of similar JSON
    # compresses far better than one record.
    return {"linger_ms": 50, "batch_size": 16_384, "compression": "zstd"}


def seek_to_time(consumer: Any, tp: Any, timestamp_ms: int) -> None:
    # offsets_for_times finds the first offset with a timestamp >= the one asked for.
    found = consumer.offsets_for_times({tp: timestamp_ms})[tp]
    if found is None:  # nothing that new yet: start at the end
        consumer.seek_to_end(tp)
    else:
        consumer.seek(tp, found.offset)


def range_assign(members: list, partitions: int) -> dict:
    # Contiguous ranges, the first (partitions % members) members one partition longer.
    share, extra = divmod(partitions, len(members))
    out, start = {}, 0
    for i, member in enumerate(members):
        length = share + (1 if i < extra else 0)
        out[member] = list(range(start, start + length))
        start += length
    return out


def offsets_to_commit(batch: dict) -> dict:
    # The committed offset is the next record to read: one past the last one processed.
    return {tp: OffsetAndMetadata(records[-1].offset + 1, "", None)
            for tp, records in batch.items()}


def retention_config() -> dict:
    # Retention drops whole segments once their newest record is older than
    # retention.ms: daily segments keep 7 to 8 days.
    return {"retention.ms": 7 * 24 * 3_600_000, "segment.ms": 24 * 3_600_000}


def voters_needed(failures: int) -> int:
    # A Raft quorum needs a majority: 2f + 1 voters survive f failures.
    return 2 * failures + 1


def document_id(record: Any) -> str:
    # Where the record sits in Kafka identifies it: a replay writes the same id again.
    return f"{record.topic}-{record.partition}-{record.offset}"


def should_page(metrics: dict) -> bool:
    # Page when clients are hurt now; under-replication alone waits for the morning.
    totals: dict = {}
    for values in metrics.values():  # one dict per node that answered
        for name, value in values.items():
            if isinstance(value, (int, float)):
                totals[name] = totals.get(name, 0) + value
    return (totals.get("kafka.controller:type=KafkaController,name=ActiveControllerCount", 0) != 1
            or totals.get("kafka.controller:type=KafkaController,name=OfflinePartitionsCount", 0) > 0
            or totals.get("kafka.server:type=ReplicaManager,name=UnderMinIsrPartitionCount", 0) > 0)

def test_bad_orders_are_parked(cluster: Cluster, run_app: Any) -> None:
    from minikafka.course.reading import read_topic

    # A poison pill between two good orders; then read BOTH outputs back.
    producer = cluster.producer()
    for value in (b'{"id": 1, "amount": 10}', b"not json", b'{"id": 2, "amount": 5}'):
        producer.send("orders", value=value)
    producer.flush()
    run_app()
    valid = read_topic(cluster, "orders.valid")[0]
    parked = read_topic(cluster, "orders.DLT")[0]
    assert len(valid) == 2, "both good orders are priced"
    assert [r.value for r in parked] == [b"not json"], "the bad record is parked unchanged"
    assert dict(parked[0].headers)["error.class"] == b"JSONDecodeError", "and says why"

def rolling_restart(cluster: Cluster) -> None:
    from minikafka.core import metrics as m

    for broker in sorted(cluster.brokers):
        cluster.stop_broker(broker)  # controlled shutdown: leaderships move first
        cluster.advance(5_000)  # the upgrade, the new config, the reboot
        cluster.start_broker(broker)
        # Wait until every partition is fully replicated again before the next one.
        while m.totals(m.cluster_metrics(cluster))[m.URP] > 0:
            cluster.advance(1_000)
def to_consumer_protocol(classic: dict) -> dict:
    # The broker assigns and times out members now: drop the client-side assignor,
    # session timeout and heartbeat interval; ask for the broker's assignor by name.
    dropped = {"partition.assignment.strategy", "session.timeout.ms", "heartbeat.interval.ms"}
    config = {k: v for k, v in classic.items() if k not in dropped}
    return {**config, "group.protocol": "consumer", "group.remote.assignor": "uniform"}


def acknowledge_type(record: Any, error: Exception | None) -> Any:
    # Done: accept. A timeout may pass: release, so it comes again (delivery count + 1).
    # A record that cannot be parsed never will be: reject, so it is not tried again.
    if error is None:
        return AcknowledgeType.ACCEPT
    if isinstance(error, TimeoutError):
        return AcknowledgeType.RELEASE
    return AcknowledgeType.REJECT


def truck_windows() -> Any:
    # Counts per minute: tumbling 60 s windows. Reports come up to 40 s late: a window must
    # stay open 40 s after its end to take them, and no longer than the dashboard's minute.
    from .streams import TimeWindows

    return TimeWindows(size_ms=60_000, grace_ms=40_000)


# -- labs -------------------------------------------------------------------------------------


def create_command(bootstrap: str) -> str:
    # kafka-topics' flags; a topic-level config goes with --config key=value.
    return (f"topics --bootstrap-server {bootstrap} --create --topic lab1-orders "
            "--partitions 6 --replication-factor 3 --config min.insync.replicas=2")


def make_producer(bootstrap: str) -> Any:
    from kafka import KafkaProducer

    # acks=all waits for the in-sync replicas; idempotence makes retries write once
    # and in order.
    return KafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True)


def group_lag(bootstrap: str, group: str, topic: str) -> dict:
    from kafka import KafkaAdminClient, KafkaConsumer

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        offsets = admin.list_group_offsets(group)[group]
        committed = {tp: om.offset for tp, om in offsets.items() if tp.topic == topic}
        ends = consumer.end_offsets(list(committed))
        # Lag: records written but not yet committed by the group, per partition.
        return {tp.partition: ends[tp] - committed[tp] for tp in committed}
    finally:
        admin.close()
        consumer.close()


def under_replicated(table: list) -> list:
    # A partition is under-replicated while its ISR is smaller than its replica list.
    return sorted(p["partition"] for p in table if len(p["isr"]) < len(p["replicas"]))


def starting_offsets(bootstrap: str, topic: str, timestamp_ms: int) -> str:
    import json

    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        tps = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic)]
        found = consumer.offsets_for_times(dict.fromkeys(tps, timestamp_ms))
        # Spark's JSON: {"topic": {"partition": offset}}; -1 means "latest" (no record
        # that new in this partition).
        return json.dumps({topic: {str(tp.partition): found[tp].offset if found[tp] else -1
                                   for tp in tps}})
    finally:
        consumer.close()


def read_all(bootstrap: str, topic: str) -> list:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    try:
        tps = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        ends = consumer.end_offsets(tps)  # a batch job reads up to the ends it saw at start
        values = []
        while any(consumer.position(tp) < ends[tp] for tp in tps):
            for records in consumer.poll(timeout_ms=1_000).values():
                values.extend(r.value for r in records)
        return values
    finally:
        consumer.close()


def save_payment(db: Any, payment: dict) -> None:
    # An upsert: a replayed payment overwrites its own row instead of adding one.
    db.execute("INSERT INTO payments (payment_id, amount) VALUES (?, ?) "
               "ON CONFLICT (payment_id) DO UPDATE SET amount = excluded.amount",
               (payment["payment_id"], payment["amount"]))


def window_counts(runs: list, window_s: int, delay_s: int) -> dict:
    watermark, newest = None, None
    state: dict = {}
    written: dict = {}
    for run in runs:
        for t in run:
            start = t // window_s * window_s
            # A window that ended at or before the watermark is final: Spark drops the record.
            if watermark is None or start + window_s > watermark:
                state[start] = state.get(start, 0) + 1
        # The watermark moves only after the run, from the newest event time seen so far.
        newest = max([*run, newest]) if newest is not None else max(run)
        watermark = newest - delay_s
        for start in sorted(state):
            if start + window_s <= watermark:
                written[start] = state.pop(start)
    return written


def billing_acls() -> list:
    from kafka import admin as k

    # READ on every topic named orders-...: the dash keeps orders_archive out. READ also
    # allows DESCRIBE, which the consumer's metadata requests need.
    topics = k.ResourcePattern(k.ResourceType.TOPIC, "orders-", k.ACLResourcePatternType.PREFIXED)
    # READ on this one group, literal: joining, fetching offsets and committing them.
    group = k.ResourcePattern(k.ResourceType.GROUP, "billing-app", k.ACLResourcePatternType.LITERAL)
    return [k.ACL("User:billing", "*", k.ACLOperation.READ, k.ACLPermissionType.ALLOW, topics),
            k.ACL("User:billing", "*", k.ACLOperation.READ, k.ACLPermissionType.ALLOW, group)]


def tiered_config() -> dict:
    # Tiered storage on; 30 minutes in all (readable, then deleted everywhere);
    # 5 minutes on the broker's disk, the rest served from the remote store.
    return {"remote.storage.enable": "true", "retention.ms": 30 * 60_000,
            "local.retention.ms": 5 * 60_000}


def principal_mapping_rules() -> str:
    # [^,]+ stops at the first comma: the common name alone. The whole subject is
    # anchored (^...$), so OU=course-admins or another O= falls through to DEFAULT,
    # which keeps every other certificate's subject instead of refusing it.
    return ("RULE:^CN=([^,]+),OU=course,O=minikafka$/$1/L, "
            "RULE:^CN=([^,]+),OU=services,O=minikafka$/svc-$1/, "
            "DEFAULT")
