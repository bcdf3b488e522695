"""One broker, one API, for the admin APIs: topics (Metadata, DeleteTopics) and groups
(ListGroups, DescribeGroups, OffsetCommit/OffsetFetch, OffsetDelete, DeleteGroups),
through the in-process admin client and through kafka-python's KafkaAdminClient against
`minikafka serve`, on the same seeded cluster. Both doors call the same core function
(DeleteTopics: core.api.delete_topics; the group APIs: the group coordinator), so both
must observe the same thing, and it is what Apache Kafka 4.x answers."""
from __future__ import annotations

import pytest
from kafka import TopicPartition
from kafka.admin import AlterConfigOp, ConfigResource, MemberToRemove
from kafka.structs import OffsetAndMetadata

from .doors import Door, through_both
from .test_parity import read_all, same_everywhere

pytestmark = [pytest.mark.interop, pytest.mark.timeout(120)]


def _error_name(value: object) -> str:
    """One spelling of an admin answer for both clients: 'OK', or the error's class name
    (the in-process admin answers 'OK' or a name, kafka-python an error class)."""
    if value is None or value == "OK":
        return "OK"
    if isinstance(value, str):
        return value
    cls = value if isinstance(value, type) else type(value)
    return "OK" if cls.__name__ == "NoError" else cls.__name__


# ---------------------------------------------------------------- Metadata, DeleteTopics


def _delete_topics(door: Door, names: list[str]) -> dict[str, str]:
    result = door.admin().delete_topics(names, raise_errors=False)
    if "topics" in result:  # kafka-python: the DeleteTopicsResponse as a dict
        from kafka.errors import for_code

        return {t["name"]: _error_name(for_code(t["error_code"])) for t in result["topics"]}
    return {name: _error_name(exc) for name, exc in result.items()}


def _topics_scenario(door: Door) -> dict:
    for name in ("keep", "drop"):
        door.setup(lambda c, name=name: c.create_topic(name, 2, 3))
    admin = door.admin()
    seen = {"listed": sorted(t for t in admin.list_topics() if not t.startswith("__"))}
    seen["delete"] = _delete_topics(door, ["drop", "never-created"])
    seen["delete again"] = _delete_topics(door, ["drop"])
    seen["listed after"] = sorted(t for t in admin.list_topics() if not t.startswith("__"))
    seen["journal"] = door.setup(
        lambda c: [e.fields["topic"] for e in c.journal.of_kind("topic.deleted")])
    return seen


def test_delete_topics():
    """Kafka's ControllerApis.deleteTopics: an unknown name answers
    UNKNOWN_TOPIC_OR_PARTITION, and the others are deleted all the same."""
    seen = same_everywhere(through_both(_topics_scenario))
    assert seen["listed"] == ["drop", "keep"]
    assert seen["delete"] == {"drop": "OK",
                              "never-created": "UnknownTopicOrPartitionError"}
    assert seen["delete again"] == {"drop": "UnknownTopicOrPartitionError"}
    assert seen["listed after"] == ["keep"]
    assert seen["journal"] == ["drop"]


def _metadata_scenario(door: Door) -> dict:
    door.setup(lambda c: c.create_topic("shown", 3, 2))
    consumer = door.consumer(group_id=None)
    return {"topics": sorted(t for t in consumer.topics() if not t.startswith("__")),
            "partitions": consumer.partitions_for_topic("shown"),
            "unknown": consumer.partitions_for_topic("hidden")}


def test_metadata_through_a_consumer():
    """Metadata as a consumer sees it: the topics, a topic's partitions, and an empty set
    for a topic that does not exist (kafka-python 3's answer)."""
    assert same_everywhere(through_both(_metadata_scenario)) == {
        "topics": ["shown"], "partitions": {0, 1, 2}, "unknown": set()}


# ---------------------------------------------------------------- CreatePartitions


