"""Share groups (KIP-932) in process: each rule of the share-partition, the coordinator and
the share consumer, on the simulated clock."""
from __future__ import annotations

import pytest
from kafka.errors import GroupIdNotFoundError, IllegalStateError, InvalidConfigurationError

from minikafka.client.share_consumer import AcknowledgeType
from minikafka.cluster import Cluster
from minikafka.core import errors
from minikafka.core.api import share as api
from minikafka.core.errors import (
    FENCED_MEMBER_EPOCH,
    INVALID_RECORD_STATE,
    INVALID_SHARE_SESSION_EPOCH,
    SHARE_SESSION_NOT_FOUND,
)
from minikafka.core.share import assignor
from minikafka.core.share.partition import AcknowledgementBatch, RecordState

GROUP = "workers"


def cluster_with(records: int = 6, partitions: int = 1, reset: str = "earliest",
                 **group_config) -> Cluster:
    cluster = Cluster(brokers=1, seed=3)
    cluster.create_topic("jobs", partitions, 1)
    cluster.alter_share_group_config(GROUP, {"share.auto.offset.reset": reset, **group_config})
    producer = cluster.producer()
    for i in range(records):
        producer.send("jobs", value=b"job-%d" % i, partition=i % partitions).get()
    return cluster


def offsets(polled) -> list[tuple[int, int]]:
    return [(r.offset, r.delivery_count) for recs in polled.values() for r in recs]


def explicit(cluster, **config):
    return cluster.share_consumer(GROUP, ["jobs"], share_acknowledgement_mode="explicit",
                                  **config)


def share_partition(cluster, partition: int = 0):
    return cluster.share_groups.partitions[(GROUP, "jobs", partition)]


def test_two_consumers_share_one_partition():
    cluster = cluster_with(records=6)
    a = cluster.share_consumer(GROUP, ["jobs"], max_poll_records=3)
    b = cluster.share_consumer(GROUP, ["jobs"], max_poll_records=3)
    got_a, got_b = offsets(a.poll(1000)), offsets(b.poll(1000))
    assert got_a == [(0, 1), (1, 1), (2, 1)] and got_b == [(3, 1), (4, 1), (5, 1)]
    assert a.assignment() == b.assignment() == {("jobs", 0)}
    a.close(), b.close()  # implicit mode: close accepts what was polled
    assert share_partition(cluster).start_offset == 6


def test_a_lock_times_out_and_the_record_comes_again_with_delivery_count_2():
    cluster = cluster_with(records=1)
    a = explicit(cluster)
    assert offsets(a.poll(1000)) == [(0, 1)]
    sp = share_partition(cluster)
    assert sp.state_of(0) == RecordState.ACQUIRED
    cluster.advance(29_999)
    assert sp.state_of(0) == RecordState.ACQUIRED
    cluster.advance(2)  # group.share.record.lock.duration.ms = 30 s
    assert sp.state_of(0) == RecordState.AVAILABLE
    b = explicit(cluster)
    assert offsets(b.poll(1000)) == [(0, 2)]


def test_release_redelivers_reject_does_not():
    cluster = cluster_with(records=3)
    a = explicit(cluster)
    polled = a.poll(1000)
    kinds = [AcknowledgeType.ACCEPT, AcknowledgeType.RELEASE, AcknowledgeType.REJECT]
    for record, kind in zip(polled[("jobs", 0)], kinds):
        a.acknowledge(record, kind)
    assert a.commit_sync() == {("jobs", 0): None}
    sp = share_partition(cluster)
    assert sp.rows() == [
        {"offset": 1, "state": "AVAILABLE", "delivery_count": 1, "member": None},
        {"offset": 2, "state": "ARCHIVED", "delivery_count": 1, "member": None}]
    assert sp.start_offset == 1
    assert offsets(a.poll(1000)) == [(1, 2)]


