"""Consumer groups of type "consumer" (KIP-848): the coordinator's ConsumerGroupHeartbeat,
driven directly (the request the wire handler decodes), and the in-process consumer with
group_protocol="consumer" on top of it."""
from __future__ import annotations

import pytest
from kafka.errors import CommitFailedError

from minikafka.cluster import Cluster, settle_group
from minikafka.core import errors
from minikafka.core.errors import INVALID_REGULAR_EXPRESSION
from minikafka.core.groups import assignors
from minikafka.core.groups import records as rec
from minikafka.core.groups.consumer import MEMBER_TRANSITIONS, MemberState
from minikafka.core.groups.consumer_protocol import ConsumerHeartbeat
from minikafka.core.offsets import decode_key, format_record


def cluster_with(partitions: int = 3, **kw) -> Cluster:
    cluster = Cluster(brokers=1, seed=7, **kw)
    cluster.create_topic("t", partitions=partitions)
    return cluster


def hb(cluster: Cluster, member: str, epoch: int, owned=(), group: str = "g", **kw):
    join = epoch == 0
    request = ConsumerHeartbeat(
        group_id=group, member_id=member, member_epoch=epoch,
        rebalance_timeout_ms=kw.pop("rebalance_timeout_ms", 60_000 if join else -1),
        subscribed_topic_names=kw.pop("topics", ("t",) if join else None),
        owned=owned, client_id=member, **kw)
    return cluster.groups.consumer_group_heartbeat(None, request)


def parts(answer) -> set[int]:
    return {p for _, ps in answer.assignment or () for p in ps}


def rows(cluster: Cluster, *partitions: int):
    return ((cluster.controller.topics["t"].topic_id, tuple(partitions)),) if partitions else ()


def test_a_partition_moves_only_after_its_owner_revoked_it():
    cluster = cluster_with(partitions=2)
    a = hb(cluster, "a", 0)
    # a new group is at epoch 1 (as in Kafka 4.x): the first member joins at epoch 2
    assert (a.error, a.member_epoch, parts(a)) == (errors.NONE, 2, {0, 1})
    b = hb(cluster, "b", 0)
    # b is in epoch 3 but gets nothing yet: its target partition is still a's.
    assert (b.member_epoch, parts(b)) == (3, set())
    snap = cluster.groups.snapshot()["g"]
    assert snap["state"] == "Reconciling" and snap["type"] == "consumer"
    assert snap["members"]["b"]["member_state"] == "UNRELEASED_PARTITIONS"
    give_up = hb(cluster, "a", 2, rows(cluster, 0, 1))
    lost = {0, 1} - parts(give_up)
    assert give_up.member_epoch == 2 and len(lost) == 1  # revoke first, same epoch
    assert hb(cluster, "b", 3).assignment is None  # still waiting for a
    done = hb(cluster, "a", 2, rows(cluster, *parts(give_up)))
    assert done.member_epoch == 3 and done.assignment is None
    got = hb(cluster, "b", 3, ())
    assert parts(got) == lost and got.member_epoch == 3
    assert cluster.groups.snapshot()["g"]["state"] == "Stable"


def test_leaving_and_a_session_timeout_bump_the_group_epoch():
    cluster = cluster_with(partitions=4)
    a, b = hb(cluster, "a", 0), hb(cluster, "b", 0)
    assert hb(cluster, "x", 3, ()).error == errors.UNKNOWN_MEMBER_ID
    left = hb(cluster, "b", -1)
    assert (left.error, left.member_epoch) == (errors.NONE, -1)
    assert cluster.groups.groups["g"].group_epoch == 4
    # a never heard of b: it still owns everything, which is its target again
    again = hb(cluster, "a", 2, rows(cluster, *parts(a)))
    assert again.member_epoch == 4 and again.assignment is None
    assert cluster.groups.snapshot()["g"]["members"]["a"]["assignment"] == [
        "t-0", "t-1", "t-2", "t-3"]
    # a stops heartbeating: group.consumer.session.timeout.ms (45 s) later it is gone.
    cluster.advance(45_001)
    assert cluster.groups.snapshot()["g"]["state"] == "Empty"
    assert b.error == errors.NONE


def test_epochs_are_fenced_and_a_lost_answer_is_forgiven():
    cluster = cluster_with(partitions=2)
    a = hb(cluster, "a", 0)
    assert hb(cluster, "a", 5, rows(cluster, 0, 1)).error == errors.FENCED_MEMBER_EPOCH
    hb(cluster, "b", 0)
    revoke = hb(cluster, "a", 2, rows(cluster, 0, 1))
    at3 = hb(cluster, "a", 2, rows(cluster, *parts(revoke)))
    assert at3.member_epoch == 3
    # the answer with epoch 3 was lost: epoch 2 with a subset of the partitions is fine
    assert hb(cluster, "a", 2, rows(cluster, *parts(revoke))).error == errors.NONE
    assert hb(cluster, "a", 2, rows(cluster, 0, 1)).error == errors.FENCED_MEMBER_EPOCH
    assert a.member_epoch == 2