def _create_partitions(door: Door, spec: dict, validate_only: bool = False) -> dict:
    """{topic: (error code, error message)}, (0, None) for a topic that grew."""
    result = door.admin().create_partitions(spec, validate_only=validate_only,
                                            raise_errors=False)
    if hasattr(result, "results"):  # kafka-python: the CreatePartitionsResponse
        return {r.name: (r.error_code, r.error_message) for r in result.results}
    return {name: (0, None) if exc is None else (exc.errno, exc.args[0] if exc.args else None)
            for name, exc in result.items()}


def _partitions_scenario(door: Door) -> dict:
    door.setup(lambda c: c.create_topic("grow", 2, 2))

    def placement() -> list:
        return door.setup(lambda c: [list(p.replicas)
                                     for p in c.describe_topic("grow").partitions])

    seen = {"to 4, validate_only": _create_partitions(door, {"grow": 4}, True),
            "after validate_only": placement(),
            "to 4": _create_partitions(door, {"grow": 4})}
    seen["after"] = placement()
    seen["to 4 again"] = _create_partitions(door, {"grow": 4})
    seen["to 3"] = _create_partitions(door, {"grow": 3})
    seen["unknown topic"] = _create_partitions(door, {"nowhere": 2})
    seen["journal"] = door.setup(lambda c: [(e.fields["topic"], e.fields["total"]) for e in
                                            c.journal.of_kind("partitions.created")])
    return seen


def test_create_partitions():
    """Kafka's ReplicationControlManager.createPartitions: a count that is no increase
    is INVALID_PARTITIONS with its message; validate_only checks and changes nothing."""
    seen = same_everywhere(through_both(_partitions_scenario))
    assert seen["to 4, validate_only"] == {"grow": (0, None)}
    assert len(seen["after validate_only"]) == 2
    assert seen["to 4"] == {"grow": (0, None)}
    assert len(seen["after"]) == 4 and seen["after"][:2] == seen["after validate_only"]
    assert seen["to 4 again"] == {
        "grow": (37, "Topic currently has 4 partitions, 4 would not be an increase.")}
    assert seen["to 3"] == {
        "grow": (37, "Topic currently has 4 partitions, 3 would not be an increase.")}
    assert seen["unknown topic"] == {
        "nowhere": (3, "This server does not host this topic-partition: nowhere")}
    assert seen["journal"] == [("grow", 4)]


# ---------------------------------------------------------------- ElectLeaders


def _elect(door: Door, election_type: int, partitions: dict) -> dict:
    """{(topic, partition): (error code, error message)}."""
    result = door.admin().elect_leaders(election_type, partitions, raise_errors=False)
    if hasattr(result, "replica_election_results"):  # kafka-python: the response
        return {(t.topic, p.partition_id): (p.error_code, p.error_message)
                for t in result.replica_election_results for p in t.partition_result}
    return {(tp.topic, tp.partition): (0, None) if exc is None else (exc.errno, exc.args[0])
            for tp, exc in result.items()}


def _elections_scenario(door: Door) -> dict:
    door.setup(lambda c: c.create_topic("lead", 2, 3))
    replicas = door.setup(lambda c: [list(p.replicas) for p in c.describe_topic("lead").partitions])
    preferred = replicas[0][0]
    door.setup(lambda c: c.stop_broker(preferred))
    door.wait_until(lambda c: c.describe_topic("lead").partitions[0].leader != preferred,
                    "a new leader for lead-0")
    seen = {"replicas": replicas, "stopped": preferred,
            "preferred, its broker down": _elect(door, 0, {"lead": [0, 1, 9]})}
    door.setup(lambda c: c.start_broker(preferred))
    door.wait_until(lambda c: preferred in c.describe_topic("lead").partitions[0].isr,
                    f"broker {preferred} back in the ISR of lead-0")
    seen["preferred, its broker back"] = _elect(door, 0, {"lead": [0]})
    seen["leader now"] = door.setup(lambda c: c.describe_topic("lead").partitions[0].leader)
    seen["unclean, a leader already"] = _elect(door, 1, {"lead": [0]})
    seen["journal"] = door.setup(lambda c: [e.fields["election_type"] for e in
                                            c.journal.of_kind("leaders.elected")])
    return seen


