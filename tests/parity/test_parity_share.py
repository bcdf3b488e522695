"""The share-group APIs through both doors: ShareGroupHeartbeat, ShareGroupDescribe,
DescribeShareGroupOffsets, AlterShareGroupOffsets and DeleteShareGroupOffsets called at
the coordinator as the in-process share consumer calls them (core.api.share_groups, with
the caller's principal) and as wire requests of a connection authenticated as the same
principal answer the same codes: the authorization checks first, then the share-group
coordinator's (unknown group, a consumer group's id, a group with members). Each
situation runs on a fresh cluster of the same seed per door."""
from __future__ import annotations

import struct
from collections.abc import Callable

import pytest

from minikafka.cluster import Cluster
from minikafka.core import api, errors
from minikafka.core.acl import AclOperation
from minikafka.core.acl import ResourceType as Kind
from minikafka.core.api import authz
from minikafka.core.share.partition import AcknowledgementBatch
from minikafka.wire import Session, default_registry, encode_request
from minikafka.wire.codec import response_class
from minikafka.wire.handlers._share import topic_id, topic_name
from minikafka.wire.messages import (
    AlterShareGroupOffsetsRequest,
    DeleteShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsRequest,
    ShareAcknowledgeRequest,
    ShareFetchRequest,
    ShareGroupDescribeRequest,
    ShareGroupHeartbeatRequest,
)

from .test_parity_groups import (
    ALICE,
    GROUP,
    GROUP_REFUSED,
    TOPIC_REFUSED,
    UNKNOWN,
    _cluster,
    _committed_by_admin,
    _grant,
    _in_process_call,
    _wire_call,
)

ADMIN = authz.Caller("User:admin")
READ, DESCRIBE, DELETE = AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE


def _member(cluster: Cluster) -> None:
    """User:admin's member m-0 of the share group GROUP, reading `paid`."""
    result = api.share_group_heartbeat(cluster, ADMIN, None, GROUP, "m-0", 0, ["paid"])
    assert result.error_code == errors.NONE


def _emptied(cluster: Cluster) -> None:
    """The share group GROUP, its one member gone."""
    _member(cluster)
    assert api.share_group_heartbeat(cluster, ADMIN, None, GROUP, "m-0", -1).error_code == 0


# -- ShareGroupHeartbeat (key 76) ----------------------------------------------------------
def heartbeat_in_process(cluster: Cluster, member_id: str = "m-1") -> tuple:
    r = _in_process_call(cluster, lambda c, who, node, _: api.share_group_heartbeat(
        c, who, node, GROUP, member_id, 0, ["paid", "secret"]))
    return r.error_code, r.member_epoch, r.assignment or {}


def heartbeat_on_the_wire(cluster: Cluster, member_id: str = "m-1") -> tuple:
    r = _wire_call(cluster, ShareGroupHeartbeatRequest(
        group_id=GROUP, member_id=member_id, member_epoch=0, rack_id=None,
        subscribed_topic_names=["paid", "secret"]), 1)
    return r.error_code, r.member_epoch, {
        topic_name(cluster, t.topic_id): list(t.partitions)
        for t in (r.assignment.topic_partitions if r.assignment else ())}


# -- ShareGroupDescribe (key 77) -----------------------------------------------------------
def describe_in_process(cluster: Cluster) -> tuple:
    d = _in_process_call(cluster, lambda c, who, node, _: api.share_group_describe(
        c, who, node, GROUP))
    return d.error_code, d.error_message, d.state if not d.error_code else "", len(d.members)


def describe_on_the_wire(cluster: Cluster) -> tuple:
    [g] = _wire_call(cluster, ShareGroupDescribeRequest(
        group_ids=[GROUP], include_authorized_operations=False), 1).groups
    return g.error_code, g.error_message, g.group_state, len(g.members)


# -- DescribeShareGroupOffsets (key 90) ----------------------------------------------------
ASKED = {"paid": [0], "secret": [0]}


def offsets_in_process(cluster: Cluster) -> tuple:
    code, message, found = _in_process_call(
        cluster, lambda c, who, node, _: api.describe_share_group_offsets(
            c, who, node, GROUP, ASKED))
    return code, {(d.topic, d.partition): (d.start_offset, d.error_code) for d in found}