def test_a_poison_record_is_archived_at_the_delivery_count_limit():
    cluster = cluster_with(records=2, **{"share.delivery.count.limit": 3})
    a = explicit(cluster, max_poll_records=1)
    seen = []
    for _ in range(6):
        polled = a.poll(1000)
        for record in polled.get(("jobs", 0), []):
            seen.append((record.offset, record.delivery_count))
            a.acknowledge(record, AcknowledgeType.RELEASE if record.offset == 0
                          else AcknowledgeType.ACCEPT)
    assert seen == [(0, 1), (0, 2), (0, 3), (1, 1)]
    sp = share_partition(cluster)
    a.commit_sync()
    assert sp.start_offset == 2 and not sp.records


def test_the_default_delivery_count_limit_is_5_and_the_lock_30_s():
    cluster = Cluster(brokers=1)
    settings = cluster.share_groups.settings("any")
    assert (settings.delivery_count_limit, settings.record_lock_duration_ms,
            settings.max_record_locks) == (5, 30_000, 2_000)


def test_group_configs_are_bounded_as_kafka_bounds_them():
    cluster = Cluster(brokers=1)
    with pytest.raises(InvalidConfigurationError):
        cluster.alter_share_group_config(GROUP, {"share.delivery.count.limit": 11})
    with pytest.raises(InvalidConfigurationError):
        cluster.alter_share_group_config(GROUP, {"share.record.lock.duration.ms": 1000})
    with pytest.raises(InvalidConfigurationError):
        cluster.alter_share_group_config(GROUP, {"share.auto.offset.reset": "none"})


def test_in_flight_records_stop_at_max_record_locks():
    cluster = cluster_with(records=150, **{"share.partition.max.record.locks": 100})
    a = explicit(cluster, max_poll_records=500)
    assert len(offsets(a.poll(1000))) == 100
    b = explicit(cluster)
    assert b.poll(1000) == {}  # 100 records in flight: nothing more until some are done
    assert share_partition(cluster).end_offset == 99


def test_share_auto_offset_reset_latest_starts_at_the_end_when_first_assigned():
    cluster = cluster_with(records=3, reset="latest")
    a = cluster.share_consumer(GROUP, ["jobs"])
    assert a.poll(100) == {}
    cluster.producer().send("jobs", value=b"new").get()
    assert [r.value for recs in a.poll(1000).values() for r in recs] == [b"new"]


def test_implicit_mode_accepts_on_the_next_poll_and_forbids_acknowledge():
    cluster = cluster_with(records=2)
    a = cluster.share_consumer(GROUP, ["jobs"], max_poll_records=1)
    first = a.poll(1000)
    with pytest.raises(IllegalStateError):
        a.acknowledge(first[("jobs", 0)][0])
    a.poll(1000)
    assert share_partition(cluster).state_of(0) == RecordState.ACKNOWLEDGED


def test_explicit_mode_needs_every_record_acknowledged_before_the_next_poll():
    cluster = cluster_with(records=1)
    a = explicit(cluster)
    a.poll(1000)
    with pytest.raises(IllegalStateError):
        a.poll(1000)


def test_a_crashed_consumers_records_come_back_when_their_locks_run_out():
    cluster = cluster_with(records=2)
    a = explicit(cluster)
    a.poll(1000)
    a.crash()  # no acknowledgement, no share session closed
    b = explicit(cluster)
    assert b.poll(100) == {}
    cluster.advance(30_000)
    assert offsets(b.poll(1000)) == [(0, 2), (1, 2)]


def test_close_releases_what_was_not_acknowledged_at_once():
    cluster = cluster_with(records=2)
    a = explicit(cluster)
    a.acknowledge(a.poll(1000)[("jobs", 0)][0])
    a.close()  # record 1 unacknowledged: closing the share session releases it
    sp = share_partition(cluster)
    assert sp.start_offset == 1 and sp.state_of(1) == RecordState.AVAILABLE


