"""One broker, one API: each Kafka API through the in-process clients and through
kafka-python against `minikafka serve`, on the same seeded cluster. Both doors must
observe the same thing, and that thing is what Apache Kafka 4.x answers (the expected
values below, with where Kafka decides them)."""
from __future__ import annotations

import pytest
from kafka import TopicPartition
from kafka.admin import OffsetSpec, OffsetTimestamp
from kafka.errors import OffsetOutOfRangeError
from kafka.protocol.consumer import IsolationLevel

from minikafka.core.checkers import acknowledged_writes, check

from .doors import Door, through_both

pytestmark = [pytest.mark.interop, pytest.mark.timeout(120)]

UNCOMMITTED, COMMITTED = "read_uncommitted", "read_committed"


def same_everywhere(seen: dict) -> object:
    """The one observation every door made (fails, naming them, when they differ)."""
    (door, first), *rest = seen.items()
    for other_door, other in rest:
        assert other == first, _difference(door, first, other_door, other)
    return first


def _difference(a: str, x: object, b: str, y: object, path: str = "") -> str:
    if isinstance(x, dict) and isinstance(y, dict):
        return "\n".join(_difference(a, x.get(k), b, y.get(k), f"{path}/{k}")
                         for k in sorted(set(x) | set(y), key=str) if x.get(k) != y.get(k))
    return f"{path or '/'}: {a} saw {x!r}, {b} saw {y!r}"


def read_all(consumer, expected: int, polls: int = 40) -> list[tuple[int, bytes]]:
    """(offset, value) of every record polled until `expected` arrived or polls ran out."""
    out: list[tuple[int, bytes]] = []
    for _ in range(polls):
        if len(out) >= expected:
            break
        for records in consumer.poll(timeout_ms=200).values():
            out.extend((r.offset, r.value) for r in records)
    return out


def reader(door: Door, topic: str, isolation: str, **config):
    config = {"auto_offset_reset": "earliest", **config}
    consumer = door.consumer(group_id=None, enable_auto_commit=False,
                             isolation_level=isolation, **config)
    consumer.assign([TopicPartition(topic, 0)])
    return consumer


# ---------------------------------------------------------------- ListOffsets


PRICES = TopicPartition("prices", 0)


def _open_transaction(door: Door):
    """Offsets 0-2 plain (timestamps 1000, 3000, 2000); offset 3 in an open transaction
    with the largest timestamp, 5000. The HW is 4, the LSO 3."""
    door.setup(lambda c: c.create_topic(PRICES.topic, 1, 3))
    plain = door.producer(acks="all")
    for value, ts in ((b"a", 1000), (b"b", 3000), (b"c", 2000)):
        plain.send(PRICES.topic, value, timestamp_ms=ts).get(timeout=10)
    tx = door.producer(transactional_id="prices-tx")
    tx.init_transactions()
    tx.begin_transaction()
    tx.send(PRICES.topic, b"open", timestamp_ms=5000)
    tx.flush()
    return tx


SPECS = {"earliest": OffsetSpec.EARLIEST, "latest": OffsetSpec.LATEST,
         "max-timestamp": OffsetSpec.MAX_TIMESTAMP, "2500": OffsetTimestamp(2500),
         "4000": OffsetTimestamp(4000)}


def _admin_offsets(door: Door) -> dict:
    admin = door.admin()
    out = {}
    for level in (IsolationLevel.READ_UNCOMMITTED, IsolationLevel.READ_COMMITTED):
        for name, spec in SPECS.items():
            found = admin.list_partition_offsets({PRICES: spec}, isolation_level=level)[PRICES]
            out[(level.name, name)] = (found.offset, found.timestamp, found.leader_epoch)
    return out


def _list_offsets_scenario(door: Door) -> dict:
    tx = _open_transaction(door)
    seen = {"open": _admin_offsets(door)}
    tx.commit_transaction()
    door.settle(PRICES.topic)
    after = door.admin().list_partition_offsets({PRICES: OffsetSpec.MAX_TIMESTAMP},
                                                isolation_level=IsolationLevel.READ_COMMITTED)
    seen["committed max-timestamp offset"] = after[PRICES].offset
    seen["marker newer than 5000"] = after[PRICES].timestamp > 5000
    return seen


def test_list_offsets_during_an_open_transaction():
    """Kafka 4.x (UnifiedLog.fetchOffsetByTimestamp, then ReplicaManager.fetchOffset):
    max-timestamp and timestamp lookups search the whole log, and an answer at or past
    the HW (read_uncommitted) or the LSO (read_committed) becomes offset -1."""
    seen = same_everywhere(through_both(_list_offsets_scenario))
    assert seen["open"] == {
        ("READ_UNCOMMITTED", "earliest"): (0, -1, 0),
        ("READ_UNCOMMITTED", "latest"): (4, -1, 0),
        ("READ_UNCOMMITTED", "max-timestamp"): (3, 5000, 0),  # inside the open transaction
        ("READ_UNCOMMITTED", "2500"): (1, 3000, 0),
        ("READ_UNCOMMITTED", "4000"): (3, 5000, 0),
        ("READ_COMMITTED", "earliest"): (0, -1, 0),
        ("READ_COMMITTED", "latest"): (3, -1, 0),  # the LSO
        ("READ_COMMITTED", "max-timestamp"): (-1, -1, None),  # offset 3 is past the LSO
        ("READ_COMMITTED", "2500"): (1, 3000, 0),
        ("READ_COMMITTED", "4000"): (-1, -1, None),
    }
    # Once committed, the largest timestamp is the commit marker's (offset 4): Kafka's
    # segments count control batches in their max timestamp too.
    assert seen["committed max-timestamp offset"] == 4
    assert seen["marker newer than 5000"]


