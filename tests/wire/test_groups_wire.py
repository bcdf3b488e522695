"""Consumer groups over the Kafka protocol.

First every group API at every served version through the sans-IO Session (no
sockets, the simulated clock moved by hand); then real clients on loopback:
a kafka-python group of three that loses a member politely (LeaveGroup) and one
killed outright (session timeout), a confluent-kafka group that commits, Debian's
kcat in balanced-consumer mode, and the failover the issue asks for: a group reading
while the group's coordinator broker is stopped and started, next to an idempotent
acks=all producer.
"""
from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import OffsetSpec
from kafka.protocol.admin import DescribeGroupsRequest, ListGroupsRequest
from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetDeleteRequest,
    OffsetFetchRequest,
    SyncGroupRequest,
)
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)

from minikafka.cluster import Cluster
from minikafka.wire import Session, default_registry, encode_request
from minikafka.wire.codec import response_class
from minikafka.wire.messages import DeleteGroupsRequest  # v3: Kafka 4.4.0's spec

from .conftest import BackgroundProducer, stored_values, wait_for

REGISTRY = default_registry()
NONE, NOT_COORDINATOR, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS = 0, 16, 25, 27
GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, MEMBER_ID_REQUIRED = 69, 68, 79
GROUP_OPERATIONS = {3, 6, 8, 10, 11}  # READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS


class Conn:
    """One client connection to one broker over the sans-IO Session; a request that
    parks (a Deferred) is answered once the simulated clock has moved far enough."""

    def __init__(self, cluster: Cluster, broker_id: int) -> None:
        self.cluster = cluster
        self.session = Session(REGISTRY, broker_id=broker_id, cluster=cluster,
                               client_host="127.0.0.1", client_port=50000)
        self.correlation_id = 0

    def call(self, request, version: int, max_wait_ms: int = 10_000):
        self.correlation_id += 1
        self.session.receive_data(encode_request(request, self.correlation_id, "wire-test",
                                                 version=version))
        waited = 0
        while True:
            out = self.session.process(self.cluster.now_ms)
            assert out.close is None, out.close
            if out.data:
                (size,) = struct.unpack_from(">i", out.data)
                assert len(out.data) == 4 + size
                response = response_class(request.API_KEY).decode(
                    out.data[4:], version=version, header=True)
                assert response.header.correlation_id == self.correlation_id
                return response
            assert waited < max_wait_ms, f"{type(request).__name__} v{version} not answered"
            self.cluster.advance(10)
            waited += 10


def clamp(version: int, api) -> int:
    low, high = REGISTRY.version_ranges()[api.API_KEY]
    return min(max(version, low), high)


def subscription(*topics: str) -> bytes:
    return ConsumerProtocolSubscription(topics=list(topics), user_data=None,
                                        owned_partitions=[], version=0).encode()


def assignment(topic: str, partitions: list[int]) -> bytes:
    return ConsumerProtocolAssignment(assigned_partitions=[
        ConsumerProtocolAssignment.TopicPartition(topic=topic, partitions=partitions)],
        user_data=None, version=0).encode()


@pytest.fixture
def cluster() -> Cluster:
    cluster = Cluster(brokers=3, seed=5, broker_config={"group.initial.rebalance.delay.ms": 0})
    cluster.create_topic("t", partitions=2, replication_factor=3)
    return cluster


