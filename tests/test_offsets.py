"""Committed offsets: where they live (__consumer_offsets), what they look like, who reads
them (the next owner of a partition), and how long they last."""

from __future__ import annotations

import pytest
from group_helpers import TOPIC, consumer, drain
from kafka.errors import (
    CommitFailedError,
    IllegalStateError,
    NoOffsetForPartitionError,
    OffsetMetadataTooLargeError,
    UnknownTopicOrPartitionError,
)
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)
from kafka.structs import OffsetAndMetadata, TopicPartition

from minikafka.cluster import Cluster, settle_group
from minikafka.core.errors import KafkaCoreError
from minikafka.core.groups import classic as g
from minikafka.core.offsets import (
    OFFSETS_TOPIC,
    ConsumerAssignment,
    ConsumerSubscription,
    GroupKey,
    GroupValue,
    MemberMetadata,
    OffsetKey,
    OffsetValue,
    decode_assignment,
    decode_key,
    decode_subscription,
    decode_value,
    encode_assignment,
    encode_subscription,
    format_record,
    group_metadata_key,
    group_metadata_value,
    java_string_hash,
    offset_commit_key,
    offset_commit_value,
    partition_for,
)

TP0, TP1, TP2 = (TopicPartition(TOPIC, p) for p in range(3))


def cluster_with(records_per_partition: int = 10, brokers: int = 3, partitions: int = 3,
                 seed: int = 5, **broker_config) -> Cluster:
    cluster = Cluster(brokers=brokers, seed=seed, broker_config=broker_config or None)
    cluster.create_topic(TOPIC, partitions=partitions, replication_factor=min(3, brokers))
    produce(cluster, records_per_partition, partitions)
    return cluster


def produce(cluster: Cluster, per_partition: int, partitions: int = 3, tag: str = "") -> None:
    if not per_partition:
        return
    producer = cluster.producer()
    for p in range(partitions):
        for i in range(per_partition):
            producer.send(TOPIC, value=f"{tag}{p}:{i}".encode(), partition=p)
    producer.flush()


def offsets_records(cluster: Cluster, group_id: str) -> list[tuple]:
    """What a student sees reading the group's partition of __consumer_offsets."""
    reader = cluster.consumer(auto_offset_reset="earliest")
    reader.assign([TopicPartition(OFFSETS_TOPIC, partition_for(group_id))])
    out = []
    for _ in range(5):
        for records in reader.poll(timeout_ms=500).values():
            for r in records:
                key = decode_key(r.key)
                out.append((key, decode_value(key, r.value)))
    return out


# -- where a group lives ------------------------------------------------------------------------

def test_java_string_hash_matches_java():
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("") == 0
    assert java_string_hash("Aa") == java_string_hash("BB") == 2112  # a classic collision
    assert java_string_hash("abcdef") == -1424385949  # int32 overflow
    assert java_string_hash("\N{GRINNING FACE}") == 0xD83D * 31 + 0xDE00  # UTF-16 units


def test_group_partition_uses_kafkas_utils_abs():
    assert java_string_hash("polygenelubricants") == -(2**31)
    # Math.abs(MIN_VALUE) stays negative (Java's % would give -48), Python's abs gives
    # 48; Kafka's Utils.abs maps it to 0.
    assert abs(-(2**31)) % 50 == 48
    assert partition_for("polygenelubricants") == 0
    assert partition_for("billing") == abs(java_string_hash("billing")) % 50
    assert partition_for("billing", 10) == abs(java_string_hash("billing")) % 10


def test_offsets_topic_appears_on_first_use_with_50_partitions():
    cluster = cluster_with(records_per_partition=0)
    assert OFFSETS_TOPIC not in cluster.list_topics(internal=True)
    c = consumer(cluster, "c")
    settle_group([c])
    desc = cluster.describe_topic(OFFSETS_TOPIC)
    assert len(desc.partitions) == 50 and desc.internal
    assert {len(p.replicas) for p in desc.partitions} == {3}
    assert desc.config["cleanup.policy"] == "compact"
    assert OFFSETS_TOPIC not in cluster.list_topics()
    assert cluster.groups.find_coordinator("billing") == \
        desc.partitions[partition_for("billing")].leader


@pytest.mark.parametrize(("brokers", "rf"), [(1, 1), (2, 2), (4, 3)])
def test_offsets_topic_replication_is_min_of_3_and_brokers(brokers, rf):
    cluster = cluster_with(records_per_partition=0, brokers=brokers)
    cluster.groups.find_coordinator("billing")
    assert {len(p.replicas) for p in cluster.describe_topic(OFFSETS_TOPIC).partitions} == {rf}