@pytest.mark.parametrize("request_fields, code", [
    ({"rebalance_timeout_ms": -1}, errors.INVALID_REQUEST),
    ({"topics": None}, errors.INVALID_REQUEST),
    ({"server_assignor": "sticky"}, errors.UNSUPPORTED_ASSIGNOR),
    ({"subscribed_topic_regex": "(("}, INVALID_REGULAR_EXPRESSION),
])
def test_bad_first_heartbeats(request_fields, code):
    cluster = cluster_with()
    answer = hb(cluster, "a", 0, **request_fields)
    assert answer.error == code and answer.error_message


def test_range_assignor_and_regex_subscriptions():
    cluster = cluster_with(partitions=3)
    cluster.create_topic("t2", partitions=3)
    hb(cluster, "a", 0, server_assignor="range", topics=(), subscribed_topic_regex="t.*")
    hb(cluster, "b", 0, server_assignor="range", topics=(), subscribed_topic_regex="t.*")
    described = cluster.groups.consumer_group_describe(None, "g")
    assert described.assignor_name == "range" and described.group_epoch == 3
    targets = {m.member_id: {(cluster.groups.consumer.topic_name(t), p)
                             for t, ps in m.target_assignment for p in ps}
               for m in described.members}
    assert targets == {"a": {("t", 0), ("t", 1), ("t2", 0), ("t2", 1)},
                       "b": {("t", 2), ("t2", 2)}}


def test_uniform_assignor_is_balanced_and_sticky():
    topics = {"x": 7}
    subs = {m: {"x"} for m in "abc"}
    first = assignors.uniform(subs, topics, {})
    sizes = sorted(len(a["x"]) for a in first.values())
    assert sizes == [2, 2, 3]
    del subs["c"]
    second = assignors.uniform(subs, topics, first)
    assert all(first[m]["x"] <= second[m]["x"] for m in "ab")  # nobody loses a partition
    assert sorted(len(a["x"]) for a in second.values()) == [3, 4]


def test_member_moves_follow_the_table():
    assert (MemberState.STABLE, MemberState.UNREVOKED_PARTITIONS) in MEMBER_TRANSITIONS
    assert (MemberState.STABLE, MemberState.UNKNOWN) not in MEMBER_TRANSITIONS


def test_static_member_leaves_for_a_while_and_comes_back():
    cluster = cluster_with(partitions=4)
    a = hb(cluster, "a", 0, instance_id="i1")
    assert hb(cluster, "a2", 0, instance_id="i1").error == errors.UNRELEASED_INSTANCE_ID
    b = hb(cluster, "b", 0)
    kept = parts(hb(cluster, "a", 2, rows(cluster, *parts(a)), instance_id="i1"))  # revokes
    a = hb(cluster, "a", 2, rows(cluster, *kept), instance_id="i1")
    b = hb(cluster, "b", 3, ())
    assert (a.member_epoch, b.member_epoch) == (3, 3) and len(kept) == len(parts(b)) == 2
    away = hb(cluster, "a", -2, instance_id="i1")
    assert away.member_epoch == -2
    back = hb(cluster, "a2", 0, instance_id="i1")
    # it gets its partitions back at once, and the group epoch does not move: b is untouched
    assert back.error == errors.NONE and parts(back) == kept
    assert back.member_epoch == 3 and cluster.groups.groups["g"].group_epoch == 3
    assert set(cluster.groups.groups["g"].members) == {"a2", "b"}
    assert hb(cluster, "a", 3, rows(cluster, *kept), instance_id="i1").error \
        == errors.FENCED_INSTANCE_ID


def test_offset_commits_carry_the_member_epoch():
    cluster = cluster_with(partitions=1)
    a = hb(cluster, "a", 0)
    out: list = []
    cluster.groups.offset_commit(None, "g", 0, "a", None, {("t", 0): (5, -1, "")}, out.append)
    cluster.groups.offset_commit(None, "g", a.member_epoch, "a", None,
                                 {("t", 0): (7, -1, "")}, out.append)
    cluster.advance(100)  # the commit is replicated; the member's session goes on
    cluster.groups.offset_commit(None, "g", a.member_epoch, "a", None,
                                 {("t", 0): (6, -1, "")}, out.append, api_version=8)
    assert sorted(r[("t", 0)] for r in out) == [
        errors.NONE, errors.UNSUPPORTED_VERSION,  # a KIP-848 member commits with v9+
        errors.STALE_MEMBER_EPOCH]
    assert cluster.groups.offset_fetch(None, "g", [("t", 0)], "a", 0)[0] \
        == errors.STALE_MEMBER_EPOCH
    code, found = cluster.groups.offset_fetch(None, "g", [("t", 0)], "a", 2)
    assert code == errors.NONE and found[("t", 0)].offset == 7