@pytest.mark.parametrize("v", range(10))
def test_every_group_api_at_every_version(cluster, v):
    """One member's whole life at (about) version v of each API: join, sync, heartbeat,
    commit, fetch, describe, list, leave, delete."""
    coordinator = cluster.groups.find_coordinator("g")
    conn = Conn(cluster, coordinator)
    other = Conn(cluster, next(b for b in cluster.brokers if b != coordinator))

    jv = clamp(v, JoinGroupRequest)
    protocol = JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=subscription("t"))

    def join(member_id: str):
        return conn.call(JoinGroupRequest(
            group_id="g", session_timeout_ms=10_000, rebalance_timeout_ms=20_000,
            member_id=member_id, group_instance_id=None, protocol_type="consumer",
            protocols=[protocol], reason="test"), jv)

    wrong = other.call(HeartbeatRequest(group_id="g", generation_id=0, member_id="x",
                                        group_instance_id=None), clamp(v, HeartbeatRequest))
    assert wrong.error_code == NOT_COORDINATOR

    joined = join("")
    if jv >= 4:  # KIP-394: come back with the id you were given
        assert joined.error_code == MEMBER_ID_REQUIRED and joined.member_id
        joined = join(joined.member_id)
    member = joined.member_id
    assert (joined.error_code, joined.generation_id, joined.leader) == (NONE, 1, member)
    assert joined.protocol_name == "range"
    assert [(m.member_id, bytes(m.metadata)) for m in joined.members] == \
        [(member, subscription("t"))]

    sv = clamp(v, SyncGroupRequest)
    synced = conn.call(SyncGroupRequest(
        group_id="g", generation_id=1, member_id=member, group_instance_id=None,
        protocol_type="consumer", protocol_name="range",
        assignments=[SyncGroupRequest.SyncGroupRequestAssignment(
            member_id=member, assignment=assignment("t", [0, 1]))]), sv)
    assert synced.error_code == NONE
    assert bytes(synced.assignment) == assignment("t", [0, 1])

    beat = conn.call(HeartbeatRequest(group_id="g", generation_id=1, member_id=member,
                                      group_instance_id=None), clamp(v, HeartbeatRequest))
    assert beat.error_code == NONE

    cv = clamp(v, OffsetCommitRequest)
    _CTopic = OffsetCommitRequest.OffsetCommitRequestTopic
    _CPart = _CTopic.OffsetCommitRequestPartition
    committed = conn.call(OffsetCommitRequest(
        group_id="g", generation_id_or_member_epoch=1, member_id=member, group_instance_id=None,
        topics=[_CTopic(name="t", partitions=[
            _CPart(partition_index=0, committed_offset=7, committed_leader_epoch=-1,
                   committed_metadata="seven"),
            _CPart(partition_index=5, committed_offset=1, committed_leader_epoch=-1,
                   committed_metadata=None)])]), cv)
    assert [(p.partition_index, p.error_code) for p in committed.topics[0].partitions] == \
        [(0, NONE), (5, 3)]  # partition 5 does not exist: UNKNOWN_TOPIC_OR_PARTITION

    fv = clamp(v, OffsetFetchRequest)
    if fv >= 8:
        _G = OffsetFetchRequest.OffsetFetchRequestGroup
        fetched = conn.call(OffsetFetchRequest(groups=[_G(group_id="g", topics=[
            _G.OffsetFetchRequestTopics(name="t", partition_indexes=[0, 1])])],
            require_stable=False), fv)
        [group] = fetched.groups
        assert group.error_code == NONE
        rows = group.topics[0].partitions
    else:
        fetched = conn.call(OffsetFetchRequest(group_id="g", topics=[
            OffsetFetchRequest.OffsetFetchRequestTopic(name="t", partition_indexes=[0, 1])],
            require_stable=False), fv)
        rows = fetched.topics[0].partitions
    assert [(r.partition_index, r.committed_offset, r.metadata, r.error_code) for r in rows] == \
        [(0, 7, "seven", NONE), (1, -1, "", NONE)]

    dv = clamp(v, DescribeGroupsRequest)
    described = conn.call(DescribeGroupsRequest(groups=["g"], include_authorized_operations=True),
                          dv).groups[0]
    assert (described.error_code, described.group_state, described.protocol_type,
            described.protocol_data) == (NONE, "Stable", "consumer", "range")
    [m] = described.members
    assert (m.member_id, m.client_id, m.client_host) == (member, "wire-test", "/127.0.0.1")
    assert bytes(m.member_assignment) == assignment("t", [0, 1])
    if dv >= 3:
        assert set(described.authorized_operations) == GROUP_OPERATIONS

    lv = clamp(v, ListGroupsRequest)
    listed = conn.call(ListGroupsRequest(states_filter=[], types_filter=[]), lv)
    assert [g.group_id for g in listed.groups] == ["g"]
    if lv >= 4:
        assert listed.groups[0].group_state == "Stable"
        empty_only = conn.call(ListGroupsRequest(states_filter=["Empty"], types_filter=[]), lv)
        assert empty_only.groups == []
    assert other.call(ListGroupsRequest(states_filter=[], types_filter=[]), lv).groups == []

    refused = conn.call(DeleteGroupsRequest(groups_names=["g"]), clamp(v, DeleteGroupsRequest))
    assert refused.results[0].error_code == NON_EMPTY_GROUP

    leave_v = clamp(v, LeaveGroupRequest)
    if leave_v >= 3:
        left = conn.call(LeaveGroupRequest(group_id="g", members=[
            LeaveGroupRequest.MemberIdentity(member_id=member, group_instance_id=None,
                                             reason="done")]), leave_v)
        assert left.error_code == NONE and [x.error_code for x in left.members] == [NONE]
    else:
        left = conn.call(LeaveGroupRequest(group_id="g", member_id=member), leave_v)
        assert left.error_code == NONE
    after = conn.call(DescribeGroupsRequest(groups=["g"], include_authorized_operations=False),
                      dv).groups[0]
    assert (after.group_state, after.members) == ("Empty", [])

    deleted = conn.call(DeleteGroupsRequest(groups_names=["g"]), clamp(v, DeleteGroupsRequest))
    assert deleted.results[0].error_code == NONE
    gone = conn.call(DescribeGroupsRequest(groups=["g"], include_authorized_operations=True),
                     dv).groups[0]
    assert gone.group_state == "Dead"
    assert gone.error_code == (GROUP_ID_NOT_FOUND if dv >= 6 else NONE)