# -- record formats -----------------------------------------------------------------------------

def test_record_formats_round_trip():
    key = offset_commit_key("billing", TOPIC, 2)
    assert key[:2] == b"\x00\x01"  # key version 1: an offset commit
    assert decode_key(key) == OffsetKey("billing", TOPIC, 2)
    value = offset_commit_value(42, 3, "batch-7", 1_767_225_600_000)
    assert value[:2] == b"\x00\x03"
    assert decode_value(key, value) == OffsetValue(42, 3, "batch-7", 1_767_225_600_000)
    assert decode_value(key, None) is None  # a tombstone
    member = MemberMetadata("m-1", "host-a", "c", "/127.0.0.1", 300_000, 45_000, b"sub", b"asg")
    gv = GroupValue("consumer", 4, "range", "m-1", 123, (member,))
    gkey = group_metadata_key("billing")
    assert decode_key(gkey) == GroupKey("billing")
    assert decode_value(gkey, group_metadata_value(gv)) == gv
    shown = format_record(key, value)
    assert '"offset": 42' in shown and '"leaderEpoch": 3' in shown and '"type": 1' in shown


def test_embedded_consumer_protocol_matches_kafka_python():
    ours = ConsumerSubscription(("a", "b"), b"ud", (("a", 0), ("a", 2), ("b", 1)), 4, "rack-1")
    theirs = ConsumerProtocolSubscription.decode(encode_subscription(ours))
    assert (theirs.topics, theirs.user_data, theirs.generation_id, theirs.rack_id) == \
        (["a", "b"], b"ud", 4, "rack-1")
    assert [(t.topic, t.partitions) for t in theirs.owned_partitions] == [("a", [0, 2]), ("b", [1])]
    assert decode_subscription(theirs.encode()) == ours
    assignment = ConsumerAssignment((("a", 1), ("a", 3), ("b", 0)))
    decoded = ConsumerProtocolAssignment.decode(encode_assignment(assignment))
    assert decoded.partitions() == [TopicPartition("a", 1), TopicPartition("a", 3),
                                    TopicPartition("b", 0)]
    assert decode_assignment(decoded.encode()) == assignment


def test_commits_are_offset_commit_records_in_the_groups_partition():
    cluster = cluster_with()
    c = consumer(cluster, "c")
    settle_group([c])
    drain(c)
    c.commit({TP0: OffsetAndMetadata(7, "after batch 3", -1)})
    records = offsets_records(cluster, "billing")
    group_records = [(k, v) for k, v in records if isinstance(k, GroupKey)]
    assert group_records and group_records[-1][1].generation == 1
    assert group_records[-1][1].members[0].member_id == c._group.member_id
    commits = [(k, v) for k, v in records if isinstance(k, OffsetKey)]
    assert commits[-1] == (OffsetKey("billing", TOPIC, 0),
                           OffsetValue(7, -1, "after batch 3", commits[-1][1].commit_timestamp))
    assert c.committed(TP0) == 7
    assert c.committed(TP0, metadata=True) == OffsetAndMetadata(7, "after batch 3", -1)


def test_deleting_a_topic_drops_its_committed_offsets_as_tombstones():
    """Kafka's coordinator (onPartitionsDeleted): a deleted topic's committed offsets leave
    every group, each as a tombstone, so a topic created again under the name starts with
    none committed."""
    cluster = cluster_with()
    c = consumer(cluster, "c")
    settle_group([c])
    drain(c)
    c.commit({TP0: OffsetAndMetadata(7, "", -1)})
    c.close()
    cluster.delete_topic(TOPIC)
    records = offsets_records(cluster, "billing")
    assert records[-1] == (OffsetKey("billing", TOPIC, 0), None)
    cluster.create_topic(TOPIC, partitions=3, replication_factor=3)
    again = consumer(cluster, "again")
    assert again.committed(TP0) is None


# -- where a consumer starts ---------------------------------------------------------------------

def test_the_consumer_that_takes_over_resumes_at_the_committed_offset():
    """The interview question: consumer 1 processed 0..7 of a partition but committed only
    up to 5 when it died. Consumer 2 starts at 5 and sees 5, 6, 7 again."""
    cluster = cluster_with(partitions=1)
    c1, c2 = consumer(cluster, "c1"), consumer(cluster, "c2")
    settle_group([c1, c2])
    owner, standby = (c1, c2) if c1.assignment() else (c2, c1)
    seen = []
    while len(seen) < 8:
        for records in owner.poll(timeout_ms=200, max_records=1).values():
            seen.extend(records)
    owner.commit({TP0: OffsetAndMetadata(5, "", -1)})
    assert [r.offset for r in seen] == list(range(8))
    owner.crash()
    taken = drain(standby, 60_000)
    assert standby.assignment() == {TP0}
    assert [r.offset for r in taken] == list(range(5, 10))