def test_elect_leaders():
    """Kafka's ReplicationControlManager.electLeaders, partition by partition: a preferred
    election waits for the preferred replica to be live and in sync; a partition that has
    the leader asked for answers ELECTION_NOT_NEEDED; an unknown one
    UNKNOWN_TOPIC_OR_PARTITION."""
    seen = same_everywhere(through_both(_elections_scenario))
    down = seen["stopped"]
    not_available = (80, "Failed to elect leader for partition: the preferred replica is "
                         "not in sync or not live.")
    not_needed = (84, "Leader election not needed for topic partition.")
    p1 = not_available if seen["replicas"][1][0] == down else not_needed
    assert seen["preferred, its broker down"] == {
        ("lead", 0): not_available, ("lead", 1): p1,
        ("lead", 9): (3, "The partition does not exist.")}
    assert seen["preferred, its broker back"] == {("lead", 0): (0, None)}
    assert seen["leader now"] == down
    assert seen["unclean, a leader already"] == {("lead", 0): not_needed}
    assert seen["journal"] == ["preferred", "preferred", "unclean"]


# ---------------------------------------------------------------- DescribeConfigs, IncrementalAlterConfigs


def _configs(door: Door, kind: str, name: str, keys=None, config_filter="modified") -> dict:
    """{key: (value, source, read only)} of one resource, as describe_configs reports it."""
    found = door.admin().describe_configs([ConfigResource(kind, name, keys)],
                                          config_filter=config_filter)
    return {k: (c["value"], c["config_source"], c["read_only"])
            for k, c in found[kind.lower()][name].items()}


def _synonyms(door: Door, name: str, key: str) -> list:
    """[(source, name, value)] of a topic config's synonyms, highest precedence first."""
    found = door.admin().describe_configs([ConfigResource("TOPIC", name, [key])],
                                          include_synonyms=True, config_filter="all")
    return [(s["source"], s["name"], s["value"]) for s in found["topic"][name][key]["synonyms"]]


def _alter(door: Door, kind: str, name: str, configs: dict, validate_only: bool = False,
           raise_on_unknown: bool = False) -> str:
    answer = door.admin().alter_configs([ConfigResource(kind, name, configs)],
                                        validate_only=validate_only,
                                        raise_on_unknown=raise_on_unknown, incremental=True)
    return answer[kind.lower()][name]


def _configs_scenario(door: Door) -> dict:
    door.setup(lambda c: c.create_topic("cfg", 1, 3, config={"retention.ms": "3600000"}))
    seen = {"modified at start": _configs(door, "TOPIC", "cfg"),
            "two keys, all": _configs(door, "TOPIC", "cfg", ["min.insync.replicas",
                                                             "cleanup.policy"], "all"),
            "override synonyms": _synonyms(door, "cfg", "retention.ms")}
    change = {"min.insync.replicas": (AlterConfigOp.SET, "2"),
              "cleanup.policy": (AlterConfigOp.APPEND, "compact"),
              "retention.ms": (AlterConfigOp.DELETE, None)}
    seen["validate_only"] = _alter(door, "TOPIC", "cfg", change, validate_only=True)
    seen["after validate_only"] = _configs(door, "TOPIC", "cfg")
    seen["alter"] = _alter(door, "TOPIC", "cfg", change)
    seen["after alter"] = _configs(door, "TOPIC", "cfg")
    seen["unknown key"] = _alter(door, "TOPIC", "cfg", {"no.such.config": "1"})
    seen["bad value"] = _alter(door, "TOPIC", "cfg", {"retention.ms": "soon"})
    seen["append to a number"] = _alter(door, "TOPIC", "cfg",
                                        {"retention.ms": (AlterConfigOp.APPEND, "1")})
    seen["unknown topic"] = _alter(door, "TOPIC", "nowhere", {"retention.ms": "1"})
    seen["broker 1"] = _alter(door, "BROKER", "1", {"log.retention.ms": "7200000"})
    seen["broker 1 modified"] = _configs(door, "BROKER", "1")
    seen["static broker key"] = _alter(door, "BROKER", "1", {"num.partitions": "9"})
    seen["broker 2 keeps its own"] = _configs(door, "BROKER", "2", ["log.retention.ms"], "all")
    # a topic's defaults are the answering broker's: with no per-broker value left, every
    # broker (whichever answers) has the cluster-wide default
    _alter(door, "BROKER", "1", {"log.retention.ms": (AlterConfigOp.DELETE, None)})
    # (kafka-python's admin cannot name the default resource "": kafka-configs can)
    door.setup(lambda c: c.alter_broker_config({"log.retention.ms": 10_800_000}))
    seen["topic follows the brokers"] = _configs(door, "TOPIC", "cfg", ["retention.ms"], "all")
    seen["default synonyms"] = _synonyms(door, "cfg", "retention.ms")
    seen["override over a default"] = _synonyms(door, "cfg", "min.insync.replicas")
    return seen