def test_followers_wait_at_the_barrier_and_offset_delete(cluster):
    """Two members: the second join holds the first member's rejoin at the barrier;
    the follower's SyncGroup waits for the leader's; OffsetDelete is refused for a
    subscribed topic and works once the group is empty."""
    coordinator = cluster.groups.find_coordinator("g2")
    a, b = Conn(cluster, coordinator), Conn(cluster, coordinator)
    protocol = JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=subscription("t"))

    def join_request(member_id: str) -> JoinGroupRequest:
        return JoinGroupRequest(group_id="g2", session_timeout_ms=10_000,
                                rebalance_timeout_ms=5_000, member_id=member_id,
                                group_instance_id=None, protocol_type="consumer",
                                protocols=[protocol], reason=None)

    ja = a.call(join_request(""), 9)
    ja = a.call(join_request(ja.member_id), 9)
    a.call(SyncGroupRequest(group_id="g2", generation_id=1, member_id=ja.member_id,
                            group_instance_id=None, protocol_type="consumer",
                            protocol_name="range", assignments=[
                                SyncGroupRequest.SyncGroupRequestAssignment(
                                    member_id=ja.member_id, assignment=assignment("t", [0, 1]))]),
           5)
    jb = b.call(join_request(""), 9)
    # b's join parks: the group waits for a to rejoin.
    b.session.receive_data(encode_request(join_request(jb.member_id), 99, "b", version=9))
    assert b.session.process(cluster.now_ms).data == b"" and b.session.parked
    beat = a.call(HeartbeatRequest(group_id="g2", generation_id=1, member_id=ja.member_id,
                                   group_instance_id=None), 4)
    assert beat.error_code == REBALANCE_IN_PROGRESS
    rejoined = a.call(join_request(ja.member_id), 9)
    assert rejoined.generation_id == 2 and rejoined.leader == ja.member_id
    assert len(rejoined.members) == 2
    out = b.session.process(cluster.now_ms)
    follower = response_class(11).decode(out.data[4:], version=9, header=True)
    assert (follower.generation_id, follower.members) == (2, [])
    # The follower's SyncGroup parks until the leader's arrives.
    sync_b = SyncGroupRequest(group_id="g2", generation_id=2, member_id=jb.member_id,
                              group_instance_id=None, protocol_type="consumer",
                              protocol_name="range", assignments=[])
    b.session.receive_data(encode_request(sync_b, 100, "b", version=5))
    cluster.advance(100)
    assert b.session.process(cluster.now_ms).data == b""
    a.call(SyncGroupRequest(group_id="g2", generation_id=2, member_id=ja.member_id,
                            group_instance_id=None, protocol_type="consumer",
                            protocol_name="range", assignments=[
                                SyncGroupRequest.SyncGroupRequestAssignment(
                                    member_id=ja.member_id, assignment=assignment("t", [0])),
                                SyncGroupRequest.SyncGroupRequestAssignment(
                                    member_id=jb.member_id, assignment=assignment("t", [1]))]),
           5)
    out = b.session.process(cluster.now_ms)
    answer = response_class(14).decode(out.data[4:], version=5, header=True)
    assert bytes(answer.assignment) == assignment("t", [1])

    _DTopic = OffsetDeleteRequest.OffsetDeleteRequestTopic
    delete = OffsetDeleteRequest(group_id="g2", topics=[_DTopic(name="t", partitions=[
        _DTopic.OffsetDeleteRequestPartition(partition_index=0)])])
    refused = a.call(delete, 0)
    assert refused.error_code == NONE
    assert refused.topics[0].partitions[0].error_code == 86  # GROUP_SUBSCRIBED_TO_TOPIC
    a.call(LeaveGroupRequest(group_id="g2", members=[
        LeaveGroupRequest.MemberIdentity(member_id=m, group_instance_id=None, reason=None)
        for m in (ja.member_id, jb.member_id)]), 5)
    assert a.call(delete, 0).topics[0].partitions[0].error_code == NONE