def test_only_the_member_holding_a_record_may_acknowledge_it():
    cluster = cluster_with(records=1)
    sp = cluster.share_groups.share_partition(GROUP, "jobs", 0)
    sp.acquire("m1", cluster.leader_replica("jobs", 0), 10)
    ack = [AcknowledgementBatch(0, 0, (1,))]
    assert sp.acknowledge("m2", ack) == INVALID_RECORD_STATE
    assert sp.acknowledge("m1", ack) == errors.NONE
    assert sp.acknowledge("m1", ack) == INVALID_RECORD_STATE  # already acknowledged


def test_share_session_epochs():
    cluster = cluster_with(records=1)
    share = cluster.share_groups
    share.heartbeat(None, GROUP, "m1", 0, ["jobs"])
    tp = {("jobs", 0): []}
    fetch = api.share_fetch
    assert fetch(cluster, 1, api.ShareFetchRequest(GROUP, "m1", 1, tp)).error_code == \
        SHARE_SESSION_NOT_FOUND
    first = fetch(cluster, 1, api.ShareFetchRequest(GROUP, "m1", 0, tp))
    assert first.error_code == 0 and first.record_count == 1
    assert fetch(cluster, 1, api.ShareFetchRequest(GROUP, "m1", 5, {})).error_code == \
        INVALID_SHARE_SESSION_EPOCH
    acks = {("jobs", 0): [AcknowledgementBatch(0, 0, (1,))]}
    assert fetch(cluster, 1, api.ShareFetchRequest(GROUP, "m1", 0, acks)).error_code == \
        errors.INVALID_REQUEST  # no acknowledgements when opening a session
    assert api.share_acknowledge(cluster, 1, api.ShareAcknowledgeRequest(
        GROUP, "m1", 0, acks)).error_code == INVALID_SHARE_SESSION_EPOCH
    done = api.share_acknowledge(cluster, 1, api.ShareAcknowledgeRequest(GROUP, "m1", 1, acks))
    assert done.error_code == 0 and done.partitions == {("jobs", 0): 0}


def test_heartbeat_epochs_and_group_states():
    cluster = cluster_with(records=0, partitions=2)
    share = cluster.share_groups
    assert share.heartbeat(None, GROUP, "", 0, ["jobs"]).error_code == errors.INVALID_REQUEST
    assert share.heartbeat(None, GROUP, "m1", 3, ["jobs"]).error_code == errors.UNKNOWN_MEMBER_ID
    joined = share.heartbeat(None, GROUP, "m1", 0, ["jobs"])
    assert (joined.member_epoch, joined.assignment, joined.heartbeat_interval_ms) == \
        (1, {"jobs": [0, 1]}, 5_000)
    assert share.heartbeat(None, GROUP, "m1", 7).error_code == FENCED_MEMBER_EPOCH
    assert share.heartbeat(None, GROUP, "m1", 1).assignment is None  # unchanged
    assert share.describe(None, GROUP).state == "Stable"
    cluster.advance(45_001)  # group.share.session.timeout.ms without a heartbeat
    d = share.describe(None, GROUP)
    assert d.state == "Empty" and d.members == () and d.group_epoch == 2
    assert share.describe(None, "nobody").error_code == errors.GROUP_ID_NOT_FOUND


def test_a_consumer_group_name_is_not_a_share_group():
    cluster = cluster_with(records=0)
    consumer = cluster.consumer("jobs", group_id="classic")
    consumer.poll(5_000)
    assert cluster.share_groups.heartbeat(None, "classic", "m1", 0, ["jobs"]).error_code == \
        errors.GROUP_ID_NOT_FOUND
    share = cluster.share_consumer("classic", ["jobs"])
    with pytest.raises(GroupIdNotFoundError):
        share.poll(100)