def test_without_migration_a_group_converts_only_when_empty():
    cluster = cluster_with(broker_config={"group.consumer.migration.policy": "disabled"})
    classic = cluster.consumer("t", group_id="g", enable_auto_commit=False)
    settle_group([classic])
    refused = hb(cluster, "a", 0)
    assert (refused.error, refused.error_message) == (
        errors.GROUP_ID_NOT_FOUND, "Group g is not a consumer group.")
    classic.commit(dict.fromkeys(classic.assignment(), 1))
    classic.close()
    assert hb(cluster, "a", 0).error == errors.NONE  # the empty classic group converts
    assert [(g[0], g[3]) for g in cluster.groups.list_groups(types=["consumer"])] == [
        ("g", "consumer")]
    assert cluster.groups.list_groups(types=["classic"]) == []
    assert cluster.groups.offset_fetch(None, "g")[1][("t", 0)].offset == 1  # offsets stay
    assert cluster.groups.describe_group(None, "g").error == errors.GROUP_ID_NOT_FOUND
    again = cluster.consumer("t", group_id="g")
    with pytest.raises(Exception, match="InconsistentGroupProtocol"):
        again.poll(timeout_ms=1_000)
    hb(cluster, "a", -1)
    settle_group([cluster.consumer("t", group_id="g")])  # an empty consumer group converts
    assert cluster.groups.list_groups()[0][3] == "classic"


def test_consumer_group_survives_a_restart(tmp_path):
    cluster = Cluster(brokers=1, seed=3, log_dir=tmp_path)
    cluster.create_topic("t", partitions=2)
    a = hb(cluster, "a", 0)
    hb(cluster, "b", 0)
    hb(cluster, "a", 2, rows(cluster, *parts(a)))
    before = cluster.groups.snapshot()["g"]
    again = Cluster(brokers=1, seed=3, log_dir=tmp_path)
    again.groups.list_groups()  # loads the coordinator's partitions
    after = again.groups.snapshot()["g"]
    for key in ("type", "state", "group_epoch", "assignment_epoch", "members"):
        assert after[key] == before[key], key
    # The records are Kafka's, readable by dump-log's formatter.
    log = again.leader_replica("__consumer_offsets", before["partition"]).log
    types = [decode_key(r.key).type for b in log.batches() for r in b.iter_records()
             if r.key and decode_key(r.key).__class__ is rec.ConsumerGroupKey]
    assert {rec.GROUP_METADATA, rec.MEMBER_METADATA, rec.TARGET_METADATA, rec.TARGET_MEMBER,
            rec.CURRENT_ASSIGNMENT} <= set(types)
    first = next(r for b in log.batches() for r in b.iter_records() if r.key)
    assert '"key"' in format_record(first.key, first.value)


def test_in_process_consumers_share_the_partitions_and_rebalance():
    cluster = Cluster(brokers=3, seed=5)
    cluster.create_topic("t", partitions=6, replication_factor=3)
    producer = cluster.producer()
    for i in range(60):
        producer.send("t", b"%d" % i, partition=i % 6)
    producer.flush()
    consumers = [cluster.consumer("t", group_id="g", group_protocol="consumer",
                                  auto_offset_reset="earliest") for _ in range(3)]
    got = settle_group(consumers)
    while sum(map(len, got)) < 60:
        for i, c in enumerate(consumers):
            got[i].extend(r for rs in c.poll(timeout_ms=100).values() for r in rs)
    owned = [{tp.partition for tp in c.assignment()} for c in consumers]
    assert sorted(p for o in owned for p in o) == list(range(6))
    assert sorted(len(o) for o in owned) == [2, 2, 2]
    assert sorted(int(r.value) for rs in got for r in rs) == list(range(60))
    snap = cluster.groups.snapshot()["g"]
    assert snap["state"] == "Stable" and snap["group_epoch"] == 4
    assert {m["epoch"] for m in snap["members"].values()} == {4}
    consumers[0].commit()
    consumers[0].close()
    settle_group(consumers[1:])
    assert sorted(p for c in consumers[1:] for p in (tp.partition for tp in c.assignment())) \
        == list(range(6))
    assert cluster.groups.snapshot()["g"]["group_epoch"] == 5
    stale = consumers[1]
    stale._group.epoch = 2  # an old epoch: the coordinator refuses the commit
    with pytest.raises(CommitFailedError):
        stale.commit()


def test_the_group_picture_shows_member_epochs_and_the_target():
    from minikafka.viz.groupview import group_description, group_view

    cluster = cluster_with(partitions=2)
    hb(cluster, "a", 0)
    hb(cluster, "b", 0)
    described = group_description(cluster, "g", ["t"])
    assert [(m["member_id"], m["epoch"], m["target"]) for m in described["members"]] == [
        ("a", 2, ["t-0"]), ("b", 3, ["t-1"])]
    source = group_view(described).source
    assert "member epoch 3 · unreleased partitions" in source and "group epoch 3" in source
    assert 'label=target style=dashed' in source or "style=dashed" in source


