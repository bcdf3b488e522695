"""JoinGroup, SyncGroup, Heartbeat, LeaveGroup and OffsetCommit through both doors: what the in-process
clients send to the coordinator (core.api.join_group, sync_group, heartbeat, leave_group,
offset_commit, with
the caller's principal) and the wire requests of a connection authenticated as the same
principal answer the same codes: the authorization checks, the coordinator's member
checks and OffsetCommit's UNKNOWN_TOPIC_OR_PARTITION for a topic the cluster lacks.
Each situation runs on a fresh cluster of the same seed per door."""
from __future__ import annotations

import struct
from collections.abc import Callable

import pytest
from kafka.errors import KafkaError
from kafka.protocol.admin import DescribeGroupsRequest
from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetDeleteRequest,
    OffsetFetchRequest,
    SyncGroupRequest,
)
from kafka.structs import TopicPartition

from minikafka import errors as kerrors
from minikafka.cluster import Cluster
from minikafka.core import api, errors
from minikafka.core.acl import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
)
from minikafka.core.acl import ResourceType as Kind
from minikafka.core.api import authz
from minikafka.core.groups.consumer_protocol import ConsumerHeartbeat
from minikafka.wire import Session, default_registry, encode_request
from minikafka.wire.codec import response_class
from minikafka.wire.messages import ConsumerGroupDescribeRequest, ConsumerGroupHeartbeatRequest

from .doors import Door, through_both
from .test_parity import same_everywhere

GROUP = "billing"
ALICE = "User:alice"
_Topic = OffsetCommitRequest.OffsetCommitRequestTopic
_Partition = _Topic.OffsetCommitRequestPartition


def _cluster(*grants: tuple[Kind, str]) -> Cluster:
    """ACLs on; alice may READ the resources in `grants`; topics `paid` and `secret`."""
    cluster = Cluster(brokers=3, seed=11)
    cluster.enable_acls(super_users=["User:admin"])
    cluster.create_topic("paid", partitions=1, replication_factor=1)
    cluster.create_topic("secret", partitions=1, replication_factor=1)
    cluster.create_acls([AclBinding(kind, name, PatternType.LITERAL, ALICE, "*",
                                    AclOperation.READ, AclPermissionType.ALLOW)
                         for kind, name in grants])
    cluster.settle()
    return cluster


def _wire_call(cluster: Cluster, request, version: int):
    """The request on a connection to the group's coordinator, authenticated as alice."""
    session = Session(default_registry(), broker_id=cluster.groups.find_coordinator(GROUP),
                      cluster=cluster, client_host="127.0.0.1", principal=ALICE)
    session.receive_data(encode_request(request, 1, "door", version=version))
    data = b""
    for _ in range(200):
        data = session.process(cluster.now_ms).data
        if data:
            break
        cluster.advance(10)
    (size,) = struct.unpack_from(">i", data)
    return response_class(request.API_KEY).decode(data[4:4 + size], version=version,
                                                  header=True)


def _in_process_call(cluster: Cluster, call: Callable) -> object:
    """The API function at the coordinator, as the in-process clients call it."""
    box: list = []
    out = call(cluster, authz.Caller(ALICE), cluster.groups.find_coordinator(GROUP), box.append)
    cluster.run_until(lambda: bool(box) or out is not None, 10_000)
    return out if out is not None else box[0]


COMMIT = {("paid", 0): (3, -1, ""), ("secret", 0): (4, -1, ""), ("gone", 0): (5, -1, "")}


def commit_in_process(cluster: Cluster) -> dict:
    return _in_process_call(cluster, lambda c, who, node, done: api.offset_commit(
        c, who, node, GROUP, -1, "", None, COMMIT, done))


def commit_on_the_wire(cluster: Cluster) -> dict:
    response = _wire_call(cluster, OffsetCommitRequest(
        group_id=GROUP, generation_id_or_member_epoch=-1, member_id="",
        group_instance_id=None, retention_time_ms=-1, topics=[
            _Topic(name=t, partitions=[_Partition(partition_index=p, committed_offset=o,
                                                  committed_leader_epoch=e,
                                                  committed_metadata=m)])
            for (t, p), (o, e, m) in COMMIT.items()]), 8)
    return {(t.name, p.partition_index): p.error_code for t in response.topics
            for p in t.partitions}