def _consumer_offsets_scenario(door: Door) -> dict:
    _open_transaction(door)
    out = {}
    for level in (UNCOMMITTED, COMMITTED):
        consumer = reader(door, PRICES.topic, level)
        found = consumer.offsets_for_times({PRICES: 4000, })[PRICES]
        early = consumer.offsets_for_times({PRICES: 2500})[PRICES]
        out[level] = {
            "4000": None if found is None else (found.offset, found.timestamp),
            "2500": None if early is None else (early.offset, early.timestamp),
            "end": consumer.end_offsets([PRICES])[PRICES],
            "beginning": consumer.beginning_offsets([PRICES])[PRICES],
        }
    return out


def test_consumer_offsets_for_times_honours_read_committed():
    seen = same_everywhere(through_both(_consumer_offsets_scenario))
    assert seen == {
        UNCOMMITTED: {"4000": (3, 5000), "2500": (1, 3000), "end": 4, "beginning": 0},
        COMMITTED: {"4000": None, "2500": (1, 3000), "end": 3, "beginning": 0},
    }


# ---------------------------------------------------------------- CreateTopics


def _create_topics_scenario(door: Door) -> dict:
    too_many = {"wide": {"num_partitions": 1, "replication_factor": 4}}
    fine = {"fine": {"num_partitions": 2, "replication_factor": 2}}
    return {
        "rf 4, validate_only": door.create_topics(too_many, True),
        "rf 4, real": door.create_topics(too_many, False),
        "fine, validate_only": door.create_topics(fine, True),
        "fine exists after validate_only": door.setup(lambda c: "fine" in c.list_topics()),
        "fine, real": door.create_topics(fine, False),
        "fine again, validate_only": door.create_topics(fine, True),
        "fine again, real": door.create_topics(fine, False),
        "partitions": door.setup(lambda c: c.partitions_for("fine")),
    }


def test_create_topics_validate_only_answers_as_a_real_create():
    seen = same_everywhere(through_both(_create_topics_scenario))
    rf = (38, "The target replication factor of 4 cannot be reached because only 3 "
              "broker(s) are registered.")
    exists = (36, "Topic 'fine' already exists.")
    assert seen == {
        "rf 4, validate_only": {"wide": rf}, "rf 4, real": {"wide": rf},
        "fine, validate_only": {"fine": (0, None)},
        "fine exists after validate_only": False,
        "fine, real": {"fine": (0, None)},
        "fine again, validate_only": {"fine": exists}, "fine again, real": {"fine": exists},
        "partitions": 2,
    }


def test_validate_only_leaves_placement_unchanged():
    """A dry run draws nothing from the seeded RNG: the real create that follows places
    replicas as if the dry run had not happened."""
    def placement(door: Door, dry_run: bool) -> list:
        if dry_run:
            door.create_topics({"t": {"num_partitions": 3, "replication_factor": 2}}, True)
        door.create_topics({"t": {"num_partitions": 3, "replication_factor": 2}}, False)
        return door.setup(lambda c: [p.replicas for p in c.describe_topic("t").partitions])

    with_dry_run = through_both(lambda door: placement(door, True))
    without = through_both(lambda door: placement(door, False))
    assert same_everywhere(with_dry_run) == same_everywhere(without)


# ---------------------------------------------------------------- Fetch


def _fetch_scenario(door: Door) -> dict:
    """Offsets: a1 0, a2 1, abort marker 2, c1 3, c2 4, commit marker 5, p 6. The same
    producer aborts and then commits: a reader must drop only the first transaction."""
    door.setup(lambda c: c.create_topic("orders", 1, 3))
    tx = door.producer(transactional_id="orders-tx")
    tx.init_transactions()
    tx.begin_transaction()
    tx.send("orders", b"a1")
    tx.send("orders", b"a2")
    tx.flush()
    tx.abort_transaction()
    tx.begin_transaction()
    tx.send("orders", b"c1")
    tx.send("orders", b"c2")
    tx.commit_transaction()
    door.producer(acks="all").send("orders", b"p").get(timeout=10)
    return {level: read_all(reader(door, "orders", level), 5 if level == UNCOMMITTED else 3)
            for level in (UNCOMMITTED, COMMITTED)}