# -- real clients on loopback ---------------------------------------------------------

FAST_GROUPS = {"group.initial.rebalance.delay.ms": 300}


@pytest.fixture
def fast_served():
    """A served 3-broker cluster whose new groups wait 0.3 s for more members (3 s in
    Kafka), so the tests spend their time on what they check."""
    cluster = Cluster(brokers=3, seed=17, broker_config=FAST_GROUPS)
    with cluster.serve(port=0) as server:
        yield cluster, server


def group_members(admin: KafkaAdminClient, group: str) -> tuple[str, dict[str, set]]:
    """(state, {member_id: assigned partitions}) as kafka-python's admin describes it."""
    described = admin.describe_groups([group])[group]
    members = {}
    for m in described["members"]:
        assigned = m["member_assignment"] or {"assigned_partitions": []}
        members[m["member_id"]] = {TopicPartition(t["topic"], p)
                                   for t in assigned["assigned_partitions"]
                                   for p in t["partitions"]}
    return described["group_state"], members


def end_offsets(admin: KafkaAdminClient, topic: str, partitions: int) -> dict:
    latest = admin.list_partition_offsets(
        {TopicPartition(topic, p): OffsetSpec.LATEST for p in range(partitions)})
    return {tp: o.offset for tp, o in latest.items()}


def balanced(admin: KafkaAdminClient, group: str, n: int, partitions: set,
             seen: list | None = None) -> bool:
    """Stable with n members owning every partition once; `seen` gets that description
    (a member may ask for another rebalance right after)."""
    state, members = group_members(admin, group)
    owned = [p for parts in members.values() for p in parts]
    ok = (state == "Stable" and len(members) == n and all(members.values())
          and len(owned) == len(set(owned)) and set(owned) == partitions)
    if ok and seen is not None:
        seen.append(members)
    return ok


# kafka_python_member_race: a kafka-python 3.0.12 member that joins before it has the
# topic's metadata is assigned nothing and rejoins at once; if poll()'s timeout ends
# while that rejoin completes, the client drops the new assignment and stops
# heartbeating (its join task finished, but only a waiter that did not time out
# applies the result). Fetching the topic's metadata before subscribe() avoids the
# empty first assignment, so the members here (and minikafka console-consumer) do.


