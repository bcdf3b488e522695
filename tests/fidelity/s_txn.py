"""Transactions, the last stable offset, and idempotence."""
from __future__ import annotations

from kafka import TopicPartition
from kafka.structs import OffsetAndMetadata

from .registry import (
    CONFLUENT,
    attempt,
    ck_drain,
    ck_flush,
    ck_rows,
    drain,
    rows,
    scenario,
    settle_poll,
)


def _read(door, topic: str, isolation: str, count: int) -> list:
    consumer = door.consumer(topic, auto_offset_reset="earliest", enable_auto_commit=False,
                             isolation_level=isolation)
    return rows(drain(consumer, count))


@scenario("transactions", lesson="06", in_process=True)
def committed_and_aborted_records(door):
    """Commit, abort, commit: read_committed skips the aborted records, read_uncommitted
    shows them; commit and abort markers take offsets of their own."""
    topic = door.topic("txn")
    door.create_topic(topic, partitions=1)
    producer = door.producer(transactional_id=door.topic("tx"))
    producer.init_transactions()
    for values, commit in [(["a1", "a2"], True), (["b1", "b2"], False), (["c1"], True)]:
        producer.begin_transaction()
        for v in values:
            producer.send(topic, key=b"k", value=v.encode())
        producer.flush(15)
        producer.commit_transaction() if commit else producer.abort_transaction()
    tp = TopicPartition(topic, 0)
    ends = {iso: door.consumer(isolation_level=iso, enable_auto_commit=False)
            .end_offsets([tp])[tp] for iso in ("read_committed", "read_uncommitted")}
    return {"read_committed": _read(door, topic, "read_committed", 3),
            "read_uncommitted": _read(door, topic, "read_uncommitted", 5),
            "end_offsets": ends}


@scenario("transactions", lesson="06", in_process=True)
def open_transaction_holds_the_lso(door):
    """An open transaction holds the LSO: read_committed stops before it, even for later
    non-transactional records, until it commits."""
    topic = door.topic("lso")
    door.create_topic(topic, partitions=1)
    tp = TopicPartition(topic, 0)
    plain = door.producer()
    plain.send(topic, value=b"before").get(timeout=15)
    txn = door.producer(transactional_id=door.topic("tx"))
    txn.init_transactions()
    txn.begin_transaction()
    txn.send(topic, value=b"in-txn").get(timeout=15)
    plain.send(topic, value=b"after").get(timeout=15)

    def ends():
        return {iso: door.consumer(isolation_level=iso, enable_auto_commit=False)
                .end_offsets([tp])[tp] for iso in ("read_committed", "read_uncommitted")}

    committed_reader = door.consumer(topic, auto_offset_reset="earliest",
                                     enable_auto_commit=False, isolation_level="read_committed")
    while_open = rows(drain(committed_reader, 1)) + rows(settle_poll(committed_reader))
    open_ends = ends()
    txn.commit_transaction()
    after_commit = rows(drain(committed_reader, 2))
    return {"while_open": while_open, "ends_while_open": open_ends,
            "after_commit": after_commit, "ends_after_commit": ends()}


@scenario("transactions", lesson="06", client=CONFLUENT)
def confluent_transactions(door):
    """confluent-kafka's transactional producer and read_committed / read_uncommitted
    consumers see the same records at the same offsets."""
    topic = door.topic("txn-ck")
    door.create_topic(topic, partitions=1)
    producer = door.ck_producer(**{"transactional.id": door.topic("tx")})
    producer.init_transactions(15)
    for values, commit in [(["a1", "a2"], True), (["b1"], False), (["c1", "c2"], True)]:
        producer.begin_transaction()
        for v in values:
            producer.produce(topic, key=b"k", value=v.encode(), partition=0)
        producer.flush(15)
        producer.commit_transaction(15) if commit else producer.abort_transaction(15)
    out = {}
    for iso, n in [("read_committed", 4), ("read_uncommitted", 5)]:
        consumer = door.ck_consumer(**{"group.id": door.topic("g"), "isolation.level": iso,
                                       "auto.offset.reset": "earliest",
                                       "enable.auto.commit": False})
        consumer.subscribe([topic])
        out[iso] = ck_rows(ck_drain(consumer, n))
    return out