def test_a_member_that_does_not_revoke_in_time_is_fenced():
    cluster = cluster_with(partitions=2)
    a = hb(cluster, "a", 0, rebalance_timeout_ms=10_000)
    hb(cluster, "b", 0)
    revoke = hb(cluster, "a", 2, rows(cluster, 0, 1))  # asked to give one partition up
    assert revoke.member_epoch == 2 and len(parts(revoke)) == 1
    for _ in range(3):  # a keeps heartbeating but never releases the partition
        cluster.advance(3_000)
        hb(cluster, "a", 2, rows(cluster, 0, 1))
        hb(cluster, "b", 3)
    cluster.advance(1_500)  # the rebalance timeout (10 s) has passed
    assert "a" not in cluster.groups.groups["g"].members
    removed = cluster.journal.of_kind("group.member.removed")
    assert [e.member for e in removed] == ["a"] and "rebalance timeout" in removed[0].reason
    assert hb(cluster, "a", 2, rows(cluster, 0, 1)).error == errors.UNKNOWN_MEMBER_ID
    again = hb(cluster, "b", 3, ())
    assert (again.member_epoch, parts(again)) == (4, {0, 1}) and a.error == errors.NONE


def test_deleting_a_consumer_group_and_its_offsets():
    cluster = cluster_with(partitions=1)
    cluster.create_topic("other", partitions=1)
    hb(cluster, "a", 0)
    out: list = []
    cluster.groups.offset_commit(None, "g", 2, "a", None,
                                 {("t", 0): (3, -1, ""), ("other", 0): (1, -1, "")}, out.append)
    assert out == [{("t", 0): errors.NONE, ("other", 0): errors.NONE}]
    assert cluster.groups.delete_groups(None, ["g"]) == {"g": errors.NON_EMPTY_GROUP}
    code, per_partition = cluster.groups.delete_offsets(None, "g", [("t", 0), ("other", 0)])
    assert code == errors.NONE and per_partition == {
        ("t", 0): 86, ("other", 0): errors.NONE}  # GROUP_SUBSCRIBED_TO_TOPIC for "t"
    hb(cluster, "a", -1)
    assert cluster.groups.delete_groups(None, ["g"]) == {"g": errors.NONE}
    assert "g" not in cluster.groups.groups
    assert cluster.groups.consumer_group_describe(None, "g").error == errors.GROUP_ID_NOT_FOUND
    assert [(e.previous, e.state) for e in cluster.journal.of_kind("group.state")][-1] == (
        "Empty", "Dead")


def test_a_pattern_subscriber_gets_a_new_topic_without_rejoining():
    cluster = Cluster(brokers=1, seed=5)
    cluster.create_topic("orders-eu", partitions=1)
    consumer = cluster.consumer(group_id="g", group_protocol="consumer",
                                metadata_max_age_ms=5_000)
    consumer.subscribe(pattern="orders-.*")
    settle_group([consumer])
    assert {tp.topic for tp in consumer.assignment()} == {"orders-eu"}
    cluster.create_topic("orders-us", partitions=2)
    deadline = cluster.now_ms + 30_000
    while len(consumer.assignment()) < 3 and cluster.now_ms < deadline:
        consumer.poll(timeout_ms=1_000)
    assert sorted((tp.topic, tp.partition) for tp in consumer.assignment()) == [
        ("orders-eu", 0), ("orders-us", 0), ("orders-us", 1)]
    assert consumer._group.epoch == 3  # one new group epoch, no rejoin at epoch 0


def test_a_new_coordinator_loads_the_group_and_its_members_carry_on():
    cluster = Cluster(brokers=3, seed=4)
    cluster.create_topic("t", partitions=4, replication_factor=3)
    consumers = [cluster.consumer("t", group_id="g", group_protocol="consumer")
                 for _ in range(2)]
    settle_group(consumers)
    before = cluster.groups.snapshot()["g"]
    cluster.stop_broker(before["coordinator"])
    for _ in range(50):  # 10 s of polling: heartbeats find the new coordinator
        for c in consumers:
            c.poll(timeout_ms=200)
    after = cluster.groups.snapshot()["g"]
    assert after["coordinator"] != before["coordinator"] and after["state"] == "Stable"
    assert (after["group_epoch"], after["members"]) == (before["group_epoch"], before["members"])
    assert sorted(p for c in consumers for p in (tp.partition for tp in c.assignment())) \
        == [0, 1, 2, 3]


# -- mixed groups: classic members inside a consumer group (Kafka 4.x) -------------------------

def poll_until_shared(cluster: Cluster, consumers, partitions: int, rounds: int = 200) -> None:
    """Poll round-robin until every partition has exactly one owner and the group is Stable."""
    for _ in range(rounds):
        for c in consumers:
            c.poll(timeout_ms=100)
        owned = sorted(tp.partition for c in consumers for tp in c.assignment())
        if owned == list(range(partitions)) and cluster.groups.snapshot()["g"]["state"] == \
                "Stable":
            return
    raise AssertionError(f"not shared: {[c.assignment() for c in consumers]}")