def test_describe_and_alter_configs():
    """Kafka's ConfigAdminManager: overrides are DYNAMIC_TOPIC_CONFIG, defaults that a
    broker setting decides carry that setting's source; IncrementalAlterConfigs applies a
    resource's changes all or none, with INVALID_CONFIG for an unknown key, a bad value or
    an APPEND to a non-list config; a broker key that is not dynamic cannot change; a
    value set on broker 1 is broker 1's only."""
    seen = same_everywhere(through_both(_configs_scenario))
    assert seen["modified at start"] == {"retention.ms": ("3600000", "DYNAMIC_TOPIC_CONFIG",
                                                          False)}
    assert seen["two keys, all"] == {"cleanup.policy": ("delete", "DEFAULT_CONFIG", False),
                                     "min.insync.replicas": ("1", "DEFAULT_CONFIG", False)}
    assert seen["validate_only"] == seen["alter"] == "OK"
    assert seen["after validate_only"] == seen["modified at start"]
    assert seen["after alter"] == {
        "cleanup.policy": ("delete,compact", "DYNAMIC_TOPIC_CONFIG", False),  # appended
        "min.insync.replicas": ("2", "DYNAMIC_TOPIC_CONFIG", False)}
    assert seen["unknown key"] == ("[Error 40] InvalidConfigurationError: Unknown topic "
                                   "config name: no.such.config")
    assert seen["bad value"] == ("[Error 40] InvalidConfigurationError: Invalid value soon "
                                 "for configuration retention.ms: Not a number of type LONG")
    assert seen["append to a number"] == (
        "[Error 40] InvalidConfigurationError: Config value append is not allowed for "
        "config key: retention.ms")
    assert seen["unknown topic"].startswith("[Error 3] UnknownTopicOrPartitionError")
    assert seen["broker 1"] == "OK"
    assert seen["broker 1 modified"]["log.retention.ms"] == ("7200000",
                                                             "DYNAMIC_BROKER_CONFIG", False)
    assert seen["static broker key"] == ("[Error 42] InvalidRequestError: Cannot update these "
                                         "configs dynamically: [num.partitions]")
    assert seen["broker 2 keeps its own"] == {"log.retention.ms": (None, "DEFAULT_CONFIG",
                                                                   False)}
    assert seen["topic follows the brokers"] == {
        "retention.ms": ("10800000", "DYNAMIC_DEFAULT_BROKER_CONFIG", False)}
    # A topic config's synonyms, as Kafka lists them: the override, then the chain of the
    # broker key that sets its default (log.retention.ms: unset, it lists nothing before it)
    assert seen["override synonyms"] == [("DYNAMIC_TOPIC_CONFIG", "retention.ms", "3600000")]
    assert seen["default synonyms"] == [
        ("DYNAMIC_DEFAULT_BROKER_CONFIG", "log.retention.ms", "10800000"),
        ("DEFAULT_CONFIG", "log.retention.hours", "168")]
    assert seen["override over a default"] == [
        ("DYNAMIC_TOPIC_CONFIG", "min.insync.replicas", "2"),
        ("DEFAULT_CONFIG", "min.insync.replicas", "1")]


# ---------------------------------------------------------------- DescribeProducers, DescribeLogDirs


LEDGER = [TopicPartition("ledger", 0), TopicPartition("ledger", 1)]