def test_simple_assignor():
    one = assignor.assign({"a": ["t"], "b": ["t"], "c": ["t"]}, {"t": 1})
    assert one == {m: {("t", 0)} for m in "abc"}
    three = assignor.assign({"a": ["t"], "b": ["t"]}, {"t": 3})
    assert set().union(*three.values()) == {("t", 0), ("t", 1), ("t", 2)}
    assert assignor.java_string_hash("hello") == 99162322
    assert assignor.java_string_hash("polygenelubricants") == -2**31


def test_describe_share_group_offsets_start_offset_and_lag():
    cluster = cluster_with(records=4)
    a = explicit(cluster)
    polled = a.poll(1000)[("jobs", 0)]
    a.acknowledge(polled[0])
    a.acknowledge(polled[2])
    a.acknowledge(polled[1], AcknowledgeType.RELEASE)
    a.acknowledge(polled[3], AcknowledgeType.RELEASE)
    a.commit_sync()
    # Kafka writes the new states with the start offset as it was, then moves the SPSO:
    # DescribeShareGroupOffsets reads the written state, one step behind.
    [d] = api.share_group_offsets(cluster, GROUP)
    assert (d.start_offset, d.lag) == (0, 2)  # 0 and 2 done; 1 and 3 not
    assert share_partition(cluster).start_offset == 1
    polled = a.poll(1000)[("jobs", 0)]
    for record in polled:
        a.acknowledge(record)
    a.commit_sync()
    # Everything done: the written start offset is where this last write began, lag 0
    # (the Java test sees 19 of 20 on Kafka 4.4 and on minikafka alike).
    [d] = api.share_group_offsets(cluster, GROUP)
    assert (d.start_offset, d.lag) == (1, 0)
    assert share_partition(cluster).start_offset == 4


def test_share_state_survives_a_restart(tmp_path):
    cluster = Cluster(brokers=1, log_dir=tmp_path)
    cluster.create_topic("jobs", 1, 1)
    cluster.alter_share_group_config(GROUP, {"share.auto.offset.reset": "earliest"})
    producer = cluster.producer()
    for i in range(3):
        producer.send("jobs", value=b"%d" % i).get()
    a = explicit(cluster)
    polled = a.poll(1000)[("jobs", 0)]
    a.acknowledge(polled[0])
    a.acknowledge(polled[1], AcknowledgeType.REJECT)
    a.acknowledge(polled[2], AcknowledgeType.RELEASE)
    a.commit_sync()
    cluster.write_checkpoints()
    again = Cluster(brokers=1, log_dir=tmp_path)
    sp = again.share_groups.partitions[(GROUP, "jobs", 0)]
    assert sp.start_offset == 2 and sp.records[2].delivery_count == 1
    b = again.share_consumer(GROUP, ["jobs"])
    assert [(r.offset, r.delivery_count) for recs in b.poll(1000).values() for r in recs] == \
        [(2, 2)]


def test_only_an_empty_share_group_can_be_deleted():
    cluster = cluster_with(records=1)
    a = cluster.share_consumer(GROUP, ["jobs"])
    a.poll(1000)
    share = cluster.share_groups
    assert share.delete_group(GROUP) == errors.NON_EMPTY_GROUP
    a.close()
    assert share.delete_group(GROUP) == errors.NONE
    assert GROUP not in share.groups and not share.partitions
    assert share.delete_group(GROUP) == errors.GROUP_ID_NOT_FOUND


def test_the_same_seed_gives_the_same_history():
    def run() -> list:
        cluster = cluster_with(records=8)
        a, b = explicit(cluster, max_poll_records=3), explicit(cluster, max_poll_records=3)
        seen = []
        for _ in range(4):
            for name, consumer in (("a", a), ("b", b)):
                for record in consumer.poll(500).get(("jobs", 0), []):
                    seen.append((name, record.offset, record.delivery_count, cluster.now_ms))
                    consumer.acknowledge(record, AcknowledgeType.RELEASE
                                         if record.offset % 3 == 0 and record.delivery_count == 1
                                         else AcknowledgeType.ACCEPT)
        return seen + [(m.member_id, m.member_epoch) for m in
                       cluster.share_groups.describe(None, GROUP).members]
    assert run() == run()