def test_online_upgrade_keeps_the_classic_members():
    cluster = cluster_with(partitions=4)
    classic = cluster.consumer("t", group_id="g")
    settle_group([classic])
    generation = cluster.groups.groups["g"].generation_id
    joined = hb(cluster, "a", 0)
    assert joined.error == errors.NONE
    snap = cluster.groups.snapshot()["g"]
    assert snap["type"] == "consumer"
    member = snap["members"][classic.group_metadata().member_id]
    # the classic member keeps its partitions, at its generation as its member epoch
    assert (member["protocol"], member["epoch"], len(member["assignment"])) == (
        "classic", generation, 4)
    assert snap["members"]["a"]["protocol"] == "consumer"
    assert snap["group_epoch"] == generation + 1 and len(snap["members"]["a"]["target"]) == 2
    assert parts(joined) == set()  # its partitions are still the classic member's
    assert [e for e in cluster.journal.events if e.kind == "group.converted"][-1].fields[
        "online"] is True
    # The classic member's Heartbeat answers REBALANCE_IN_PROGRESS; it rejoins without
    # the partitions it must give up, and then a gets them.
    epoch = joined.member_epoch
    got: set[int] = set()
    for _ in range(100):
        classic.poll(timeout_ms=100)
        answer = hb(cluster, "a", epoch, rows(cluster, *got))
        epoch = answer.member_epoch
        got = parts(answer) if answer.assignment is not None else got
        mine = {tp.partition for tp in classic.assignment()}
        if len(got) == 2 and len(mine) == 2:
            break
    assert sorted(got | mine) == [0, 1, 2, 3] and not got & mine
    snap = cluster.groups.snapshot()["g"]
    assert snap["state"] == "Stable"
    assert {m["epoch"] for m in snap["members"].values()} == {snap["group_epoch"]}


@pytest.mark.parametrize("policy", ["disabled", "downgrade"])
def test_no_online_upgrade_unless_the_policy_allows(policy):
    cluster = cluster_with(broker_config={"group.consumer.migration.policy": policy})
    settle_group([cluster.consumer("t", group_id="g")])
    refused = hb(cluster, "a", 0)
    assert (refused.error, refused.error_message) == (
        errors.GROUP_ID_NOT_FOUND, "Group g is not a consumer group.")
    assert cluster.groups.snapshot()["g"]["type"] == "classic"


def test_a_group_not_using_the_consumer_protocol_type_is_not_upgraded():
    cluster = cluster_with()
    answers = []
    cluster.groups.join_group(None, "g", "", None, "c", "h", "connect", [("v1", b"x")],
                              10_000, 10_000, answers.append)
    cluster.groups.join_group(None, "g", answers[-1].member_id, None, "c", "h", "connect",
                              [("v1", b"x")], 10_000, 10_000, answers.append)
    cluster.advance(5_000)
    assert answers[-1].error == errors.NONE
    assert hb(cluster, "a", 0).error == errors.GROUP_ID_NOT_FOUND


def test_classic_and_consumer_members_share_a_group_and_downgrade():
    cluster = cluster_with(partitions=6)
    producer = cluster.producer()
    for i in range(60):
        producer.send("t", b"%d" % i, partition=i % 6)
    producer.flush()
    new = cluster.consumer("t", group_id="g", group_protocol="consumer",
                           auto_offset_reset="earliest")
    settle_group([new])
    classic = cluster.consumer("t", group_id="g", auto_offset_reset="earliest")
    poll_until_shared(cluster, [new, classic], 6)
    snap = cluster.groups.snapshot()["g"]
    assert snap["type"] == "consumer"
    assert sorted(m["protocol"] for m in snap["members"].values()) == ["classic", "consumer"]
    assert sorted(len(c.assignment()) for c in (new, classic)) == [3, 3]
    described = cluster.groups.consumer_group_describe(None, "g")
    assert sorted(m.member_type for m in described.members) == [0, 1]  # classic, consumer
    # A classic member's JoinGroup answer: its member epoch as generation, no leader.
    member = cluster.groups.groups["g"].members[classic.group_metadata().member_id]
    assert classic.group_metadata().generation_id == member.member_epoch
    new.close()  # the last consumer-protocol member leaves: back to a classic group
    snap = cluster.groups.snapshot()["g"]
    assert snap["type"] == "classic" and snap["state"] == "PreparingRebalance"
    settle_group([classic])
    assert len(classic.assignment()) == 6
    assert cluster.groups.snapshot()["g"]["type"] == "classic"


@pytest.mark.parametrize("policy,kind", [("bidirectional", "classic"), ("upgrade", "consumer")])
def test_online_downgrade_needs_the_policy(policy, kind):
    cluster = cluster_with(broker_config={"group.consumer.migration.policy": policy})
    hb(cluster, "a", 0)
    classic = cluster.consumer("t", group_id="g")
    for _ in range(50):
        classic.poll(timeout_ms=100)
        hb(cluster, "a", cluster.groups.groups["g"].members["a"].member_epoch)
        if cluster.groups.snapshot()["g"]["state"] == "Stable" and classic.assignment():
            break
    assert hb(cluster, "a", -1).error == errors.NONE
    assert cluster.groups.snapshot()["g"]["type"] == kind