def test_fetch_drops_aborted_transactions_for_read_committed():
    seen = same_everywhere(through_both(_fetch_scenario))
    assert seen == {
        UNCOMMITTED: [(0, b"a1"), (1, b"a2"), (3, b"c1"), (4, b"c2"), (6, b"p")],
        COMMITTED: [(3, b"c1"), (4, b"c2"), (6, b"p")],
    }


# ---------------------------------------------------------------- DeleteRecords


def _delete_records_scenario(door: Door) -> dict:
    tp = TopicPartition("logs", 0)
    door.setup(lambda c: c.create_topic(tp.topic, 1, 3))
    producer = door.producer(acks="all")
    for i in range(5):
        producer.send(tp.topic, b"v%d" % i).get(timeout=10)
    admin = door.admin()
    out = {"delete to 2": admin.delete_records({tp: 2})[tp]["low_watermark"]}
    consumer = reader(door, tp.topic, UNCOMMITTED)
    out["beginning"] = consumer.beginning_offsets([tp])[tp]
    out["read"] = read_all(consumer, 3)
    strict = reader(door, tp.topic, UNCOMMITTED, auto_offset_reset="none")
    strict.seek(tp, 0)  # below the new log start offset
    out["fetch below the log start"] = _poll_error(strict)
    with pytest.raises(OffsetOutOfRangeError) as raised:
        admin.delete_records({tp: 99})
    out["beyond the HW"] = str(raised.value).split(": ", 1)[-1]
    out["delete to the HW"] = admin.delete_records({tp: -1})[tp]["low_watermark"]
    return out


def _poll_error(consumer, polls: int = 20) -> str | None:
    """The class name of the error poll() raises, within a few polls."""
    for _ in range(polls):
        try:
            consumer.poll(timeout_ms=200)
        except Exception as exc:  # the error is the observation
            return type(exc).__name__
    return None


def test_delete_records():
    seen = same_everywhere(through_both(_delete_records_scenario))
    assert seen == {
        "delete to 2": 2, "beginning": 2, "read": [(2, b"v2"), (3, b"v3"), (4, b"v4")],
        "fetch below the log start": "OffsetOutOfRangeError",
        "beyond the HW": "Error deleting records from topic logs partition 0",
        "delete to the HW": 5,
    }


# ---------------------------------------------------------------- Produce


def _produce_scenario(door: Door) -> dict:
    door.setup(lambda c: c.create_topic("events", 2, 3))
    sent = []
    for acks in ("all", 1):
        producer = door.producer(acks=acks)
        for i in range(4):
            value = b"%s-%d" % (str(acks).encode(), i)
            producer.send("events", value, partition=i % 2).get(timeout=10)
            sent.append(value)
        producer.flush()
    for p in range(2):
        door.settle("events", p)  # acks=1 answers before the followers have the record

    def history(cluster):
        acked = acknowledged_writes(cluster.journal)
        observed = {}
        for p in range(2):
            replica = cluster.leader_replica("events", p)
            batches = replica.log.read(0, replica.high_watermark, 1 << 30)
            observed[("events", p)] = [(r.offset, r.value) for b in batches
                                       for r in b.iter_records()]
        events = cluster.journal.of_kind("produce.acked")
        inits = [(e.producer_id, e.epoch, e.fields.get("transactional_id"))
                 for e in cluster.journal.of_kind("producer.init")]
        return {"acked": acked, "verdict": check(acked, observed).summary(),
                "acks": [e.acks for e in events], "counts": [e.fields["count"] for e in events],
                "inits": inits}

    return door.setup(history)


def test_produce_journals_acknowledged_writes_from_every_door():
    """The checkers read "produce.acked" events: a kafka-python producer's writes must
    leave the same history as the in-process producer's."""
    seen = same_everywhere(through_both(_produce_scenario))
    assert [(w.partition, w.offset, w.value) for w in seen["acked"]] == [
        (0, 0, b"all-0"), (1, 0, b"all-1"), (0, 1, b"all-2"), (1, 1, b"all-3"),
        (0, 2, b"1-0"), (1, 2, b"1-1"), (0, 3, b"1-2"), (1, 3, b"1-3")]
    assert seen["verdict"] == "8 acknowledged, 8 read back: 0 lost, 0 duplicated, 0 reordered"
    assert seen["acks"] == [-1] * 4 + [1] * 4
    assert seen["counts"] == [1] * 8
    # Idempotent by default in both clients, which needs acks=all: the acks=1 producer
    # asks for no producer id.
    assert seen["inits"] == [(0, 0, None)]


def _transactional_init_scenario(door: Door) -> list:
    door.setup(lambda c: c.create_topic("t", 1, 3))
    for _ in range(2):  # the second instance fences the first: the epoch goes up
        door.producer(transactional_id="tx").init_transactions()
    return door.setup(lambda c: [(e.producer_id, e.epoch, e.fields.get("transactional_id"))
                                 for e in c.journal.of_kind("producer.init")])


def test_init_producer_id_is_journaled_from_every_door():
    assert same_everywhere(through_both(_transactional_init_scenario)) == [
        (0, 0, "tx"), (0, 1, "tx")]