def test_auto_offset_reset_latest_skips_old_records():
    cluster = cluster_with(records_per_partition=4)
    c = consumer(cluster, "c", auto_offset_reset="latest")
    assert settle_group([c]) == [[]]
    assert drain(c, 1_000) == []
    produce(cluster, 2, tag="new-")
    assert sorted(r.value for r in drain(c)) == sorted(
        f"new-{p}:{i}".encode() for p in range(3) for i in range(2))


def test_auto_offset_reset_earliest_reads_old_records():
    cluster = cluster_with(records_per_partition=4)
    c = consumer(cluster, "c", auto_offset_reset="earliest")
    assert len(drain(c)) == 12


def test_auto_offset_reset_none_raises_without_a_commit():
    cluster = cluster_with(records_per_partition=4)
    c = consumer(cluster, "c", auto_offset_reset="none")
    with pytest.raises(NoOffsetForPartitionError):
        drain(c)


def test_a_committed_offset_wins_over_auto_offset_reset():
    cluster = cluster_with(records_per_partition=4)
    first = consumer(cluster, "first")
    settle_group([first])
    first.commit({tp: OffsetAndMetadata(3, "", -1) for tp in (TP0, TP1, TP2)})
    first.close()
    again = consumer(cluster, "again", auto_offset_reset="none")
    assert sorted(r.offset for r in drain(again)) == [3, 3, 3]


# -- commit APIs ---------------------------------------------------------------------------------

def test_commit_async_callback_runs_at_the_next_poll():
    cluster = cluster_with()
    c = consumer(cluster, "c")
    settle_group([c])
    drain(c)
    calls = []
    future = c.commit_async(callback=lambda offsets, response: calls.append((offsets, response)))
    cluster.advance(100)
    assert future.succeeded() and calls == []  # callbacks run in the application's thread
    c.poll(timeout_ms=10)
    assert len(calls) == 1
    offsets, response = calls[0]
    assert response is None and {tp: o.offset for tp, o in offsets.items()} == \
        {TP0: 10, TP1: 10, TP2: 10}


def test_auto_commit_commits_what_previous_polls_returned_every_interval():
    cluster = cluster_with()
    c = consumer(cluster, "c", enable_auto_commit=True, max_poll_records=5)
    drain(c, 7_500)  # the first commit is due auto_commit_interval_ms after the assignment
    assigned = cluster.journal.of_kind("consumer.assigned")[-1].time_ms
    assert len(c.assignment()) == 3 and c.committed(TP0) is None
    drain(c, 2_000)
    commits = [e for e in cluster.journal.of_kind("offsets.committed") if e.group == "billing"]
    assert commits and 5_000 <= commits[0].time_ms - assigned < 5_300
    assert [c.committed(tp) for tp in (TP0, TP1, TP2)] == [10, 10, 10]


def test_close_commits_when_auto_commit_is_on():
    cluster = cluster_with()
    c = consumer(cluster, "c", enable_auto_commit=True)
    settle_group([c])
    drain(c, 1_000)
    c.close()
    admin = cluster.admin()
    assert {tp.partition: o.offset
            for tp, o in admin.list_consumer_group_offsets("billing").items()} == \
        {0: 10, 1: 10, 2: 10}


def test_commit_without_a_group_is_an_illegal_state():
    cluster = cluster_with()
    c = cluster.consumer(TOPIC)
    with pytest.raises(IllegalStateError, match="Requires group_id"):
        c.commit()
    with pytest.raises(IllegalStateError):
        c.committed(TP0)
    with pytest.raises(IllegalStateError):
        c.commit_async()


def test_commit_rejects_bad_arguments_and_oversized_metadata():
    cluster = cluster_with()
    c = consumer(cluster, "c")
    settle_group([c])
    with pytest.raises(TypeError):
        c.commit({("orders", 0): OffsetAndMetadata(1, "", -1)})
    with pytest.raises(OffsetMetadataTooLargeError):
        c.commit({TP0: OffsetAndMetadata(1, "x" * 5_000, -1)})


def test_commit_from_a_member_the_group_has_moved_on_from_fails():
    cluster = cluster_with()
    a = consumer(cluster, "a", max_poll_interval_ms=10_000)
    b = consumer(cluster, "b")
    settle_group([a, b])
    drain(b, 15_000)  # a does not poll: its heartbeat thread leaves the group
    with pytest.raises(CommitFailedError):
        a.commit({TP0: OffsetAndMetadata(1, "", -1)})