def test_disabled_policy_keeps_classic_members_out_of_a_consumer_group():
    cluster = cluster_with(broker_config={"group.consumer.migration.policy": "disabled"})
    hb(cluster, "a", 0)
    answers = []
    cluster.groups.join_group(None, "g", "", None, "c", "h", "consumer", [("range", b"")],
                              10_000, 10_000, answers.append)
    assert answers[-1].error == errors.INCONSISTENT_GROUP_PROTOCOL


def test_classic_requests_to_a_consumer_group():
    from minikafka.core.offsets import ConsumerSubscription, decode_assignment, encode_subscription
    cluster = cluster_with(partitions=2)
    a = hb(cluster, "a", 0)
    sub = encode_subscription(ConsumerSubscription(("t",)))
    answers = []

    def join(member_id, protocols=(("range", sub),), protocol_type="consumer"):
        cluster.groups.join_group(None, "g", member_id, None, "c", "h", protocol_type,
                                  list(protocols), 10_000, 30_000, answers.append)
        return answers[-1]

    assert join("", protocol_type="connect").error == errors.INCONSISTENT_GROUP_PROTOCOL
    first = join("")
    assert first.error == errors.MEMBER_ID_REQUIRED  # KIP-394, as for classic groups
    joined = join(first.member_id)
    # answered at once: generation = member epoch, the member's first assignor, no leader
    assert (joined.error, joined.generation_id, joined.protocol_type, joined.protocol_name,
            joined.leader, joined.members) == (errors.NONE, 3, "consumer", "range", "", ())
    mid = joined.member_id
    # a member of the group must share an assignor with the other classic members
    assert join("", protocols=(("roundrobin", sub),)).error == \
        errors.INCONSISTENT_GROUP_PROTOCOL
    synced = []
    cluster.groups.sync_group(None, "g", mid, None, 2, "consumer", "range", {}, synced.append)
    assert synced[-1].error == errors.ILLEGAL_GENERATION
    cluster.groups.sync_group(None, "g", mid, None, 3, "consumer", "roundrobin", {},
                              synced.append)
    assert synced[-1].error == errors.INCONSISTENT_GROUP_PROTOCOL
    cluster.groups.sync_group(None, "g", mid, None, 3, "consumer", "range", {}, synced.append)
    assert synced[-1].error == errors.NONE
    assert decode_assignment(synced[-1].assignment).partitions == ()  # still a's partition
    # Partition is a's until a revokes it; then the classic member must rejoin to get it.
    assert cluster.groups.heartbeat(None, "g", mid, None, 3) == errors.NONE
    revoked = hb(cluster, "a", 2, rows(cluster, 0, 1))
    hb(cluster, "a", 2, rows(cluster, *parts(revoked)))
    assert cluster.groups.heartbeat(None, "g", mid, None, 3) == errors.REBALANCE_IN_PROGRESS
    assert cluster.groups.heartbeat(None, "g", mid, None, 2) == errors.ILLEGAL_GENERATION
    assert cluster.groups.heartbeat(None, "g", "a", None, 3) == errors.UNKNOWN_MEMBER_ID
    again = join(mid)
    cluster.groups.sync_group(None, "g", mid, None, again.generation_id, "consumer", "range",
                              {}, synced.append)
    assert len(decode_assignment(synced[-1].assignment).partitions) == 1
    assert cluster.groups.heartbeat(None, "g", mid, None, again.generation_id) == errors.NONE
    # commits carry the generation (= member epoch), at classic OffsetCommit versions
    committed = []
    for generation in (again.generation_id - 1, again.generation_id):
        cluster.groups.offset_commit(None, "g", generation, mid, None, {("t", 0): (5, -1, "")},
                                     committed.append, api_version=8)
        cluster.run_until(lambda: len(committed) > 0, 5_000)
    del committed[1:-1]
    assert [c[("t", 0)] for c in committed] == [errors.ILLEGAL_GENERATION, errors.NONE]
    assert a.error == errors.NONE
    _, errs = cluster.groups.leave_group(None, "g", [(mid, None), ("a", None)])
    assert errs == [errors.NONE, errors.UNKNOWN_MEMBER_ID]  # a is not a classic member
    assert set(cluster.groups.groups["g"].members) == {"a"}


def test_a_classic_member_in_a_consumer_group_expires_after_its_session_timeout():
    cluster = cluster_with()
    hb(cluster, "a", 0)
    from minikafka.core.offsets import ConsumerSubscription, encode_subscription
    answers = []
    sub = encode_subscription(ConsumerSubscription(("t",)))
    cluster.groups.join_group(None, "g", "c-1", None, "c", "h", "consumer", [("range", sub)],
                              10_000, 30_000, answers.append)
    assert answers[-1].error == errors.NONE and "c-1" in cluster.groups.groups["g"].members
    for _ in range(5):  # a keeps heartbeating; the classic member does not
        cluster.advance(2_500)
        hb(cluster, "a", cluster.groups.groups["g"].members["a"].member_epoch)
    assert set(cluster.groups.groups["g"].members) == {"a"}