def offsets_on_the_wire(cluster: Cluster) -> tuple:
    G = DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestGroup
    T = G.DescribeShareGroupOffsetsRequestTopic
    [g] = _wire_call(cluster, DescribeShareGroupOffsetsRequest(groups=[G(
        group_id=GROUP, topics=[T(topic_name=t, partitions=ps) for t, ps in ASKED.items()])]),
        1).groups
    return g.error_code, {(t.topic_name, p.partition_index): (p.start_offset, p.error_code)
                          for t in g.topics for p in t.partitions}


# -- AlterShareGroupOffsets (key 91) -------------------------------------------------------
RESET = {("paid", 0): 0, ("secret", 0): 0, ("paid", 5): 0}


def alter_in_process(cluster: Cluster) -> tuple:
    code, _, results = _in_process_call(
        cluster, lambda c, who, node, _: api.alter_share_group_offsets(c, who, node, GROUP,
                                                                       RESET))
    return code, results


def alter_on_the_wire(cluster: Cluster) -> tuple:
    T = AlterShareGroupOffsetsRequest.AlterShareGroupOffsetsRequestTopic
    P = T.AlterShareGroupOffsetsRequestPartition
    topics: dict[str, list] = {}
    for (t, p), offset in RESET.items():
        topics.setdefault(t, []).append(P(partition_index=p, start_offset=offset))
    r = _wire_call(cluster, AlterShareGroupOffsetsRequest(group_id=GROUP, topics=[
        T(topic_name=t, partitions=ps) for t, ps in topics.items()]), 0)
    return r.error_code, {(t.topic_name, p.partition_index): p.error_code
                          for t in r.responses for p in t.partitions}


# -- DeleteShareGroupOffsets (key 92) ------------------------------------------------------
FORGET = ["paid", "secret", "gone"]


def delete_in_process(cluster: Cluster) -> tuple:
    code, _, results = _in_process_call(
        cluster, lambda c, who, node, _: api.delete_share_group_offsets(c, who, node, GROUP,
                                                                        FORGET))
    return code, results


def delete_on_the_wire(cluster: Cluster) -> tuple:
    T = DeleteShareGroupOffsetsRequest.DeleteShareGroupOffsetsRequestTopic
    r = _wire_call(cluster, DeleteShareGroupOffsetsRequest(
        group_id=GROUP, topics=[T(topic_name=t) for t in FORGET]), 0)
    return r.error_code, {t.topic_name: t.error_code for t in r.responses}