def heartbeat_in_process(cluster: Cluster) -> int:
    return _in_process_call(cluster, lambda c, who, node, _: api.heartbeat(
        c, who, node, GROUP, "m-1", None, 1))


def heartbeat_on_the_wire(cluster: Cluster) -> int:
    return _wire_call(cluster, HeartbeatRequest(
        group_id=GROUP, generation_id=1, member_id="m-1", group_instance_id=None),
        4).error_code


def leave_in_process(cluster: Cluster) -> tuple:
    return _in_process_call(cluster, lambda c, who, node, _: api.leave_group(
        c, who, node, GROUP, [("m-1", None)], "bye"))


def leave_on_the_wire(cluster: Cluster) -> tuple:
    M = LeaveGroupRequest.MemberIdentity
    response = _wire_call(cluster, LeaveGroupRequest(
        group_id=GROUP, members=[M(member_id="m-1", group_instance_id=None, reason="bye")]), 5)
    return response.error_code, [m.error_code for m in response.members]


PROTOCOLS = [("range", b"subscription")]


def join_in_process(cluster: Cluster) -> int:
    return _in_process_call(cluster, lambda c, who, node, done: api.join_group(
        c, who, node, GROUP, "", None, "door", "/127.0.0.1", "consumer", PROTOCOLS, 45_000,
        300_000, done)).error


def join_on_the_wire(cluster: Cluster) -> int:
    P = JoinGroupRequest.JoinGroupRequestProtocol
    return _wire_call(cluster, JoinGroupRequest(
        group_id=GROUP, session_timeout_ms=45_000, rebalance_timeout_ms=300_000,
        member_id="", group_instance_id=None, protocol_type="consumer",
        protocols=[P(name=n, metadata=m) for n, m in PROTOCOLS]), 5).error_code


def sync_in_process(cluster: Cluster) -> int:
    return _in_process_call(cluster, lambda c, who, node, done: api.sync_group(
        c, who, node, GROUP, "m-1", None, 1, "consumer", "range", {}, done)).error


def sync_on_the_wire(cluster: Cluster) -> int:
    return _wire_call(cluster, SyncGroupRequest(
        group_id=GROUP, generation_id=1, member_id="m-1", group_instance_id=None,
        protocol_type="consumer", protocol_name="range", assignments=[]), 5).error_code


def describe_in_process(cluster: Cluster) -> tuple:
    d = _in_process_call(cluster, lambda c, who, node, _: api.describe_group(
        c, who, node, GROUP))
    return d.error, d.state


def describe_on_the_wire(cluster: Cluster) -> tuple:
    [d] = _wire_call(cluster, DescribeGroupsRequest(
        groups=[GROUP], include_authorized_operations=False), 6).groups
    return d.error_code, d.group_state


def _committed_by_admin(cluster: Cluster) -> None:
    """User:admin (a super user) commits paid-0 and secret-0 for the empty group."""
    box: list = []
    api.offset_commit(cluster, authz.Caller("User:admin"), None, GROUP, -1, "", None,
                      {("paid", 0): (3, -1, ""), ("secret", 0): (4, -1, "")}, box.append)
    cluster.run_until(lambda: bool(box), 10_000)
    assert set(box[0].values()) == {errors.NONE}


ASKED = [("paid", 0), ("secret", 0), ("paid", 5)]


def offset_fetch_in_process(cluster: Cluster) -> tuple:
    _committed_by_admin(cluster)
    code, found = _in_process_call(cluster, lambda c, who, node, _: api.offset_fetch(
        c, who, node, GROUP, ASKED))
    return code, {tp: (offset, error) for tp, (offset, _, _, error) in found.items()}