def test_manual_assignment_commits_without_group_management():
    cluster = cluster_with()
    c = cluster.consumer(group_id="reports", auto_offset_reset="earliest",
                         enable_auto_commit=False)
    c.assign([TP1])
    got = drain(c)
    assert len(got) == 10
    c.commit()
    assert c.committed(TP1) == 10
    listed = cluster.admin().list_groups()
    assert {"group_id": "reports", "protocol_type": "", "group_state": "Empty",
            "group_type": "classic"} in listed


# -- durability and retention --------------------------------------------------------------------

def test_commits_survive_a_coordinator_failover():
    cluster = cluster_with()
    c = consumer(cluster, "c")
    settle_group([c])
    drain(c)
    c.commit({TP0: OffsetAndMetadata(6, "", -1), TP1: OffsetAndMetadata(4, "", -1)})
    old = cluster.groups.find_coordinator("billing")
    cluster.crash_broker(old)
    drain(c, 30_000)  # the member keeps heartbeating and finds the new coordinator
    new = cluster.groups.find_coordinator("billing")
    assert new != old
    loaded = cluster.journal.of_kind("group.loaded")[-1]
    assert loaded.broker == new and "billing" in loaded.groups
    assert cluster.groups.groups["billing"].state == g.STABLE
    assert c._group.generation == 1  # the group came back from its own records: no rebalance
    assert (c.committed(TP0), c.committed(TP1)) == (6, 4)
    c.close(autocommit=False)
    successor = consumer(cluster, "successor")
    assert sorted((r.partition, r.offset) for r in drain(successor) if r.partition < 2)[:2] == \
        [(0, 6), (0, 7)]


def test_offsets_of_an_empty_group_expire_after_retention():
    cluster = cluster_with(**{"offsets.retention.minutes": 60})
    c = consumer(cluster, "c")
    settle_group([c])
    drain(c)
    c.commit()
    # Members keep a group's offsets however old the commits are.
    end = cluster.now_ms + 2 * 3_600_000
    while cluster.now_ms < end:
        c.poll(timeout_ms=60_000)
    assert c.committed(TP0) == 10
    c.close()
    empty_since = cluster.now_ms
    cluster.advance(59 * 60_000)
    assert cluster.admin().list_consumer_group_offsets("billing")[TP0].offset == 10
    cluster.advance(11 * 60_000)  # past the retention, and a check ran (every 10 min)
    expired = cluster.journal.of_kind("offsets.expired")[-1]
    assert expired.group == "billing" and expired.time_ms - empty_since >= 60 * 60_000
    assert cluster.admin().list_consumer_group_offsets("billing") == {}
    assert "billing" not in [gid for gid, _ in cluster.admin().list_consumer_groups()]
    tombstones = [k for k, v in offsets_records(cluster, "billing") if v is None]
    assert OffsetKey("billing", TOPIC, 0) in tombstones and GroupKey("billing") in tombstones


def test_a_stable_group_loses_offsets_of_topics_it_no_longer_reads():
    """KIP-496: members keep the offsets of what they subscribe to, not of the rest."""
    cluster = cluster_with(**{"offsets.retention.minutes": 60})
    cluster.create_topic("old", partitions=1, replication_factor=3)
    c = cluster.consumer(group_id="billing", client_id="c", auto_offset_reset="earliest",
                         enable_auto_commit=False)
    c.subscribe([TOPIC, "old"])
    settle_group([c])
    drain(c)
    c.commit({TP0: OffsetAndMetadata(10, "", -1),
              TopicPartition("old", 0): OffsetAndMetadata(0, "", -1)})
    committed_at = cluster.now_ms
    c.subscribe([TOPIC])  # stops reading "old"
    settle_group([c])
    c.commit({TP0: OffsetAndMetadata(10, "", -1)})
    end = committed_at + 80 * 60_000
    while cluster.now_ms < end:
        c.poll(timeout_ms=60_000)
        if cluster.now_ms - committed_at < 59 * 60_000:
            assert TopicPartition("old", 0) in cluster.admin().list_consumer_group_offsets(
                "billing")
    expired = cluster.journal.of_kind("offsets.expired")
    assert [e.partitions for e in expired] == [["old-0"]]
    assert expired[0].time_ms - committed_at >= 60 * 60_000
    assert cluster.groups.groups["billing"].state == g.STABLE and c.committed(TP0) == 10