DOORS: dict[str, tuple[Callable, Callable]] = {
    "heartbeat": (heartbeat_in_process, heartbeat_on_the_wire),
    "describe": (describe_in_process, describe_on_the_wire),
    "offsets": (offsets_in_process, offsets_on_the_wire),
    "alter": (alter_in_process, alter_on_the_wire),
    "delete": (delete_in_process, delete_on_the_wire),
}
NOT_SHARE = f"Group {GROUP} is not a share group."
GROUP_READ = (READ, Kind.GROUP, GROUP)
BOTH_TOPICS = ((READ, Kind.TOPIC, "paid"), (READ, Kind.TOPIC, "secret"))
CASES = [
    # (API, setup, alice's grants, what both doors answer)
    ("heartbeat", None, BOTH_TOPICS, (GROUP_REFUSED, 0, {})),
    ("heartbeat", None, (GROUP_READ, (DESCRIBE, Kind.TOPIC, "paid")), (TOPIC_REFUSED, 0, {})),
    ("heartbeat", _committed_by_admin, (GROUP_READ, *BOTH_TOPICS),
     (errors.GROUP_ID_NOT_FOUND, 0, {})),
    ("heartbeat", None, (GROUP_READ, *BOTH_TOPICS), (errors.NONE, 1, {"paid": [0],
                                                                      "secret": [0]})),
    ("describe", _member, ((READ, Kind.TOPIC, "paid"),), (GROUP_REFUSED, None, "", 0)),
    ("describe", None, (GROUP_READ,), (errors.GROUP_ID_NOT_FOUND, f"Group {GROUP} not found.",
                                       "", 0)),
    ("describe", _committed_by_admin, (GROUP_READ,), (errors.GROUP_ID_NOT_FOUND, NOT_SHARE,
                                                      "", 0)),
    ("describe", _member, (GROUP_READ,), (errors.NONE, None, "Stable", 1)),
    ("offsets", _member, BOTH_TOPICS, (GROUP_REFUSED, {})),
    ("offsets", _committed_by_admin, (GROUP_READ, *BOTH_TOPICS), (errors.GROUP_ID_NOT_FOUND, {})),
    ("offsets", _member, (GROUP_READ, (DESCRIBE, Kind.TOPIC, "paid")),
     (errors.NONE, {("paid", 0): (0, 0), ("secret", 0): (-1, TOPIC_REFUSED)})),
    ("alter", _emptied, BOTH_TOPICS, (GROUP_REFUSED, {})),
    ("alter", _member, (GROUP_READ, *BOTH_TOPICS), (errors.NON_EMPTY_GROUP, {})),
    ("alter", _emptied, (GROUP_READ, (READ, Kind.TOPIC, "paid")),
     (errors.NONE, {("secret", 0): TOPIC_REFUSED, ("paid", 0): 0, ("paid", 5): UNKNOWN})),
    ("delete", _emptied, (GROUP_READ, *BOTH_TOPICS), (GROUP_REFUSED, {})),
    # the refused topics are answered even when the coordinator refuses the group
    ("delete", _member, ((DELETE, Kind.GROUP, GROUP), *BOTH_TOPICS),
     (errors.NON_EMPTY_GROUP, {"gone": TOPIC_REFUSED})),
    ("delete", _emptied, ((DELETE, Kind.GROUP, GROUP), (READ, Kind.TOPIC, "paid"),
                          (READ, Kind.TOPIC, "gone")),
     (errors.NONE, {"paid": 0, "gone": UNKNOWN, "secret": TOPIC_REFUSED})),
]