def offset_fetch_on_the_wire(cluster: Cluster) -> tuple:
    _committed_by_admin(cluster)
    T = OffsetFetchRequest.OffsetFetchRequestTopic
    topics: dict[str, list[int]] = {}
    for t, p in ASKED:
        topics.setdefault(t, []).append(p)
    response = _wire_call(cluster, OffsetFetchRequest(
        group_id=GROUP, topics=[T(name=t, partition_indexes=ps) for t, ps in topics.items()],
        require_stable=False), 7)
    return response.error_code, {(t.name, p.partition_index): (p.committed_offset,
                                                               p.error_code)
                                 for t in response.topics for p in t.partitions}


def consumer_heartbeat_in_process(cluster: Cluster) -> tuple:
    answer = _in_process_call(cluster, lambda c, who, node, _: api.consumer_group_heartbeat(
        c, who, node, ConsumerHeartbeat(GROUP, "m-1", 0, rebalance_timeout_ms=30_000,
                                        subscribed_topic_names=("paid", "secret"), owned=(),
                                        client_id="door", client_host="/127.0.0.1")))
    return answer.error, answer.member_epoch


def consumer_heartbeat_on_the_wire(cluster: Cluster) -> tuple:
    response = _wire_call(cluster, ConsumerGroupHeartbeatRequest(
        group_id=GROUP, member_id="m-1", member_epoch=0, rebalance_timeout_ms=30_000,
        subscribed_topic_names=["paid", "secret"], topic_partitions=[]), 1)
    return response.error_code, response.member_epoch


DOORS = {"offset_commit": (commit_in_process, commit_on_the_wire),
         "heartbeat": (heartbeat_in_process, heartbeat_on_the_wire),
         "leave_group": (leave_in_process, leave_on_the_wire),
         "join_group": (join_in_process, join_on_the_wire),
         "sync_group": (sync_in_process, sync_on_the_wire),
         "describe_group": (describe_in_process, describe_on_the_wire),
         "offset_fetch": (offset_fetch_in_process, offset_fetch_on_the_wire),
         "consumer_group_heartbeat": (consumer_heartbeat_in_process,
                                      consumer_heartbeat_on_the_wire)}
GROUP_REFUSED, TOPIC_REFUSED = errors.GROUP_AUTHORIZATION_FAILED, \
    errors.TOPIC_AUTHORIZATION_FAILED
UNKNOWN = errors.UNKNOWN_TOPIC_OR_PARTITION
CASES = [
    # (API, alice's READ grants, what both doors answer)
    ("offset_commit", (), dict.fromkeys(COMMIT, GROUP_REFUSED)),
    ("offset_commit", ((Kind.GROUP, GROUP), (Kind.TOPIC, "paid"), (Kind.TOPIC, "gone")),
     {("paid", 0): 0, ("secret", 0): TOPIC_REFUSED, ("gone", 0): UNKNOWN}),
    ("heartbeat", (), GROUP_REFUSED),
    ("heartbeat", ((Kind.GROUP, GROUP),), errors.UNKNOWN_MEMBER_ID),
    ("leave_group", (), (GROUP_REFUSED, [])),
    ("leave_group", ((Kind.GROUP, GROUP),), (errors.NONE, [errors.UNKNOWN_MEMBER_ID])),
    ("join_group", (), GROUP_REFUSED),
    ("join_group", ((Kind.GROUP, GROUP),), errors.MEMBER_ID_REQUIRED),
    ("sync_group", (), GROUP_REFUSED),
    ("sync_group", ((Kind.GROUP, GROUP),), errors.UNKNOWN_MEMBER_ID),
    ("describe_group", (), (GROUP_REFUSED, "")),
    ("describe_group", ((Kind.GROUP, GROUP),), (errors.GROUP_ID_NOT_FOUND, "Dead")),
    ("offset_fetch", (), (GROUP_REFUSED, {})),
    ("offset_fetch", ((Kind.GROUP, GROUP), (Kind.TOPIC, "paid")),
     (errors.NONE, {("paid", 0): (3, 0), ("paid", 5): (-1, 0),
                    ("secret", 0): (-1, TOPIC_REFUSED)})),
    ("consumer_group_heartbeat", ((Kind.TOPIC, "paid"), (Kind.TOPIC, "secret")),
     (GROUP_REFUSED, 0)),
    ("consumer_group_heartbeat", ((Kind.GROUP, GROUP), (Kind.TOPIC, "paid")),
     (TOPIC_REFUSED, 0)),
    ("consumer_group_heartbeat", ((Kind.GROUP, GROUP), (Kind.TOPIC, "paid"),
                                  (Kind.TOPIC, "secret")), (errors.NONE, 2)),
]