def _producers_scenario(door: Door) -> dict:
    door.setup(lambda c: c.create_topic("ledger", 2, 3))
    plain = door.producer(acks="all")
    for i in range(5):
        plain.send("ledger", b"v%d" % i, partition=i % 2, timestamp_ms=1_000 + i).get(timeout=10)
    tx = door.producer(transactional_id="ledger-tx")
    tx.init_transactions()
    tx.begin_transaction()
    tx.send("ledger", b"open", partition=0, timestamp_ms=2_000).get(timeout=10)
    for tp in LEDGER:
        door.wait_until(lambda c, tp=tp: c.leader_replica(*tp).high_watermark ==
                        c.leader_replica(*tp).log_end_offset, f"{tp} replicated")
    admin = door.admin()
    seen = {"producers": {
        tp.partition: [tuple(p) for p in state.active_producers]
        for tp, state in sorted(admin.describe_producers(LEDGER).items())}}
    follower = door.setup(lambda c: next(b for b in c.describe_topic("ledger").partitions[0]
                                         .replicas if b != c.describe_topic("ledger")
                                         .partitions[0].leader))
    try:
        admin.describe_producers(LEDGER[:1], broker_id=follower)
        seen["asking a follower"] = "answered"
    except Exception as exc:  # the error is the observation
        seen["asking a follower"] = type(exc).__name__
    seen["log dirs"] = {
        b["broker"]: [(d["log_dir"], d["error_code"],
                       [(t["name"], p["partition_index"], p["partition_size"], p["offset_lag"])
                        for t in d["topics"] for p in t["partitions"]]) for d in b["log_dirs"]]
        for b in admin.describe_log_dirs(["ledger"])}
    tx.abort_transaction()
    return seen


def test_describe_producers_and_log_dirs():
    """kafka-transactions.sh describe-producers: the leader's producer state, the open
    transaction's first offset; a follower answers NOT_LEADER_OR_FOLLOWER.
    kafka-log-dirs.sh: every replica, its bytes and its lag (0 once replicated)."""
    seen = same_everywhere(through_both(_producers_scenario))
    # (producer id, epoch, last sequence, last timestamp, coordinator epoch, txn start)
    assert seen["producers"] == {0: [(0, 0, 2, 1004, -1, -1), (1, 0, 0, 2000, -1, 3)],
                                 1: [(0, 0, 1, 1003, -1, -1)]}
    assert seen["asking a follower"] == "NotLeaderForPartitionError"  # kafka-python's name, code 6
    assert sorted(seen["log dirs"]) == [1, 2, 3]
    for broker, dirs in seen["log dirs"].items():
        (path, code, replicas), = dirs
        assert (path, code) == (f"/minikafka/broker-{broker}", 0)
        assert [(t, p, lag) for t, p, _, lag in replicas] == [("ledger", 0, 0), ("ledger", 1, 0)]
        # RecordBatch v2 bytes, counted the same whichever client wrote the batches: a
        # one-record batch is 61 bytes of header and 9 for a record of 2 bytes ("v0"),
        # 11 for "open"; partition 0 has 3 such batches and the transaction's, 1 has 2.
        assert [size for _, _, size, _ in replicas] == [3 * 70 + 72, 2 * 70]


# ---------------------------------------------------------------- the group APIs


CLICKS = "clicks"
TPS = [TopicPartition(CLICKS, 0), TopicPartition(CLICKS, 1)]


def _offsets(admin, group: str) -> dict:
    found = admin.list_group_offsets(group)[group]
    return {(tp.topic, tp.partition): (o.offset, o.metadata) for tp, o in sorted(found.items())}