def test_a_classic_member_record_keeps_its_classic_metadata():
    value = rec.MemberValue(None, None, "c", "/h", ("t",), None, 30_000, None,
                            (10_000, (("range", b"\x00\x01sub"), ("roundrobin", b""))))
    key = rec.member_key(rec.MEMBER_METADATA, "g", "m")
    assert rec.decode_value(key, rec.encode_value(key, value)) == value
    plain = rec.MemberValue(None, None, "c", "/h", ("t",), None, 30_000, "uniform")
    assert rec.decode_value(key, rec.encode_value(key, plain)) == plain


def test_a_mixed_group_moves_to_a_new_coordinator():
    cluster = Cluster(brokers=3, seed=4)
    cluster.create_topic("t", partitions=4, replication_factor=3)
    new = cluster.consumer("t", group_id="g", group_protocol="consumer")
    settle_group([new])
    classic = cluster.consumer("t", group_id="g")
    poll_until_shared(cluster, [new, classic], 4)
    before = cluster.groups.snapshot()["g"]
    cluster.stop_broker(before["coordinator"])
    for _ in range(50):  # 10 s of polling: both find the new coordinator
        for c in (new, classic):
            c.poll(timeout_ms=200)
    after = cluster.groups.snapshot()["g"]
    assert after["coordinator"] != before["coordinator"] and after["state"] == "Stable"
    assert {m: v["protocol"] for m, v in after["members"].items()} == \
        {m: v["protocol"] for m, v in before["members"].items()}
    assert sorted(tp.partition for c in (new, classic) for tp in c.assignment()) == [0, 1, 2, 3]


def _classic_join(cluster: Cluster, member_id: str, answers: list) -> None:
    from minikafka.core.offsets import ConsumerSubscription, encode_subscription
    sub = encode_subscription(ConsumerSubscription(("t",)))
    cluster.groups.join_group(None, "g", member_id, None, "c", "h", "consumer",
                              [("range", sub)], 60_000, 20_000, answers.append)


def test_a_classic_member_that_joins_but_does_not_sync_is_removed():
    cluster = cluster_with()
    hb(cluster, "a", 0)
    answers: list = []
    _classic_join(cluster, "c-1", answers)
    assert answers[-1].error == errors.NONE
    for _ in range(5):  # 25 s: past the rebalance timeout (20 s), within the session (60 s)
        cluster.advance(5_000)
        hb(cluster, "a", cluster.groups.groups["g"].members["a"].member_epoch)
    assert set(cluster.groups.groups["g"].members) == {"a"}
    removed = [e.fields["reason"] for e in cluster.journal.events
               if e.kind == "group.member.removed"]
    assert removed == ["the classic member did not send SyncGroup within its rebalance timeout"]


def test_a_classic_member_asked_to_rejoin_must_rejoin_in_time():
    cluster = cluster_with()
    hb(cluster, "a", 0)
    answers: list = []
    _classic_join(cluster, "c-1", answers)
    generation = answers[-1].generation_id
    synced: list = []
    cluster.groups.sync_group(None, "g", "c-1", None, generation, "consumer", "range", {},
                              synced.append)
    assert synced[-1].error == errors.NONE
    hb(cluster, "b", 0)  # a new member: a new group epoch, c-1 must rejoin
    for _ in range(5):  # c-1 heartbeats but never rejoins
        assert cluster.groups.heartbeat(None, "g", "c-1", None, generation) == \
            errors.REBALANCE_IN_PROGRESS
        cluster.advance(3_000)
        for m in ("a", "b"):
            hb(cluster, m, cluster.groups.groups["g"].members[m].member_epoch)
    cluster.advance(6_000)
    assert "c-1" not in cluster.groups.groups["g"].members
    assert cluster.groups.heartbeat(None, "g", "c-1", None, generation) == \
        errors.UNKNOWN_MEMBER_ID


def test_an_unknown_migration_policy_is_refused():
    cluster = cluster_with(broker_config={"group.consumer.migration.policy": "sideways"})
    with pytest.raises(ValueError, match="group.consumer.migration.policy"):
        _ = cluster.groups  # the coordinator starts on first use
    assert cluster_with(broker_config={"group.consumer.migration.policy": "Upgrade"}) \
        .groups.consumer.mixed.policy == "upgrade"


def give_up(cluster: Cluster, member_id: str, **kw) -> None:
    """The consumer-protocol member heartbeats what it owns until it has revoked what its
    target no longer holds."""
    for _ in range(3):
        member = cluster.groups.groups["g"].members[member_id]
        hb(cluster, member_id, member.member_epoch, rows(cluster, *sorted(
            p for ps in member.assigned.values() for p in ps)), **kw)


def _static_join(cluster: Cluster, member_id: str, instance: str, answers: list) -> None:
    from minikafka.core.offsets import ConsumerSubscription, encode_subscription
    sub = encode_subscription(ConsumerSubscription(("t",)))
    cluster.groups.join_group(None, "g", member_id, instance, "c", "h", "consumer",
                              [("range", sub)], 60_000, 20_000, answers.append)