@pytest.mark.parametrize(("name", "grants", "expected"), CASES,
                         ids=[f"{c[0]}-{len(c[1])}-grants" for c in CASES])
def test_group_apis_answer_the_same_through_both_doors(name, grants, expected) -> None:
    in_process, wire = DOORS[name]
    assert in_process(_cluster(*grants)) == expected
    assert wire(_cluster(*grants)) == expected


def test_a_refused_commit_writes_nothing_through_either_door() -> None:
    """The partitions refused (or of a missing topic) never reach __consumer_offsets."""
    grants = ((Kind.GROUP, GROUP), (Kind.TOPIC, "paid"))
    for commit in (commit_in_process, commit_on_the_wire):
        cluster = _cluster(*grants)
        commit(cluster)
        code, found = cluster.groups.offset_fetch(None, GROUP, None)
        assert code == errors.NONE
        assert {tp: c.offset for tp, c in found.items()} == {("paid", 0): 3}


def test_an_in_process_member_whose_group_read_is_revoked_is_refused_by_its_heartbeat() -> None:
    """The in-process consumer's heartbeats are Heartbeat requests like any other: once
    alice may no longer READ the group they are refused, so they stop keeping the member
    alive and the coordinator drops it after session.timeout.ms (without a poll, which
    would raise the refusal itself)."""
    cluster = _cluster((Kind.GROUP, GROUP), (Kind.TOPIC, "paid"))
    cluster.set_scram_credential("alice", "alice-secret")
    consumer = cluster.consumer(
        "paid", group_id=GROUP, security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
        sasl_plain_username="alice", sasl_plain_password="alice-secret")
    for _ in range(50):
        consumer.poll(timeout_ms=200)
        if consumer.assignment():
            break
    assert consumer.assignment()
    cluster.advance(30_000)
    assert cluster.groups.describe_group(None, GROUP).state == "Stable"  # heartbeats held it
    cluster.delete_acls([AclBindingFilter(Kind.GROUP, GROUP, PatternType.LITERAL, ALICE)])
    cluster.advance(60_000)
    assert cluster.groups.describe_group(None, GROUP).state == "Empty"


def test_the_admin_lists_and_deletes_a_share_group_the_same_through_both_doors() -> None:
    """kafka-python's admin (ListGroups v5, DeleteGroups) and the in-process admin both
    reach the share-group coordinator through core.api.list_groups and delete_groups: an
    empty share group is listed with type "share", deleted, and then unknown."""
    def scenario(door: Door) -> tuple:
        def make_share_group(cluster: Cluster) -> None:
            cluster.create_topic("jobs", partitions=1, replication_factor=1)
            consumer = cluster.share_consumer("workers", ["jobs"])
            consumer.poll(timeout_ms=500)
            consumer.close()

        door.setup(make_share_group)
        admin = door.admin()
        listed = sorted((g["group_id"], g["group_type"]) for g in admin.list_groups())
        deleted = admin.delete_groups(["workers"])
        again = admin.delete_groups(["workers"])
        return listed, deleted, again

    seen = same_everywhere(through_both(scenario))
    assert seen == ([("workers", "share")], {"workers": "OK"},
                    {"workers": "GroupIdNotFoundError"})


# -- ConsumerGroupDescribe (key 69) and OffsetDelete (key 47) ------------------------------
ADMIN = authz.Caller("User:admin")