@scenario("transactions", lesson="10", in_process=True)
def consume_transform_produce(door):
    """send_offsets_to_transaction: the group's offset commits with the output records,
    and an aborted transaction commits neither."""
    source, sink, group = door.topic("src"), door.topic("sink"), door.topic("g")
    door.create_topic(source, partitions=1)
    door.create_topic(sink, partitions=1)
    plain = door.producer()
    for i in range(4):
        plain.send(source, value=f"in{i}".encode())
    plain.flush(15)
    consumer = door.consumer(source, group_id=group, auto_offset_reset="earliest",
                             enable_auto_commit=False, isolation_level="read_committed")
    records = drain(consumer, 4)
    producer = door.producer(transactional_id=door.topic("tx"))
    producer.init_transactions()
    tp = TopicPartition(source, 0)
    outcome = {}
    for upto, commit in [(2, True), (4, False)]:
        producer.begin_transaction()
        for r in records[upto - 2:upto]:
            producer.send(sink, value=r.value.upper())
        producer.send_offsets_to_transaction({tp: OffsetAndMetadata(upto, "", -1)},
                                             consumer.group_metadata())
        producer.commit_transaction() if commit else producer.abort_transaction()
        outcome[f"upto{upto}"] = consumer.committed(tp)
    return {"committed": outcome, "sink": _read(door, sink, "read_committed", 2)}


@scenario("transactions", lesson="06", in_process=True)
def a_new_producer_fences_the_old(door):
    """Two producers with one transactional.id: the newer one's init fences the older,
    whose next transactional call fails."""
    topic = door.topic("fence")
    door.create_topic(topic, partitions=1)
    tid = door.topic("tx")
    old = door.producer(transactional_id=tid)
    old.init_transactions()
    old.begin_transaction()
    old.send(topic, value=b"old").get(timeout=15)
    new = door.producer(transactional_id=tid)
    new.init_transactions()
    fenced = attempt(lambda: (old.send(topic, value=b"old2").get(timeout=15),
                              old.commit_transaction()) and "committed")
    new.begin_transaction()
    new.send(topic, value=b"new").get(timeout=15)
    new.commit_transaction()
    return {"old_commit": fenced, "read_committed": [r[3] for r in
                                                       _read(door, topic, "read_committed", 1)]}


@scenario("idempotence", lesson="06")
def idempotent_producer_state(door):
    """An idempotent producer's records: offsets, and the broker's producer state
    (DescribeProducers: epoch and last sequence; the producer id is left out)."""
    topic = door.topic("idem")
    door.create_topic(topic, partitions=1)
    producer = door.producer(enable_idempotence=True, acks="all")
    offsets = [producer.send(topic, value=f"v{i}".encode()).get(timeout=15).offset
               for i in range(10)]
    tp = TopicPartition(topic, 0)
    states = door.admin().describe_producers([tp])[tp]
    return {"offsets": offsets,
            "producers": [{"epoch": s.producer_epoch, "last_sequence": s.last_sequence,
                           "txn_start_offset": s.current_transaction_start_offset}
                          for s in states.active_producers]}


@scenario("idempotence", lesson="06", in_process=True)
def idempotent_sends_keep_order(door):
    """acks=all, idempotent, 5 requests in flight: every record once, in send order."""
    topic = door.topic("idem-order")
    door.create_topic(topic, partitions=2)
    producer = door.producer(enable_idempotence=True, acks="all",
                             max_in_flight_requests_per_connection=5, linger_ms=1)
    for i in range(40):
        producer.send(topic, key=f"k{i % 3}".encode(), value=f"{i}".encode())
    producer.flush(15)
    consumer = door.consumer(topic, auto_offset_reset="earliest", enable_auto_commit=False)
    return {"records": rows(drain(consumer, 40))}


@scenario("idempotence", lesson="06", client=CONFLUENT)
def confluent_idempotent_producer(door):
    """librdkafka with enable.idempotence=true: offsets in order, no duplicates."""
    topic = door.topic("idem-ck")
    door.create_topic(topic, partitions=1)
    producer = door.ck_producer(**{"enable.idempotence": True, "linger.ms": 2})
    acked = []
    for i in range(30):
        producer.produce(topic, value=f"{i}".encode(),
                         on_delivery=lambda e, m: acked.append([m.offset(), m.value().decode()]))
    ck_flush(producer)
    consumer = door.ck_consumer(**{"group.id": door.topic("g"), "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    return {"acked": sorted(acked), "read": ck_rows(ck_drain(consumer, 30))}