def test_offsets_retention_defaults_to_seven_days():
    cluster = cluster_with()
    assert cluster.groups.config["offsets.retention.minutes"] == 7 * 24 * 60
    c = consumer(cluster, "c")
    settle_group([c])
    c.commit({TP0: OffsetAndMetadata(1, "", -1)})
    c.close()
    cluster.advance(7 * 24 * 3_600_000 - 3_600_000)
    assert c.cluster.admin().list_consumer_group_offsets("billing")
    cluster.advance(2 * 3_600_000)
    assert cluster.admin().list_consumer_group_offsets("billing") == {}


# -- transactions ---------------------------------------------------------------------------------

def test_commit_transactional_is_what_a_transaction_commit_calls():
    cluster = cluster_with()
    cluster.groups.commit_transactional("etl", {TP2: OffsetAndMetadata(9, "txn", -1)})
    assert cluster.admin().list_consumer_group_offsets("etl") == {
        TP2: OffsetAndMetadata(9, "txn", -1)}


def test_offsets_sent_to_a_transaction_count_only_if_it_commits():
    cluster = cluster_with(partitions=1)
    cluster.create_topic("totals", partitions=1, replication_factor=3)
    c = consumer(cluster, "c", isolation_level="read_committed")
    settle_group([c])
    records = drain(c)
    producer = cluster.producer(transactional_id="totals-writer")
    producer.init_transactions()
    for commit in (False, True):
        producer.begin_transaction()
        producer.send("totals", value=str(len(records)).encode())
        producer.send_offsets_to_transaction({TP0: OffsetAndMetadata(10, "", -1)},
                                             c.group_metadata())
        if commit:
            producer.commit_transaction()
        else:
            producer.abort_transaction()
        assert c.committed(TP0) == (10 if commit else None)


def test_standalone_consumer_offsets_expire_by_commit_time():
    cluster = cluster_with(**{"offsets.retention.minutes": 60})
    c = cluster.consumer(group_id="reports", enable_auto_commit=False)
    c.assign([TP1])
    c.commit({TP1: OffsetAndMetadata(4, "", -1)})
    cluster.advance(30 * 60_000)
    c.commit({TP1: OffsetAndMetadata(5, "", -1)})  # a fresh commit restarts its clock
    cluster.advance(50 * 60_000)
    assert c.committed(TP1) == 5
    cluster.advance(20 * 60_000)
    assert c.committed(TP1) is None


def test_transactional_offsets_wait_for_a_coordinator_to_come_back():
    cluster = cluster_with()
    cluster.groups.find_coordinator("etl")
    cluster.crash_broker(cluster.groups.find_coordinator("etl"))
    with pytest.raises(KafkaCoreError, match="not available"):
        cluster.groups.find_coordinator("etl")  # until the controller fences the broker
    cluster.groups.commit_transactional("etl", {TP0: OffsetAndMetadata(3, "", -1)})
    cluster.advance(15_000)
    assert cluster.admin().list_consumer_group_offsets("etl")[TP0].offset == 3
    assert any(k == OffsetKey("etl", TOPIC, 0) and v.offset == 3
               for k, v in offsets_records(cluster, "etl"))  # written by the new coordinator


def test_a_commit_to_a_missing_topic_or_partition_is_refused_in_process_too():
    """Kafka answers UNKNOWN_TOPIC_OR_PARTITION for a partition its metadata lacks and
    writes nothing for it; the coordinator does so for both doors (the wire handler no
    longer checks it alone), and the partitions that exist are committed."""
    cluster = cluster_with()
    answers: list[dict] = []
    cluster.groups.offset_commit(None, "audit", -1, "", None,
                                 {(TOPIC, 0): (4, -1, ""), (TOPIC, 99): (4, -1, ""),
                                  ("missing", 0): (4, -1, "")}, answers.append)
    cluster.run_until(lambda: bool(answers), 10_000)
    assert answers == [{(TOPIC, 0): 0, (TOPIC, 99): 3, ("missing", 0): 3}]
    code, committed = cluster.groups.offset_fetch(None, "audit")
    assert code == 0 and set(committed) == {(TOPIC, 0)}

    answers.clear()
    cluster.groups.offset_commit(None, "nobody", -1, "", None,
                                 {("missing", 0): (1, -1, "")}, answers.append)
    assert answers == [{("missing", 0): 3}]
    assert "nobody" not in cluster.groups.groups  # nothing made for a refused commit

    c = cluster.consumer(group_id="audit", enable_auto_commit=False)
    c.assign([TP0])
    with pytest.raises(UnknownTopicOrPartitionError):
        c.commit({TopicPartition("missing", 0): OffsetAndMetadata(1, "", -1)}, timeout_ms=1_000)