def test_offsets_of_an_empty_share_group_can_be_reset_and_deleted():
    cluster = cluster_with(records=4)
    a = cluster.share_consumer(GROUP, ["jobs"])
    a.poll(1000)
    share = cluster.share_groups
    assert share.alter_offsets(None, GROUP, {("jobs", 0): 1})[0] == errors.NON_EMPTY_GROUP
    a.close()
    assert share_partition(cluster).start_offset == 4
    assert share.alter_offsets(None, GROUP, {("jobs", 0): 1, ("nope", 0): 0}) == (
        errors.NONE, None, {("jobs", 0): errors.NONE, ("nope", 0): errors.UNKNOWN_TOPIC_OR_PARTITION})
    b = cluster.share_consumer(GROUP, ["jobs"])
    assert offsets(b.poll(1000)) == [(1, 1), (2, 1), (3, 1)]
    b.close()
    assert share.delete_offsets(None, GROUP, ["jobs"])[2] == {"jobs": errors.NONE}
    assert not share.partitions  # the next assignment starts from share.auto.offset.reset


def test_when_the_leader_stops_acquired_records_are_available_again():
    cluster = Cluster(brokers=3, seed=4)
    cluster.create_topic("jobs", 1, 3)
    cluster.alter_share_group_config(GROUP, {"share.auto.offset.reset": "earliest"})
    cluster.producer(acks="all").send("jobs", value=b"j0").get()
    a = explicit(cluster)
    assert offsets(a.poll(1000)) == [(0, 1)]
    leader = cluster.describe_topic("jobs").partitions[0].leader
    cluster.stop_broker(leader)
    sp = share_partition(cluster)
    # The acquisition was never written: the new leader has j0 available, as never delivered.
    assert sp.state_of(0) == RecordState.AVAILABLE and sp.records[0].delivery_count == 0
    b = explicit(cluster)
    assert offsets(b.poll(5000)) == [(0, 1)]


def test_the_journal_tells_the_story():
    cluster = cluster_with(records=1)
    a = explicit(cluster)
    a.poll(1000)
    cluster.advance(30_000)
    b = explicit(cluster)
    b.acknowledge(b.poll(1000)[("jobs", 0)][0], AcknowledgeType.REJECT)
    b.commit_sync()
    events = [(e.kind, {k: v for k, v in e.fields.items() if k not in ("group", "member")})
              for e in cluster.journal.events if e.kind.startswith("share.") and
              e.kind != "share.group.assigned"]
    assert events == [
        ("share.acquired", {"partition": "jobs-0", "ranges": [[0, 0, 1]]}),
        ("share.lock.expired", {"partition": "jobs-0", "records": [[0, a.member_id, 1]]}),
        ("share.acquired", {"partition": "jobs-0", "ranges": [[0, 0, 2]]}),
        ("share.acknowledged", {"partition": "jobs-0", "batches": [[0, 0, ["REJECT"]]]}),
    ]


def test_a_share_consumer_rides_out_a_coordinator_failover():
    cluster = Cluster(brokers=3, seed=6)
    cluster.create_topic("jobs", 1, 3)
    cluster.alter_share_group_config(GROUP, {"share.auto.offset.reset": "earliest"})
    a = cluster.share_consumer(GROUP, ["jobs"])
    a.poll(100)
    cluster.crash_broker(cluster.share_groups.sim.groups.find_coordinator(GROUP))
    cluster.advance(60_000)  # heartbeats retry until a new coordinator is elected
    cluster.producer(acks="all").send("jobs", value=b"after").get()
    assert [r.value for recs in a.poll(5_000).values() for r in recs] == [b"after"]
    assert cluster.share_groups.describe(None, GROUP).state == "Stable"