def _grant(cluster: Cluster, operation: AclOperation, kind: Kind, name: str) -> None:
    cluster.create_acls([AclBinding(kind, name, PatternType.LITERAL, ALICE, "*", operation,
                                    AclPermissionType.ALLOW)])


def _consumer_member(cluster: Cluster, *topics: str) -> None:
    """User:admin's KIP-848 member m-1 of GROUP, subscribed to `topics` and assigned them."""
    answer = api.consumer_group_heartbeat(cluster, ADMIN, None, ConsumerHeartbeat(
        GROUP, "m-1", 0, rebalance_timeout_ms=30_000, subscribed_topic_names=topics,
        owned=(), client_id="door", client_host="/127.0.0.1"))
    assert answer.error == errors.NONE and answer.assignment


def _classic_group(cluster: Cluster) -> None:
    """An empty classic group holding User:admin's commits (paid-0 at 3, secret-0 at 4)."""
    _committed_by_admin(cluster)


def describe_consumer_group_in_process(cluster: Cluster) -> tuple:
    view = _in_process_call(cluster, lambda c, who, node, _: api.consumer_group_describe(
        c, who, node, GROUP))
    return view.error, view.error_message, view.state, len(view.members)


def describe_consumer_group_on_the_wire(cluster: Cluster) -> tuple:
    [g] = _wire_call(cluster, ConsumerGroupDescribeRequest(
        group_ids=[GROUP], include_authorized_operations=False), 1).groups
    return g.error_code, g.error_message, g.group_state, len(g.members)


NOT_CONSUMER = f"Group {GROUP} is not a consumer group."
HIDDEN = "The group has described topic(s) that the client is not authorized to describe."
DESCRIBE_CASES = [
    # (setup, alice's READ grants, what both doors answer)
    (_classic_group, (), (GROUP_REFUSED, None, "", 0)),
    (None, ((Kind.GROUP, GROUP),), (errors.GROUP_ID_NOT_FOUND, f"Group {GROUP} not found.",
                                    "", 0)),
    (_classic_group, ((Kind.GROUP, GROUP),), (errors.GROUP_ID_NOT_FOUND, NOT_CONSUMER, "", 0)),
    (lambda c: _consumer_member(c, "paid", "secret"), ((Kind.GROUP, GROUP), (Kind.TOPIC, "paid")),
     (TOPIC_REFUSED, HIDDEN, "", 0)),
    (lambda c: _consumer_member(c, "paid", "secret"),
     ((Kind.GROUP, GROUP), (Kind.TOPIC, "paid"), (Kind.TOPIC, "secret")),
     (errors.NONE, None, "Stable", 1)),
]


@pytest.mark.parametrize(("setup", "grants", "expected"), DESCRIBE_CASES,
                         ids=["refused", "unknown", "classic", "hidden-topic", "described"])
def test_consumer_group_describe_answers_the_same_through_both_doors(setup, grants,
                                                                      expected) -> None:
    """DESCRIBE on the group, then the coordinator's view; a view naming a topic alice may
    not DESCRIBE is refused whole (core.api.consumer_group_describe)."""
    for door in (describe_consumer_group_in_process, describe_consumer_group_on_the_wire):
        cluster = _cluster(*grants)
        if setup is not None:
            setup(cluster)
        assert door(cluster) == expected, door.__name__


DELETED = [("paid", 0), ("secret", 0), ("paid", 5), ("gone", 0)]


def offset_delete_in_process(cluster: Cluster) -> tuple:
    return _in_process_call(cluster, lambda c, who, node, _: api.offset_delete(
        c, who, node, GROUP, DELETED))


def offset_delete_on_the_wire(cluster: Cluster) -> tuple:
    T = OffsetDeleteRequest.OffsetDeleteRequestTopic
    P = T.OffsetDeleteRequestPartition
    topics: dict[str, list[int]] = {}
    for t, p in DELETED:
        topics.setdefault(t, []).append(p)
    response = _wire_call(cluster, OffsetDeleteRequest(group_id=GROUP, topics=[
        T(name=t, partitions=[P(partition_index=p) for p in ps]) for t, ps in topics.items()]), 0)
    return response.error_code, {(t.name, p.partition_index): p.error_code
                                 for t in response.topics for p in t.partitions}