def _sync(cluster: Cluster, member_id: str, generation: int, instance: str | None = None):
    from minikafka.core.offsets import decode_assignment
    synced: list = []
    cluster.groups.sync_group(None, "g", member_id, instance, generation, "consumer", "range",
                              {}, synced.append)
    return synced[-1].error, sorted(p for _, p in decode_assignment(synced[-1].assignment)
                                    .partitions)


def test_a_classic_static_member_comes_back_under_a_new_member_id():
    cluster = cluster_with(partitions=2)
    a = hb(cluster, "a", 0)
    answers: list = []
    _static_join(cluster, "", "i-1", answers)  # a static member gets its id at once
    first = answers[-1]
    assert first.error == errors.NONE
    assert a.member_epoch == 2
    give_up(cluster, "a")
    again = []
    _static_join(cluster, first.member_id, "i-1", again)
    error, mine = _sync(cluster, first.member_id, again[-1].generation_id, "i-1")
    assert error == errors.NONE and len(mine) == 1
    epoch = cluster.groups.groups["g"].group_epoch
    _static_join(cluster, "other", "i-1", answers)  # a known id that is not i-1's
    assert answers[-1].error == errors.FENCED_INSTANCE_ID
    _static_join(cluster, "other", "i-2", answers)  # a known id, an unknown instance
    assert answers[-1].error == errors.UNKNOWN_MEMBER_ID
    _static_join(cluster, "", "i-1", answers)  # restarted: a new member id, same place
    back = answers[-1]
    assert back.error == errors.NONE and back.member_id != first.member_id
    assert cluster.groups.groups["g"].group_epoch == epoch  # nobody else has to move
    assert _sync(cluster, back.member_id, back.generation_id, "i-1") == (errors.NONE, mine)
    assert set(cluster.groups.groups["g"].members) == {"a", back.member_id}


def test_a_classic_static_member_replacing_the_last_consumer_member_downgrades():
    cluster = cluster_with(partitions=2)
    hb(cluster, "a", 0, instance_id="i-a")
    answers: list = []
    _static_join(cluster, "", "i-c", answers)
    classic_id = answers[-1].member_id
    give_up(cluster, "a", instance_id="i-a")
    _static_join(cluster, classic_id, "i-c", answers)
    a_had = sorted(p for ps in cluster.groups.groups["g"].members["a"].assigned.values()
                   for p in ps)
    assert len(a_had) == 1
    # i-a restarts as a classic consumer: the group is classic again, nobody rebalances
    _static_join(cluster, "", "i-a", answers)
    joined = answers[-1]
    snap = cluster.groups.snapshot()["g"]
    assert joined.error == errors.NONE and (snap["type"], snap["state"]) == (
        "classic", "Stable")
    assert _sync(cluster, joined.member_id, joined.generation_id, "i-a") == (
        errors.NONE, a_had)


def test_the_group_picture_marks_classic_members():
    from minikafka.viz.groupview import group_description, group_view

    cluster = cluster_with(partitions=2)
    hb(cluster, "a", 0)
    answers: list = []
    _classic_join(cluster, "c-1", answers)
    described = group_description(cluster, "g", ["t"])
    assert [(m["member_id"], m["protocol"]) for m in described["members"]] == [
        ("a", "consumer"), ("c-1", "classic")]
    assert group_view(described).source.count("classic protocol (JoinGroup)") == 1


def test_a_rebalancing_classic_group_upgrades_and_its_waiting_join_is_answered():
    cluster = cluster_with(partitions=2)
    answers: list = []
    _classic_join(cluster, "", answers)  # MEMBER_ID_REQUIRED, then the join that waits
    member_id = answers[-1].member_id
    _classic_join(cluster, member_id, answers)
    assert len(answers) == 1 and cluster.groups.groups["g"].state == "PreparingRebalance"
    assert hb(cluster, "a", 0).error == errors.NONE
    assert (answers[-1].error, cluster.groups.snapshot()["g"]["type"]) == (
        errors.REBALANCE_IN_PROGRESS, "consumer")
    _classic_join(cluster, member_id, answers)  # it rejoins, and is answered at once
    assert answers[-1].error == errors.NONE
    assert sorted(m["protocol"] for m in cluster.groups.snapshot()["g"]["members"].values()) \
        == ["classic", "consumer"]


def test_group_size_limits_block_online_conversions():
    cluster = cluster_with(broker_config={"group.consumer.max.size": 1})
    settle_group([cluster.consumer("t", group_id="g") for _ in range(2)])
    assert hb(cluster, "a", 0).error == errors.GROUP_ID_NOT_FOUND  # 2 > max.size 1
    small = cluster_with(broker_config={"group.max.size": 1})
    hb(small, "a", 0)
    answers: list = []
    for member in ("c-1", "c-2"):
        _classic_join(small, member, answers)
    hb(small, "a", -1)  # two classic members would be left: more than group.max.size
    assert small.groups.snapshot()["g"]["type"] == "consumer"