class Reader(threading.Thread):
    """A kafka-python group member polling and committing (at least once) on its own thread."""

    def __init__(self, bootstrap: str, group: str, topic: str, **config) -> None:
        super().__init__(daemon=True)
        self.consumer = KafkaConsumer(
            bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
            enable_auto_commit=False, session_timeout_ms=6000, heartbeat_interval_ms=500,
            fetch_max_wait_ms=100, request_timeout_ms=10000, retry_backoff_ms=50,
            reconnect_backoff_ms=50, reconnect_backoff_max_ms=300, **config)
        # Topic metadata before joining: see kafka_python_member_race below.
        self.consumer.partitions_for_topic(topic)
        self.consumer.subscribe([topic])
        self.seen: list[bytes] = []
        self.commit_failures = 0
        self.running = True
        self.closed = threading.Event()

    def run(self) -> None:
        try:
            while self.running:
                batch = self.consumer.poll(timeout_ms=300)
                for records in batch.values():
                    self.seen.extend(r.value for r in records)
                if batch:
                    try:
                        self.consumer.commit()
                    except Exception:  # a rebalance or a coordinator move: redelivered later
                        self.commit_failures += 1
        finally:
            self.consumer.close()
            self.closed.set()

    def stop(self) -> None:
        self.running = False
        self.closed.wait(15)


KILLABLE_MEMBER = textwrap.dedent("""
    import sys
    from kafka import KafkaConsumer
    consumer = KafkaConsumer(bootstrap_servers=sys.argv[1], group_id=sys.argv[2],
                             auto_offset_reset="earliest", enable_auto_commit=False,
                             session_timeout_ms=6000, heartbeat_interval_ms=500,
                             client_id="doomed")
    consumer.partitions_for_topic(sys.argv[3])
    consumer.subscribe([sys.argv[3]])
    while True:
        if consumer.poll(timeout_ms=100):
            consumer.commit()
        print("assigned", len(consumer.assignment()), flush=True)
""")


@pytest.mark.interop
@pytest.mark.timeout(60)
def test_kafka_python_group_shares_partitions_and_rebalances_on_leave_and_on_death(fast_served):
    cluster, server = fast_served
    topic, group = "clicks", "readers"
    with cluster.lock:
        cluster.create_topic(topic, partitions=6, replication_factor=3)
    everything = {TopicPartition(topic, p) for p in range(6)}
    producer = KafkaProducer(bootstrap_servers=server.bootstrap_servers, acks="all")
    for i in range(60):
        producer.send(topic, key=b"user-%d" % i, value=b"click-%02d" % i)
    producer.flush(10)

    doomed = subprocess.Popen(
        [sys.executable, "-c", KILLABLE_MEMBER, server.bootstrap_servers, group, topic],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    readers = [Reader(server.bootstrap_servers, group, topic) for _ in range(2)]
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap_servers)
    try:
        for r in readers:
            r.start()
        shares: list[dict] = []
        wait_for(lambda: balanced(admin, group, 3, everything, shares), 25,
                 "three members sharing six")
        assert sorted(len(p) for p in shares[-1].values()) == [2, 2, 2]  # range: 6 over 3

        # Everything is read and committed, whoever read it.
        def all_committed() -> bool:
            committed = admin.list_group_offsets(group)[group]
            return {tp: o.offset for tp, o in committed.items()} == end_offsets(admin, topic, 6)
        assert sum(end_offsets(admin, topic, 6).values()) == 60
        wait_for(all_committed, 15, "every partition committed to its end")

        # A member that closes sends LeaveGroup: the rest rebalance at once.
        started = time.monotonic()
        readers[1].stop()
        wait_for(lambda: balanced(admin, group, 2, everything), 10, "two members after a leave")
        assert time.monotonic() - started < 5.0  # well inside the 6 s session timeout

        # A member that is killed says nothing: the coordinator drops it after
        # session.timeout.ms, then the survivor owns every partition.
        killed_at = time.monotonic()
        doomed.send_signal(signal.SIGKILL)
        doomed.wait(5)
        wait_for(lambda: balanced(admin, group, 1, everything), 20, "one member after a death")
        assert time.monotonic() - killed_at >= 4.0  # it took the session timeout, not a leave

        # The survivor keeps reading new records and commits them.
        before = len(readers[0].seen)
        for i in range(6):
            producer.send(topic, key=b"late-%d" % i, value=b"late-%d" % i).get(10)
        wait_for(lambda: len(readers[0].seen) >= before + 6, 15, "the survivor reading on")
        assert {b"late-%d" % i for i in range(6)} <= set(readers[0].seen)
        wait_for(all_committed, 10, "the late records committed")
        # KafkaConsumer.committed() (OffsetFetch) from a client outside the group.
        probe = KafkaConsumer(bootstrap_servers=server.bootstrap_servers, group_id=group,
                              enable_auto_commit=False)
        try:
            ends = end_offsets(admin, topic, 6)
            assert {tp: probe.committed(tp) for tp in everything} == ends
        finally:
            probe.close(autocommit=False)
    finally:
        if doomed.poll() is None:
            os.kill(doomed.pid, signal.SIGKILL)
            doomed.wait(5)
        for r in readers:
            r.stop()
        admin.close()
        producer.close(5)