def _groups_scenario(door: Door) -> dict:
    door.setup(lambda c: c.create_topic(CLICKS, 2, 3))
    producer = door.producer(acks="all")
    for i in range(6):
        producer.send(CLICKS, b"c%d" % i, partition=i % 2).get(timeout=10)
    consumer = door.consumer(group_id="reports", client_id="r1",
                             auto_offset_reset="earliest", enable_auto_commit=False)
    consumer.subscribe([CLICKS])
    seen: dict = {"read": sorted(v for _, v in read_all(consumer, 6))}
    consumer.commit({TPS[0]: OffsetAndMetadata(3, "half", -1),
                     TPS[1]: OffsetAndMetadata(2, "", -1)})
    admin = door.admin()
    seen["listed"] = sorted((g["group_id"], g["protocol_type"], g["group_state"])
                            for g in admin.list_groups())
    group = admin.describe_groups(["reports"])["reports"]
    seen["described"] = (group["group_state"], group["protocol_type"], group["protocol_data"],
                         [m["client_id"] for m in group["members"]])
    seen["committed"] = _offsets(admin, "reports")
    seen["alter while active"] = {
        tp.partition: _error_name(e) for tp, e in admin.alter_group_offsets(
            "reports", {TPS[0]: OffsetAndMetadata(0, "", -1)}).items()}
    seen["delete while active"] = {g: _error_name(e) for g, e in
                                   admin.delete_groups(["reports"]).items()}
    consumer.close()
    seen["state after close"] = admin.describe_groups(["reports"])["reports"]["group_state"]
    seen["alter when empty"] = {
        tp.partition: _error_name(e) for tp, e in admin.alter_group_offsets(
            "reports", {TPS[0]: OffsetAndMetadata(1, "rewound", -1)}).items()}
    seen["after alter"] = _offsets(admin, "reports")
    seen["offset delete"] = {tp.partition: _error_name(e) for tp, e in
                             admin.delete_group_offsets("reports", [TPS[1]]).items()}
    seen["after offset delete"] = _offsets(admin, "reports")
    seen["delete"] = {g: _error_name(e) for g, e in
                      admin.delete_groups(["reports", "nobody"]).items()}
    seen["listed after delete"] = sorted(g["group_id"] for g in admin.list_groups())
    return seen


def test_group_apis():
    """What kafka-consumer-groups shows, through both doors: a member's commit, the admin's
    alter refused while the group has members (UNKNOWN_MEMBER_ID, as the admin commits
    with generation -1) and accepted once it is empty, OffsetDelete, and DeleteGroups
    (NON_EMPTY_GROUP while active, GROUP_ID_NOT_FOUND for a group never seen)."""
    seen = same_everywhere(through_both(_groups_scenario))
    assert seen["read"] == [b"c%d" % i for i in range(6)]
    assert seen["listed"] == [("reports", "consumer", "Stable")]
    assert seen["described"][:2] == ("Stable", "consumer")
    assert seen["described"][3] == ["r1"]
    assert seen["committed"] == {(CLICKS, 0): (3, "half"), (CLICKS, 1): (2, "")}
    assert seen["alter while active"] == {0: "UnknownMemberIdError"}
    assert seen["delete while active"] == {"reports": "NonEmptyGroupError"}
    assert seen["state after close"] == "Empty"
    assert seen["alter when empty"] == {0: "OK"}
    assert seen["after alter"] == {(CLICKS, 0): (1, "rewound"), (CLICKS, 1): (2, "")}
    assert seen["offset delete"] == {1: "OK"}
    assert seen["after offset delete"] == {(CLICKS, 0): (1, "rewound")}
    assert seen["delete"] == {"reports": "OK", "nobody": "GroupIdNotFoundError"}
    assert seen["listed after delete"] == []



def _leave_group_scenario(door: Door) -> dict:
    door.setup(lambda c: c.create_topic(CLICKS, 2, 3))
    members = [door.consumer(group_id="static", client_id=name, group_instance_id=f"host-{name}",
                             auto_offset_reset="earliest", enable_auto_commit=False)
               for name in ("a", "b")]
    for m in members:
        m.subscribe([CLICKS])
    admin = door.admin()
    door.wait_until_polled(members, lambda: len(admin.describe_groups(["static"])["static"]
                                                ["members"]) == 2, "both members joined")
    removed = admin.remove_group_members("static", [
        MemberToRemove(group_instance_id="host-b", reason="decommissioned"),
        MemberToRemove(group_instance_id="host-c")])
    return {"removed": {k: _error_name(v) for k, v in removed.items()},
            "members after": sorted(m["group_instance_id"] for m in
                                    admin.describe_groups(["static"])["static"]["members"])}