@pytest.mark.parametrize(("name", "setup", "grants", "expected"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_share_group_apis_answer_the_same_through_both_doors(name, setup, grants,
                                                             expected) -> None:
    for door in DOORS[name]:
        cluster = _cluster()
        for operation, kind, resource in grants:
            _grant(cluster, operation, kind, resource)
        if setup is not None:
            setup(cluster)
        assert door(cluster) == expected, door.__name__


def test_an_empty_member_id_is_invalid_through_both_doors() -> None:
    """KIP-1082: the share consumer names itself; the coordinator refuses an empty id once
    the authorization passed."""
    for door in DOORS["heartbeat"]:
        cluster = _cluster()
        for operation, kind, resource in (GROUP_READ, *BOTH_TOPICS):
            _grant(cluster, operation, kind, resource)
        assert door(cluster, "") == (errors.INVALID_REQUEST, 0, {}), door.__name__


def test_a_refused_alter_leaves_the_share_partition_where_it_was() -> None:
    """secret-0 (no READ) keeps its start offset; paid-0 moves, through either door."""
    for door in DOORS["alter"]:
        cluster = _cluster()
        for operation, kind, resource in (GROUP_READ, (READ, Kind.TOPIC, "paid")):
            _grant(cluster, operation, kind, resource)
        api.share_group_heartbeat(cluster, ADMIN, None, GROUP, "m-0", 0, ["paid", "secret"])
        api.share_group_heartbeat(cluster, ADMIN, None, GROUP, "m-0", -1)
        before = set(cluster.share_groups.partitions)
        door(cluster)
        after = set(cluster.share_groups.partitions)
        assert (GROUP, "paid", 0) in after
        assert {k for k in after if k[1] == "secret"} == {k for k in before if k[1] == "secret"}


# -- ShareFetch (key 78) and ShareAcknowledge (key 79) at paid-0's leader --------------------
def _leader_call(cluster: Cluster, request, version: int):
    """The request on a connection to paid-0's leader, authenticated as alice."""
    leader = cluster.describe_topic("paid").partitions[0].leader
    session = Session(default_registry(), broker_id=leader, cluster=cluster,
                      client_host="127.0.0.1", principal=ALICE)
    session.receive_data(encode_request(request, 1, "door", version=version))
    data = session.process(cluster.now_ms).data
    (size,) = struct.unpack_from(">i", data)
    return response_class(request.API_KEY).decode(data[4:4 + size], version=version,
                                                  header=True)


def _share_fetch(cluster: Cluster) -> api.share.ShareFetchResult:
    leader = cluster.describe_topic("paid").partitions[0].leader
    return api.share.share_fetch(cluster, leader, api.share.ShareFetchRequest(
        GROUP, "m-1", 0, {("paid", 0): [], ("secret", 0): []}), authz.Caller(ALICE))


def share_fetch_in_process(cluster: Cluster) -> tuple:
    r = _share_fetch(cluster)
    return r.error_code, {(p.topic, p.partition): p.error_code for p in r.partitions}


def share_fetch_on_the_wire(cluster: Cluster) -> tuple:
    T = ShareFetchRequest.FetchTopic
    r = _leader_call(cluster, ShareFetchRequest(
        group_id=GROUP, member_id="m-1", share_session_epoch=0, max_wait_ms=0, min_bytes=1,
        max_bytes=1 << 20, max_records=500, batch_size=500, forgotten_topics_data=[],
        topics=[T(topic_id=topic_id(cluster, t), partitions=[T.FetchPartition(
            partition_index=0, acknowledgement_batches=[])]) for t in ("paid", "secret")]), 1)
    return r.error_code, {(topic_name(cluster, t.topic_id), p.partition_index): p.error_code
                          for t in r.responses for p in t.partitions}


ACK = AcknowledgementBatch(0, 0, (1,))


def share_acknowledge_in_process(cluster: Cluster) -> tuple:
    _share_fetch(cluster)  # opens the session (epoch 0), as the wire's is opened below
    leader = cluster.describe_topic("paid").partitions[0].leader
    r = api.share.share_acknowledge(cluster, leader, api.share.ShareAcknowledgeRequest(
        GROUP, "m-1", 1, {("paid", 0): [ACK], ("secret", 0): [ACK]}), authz.Caller(ALICE))
    return r.error_code, r.partitions


def share_acknowledge_on_the_wire(cluster: Cluster) -> tuple:
    _share_fetch(cluster)
    T = ShareAcknowledgeRequest.AcknowledgeTopic
    B = ShareFetchRequest.FetchTopic.FetchPartition.AcknowledgementBatch
    r = _leader_call(cluster, ShareAcknowledgeRequest(
        group_id=GROUP, member_id="m-1", share_session_epoch=1, topics=[
            T(topic_id=topic_id(cluster, t), partitions=[T.AcknowledgePartition(
                partition_index=0, acknowledgement_batches=[B(
                    first_offset=0, last_offset=0, acknowledge_types=[1])])])
            for t in ("paid", "secret")]), 1)
    return r.error_code, {(topic_name(cluster, t.topic_id), p.partition_index): p.error_code
                          for t in r.responses for p in t.partitions}


SHARE_FETCH_CASES = [
    # (alice's grants, what ShareFetch answers, what ShareAcknowledge answers after it)
    (BOTH_TOPICS, (GROUP_REFUSED, {}), (GROUP_REFUSED, {})),
    ((GROUP_READ, (READ, Kind.TOPIC, "paid")),
     (errors.NONE, {("paid", 0): errors.NONE, ("secret", 0): TOPIC_REFUSED}),
     # paid-0 holds no record at offset 0 to acknowledge
     (errors.NONE, {("paid", 0): errors.INVALID_RECORD_STATE, ("secret", 0): TOPIC_REFUSED})),
]


@pytest.mark.parametrize(("grants", "fetched", "acked"), SHARE_FETCH_CASES,
                         ids=["group", "topic"])
def test_share_fetch_and_acknowledge_refuse_the_same_through_both_doors(grants, fetched,
                                                                        acked) -> None:
    """READ on the group, then on each topic (core.api.share): a refused topic's partition
    answers TOPIC_AUTHORIZATION_FAILED and is neither acquired nor acknowledged."""
    doors = [(share_fetch_in_process, fetched), (share_fetch_on_the_wire, fetched),
             (share_acknowledge_in_process, acked), (share_acknowledge_on_the_wire, acked)]
    for door, expected in doors:
        cluster = _cluster()
        for operation, kind, resource in grants:
            _grant(cluster, operation, kind, resource)
        assert door(cluster) == expected, door.__name__