@pytest.mark.interop
@pytest.mark.timeout(60)
def test_confluent_kafka_group_reads_and_commits(fast_served):
    from confluent_kafka import Consumer
    from confluent_kafka import TopicPartition as CKPartition

    cluster, server = fast_served
    topic, group = "payments", "ck-readers"
    with cluster.lock:
        cluster.create_topic(topic, partitions=4, replication_factor=3)
    producer = KafkaProducer(bootstrap_servers=server.bootstrap_servers, acks="all")
    sent = {b"pay-%02d" % i for i in range(40)}
    for value in sorted(sent):
        producer.send(topic, key=value, value=value)
    producer.flush(10)
    producer.close(5)

    config = {"bootstrap.servers": server.bootstrap_servers, "group.id": group,
              "auto.offset.reset": "earliest", "enable.auto.commit": False,
              "session.timeout.ms": 6000, "heartbeat.interval.ms": 500,
              "fetch.wait.max.ms": 100}
    consumers = [Consumer(config) for _ in range(2)]
    seen: list[bytes] = []
    try:
        for c in consumers:
            c.subscribe([topic])
        deadline = time.monotonic() + 30
        while set(seen) != sent and time.monotonic() < deadline:
            for c in consumers:
                message = c.poll(0.1)
                if message is None or message.error():
                    continue
                seen.append(message.value())
                c.commit(message=message, asynchronous=False)
        assert set(seen) == sent
        # Both members end up with a share of the four partitions.
        while time.monotonic() < deadline and not all(c.assignment() for c in consumers):
            for c in consumers:
                c.poll(0.1)
        shares = [{tp.partition for tp in c.assignment()} for c in consumers]
        assert all(shares) and sorted(p for share in shares for p in share) == [0, 1, 2, 3]
        wanted = [CKPartition(topic, p) for p in range(4)]
        committed = {tp.partition: tp.offset for tp in consumers[0].committed(wanted, 10)}
        with cluster.lock:
            ends = {p.partition: p.high_watermark
                    for p in cluster.describe_topic(topic).partitions}
        assert committed == ends and sum(ends.values()) == 40
    finally:
        for c in consumers:
            c.close()  # LeaveGroup
    with cluster.lock:
        assert cluster.groups.describe_group(None, group).state == "Empty"