def test_leave_group_for_a_static_member():
    """The admin's LeaveGroup (KIP-345): a static member goes at once, by its
    group.instance.id; an unknown instance answers UNKNOWN_MEMBER_ID. (kafka-python 3
    keys the answer by member id or, for a static member, its instance id.)"""
    assert same_everywhere(through_both(_leave_group_scenario)) == {
        "removed": {"host-b": "OK", "host-c": "UnknownMemberIdError"},
        "members after": ["host-a"]}


# ---------------------------------------------------------------- the transaction APIs


def _txn_offsets_scenario(door: Door) -> dict:
    """Consume-transform-produce: AddOffsetsToTxn and TxnOffsetCommit put the group's
    offsets in the transaction; EndTxn commits or aborts them with the records."""
    door.setup(lambda c: (c.create_topic("in", 1, 3), c.create_topic("out", 1, 3)))
    source = door.producer(acks="all")
    for i in range(4):
        source.send("in", b"i%d" % i).get(timeout=10)
    consumer = door.consumer(group_id="etl", auto_offset_reset="earliest",
                             enable_auto_commit=False, isolation_level="read_committed")
    consumer.subscribe(["in"])
    got = read_all(consumer, 4)
    tx = door.producer(transactional_id="etl-tx")
    tx.init_transactions()
    admin = door.admin()
    seen = {}
    for outcome, upto in (("abort", 2), ("commit", 3)):
        tx.begin_transaction()
        tx.send("out", b"o%d" % upto)
        tx.send_offsets_to_transaction({TopicPartition("in", 0): OffsetAndMetadata(upto, "", -1)},
                                       consumer.group_metadata())
        if outcome == "abort":
            tx.abort_transaction()
        else:
            tx.commit_transaction()
        door.settle("out")
        seen[f"after {outcome}"] = _offsets(admin, "etl")
    seen["read"] = sorted(v for _, v in got)
    seen["out, read_committed"] = [v for _, v in read_all(_committed_reader(door), 1)]
    return seen


def _committed_reader(door: Door):
    consumer = door.consumer(group_id=None, auto_offset_reset="earliest",
                             enable_auto_commit=False, isolation_level="read_committed")
    consumer.assign([TopicPartition("out", 0)])
    return consumer


def test_transactional_offset_commits():
    """An aborted transaction's offsets never reach the group; a committed one's do, with
    its records (Kafka's TransactionCoordinator and GroupCoordinator)."""
    seen = same_everywhere(through_both(_txn_offsets_scenario))
    assert seen["read"] == [b"i0", b"i1", b"i2", b"i3"]
    assert seen["after abort"] == {}
    assert seen["after commit"] == {("in", 0): (3, "")}
    assert seen["out, read_committed"] == [b"o3"]


# ------------------------------------------- answers the native cluster gave


def _kafka_answers(door: Door) -> dict:
    door.setup(lambda c: c.create_topic("orders.eu", 1, 3))
    admin = door.admin()
    created = door.create_topics({"orders_eu": {"num_partitions": 1, "replication_factor": 1}},
                                 validate_only=False)
    described = admin.describe_groups(["nobody"])["nobody"]
    return {"collision": created,
            "group": [described["group_state"], described["error"]],
            "cluster operations": sorted(admin.describe_cluster()["authorized_operations"])}


def test_answers_measured_on_kafka():
    """What Apache Kafka 4.4.0 answered (tests/fidelity/s_outside.py), through both doors:
    a name colliding once '.' and '_' are unified, an unknown group, and a cluster's
    operations without an authorizer."""
    seen = same_everywhere(through_both(_kafka_answers))
    assert seen["group"] == ["Dead", "[Error 69] GroupIdNotFoundError: Group nobody not found."]
    assert "CREATE_TOKENS" not in seen["cluster operations"]
    assert "IDEMPOTENT_WRITE" in seen["cluster operations"]
    assert seen["collision"] == {
        "orders_eu": (17, "Topic 'orders_eu' collides with existing topic: orders.eu")}