def admin_delete_group_offsets(cluster: Cluster) -> tuple:
    """kafka-python's KafkaAdminClient.delete_group_offsets shape, from the in-process admin
    of alice: (error class name, {partition: error class name})."""
    cluster.set_scram_credential("alice", "alice-secret")
    admin = cluster.admin(security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
                          sasl_plain_username="alice", sasl_plain_password="alice-secret")
    try:
        result = admin.delete_group_offsets(GROUP, [TopicPartition(t, p) for t, p in DELETED])
    except KafkaError as exc:
        return type(exc).__name__, {}
    return "NoError", {(tp.topic, tp.partition): e.__name__ for tp, e in result.items()}


SUBSCRIBED = errors.GROUP_SUBSCRIBED_TO_TOPIC
DELETE_CASES = [
    # (setup, alice's grants as (operation, kind, name), what both doors answer)
    (_classic_group, ((AclOperation.READ, Kind.GROUP, GROUP),), (GROUP_REFUSED, {})),
    (None, ((AclOperation.DELETE, Kind.GROUP, GROUP),), (errors.GROUP_ID_NOT_FOUND, {})),
    (_classic_group, ((AclOperation.DELETE, Kind.GROUP, GROUP),
                      (AclOperation.READ, Kind.TOPIC, "paid"),
                      (AclOperation.READ, Kind.TOPIC, "gone")),
     (errors.NONE, {("paid", 0): 0, ("secret", 0): TOPIC_REFUSED, ("paid", 5): UNKNOWN,
                    ("gone", 0): UNKNOWN})),
    (lambda c: _consumer_member(c, "paid"), ((AclOperation.DELETE, Kind.GROUP, GROUP),
                                             (AclOperation.READ, Kind.TOPIC, "paid"),
                                             (AclOperation.READ, Kind.TOPIC, "secret")),
     (errors.NONE, {("paid", 0): SUBSCRIBED, ("secret", 0): 0, ("paid", 5): UNKNOWN,
                    ("gone", 0): TOPIC_REFUSED})),
]


@pytest.mark.parametrize(("setup", "grants", "expected"), DELETE_CASES,
                         ids=["no-delete", "unknown-group", "deleted", "subscribed"])
def test_offset_delete_answers_the_same_through_both_doors(setup, grants, expected) -> None:
    """DELETE on the group, READ on each topic, the metadata's partitions, then the
    coordinator (core.api.offset_delete); the in-process admin raises the group's error
    and names each partition's as kafka-python does."""
    def fresh() -> Cluster:
        cluster = _cluster()
        for operation, kind, name in grants:
            _grant(cluster, operation, kind, name)
        if setup is not None:
            setup(cluster)
        return cluster

    assert offset_delete_in_process(fresh()) == expected
    assert offset_delete_on_the_wire(fresh()) == expected
    code, codes = expected
    assert admin_delete_group_offsets(fresh()) == (
        type(kerrors.for_code(code)).__name__ if code else "NoError",
        {tp: type(kerrors.for_code(c)).__name__ if c else "NoError" for tp, c in codes.items()})


def test_offset_delete_removes_only_what_it_answered_deleted_through_either_door() -> None:
    """paid-0 is deleted; secret-0 (refused) keeps its offset."""
    for door in (offset_delete_in_process, offset_delete_on_the_wire):
        cluster = _cluster()
        _grant(cluster, AclOperation.DELETE, Kind.GROUP, GROUP)
        _grant(cluster, AclOperation.READ, Kind.TOPIC, "paid")
        _classic_group(cluster)
        door(cluster)
        code, found = cluster.groups.offset_fetch(None, GROUP, None)
        assert code == errors.NONE
        assert {tp: c.offset for tp, c in found.items()} == {("secret", 0): 4}