@pytest.mark.kcat
@pytest.mark.interop
@pytest.mark.timeout(60)
def test_kcat_balanced_consumer_commits_on_exit(fast_served):
    import shutil

    cluster, server = fast_served
    kcat = shutil.which("kcat")
    assert kcat, "kcat is not installed (Debian package kcat; test.sh installs it)"
    with cluster.lock:
        cluster.create_topic("k", partitions=3, replication_factor=3)
    producer = KafkaProducer(bootstrap_servers=server.bootstrap_servers, acks="all")
    for i in range(30):
        producer.send("k", key=b"%d" % i, value=b"v%02d" % i)
    producer.flush(10)
    producer.close(5)
    done = subprocess.run(
        [kcat, "-b", server.bootstrap_servers, "-G", "kcat-group", "-o", "beginning", "-e",
         "-q", "-f", "%s\\n", "-X", "session.timeout.ms=6000", "k"],
        capture_output=True, timeout=45)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    assert sorted(done.stdout.split()) == [b"v%02d" % i for i in range(30)]
    with cluster.lock:
        committed = cluster.groups.offset_fetch(None, "kcat-group")[1]
        ends = {("k", p.partition): p.high_watermark
                for p in cluster.describe_topic("k").partitions}
    assert {tp: c.offset for tp, c in committed.items()} == ends


def committed_total(cluster: Cluster, group: str, coordinator: int | None = None) -> int:
    """The sum of the group's committed offsets, as `coordinator` (any, if None) serves them."""
    with cluster.lock:
        code, committed = cluster.groups.offset_fetch(coordinator, group)
    assert code == 0, code
    return sum(c.offset for c in committed.values())


@pytest.mark.interop
@pytest.mark.timeout(90)
def test_group_and_idempotent_producer_survive_the_coordinator_stopping(fast_served):
    """The broker coordinating the group (and leading some partitions) stops and starts
    again while two members read and commit and a producer sends. The group moves to a
    new coordinator; afterwards the topic holds every acknowledged record exactly once
    and the group has seen every one of them and committed up to the end."""
    cluster, server = fast_served
    topic, group = "orders", "billing"
    with cluster.lock:
        cluster.create_topic(topic, partitions=3, replication_factor=3,
                             config={"min.insync.replicas": 2})
        victim = cluster.groups.find_coordinator(group)
    readers = [Reader(server.bootstrap_servers, group, topic) for _ in range(2)]
    sender = BackgroundProducer(server.bootstrap_servers, topic, value=b"order-%06d",
                                key=b"customer-%d", keys=11, pause=0.002)
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap_servers)
    everything = {TopicPartition(topic, p) for p in range(3)}
    try:
        for r in readers:
            r.start()
        sender.start()
        wait_for(lambda: balanced(admin, group, 2, everything), 20, "two members sharing")
        wait_for(lambda: len(sender.acked) >= 300, 20, "300 acknowledged records")
        with cluster.lock:
            before = committed_total(cluster, group)
            cluster.stop_broker(victim)
        wait_for(lambda: not server.listening(victim), 5, "the coordinator's listener closing")
        sender.wait_for_more(300, 20, "producing without the stopped broker")
        with cluster.lock:
            moved_to = cluster.groups.find_coordinator(group)
        assert moved_to != victim
        wait_for(lambda: committed_total(cluster, group, moved_to) > before + 100, 20,
                 "the group committing through its new coordinator")
        with cluster.lock:
            cluster.start_broker(victim)
        wait_for(lambda: server.listening(victim), 5, "the listener reopening")
        sender.wait_for_more(300, 20, "producing after the restart")
        sender.stop()
        assert sender.produced.wait(60)

        def caught_up() -> bool:
            # Read in process: kafka-python's admin keeps the coordinator it found first.
            with cluster.lock:
                code, committed = cluster.groups.offset_fetch(None, group)
                ends = {(topic, p.partition): p.high_watermark
                        for p in cluster.describe_topic(topic).partitions}
            return code == 0 and {tp: c.offset for tp, c in committed.items()} == ends
        wait_for(caught_up, 30, "the group committing up to the end")
    finally:
        sender.stop()
        sender.join(60)
        for r in readers:
            r.stop()
        admin.close()
    assert not sender.failed, sender.failed[:3]
    acked = sender.acked
    stored = [v for values in stored_values(cluster, topic, 3).values() for v in values]
    assert sorted(stored) == sorted(acked), "every acknowledged record stored exactly once"
    seen = {v for r in readers for v in r.seen}
    assert set(acked) <= seen, f"{len(set(acked) - seen)} acknowledged records never read"
