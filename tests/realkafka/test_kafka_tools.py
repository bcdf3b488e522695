"""Kafka's own command-line tools (the classes behind bin/kafka-*.sh in Kafka 4.4.0) against
`minikafka serve`, the way a student runs them after the course.

One test per tool, each running the commands the lessons, labs and docs/cli.md name. A
command either works (the test checks its output) or is a known difference listed in
docs/cli.md, and then the test checks the exact error it gives, so that a fix shows here.
"""
from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
import time
import uuid

import pytest
from kafka import KafkaConsumer, KafkaProducer

from minikafka.cluster import Cluster

from .jvm import run_java, tools_jvm

pytestmark = [pytest.mark.real_kafka, pytest.mark.slow, pytest.mark.timeout(600)]

TOOLS = "org.apache.kafka.tools."


@pytest.fixture(scope="module", autouse=True)
def warm_tools():
    """The module's tools share one warm JVM (jvm.tools_jvm), stopped by pid at the end."""
    with tools_jvm():
        yield


@pytest.fixture(scope="module")
def served():
    """`minikafka serve`'s cluster (three brokers), on free loopback ports."""
    cluster = Cluster(brokers=3)
    with cluster.serve(port=0) as server:
        yield server


def tool(served, name: str, *args: str, input: str | None = None, rc: int = 0):
    """Run Kafka's tool NAME (a class under org.apache.kafka.tools) with --bootstrap-server."""
    done = run_java(TOOLS + name, "--bootstrap-server", served.bootstrap_servers, *args,
                    input=input)
    assert done.returncode == rc, f"{name} {args}: rc={done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def produce(served, topic: str, records: list[tuple[bytes, bytes]]) -> None:
    producer = KafkaProducer(bootstrap_servers=served.bootstrap_servers, acks="all")
    for key, value in records:
        producer.send(topic, key=key, value=value)
    producer.flush()
    producer.close()


def commit_as_group(served, topic: str, group: str, count: int) -> KafkaConsumer:
    """A kafka-python consumer in GROUP that has read COUNT records and committed them
    (still a member: the caller closes it)."""
    consumer = KafkaConsumer(topic, bootstrap_servers=served.bootstrap_servers, group_id=group,
                             auto_offset_reset="earliest", enable_auto_commit=False)
    seen = 0
    for _ in range(60):
        seen += sum(len(batch) for batch in consumer.poll(timeout_ms=500).values())
        if seen >= count:
            break
    assert seen == count
    consumer.commit()
    return consumer


def test_kafka_topics(served):
    """kafka-topics.sh: lesson 1's create and describe, lesson 3's --alter --partitions,
    --list, --delete and the error for a topic that exists."""
    topic = unique("trucks_gps")
    created = tool(served, "TopicCommand", "--create", "--topic", topic, "--partitions", "10",
                   "--replication-factor", "3", "--config", "min.insync.replicas=2")
    assert created.stdout.splitlines() == [
        "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore "
        "('_') could collide. To avoid issues it is best to use either, but not both.",
        f"Created topic {topic}."]

    described = tool(served, "TopicCommand", "--describe", "--topic", topic).stdout.splitlines()
    assert re.fullmatch(rf"Topic: {topic}\tTopicId: [\w-]{{22}}\tPartitionCount: 10\t"
                        r"ReplicationFactor: 3\tConfigs: min.insync.replicas=2", described[0])
    lines = described[1:]
    assert len(lines) == 10
    for partition, line in enumerate(lines):
        match = re.fullmatch(rf"\tTopic: {topic}\tPartition: {partition}\tLeader: (\d)\t"
                             r"Replicas: (\d,\d,\d)\tIsr: (\d,\d,\d)\tElr: \tLastKnownElr: ", line)
        assert match, line
        leader, replicas, isr = match.groups()
        assert sorted(replicas.split(",")) == ["1", "2", "3"]
        assert leader == replicas[0] and isr == replicas

    assert topic in tool(served, "TopicCommand", "--list").stdout.splitlines()

    assert tool(served, "TopicCommand", "--alter", "--topic", topic, "--partitions", "12"
                ).stdout == ""
    header = tool(served, "TopicCommand", "--describe", "--topic", topic).stdout.splitlines()[0]
    assert "\tPartitionCount: 12\t" in header

    again = tool(served, "TopicCommand", "--create", "--topic", topic, rc=1)
    assert (f"Error while executing topic command : Topic '{topic}' already exists."
            in again.stdout + again.stderr)

    assert tool(served, "TopicCommand", "--delete", "--topic", topic).stdout == ""
    assert topic not in tool(served, "TopicCommand", "--list").stdout.splitlines()


def test_kafka_console_producer_and_consumer(served):
    """Lesson 1's console producer (parse.key, key.separator) and console consumer
    (--from-beginning, print.key), then with a --group that commits."""
    topic = unique("trucks")
    tool(served, "TopicCommand", "--create", "--topic", topic, "--partitions", "3")
    produced = tool(served, "ConsoleProducer", "--topic", topic, "--property", "parse.key=true",
                    "--property", "key.separator=:",
                    input="truck1:gps1\ntruck2:gps2\ntruck1:gps3\n")
    # Kafka 4.2 renamed the flag (KIP-1147); the old one still works, with a warning.
    assert produced.stdout == ("Warning: --property is deprecated and will be removed in a "
                               "future version. Use --reader-property instead.\n")

    consumed = tool(served, "consumer.ConsoleConsumer", "--topic", topic, "--from-beginning",
                    "--property", "print.key=true", "--max-messages", "3",
                    "--timeout-ms", "30000")
    deprecated, *lines = consumed.stdout.splitlines()
    assert deprecated == ("Option --property is deprecated and will be removed in a future "
                          "version. Use --formatter-property instead.")
    assert sorted(lines) == ["truck1\tgps1", "truck1\tgps3", "truck2\tgps2"]
    # One key, one partition, in order.
    assert lines.index("truck1\tgps1") < lines.index("truck1\tgps3")
    assert "Processed a total of 3 messages" in consumed.stderr

    group = unique("billing")
    tool(served, "consumer.ConsoleConsumer", "--topic", topic, "--from-beginning", "--group",
         group, "--max-messages", "3", "--timeout-ms", "30000")
    offsets = tool(served, "consumer.group.ConsumerGroupCommand", "--describe", "--group", group)
    rows = [line.split() for line in offsets.stdout.splitlines() if line.startswith(group)]
    assert sum(int(row[3]) for row in rows) == 3  # CURRENT-OFFSET: all three committed
    assert all(row[5] == "0" for row in rows)  # LAG


def test_kafka_consumer_groups(served):
    """Lesson 10's and lab 1's kafka-consumer-groups.sh: --list, --describe (offsets and lag,
    --members, --state), --reset-offsets (refused while the group is active; --to-earliest,
    --shift-by, --to-datetime; dry run and --execute) and --delete."""
    topic, group = unique("orders"), unique("billing")
    tool(served, "TopicCommand", "--create", "--topic", topic, "--partitions", "1")
    produce(served, topic, [(None, b"order-%d" % i) for i in range(10)])
    consumer = commit_as_group(served, topic, group, 10)
    try:
        assert group in tool(served, "consumer.group.ConsumerGroupCommand", "--list"
                             ).stdout.splitlines()
        members = tool(served, "consumer.group.ConsumerGroupCommand", "--describe", "--group",
                       group, "--members").stdout
        [member] = [line.split() for line in members.splitlines() if line.startswith(group)]
        assert member[-1] == "1"  # #PARTITIONS
        state = tool(served, "consumer.group.ConsumerGroupCommand", "--describe", "--group",
                     group, "--state").stdout
        [row] = [line.split() for line in state.splitlines() if line.startswith(group)]
        assert row[-3:] == ["range", "Stable", "1"]  # ASSIGNMENT-STRATEGY STATE #MEMBERS

        # Kafka's tool prints the refusal and an empty plan, and exits with status 0.
        refused = tool(served, "consumer.group.ConsumerGroupCommand", "--group", group,
                       "--reset-offsets", "--topic", topic, "--to-earliest", "--execute")
        assert (f"\nError: Assignments can only be reset if the group '{group}' is inactive, "
                "but the current state is Stable.\n" in refused.stdout)
    finally:
        consumer.close()

    described = tool(served, "consumer.group.ConsumerGroupCommand", "--describe", "--group", group)
    assert f"Consumer group '{group}' has no active members." in described.stderr
    [row] = [line.split() for line in described.stdout.splitlines() if line.startswith(group)]
    assert row == [group, topic, "0", "10", "10", "0", "-", "-", "-"]

    def reset(*scenario: str) -> list[list[str]]:
        out = tool(served, "consumer.group.ConsumerGroupCommand", "--group", group,
                   "--reset-offsets", "--topic", topic, *scenario).stdout
        return [line.split() for line in out.splitlines() if line.startswith(group)]

    assert reset("--shift-by", "-2", "--dry-run") == [[group, topic, "0", "8"]]
    assert reset("--to-earliest", "--execute") == [[group, topic, "0", "0"]]
    assert reset("--to-datetime", "2020-01-01T00:00:00.000", "--dry-run") == [
        [group, topic, "0", "0"]]
    assert reset("--to-latest", "--execute") == [[group, topic, "0", "10"]]
    assert reset("--shift-by", "-2", "--execute") == [[group, topic, "0", "8"]]
    described = tool(served, "consumer.group.ConsumerGroupCommand", "--describe", "--group", group)
    [row] = [line.split() for line in described.stdout.splitlines() if line.startswith(group)]
    assert row[3:6] == ["8", "10", "2"]

    deleted = tool(served, "consumer.group.ConsumerGroupCommand", "--delete", "--group", group)
    assert f"Deletion of requested consumer groups ('{group}') was successful." in deleted.stdout
    assert group not in tool(served, "consumer.group.ConsumerGroupCommand", "--list"
                             ).stdout.splitlines()


def test_kafka_configs(served):
    """kafka-configs.sh: a topic's configs (describe, --add-config, --delete-config, --all),
    a broker's own dynamic configs over the cluster-wide default (--entity-default)."""
    topic = unique("configs")
    tool(served, "TopicCommand", "--create", "--topic", topic, "--partitions", "1")
    topic_args = ("--entity-type", "topics", "--entity-name", topic)

    assert tool(served, "ConfigCommand", "--describe", *topic_args).stdout == (
        f"Dynamic configs for topic {topic} are:\n")
    altered = tool(served, "ConfigCommand", "--alter", *topic_args, "--add-config",
                   "retention.ms=3600000,min.insync.replicas=2")
    assert altered.stdout == f"Completed updating config for topic {topic}.\n"
    assert tool(served, "ConfigCommand", "--describe", *topic_args).stdout.splitlines()[1:] == [
        "  min.insync.replicas=2 sensitive=false "
        "synonyms={DYNAMIC_TOPIC_CONFIG:min.insync.replicas=2, "
        "DEFAULT_CONFIG:min.insync.replicas=1}",
        # log.retention.ms is set nowhere: Kafka lists no broker synonym after it
        "  retention.ms=3600000 sensitive=false "
        "synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=3600000}"]
    every = tool(served, "ConfigCommand", "--describe", *topic_args, "--all").stdout
    assert ("  cleanup.policy=delete sensitive=false "
            "synonyms={DEFAULT_CONFIG:log.cleanup.policy=delete}") in every.splitlines()
    tool(served, "ConfigCommand", "--alter", *topic_args, "--delete-config", "retention.ms")
    assert tool(served, "ConfigCommand", "--describe", *topic_args).stdout.splitlines()[1:] == [
        "  min.insync.replicas=2 sensitive=false "
        "synonyms={DYNAMIC_TOPIC_CONFIG:min.insync.replicas=2, "
        "DEFAULT_CONFIG:min.insync.replicas=1}"]

    broker = tool(served, "ConfigCommand", "--describe", "--entity-type", "brokers",
                  "--entity-name", "1", "--all").stdout
    assert ("  default.replication.factor=1 sensitive=false "
            "synonyms={DEFAULT_CONFIG:default.replication.factor=1}") in broker.splitlines()

    # Cluster-wide dynamic broker configs: none set yet, as on a new Kafka cluster.
    default = tool(served, "ConfigCommand", "--describe", "--entity-type", "brokers",
                   "--entity-default")
    assert default.stdout.splitlines()[0] == "Default configs for brokers in the cluster are:"
    assert not default.stdout.strip().splitlines()[1:]
    # A dynamic broker config on broker 1, as Kafka allows it: broker 1's own (its logs
    # follow it), over the cluster-wide default set with --entity-default.
    altered = tool(served, "ConfigCommand", "--alter", "--entity-type", "brokers",
                   "--entity-name", "1", "--add-config", "log.retention.ms=86400000")
    assert "Completed updating config for broker 1." in altered.stdout
    tool(served, "ConfigCommand", "--alter", "--entity-type", "brokers", "--entity-default",
         "--add-config", "log.retention.ms=172800000")
    broker = tool(served, "ConfigCommand", "--describe", "--entity-type", "brokers",
                  "--entity-name", "1").stdout
    assert "  log.retention.ms=86400000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:" \
        "log.retention.ms=86400000, DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=172800000, " \
        "DEFAULT_CONFIG:log.retention.hours=168}" in broker.splitlines()
    with served.cluster.lock:
        assert served.cluster.brokers[2].config["log.retention.ms"] == 172_800_000
    # A topic's default follows the broker that answers (the tool asks any): its synonyms
    # are that broker's chain of log.retention.ms.
    every = tool(served, "ConfigCommand", "--describe", *topic_args, "--all").stdout
    assert {"  retention.ms=172800000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:"
            "log.retention.ms=172800000, DEFAULT_CONFIG:log.retention.hours=168}",
            "  retention.ms=86400000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:"
            "log.retention.ms=86400000, DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms="
            "172800000, DEFAULT_CONFIG:log.retention.hours=168}"} & set(every.splitlines())
    tool(served, "ConfigCommand", "--alter", "--entity-type", "brokers", "--entity-default",
         "--delete-config", "log.retention.ms")
    # Groups: the tool looks the group up first (ListGroups, ListConfigResources), as on
    # Kafka, then describes its configs (DescribeConfigs on the GROUP resource).
    missing = tool(served, "ConfigCommand", "--describe", "--entity-type", "groups",
                   "--entity-name", "nobody")
    assert missing.stdout == "The group 'nobody' doesn't exist and doesn't have dynamic config.\n"
    produce(served, topic, [(None, b"x")])
    commit_as_group(served, topic, "billing", 1).close()
    group_args = ("--entity-type", "groups", "--entity-name", "billing")
    tool(served, "ConfigCommand", "--alter", *group_args,
         "--add-config", "consumer.session.timeout.ms=50000")
    groups = tool(served, "ConfigCommand", "--describe", *group_args).stdout
    assert "Dynamic configs for group billing are:" in groups
    assert ("consumer.session.timeout.ms=50000 sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:"
            "consumer.session.timeout.ms=50000") in groups


def test_kafka_configs_client_quotas(served):
    """kafka-configs.sh --entity-type clients|users: quotas set with AlterClientQuotas and
    read back with DescribeClientQuotas, as on Kafka (defaults with --entity-default)."""
    client = unique("app")
    altered = tool(served, "ConfigCommand", "--alter", "--add-config", "producer_byte_rate=1024",
                   "--entity-type", "clients", "--entity-name", client)
    assert altered.stdout == f"Completed updating config for client {client}.\n"
    tool(served, "ConfigCommand", "--alter", "--add-config",
         "consumer_byte_rate=2048,request_percentage=50", "--entity-type", "users",
         "--entity-default")
    clients = tool(served, "ConfigCommand", "--describe", "--entity-type", "clients").stdout
    assert f"Quota configs for client-id '{client}' are producer_byte_rate=1024.0" \
        in clients.splitlines()
    users = tool(served, "ConfigCommand", "--describe", "--entity-type", "users").stdout
    assert ("Quota configs for the default user-principal are consumer_byte_rate=2048.0, "
            "request_percentage=50.0") in users.splitlines()
    # A producer with that client-id over 1024 B/s is throttled (throttle_time_ms in
    # the Produce response, which kafka-python's producer metrics record).
    topic = unique("quota")
    tool(served, "TopicCommand", "--create", "--topic", topic, "--partitions", "1")
    producer = KafkaProducer(bootstrap_servers=served.bootstrap_servers, client_id=client,
                             acks=1)
    producer.send(topic, b"x" * 20_000).get(timeout=30)
    throttle = producer.metrics()["producer-metrics"]["throttle-time-max"]
    producer.close()
    assert throttle > 0
    tool(served, "ConfigCommand", "--alter", "--delete-config", "producer_byte_rate",
         "--entity-type", "clients", "--entity-name", client)
    assert client not in tool(served, "ConfigCommand", "--describe", "--entity-type",
                              "clients").stdout
    with served.cluster.lock:
        assert served.cluster.describe_client_quotas() == {
            (("user", None),): {"consumer_byte_rate": 2048.0, "request_percentage": 50.0}}


def test_kafka_configs_broker_loggers(served):
    """kafka-configs.sh --entity-type broker-loggers: each logger's level, changed at run
    time (minikafka's loggers are Python's, with log4j's level names)."""
    logger = logging.getLogger("minikafka.wire")
    before = logger.level
    args = ("--entity-type", "broker-loggers", "--entity-name", "1")
    try:
        tool(served, "ConfigCommand", "--alter", *args, "--add-config", "minikafka.wire=DEBUG")
        assert logger.level == logging.DEBUG
        described = tool(served, "ConfigCommand", "--describe", *args).stdout.splitlines()
        assert described[0] == "Dynamic configs for broker-logger 1 are:"
        assert ("  minikafka.wire=DEBUG sensitive=false "
                "synonyms={DYNAMIC_BROKER_LOGGER_CONFIG:minikafka.wire=DEBUG}") in described
        refused = tool(served, "ConfigCommand", "--alter", *args, "--add-config",
                       "minikafka.wire=LOUD", rc=1)
        assert "Cannot set the log level of minikafka.wire to LOUD" in refused.stderr
    finally:
        logger.setLevel(before)


def test_kafka_metadata_quorum(served):
    """kafka-metadata-quorum.sh (lesson 12's KRaft quorum): --status names the leader, its
    epoch and the high watermark; --replication lists each voter's log end offset and lag.
    With three brokers, all three vote (combined mode) and there are no observers."""
    cluster = served.cluster
    with cluster.lock:
        leader, term = cluster.active_controller, cluster.controller.quorum.term
    status = dict(line.split(":", 1) for line in
                  tool(served, "MetadataQuorumCommand", "describe", "--status").stdout.splitlines())
    status = {key: value.strip() for key, value in status.items()}
    assert (status["ClusterId"], status["LeaderId"], status["LeaderEpoch"]) == (
        cluster.cluster_id, str(leader), str(term))
    assert int(status["HighWatermark"]) > 0 and status["CurrentObservers"] == "[]"
    voters = json.loads(status["CurrentVoters"])
    assert [(v["id"], v["endpoints"]) for v in voters] == [
        (b, [f"CONTROLLER://127.0.0.1:{served.ports[b]}"]) for b in (1, 2, 3)]

    rows = [line.split() for line in tool(served, "MetadataQuorumCommand", "describe",
                                          "--replication").stdout.splitlines()]
    assert rows[0] == ["NodeId", "DirectoryId", "LogEndOffset", "Lag", "LastFetchTimestamp",
                       "LastCaughtUpTimestamp", "Status"]
    assert [(int(r[0]), r[3], r[6]) for r in rows[1:]] == [
        (leader, "0", "Leader")] + [(b, "0", "Follower") for b in (1, 2, 3) if b != leader]


def test_kafka_reassign_partitions(served, tmp_path):
    """kafka-reassign-partitions.sh (lesson 2): --generate proposes with the old placement;
    --execute starts the moves, --verify reports them done (and clears the throttles),
    --list and --cancel see a move that cannot finish."""
    topic = unique("moving")
    tool(served, "TopicCommand", "--create", "--topic", topic, "--partitions", "3",
         "--replication-factor", "3")
    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps({"topics": [{"topic": topic}], "version": 1}))
    out = tool(served, "reassign.ReassignPartitionsCommand", "--topics-to-move-json-file",
               str(topics), "--broker-list", "1,2,3", "--generate").stdout.splitlines()
    assert out[0] == "Current partition replica assignment"
    assert out[3] == "Proposed partition reassignment configuration"
    current, proposed = json.loads(out[1]), json.loads(out[4])
    assert [p["partition"] for p in current["partitions"]] == [0, 1, 2]
    for plan in (current, proposed):
        assert all(sorted(p["replicas"]) == [1, 2, 3] for p in plan["partitions"])
    # The old (ZooKeeper-era) placer: the first replicas go round the brokers.
    assert sorted(p["replicas"][0] for p in proposed["partitions"]) == [1, 2, 3]

    # Shrink every partition to two replicas, the proposed leader first.
    moves = {"version": 1, "partitions": [
        {"topic": topic, "partition": p["partition"], "replicas": p["replicas"][:2]}
        for p in proposed["partitions"]]}
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(moves))
    executed = tool(served, "reassign.ReassignPartitionsCommand", "--reassignment-json-file",
                    str(plan), "--execute").stdout.splitlines()
    assert executed[0] == "Current partition replica assignment"
    assert [p["replicas"] for p in json.loads(executed[2])["partitions"]] == [
        p["replicas"] for p in current["partitions"]]
    assert executed[-1] == ("Successfully started partition reassignments for "
                            f"{topic}-0,{topic}-1,{topic}-2")
    verified = tool(served, "reassign.ReassignPartitionsCommand", "--reassignment-json-file",
                    str(plan), "--verify").stdout.splitlines()
    assert verified == ["Status of partition reassignment:"] + [
        f"Reassignment of partition {topic}-{p} is completed." for p in range(3)] + [
        "", "Clearing broker-level throttles on brokers 1,2,3",
        f"Clearing topic-level throttles on topic {topic}"]
    with served.cluster.lock:
        meta = served.cluster.controller.topics[topic]
        assert [list(p.replicas) for p in meta.partitions] == [
            m["replicas"] for m in moves["partitions"]]
        stuck = next(b for b in (1, 2, 3) if b not in meta.partitions[0].replicas)
        served.cluster.pause_follower(stuck)  # its copy cannot catch up: the move stays open
    try:
        back = tmp_path / "back.json"
        back.write_text(json.dumps({"version": 1, "partitions": [
            {"topic": topic, "partition": 0, "replicas": [stuck, *moves["partitions"][0]["replicas"]]}]}))
        throttled = tool(served, "reassign.ReassignPartitionsCommand", "--reassignment-json-file",
                         str(back), "--execute", "--throttle", "1000000").stdout
        assert "The inter-broker throttle limit was set to 1000000 B/s\n" in throttled
        listed = tool(served, "reassign.ReassignPartitionsCommand", "--list").stdout
        assert listed.splitlines()[1] == (
            f"{topic}-0: replicas: {','.join(map(str, [stuck, *moves['partitions'][0]['replicas']]))}"
            f". adding: {stuck}.")
        verify = tool(served, "reassign.ReassignPartitionsCommand", "--reassignment-json-file",
                      str(back), "--verify").stdout
        assert verify.splitlines()[1] == f"Reassignment of partition {topic}-0 is still in progress."
        cancelled = tool(served, "reassign.ReassignPartitionsCommand", "--reassignment-json-file",
                         str(back), "--cancel").stdout
        assert cancelled.startswith(f"Successfully cancelled partition reassignment for: {topic}-0\n")
    finally:
        with served.cluster.lock:
            served.cluster.resume_follower(stuck)
    with served.cluster.lock:
        assert list(served.cluster.controller.topics[topic].partitions[0].replicas) == \
            moves["partitions"][0]["replicas"]


@pytest.fixture(scope="module")
def served_jbod(tmp_path_factory):
    """`minikafka serve --log-dir A,B`: three brokers with two log directories each."""
    root = tmp_path_factory.mktemp("jbod")
    cluster = Cluster(brokers=3, log_dir=[root / "a", root / "b"])
    with cluster.serve(port=0) as server:
        yield server


def verify_until(served, plan, done: str, meanwhile: str | None = None,
                 seconds: float = 30) -> list[str]:
    """kafka-reassign-partitions.sh --verify of PLAN, again every 0.2 s until it prints the
    line DONE or SECONDS pass (a replica moves in the background); the lines of its last
    run. Every run before it must print MEANWHILE, when given."""
    deadline = time.monotonic() + seconds
    while True:
        verified = tool(served, "reassign.ReassignPartitionsCommand", "--reassignment-json-file",
                        str(plan), "--verify").stdout.splitlines()
        if done in verified or time.monotonic() > deadline:
            return verified
        assert meanwhile is None or meanwhile in verified, verified
        time.sleep(0.2)


def test_kafka_log_dirs_and_reassign_partitions_between_dirs(served_jbod, tmp_path):
    """kafka-log-dirs.sh --describe lists both directories of each broker; a reassignment
    JSON with "log_dirs" moves a replica to the other directory (AlterReplicaLogDirs), and
    --verify reports the replica's move done once its future replica has replaced it."""
    served = served_jbod
    topic = unique("jbod")
    tool(served, "TopicCommand", "--create", "--topic", topic, "--partitions", "1",
         "--replication-factor", "3")
    produce(served, topic, [(None, b"x" * 100) for _ in range(5)])

    def describe() -> dict[int, dict[str, list[dict]]]:
        lines = tool(served, "LogDirsCommand", "--describe", "--topic-list", topic).stdout
        report = json.loads(lines.splitlines()[2])
        return {broker["broker"]: {d["logDir"]: d["partitions"] for d in broker["logDirs"]}
                for broker in report["brokers"]}

    with served.cluster.lock:
        dirs = {b: [str(d.path) for d in served.cluster.log_dirs[b].dirs] for b in (1, 2, 3)}
        replicas = list(served.cluster.controller.topics[topic].partitions[0].replicas)
    before = describe()
    assert {b: sorted(ds) for b, ds in before.items()} == {b: sorted(ds) for b, ds in dirs.items()}
    for b in (1, 2, 3):
        first, second = dirs[b]
        [partition] = before[b][first]
        assert partition["partition"] == f"{topic}-0" and partition["size"] > 0
        assert partition["isFuture"] is False and before[b][second] == []

    mover = replicas[0]
    plan = tmp_path / "dirs.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{
        "topic": topic, "partition": 0, "replicas": replicas,
        "log_dirs": [dirs[mover][1]] + ["any"] * (len(replicas) - 1)}]}))
    executed = tool(served, "reassign.ReassignPartitionsCommand", "--reassignment-json-file",
                    str(plan), "--execute").stdout.splitlines()
    assert executed[-1] == (f"Successfully started moving log directory to {dirs[mover][1]} "
                            f"for replica {topic}-0 with broker {mover} ")  # sic

    done = f"Reassignment of replica {topic}-0-{mover} completed successfully."
    verified = verify_until(served, plan, done, meanwhile=(
        f"Reassignment of replica {topic}-0-{mover} is still in progress."))
    assert done in verified, verified
    after = describe()
    [moved] = after[mover][dirs[mover][1]]
    assert moved["partition"] == f"{topic}-0" and moved["size"] == partition["size"]
    assert after[mover][dirs[mover][0]] == []

    elsewhere = tmp_path / "nowhere.json"
    elsewhere.write_text(json.dumps({"version": 1, "partitions": [{
        "topic": topic, "partition": 0, "replicas": replicas,
        "log_dirs": [str(tmp_path / "nowhere")] + ["any"] * (len(replicas) - 1)}]}))
    failed = tool(served, "reassign.ReassignPartitionsCommand", "--reassignment-json-file",
                  str(elsewhere), "--execute", rc=1)
    assert "LogDirNotFoundException" in failed.stdout + failed.stderr


def test_kafka_reassign_partitions_places_a_new_replica_in_the_named_dir(served_jbod, tmp_path):
    """A reassignment that adds a replica with a "log_dirs" entry: the broker answers
    REPLICA_NOT_AVAILABLE until the replica exists, remembers the directory, and creates
    the replica there (not in the emptier directory it would otherwise choose)."""
    served = served_jbod
    topic = unique("grow")
    tool(served, "TopicCommand", "--create", "--topic", topic, "--partitions", "1",
         "--replication-factor", "2")
    produce(served, topic, [(None, b"y" * 50) for _ in range(3)])
    with served.cluster.lock:
        replicas = list(served.cluster.controller.topics[topic].partitions[0].replicas)
        [added] = [b for b in (1, 2, 3) if b not in replicas]
        jbod = served.cluster.log_dirs[added]
        emptier = min(jbod.dirs, key=jbod.count)  # where it would go unasked
        named = next(d for d in jbod.dirs if d is not emptier)
        other, named = str(emptier.path), str(named.path)
    plan = tmp_path / "grow.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{
        "topic": topic, "partition": 0, "replicas": [*replicas, added],
        "log_dirs": ["any", "any", named]}]}))
    executed = tool(served, "reassign.ReassignPartitionsCommand", "--reassignment-json-file",
                    str(plan), "--execute").stdout.splitlines()
    assert f"Successfully started partition reassignment for {topic}-0" in executed
    verified = verify_until(served, plan,
                            f"Reassignment of replica {topic}-0-{added} completed successfully.")
    assert f"Reassignment of partition {topic}-0 is completed." in verified, verified
    assert f"Reassignment of replica {topic}-0-{added} completed successfully." in verified
    report = json.loads(tool(served, "LogDirsCommand", "--describe", "--broker-list", str(added),
                             "--topic-list", topic).stdout.splitlines()[2])
    [broker] = report["brokers"]
    where = {d["logDir"]: [p["partition"] for p in d["partitions"]] for d in broker["logDirs"]}
    assert where == {other: [], named: [f"{topic}-0"]}


def test_kafka_get_offsets(served):
    """kafka-get-offsets.sh: the latest offset (default), the earliest (-2) and the offset
    of the largest timestamp (-3) per partition."""
    topic = unique("offsets")
    tool(served, "TopicCommand", "--create", "--topic", topic, "--partitions", "2")
    producer = KafkaProducer(bootstrap_servers=served.bootstrap_servers, acks="all")
    for i, ts in enumerate([1_000, 3_000, 2_000]):
        producer.send(topic, value=b"v%d" % i, partition=0, timestamp_ms=1_700_000_000_000 + ts)
    producer.flush()
    producer.close()

    def offsets(*args: str) -> list[str]:
        return tool(served, "GetOffsetShell", "--topic", topic, *args).stdout.splitlines()

    assert offsets() == [f"{topic}:0:3", f"{topic}:1:0"]
    assert offsets("--time", "-2") == [f"{topic}:0:0", f"{topic}:1:0"]
    assert tool(served, "GetOffsetShell", "--topic-partitions", f"{topic}:0", "--time", "-3"
                ).stdout.splitlines() == [f"{topic}:0:1"]


def test_kafka_features(served):
    """kafka-features.sh: describe lists Eligible Leader Replicas (lesson 5) at the metadata
    offset it was read at; downgrade and upgrade change the finalized level."""
    elr = "eligible.leader.replicas.version"

    def described() -> list[str]:
        return re.findall(r"\S+: \S+", tool(served, "FeatureCommand", "describe").stdout)

    before = described()
    assert before[:4] == [f"Feature: {elr}", "SupportedMinVersion: 0",
                          "SupportedMaxVersion: 1", "FinalizedVersionLevel: 1"]
    assert re.fullmatch(r"Epoch: \d+", before[4])
    assert tool(served, "FeatureCommand", "upgrade", "--feature", f"{elr}=1").stdout == (
        f"{elr} was upgraded to 1.\n")
    refused = tool(served, "FeatureCommand", "upgrade", "--feature", f"{elr}=2", rc=1)
    assert refused.stdout == (f"Could not upgrade {elr} to 2. Invalid update version 2 for "
                              f"feature {elr}. Local controller "
                              f"{served.cluster.active_controller} only supports versions 0-1\n")
    assert tool(served, "FeatureCommand", "downgrade", "--feature", f"{elr}=0").stdout == (
        f"{elr} was downgraded to 0.\n")
    assert described()[3] == "FinalizedVersionLevel: 0"
    tool(served, "FeatureCommand", "upgrade", "--feature", f"{elr}=1")
    assert described()[3] == "FinalizedVersionLevel: 1"


def test_kafka_transactions(served):
    """kafka-transactions.sh list and describe (lesson 10): each transaction once, at its
    coordinator; describe shows the state, producer, timeout and partitions."""
    topic = unique("txn")
    txn_id = unique("billing")
    tool(served, "TopicCommand", "--create", "--topic", topic, "--partitions", "2")
    producer = KafkaProducer(bootstrap_servers=served.bootstrap_servers, transactional_id=txn_id)
    try:
        producer.init_transactions()
        producer.begin_transaction()
        producer.send(topic, b"open", partition=1).get(timeout=30)
        rows = [line.split() for line in tool(served, "TransactionsCommand", "list").stdout.splitlines()]
        assert rows[0] == ["TransactionalId", "Coordinator", "ProducerId", "TransactionState"]
        [row] = [r for r in rows[1:] if r[0] == txn_id]
        with served.cluster.lock:
            meta = served.cluster.transaction_coordinator.transactions[txn_id]
        assert row[2:] == [str(meta.producer_id), "Ongoing"]
        described = [line.split() for line in tool(
            served, "TransactionsCommand", "describe", "--transactional-id", txn_id
        ).stdout.splitlines()]
        assert described[0] == ["CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch",
                                "TransactionState", "TransactionTimeoutMs",
                                "CurrentTransactionStartTimeMs", "TransactionDurationMs",
                                "TopicPartitions"]
        fields = described[1]
        assert fields[:6] == [row[1], txn_id, str(meta.producer_id), "0", "Ongoing", "60000"]
        assert fields[8] == f"{topic}-1"
        missing = tool(served, "TransactionsCommand", "describe", "--transactional-id",
                       "nobody", rc=1)
        assert missing.stderr.startswith(
            "Failed to describe transaction state of transactional-id `nobody`: "
            "DescribeTransactions request for transactionalId `nobody` failed because the ID "
            "could not be found.")
    finally:
        producer.abort_transaction()
        producer.close()


def test_kafka_leader_election(served):
    """kafka-leader-election.sh --election-type preferred (lesson 4, lab 4): with every
    preferred replica leading already, there is nothing to elect."""
    topic = unique("elect")
    tool(served, "TopicCommand", "--create", "--topic", topic, "--partitions", "2")
    done = tool(served, "LeaderElectionCommand", "--election-type", "preferred", "--topic",
                topic, "--partition", "0")
    assert done.stdout == f"Valid replica already elected for partitions {topic}-0\n"
    missing = tool(served, "LeaderElectionCommand", "--election-type", "preferred", "--topic",
                   topic, "--partition", "7", rc=1)
    assert missing.stdout == (
        f"Error completing leader election (PREFERRED) for partition: {topic}-7: "
        "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: "
        "The partition does not exist.\n")


def test_kafka_delete_records_and_log_dirs(served, tmp_path):
    """kafka-delete-records.sh (lesson 11) moves the log start offset; kafka-log-dirs.sh
    (lab 2) shows each replica's size."""
    topic = unique("records")
    tool(served, "TopicCommand", "--create", "--topic", topic, "--partitions", "1",
         "--replication-factor", "3")
    produce(served, topic, [(None, b"x" * 100) for _ in range(5)])
    spec = tmp_path / "delete.json"
    spec.write_text(json.dumps({"partitions": [{"topic": topic, "partition": 0, "offset": 3}],
                                "version": 1}))
    deleted = tool(served, "DeleteRecordsCommand", "--offset-json-file", str(spec)).stdout
    assert deleted.splitlines() == ["Executing records delete operation",
                                    "Records delete operation completed:",
                                    f"partition: {topic}-0\tlow_watermark: 3"]
    assert tool(served, "GetOffsetShell", "--topic", topic, "--time", "-2").stdout == (
        f"{topic}:0:3\n")

    dirs = tool(served, "LogDirsCommand", "--describe", "--topic-list", topic).stdout
    lines = dirs.splitlines()
    assert lines[0] == "Querying brokers for log directories information"
    report = json.loads(lines[2])
    sizes = {broker["broker"]: [p for d in broker["logDirs"] for p in d["partitions"]]
             for broker in report["brokers"]}
    assert sorted(sizes) == [1, 2, 3]
    for partitions in sizes.values():
        [partition] = partitions
        assert partition["partition"] == f"{topic}-0" and partition["size"] > 0


def test_kafka_console_share_consumer_and_share_groups(served):
    """kafka-console-share-consumer.sh and kafka-share-groups.sh (KIP-932, docs/cli.md):
    a share group set to read from the earliest offset with kafka-configs.sh, the console
    share consumer reading (and accepting) every record, then the group described, listed
    and deleted."""
    topic, group = unique("jobs"), unique("console-share")
    tool(served, "TopicCommand", "--create", "--topic", topic, "--partitions", "1",
         "--replication-factor", "3")
    configured = tool(served, "ConfigCommand", "--alter", "--entity-type", "groups",
                      "--entity-name", group, "--add-config", "share.auto.offset.reset=earliest")
    assert configured.stdout.strip() == f"Completed updating config for group {group}."
    produce(served, topic, [(None, b"job-%d" % i) for i in range(5)])
    consumed = tool(served, "consumer.ConsoleShareConsumer", "--topic", topic, "--group", group,
                    "--max-messages", "5", "--timeout-ms", "30000")
    assert consumed.stdout.splitlines() == [f"job-{i}" for i in range(5)]
    assert "Processed a total of 5 messages" in consumed.stderr
    described = tool(served, "consumer.group.ShareGroupCommand", "--describe", "--group", group)
    rows = [line.split() for line in described.stdout.splitlines() if line.strip()]
    # The share state as last written: the close accepted offsets 0-4 in one write, made with
    # the start offset as it was (0); nothing is left to deliver (lag 0).
    assert rows == [["GROUP", "TOPIC", "PARTITION", "START-OFFSET", "LAG"],
                    [group, topic, "0", "0", "0"]]
    listed = tool(served, "consumer.group.ShareGroupCommand", "--list").stdout.split()
    assert group in listed
    members = tool(served, "consumer.group.ShareGroupCommand", "--describe", "--group", group,
                   "--members")
    assert f"Share group '{group}' has no active members." in members.stdout + members.stderr
    reset = tool(served, "consumer.group.ShareGroupCommand", "--reset-offsets", "--to-earliest",
                 "--topic", topic, "--group", group, "--execute")
    assert [line.split() for line in reset.stdout.splitlines() if line.strip()] == [
        ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"], [group, topic, "0", "0"]]
    described = tool(served, "consumer.group.ShareGroupCommand", "--describe", "--group", group)
    assert described.stdout.split()[-3:] == ["0", "0", "5"]  # all five to deliver again
    deleted = tool(served, "consumer.group.ShareGroupCommand", "--delete", "--group", group)
    assert f"Deletion of requested share groups ('{group}') was successful." in deleted.stdout
    assert group not in tool(served, "consumer.group.ShareGroupCommand", "--list").stdout.split()


def test_kafka_dump_log(tmp_path):
    """kafka-dump-log.sh (lessons 9 and 11) reads the segment files minikafka writes
    (`minikafka serve --log-dir`) and prints what `minikafka dump-log` prints."""
    cluster = Cluster(brokers=3, log_dir=tmp_path / "data")
    cluster.create_topic("orders", partitions=1, replication_factor=3)
    producer = cluster.producer(acks="all")
    for i in range(100):  # one batch each: enough bytes for index entries
        producer.send("orders", key=b"key-%d" % i, value=b"order %03d " % i * 4).get()
    segment = tmp_path / "data" / "broker-1" / "orders-0" / "00000000000000000000"
    files = ",".join(f"{segment}.{suffix}" for suffix in ("log", "index", "timeindex"))

    kafka = run_java(TOOLS + "DumpLogSegments", "--files", files, "--print-data-log")
    ours = subprocess.run([sys.executable, "-m", "minikafka.cli", "dump-log", "--files", files,
                           "--print-data-log"], capture_output=True, text=True, timeout=120)
    assert kafka.returncode == ours.returncode == 0, kafka.stderr + ours.stderr
    assert "offset: 99 " in kafka.stdout and f"Dumping {segment}.index\noffset: " in kafka.stdout
    assert ours.stdout == kafka.stdout


def test_kafka_consumer_groups_on_a_kip848_group(served):
    """docs/cli.md's KIP-848 section: a confluent-kafka consumer with group.protocol=consumer;
    kafka-consumer-groups.sh lists the group by type and describes it (ConsumerGroupDescribe):
    assignor, state, each member's epoch and current and target assignment."""
    from confluent_kafka import Consumer

    topic, group = unique("orders"), unique("billing")
    tool(served, "TopicCommand", "--create", "--topic", topic, "--partitions", "2")
    consumer = Consumer({"bootstrap.servers": served.bootstrap_servers, "group.id": group,
                         "group.protocol": "consumer", "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 60
        while len(consumer.assignment()) < 2:
            assert time.monotonic() < deadline, "no assignment"
            consumer.poll(0.1)
        listed = tool(served, "consumer.group.ConsumerGroupCommand", "--list", "--type",
                      "consumer").stdout
        assert [group, "Consumer"] in [line.split() for line in listed.splitlines()]
        state = tool(served, "consumer.group.ConsumerGroupCommand", "--describe", "--group",
                     group, "--state").stdout
        [row] = [line.split() for line in state.splitlines() if line.startswith(group)]
        assert row[-3:] == ["uniform", "Stable", "1"]
        members = tool(served, "consumer.group.ConsumerGroupCommand", "--describe", "--group",
                       group, "--members", "--verbose").stdout
        [member] = [line.split() for line in members.splitlines() if line.startswith(group)]
        # #PARTITIONS CURRENT-EPOCH CURRENT-ASSIGNMENT TARGET-EPOCH TARGET-ASSIGNMENT
        assert member[-5:] == ["2", "2", f"{topic}:0,1", "2", f"{topic}:0,1"]
        # The reset reads the state with ConsumerGroupDescribe, as minikafka's tool does.
        refused = tool(served, "consumer.group.ConsumerGroupCommand", "--group", group,
                       "--reset-offsets", "--topic", topic, "--to-earliest", "--execute")
        assert (f"\nError: Assignments can only be reset if the group '{group}' is inactive, "
                "but the current state is Stable.\n" in refused.stdout)
    finally:
        consumer.close()


ADMIN_PLAIN = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
               'username="{user}" password="{password}";')


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    """`minikafka serve` with a SASL_PLAINTEXT listener (PLAIN and SCRAM-SHA-256) and the
    StandardAuthorizer, User:admin its super user: the broker file of docs/cli.md."""
    from minikafka.core.security_config import client_listeners
    users = 'user_admin="admin-secret" user_alice="alice-secret"'
    listeners = client_listeners({
        "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config":
            f"org.apache.kafka.common.security.plain.PlainLoginModule required {users};",
        "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config":
            "org.apache.kafka.common.security.scram.ScramLoginModule required;"})
    cluster = Cluster(brokers=3)
    cluster.enable_acls(super_users=["User:admin"])
    configs = tmp_path_factory.mktemp("clients")
    for user in ("admin", "alice"):
        (configs / f"{user}.properties").write_text(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config="
            + ADMIN_PLAIN.format(user=user, password=f"{user}-secret") + "\n")
    with cluster.serve(port=0, listeners=listeners) as server:
        yield server, configs


def test_kafka_acls(secured):
    """kafka-acls.sh as the super user: --add a prefixed and a literal ACL, --list all and
    what applies to one topic (--resource-pattern-type match), --remove; a user without
    ALTER on the cluster is refused. kafka-configs.sh adds a SCRAM user that then logs in."""
    server, configs = secured
    admin = ("--command-config", str(configs / "admin.properties"))

    def acls(*args: str, config=admin, rc: int = 0):
        return tool(server, "AclCommand", *config, *args, rc=rc)

    added = acls("--add", "--allow-principal", "User:alice", "--operation", "Read",
                 "--topic", "orders-", "--resource-pattern-type", "prefixed")
    assert added.stdout == (
        "Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders-, "
        "patternType=PREFIXED)`: \n \t(principal=User:alice, host=*, operation=READ, "
        "permissionType=ALLOW)\n\n")
    acls("--add", "--allow-principal", "User:alice", "--operation", "Read", "--group", "team-eu")
    topic_acl = ("Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders-, "
                 "patternType=PREFIXED)`:\n\t(principal=User:alice, host=*, operation=READ, "
                 "permissionType=ALLOW)\n\n")
    group_acl = ("Current ACLs for resource `ResourcePattern(resourceType=GROUP, name=team-eu, "
                 "patternType=LITERAL)`:\n\t(principal=User:alice, host=*, operation=READ, "
                 "permissionType=ALLOW)\n\n")
    # the tool groups ACLs in a HashMap keyed by enum-holding patterns: any order
    listed = acls("--list").stdout
    assert sorted([topic_acl, group_acl]) == sorted(b + "\n\n" for b in listed.split("\n\n") if b)
    assert acls("--list", "--topic", "orders-eu", "--resource-pattern-type", "match"
                ).stdout == topic_acl
    refused = acls("--list", config=("--command-config", str(configs / "alice.properties")),
                   rc=1)
    assert ("Error while executing ACL command: org.apache.kafka.common.errors."
            "ClusterAuthorizationException: Cluster authorization failed.") in refused.stdout
    acls("--remove", "--force", "--allow-principal", "User:alice", "--operation", "Read",
         "--group", "team-eu")
    assert acls("--list").stdout == topic_acl

    # A SCRAM user made with kafka-configs (AlterUserScramCredentials) logs in with it.
    made = tool(server, "ConfigCommand", *admin, "--alter", "--entity-type", "users",
                "--entity-name", "bob", "--add-config",
                "SCRAM-SHA-256=[iterations=8192,password=bob-secret]")
    assert made.stdout == "Completed updating config for user bob.\n"
    acls("--add", "--allow-principal", "User:bob", "--operation", "Describe", "--topic", "*")
    from kafka import KafkaAdminClient
    bob = KafkaAdminClient(bootstrap_servers=server.bootstrap_servers,
                           security_protocol="SASL_PLAINTEXT", sasl_mechanism="SCRAM-SHA-256",
                           sasl_plain_username="bob", sasl_plain_password="bob-secret")
    assert isinstance(bob.list_topics(), list)
    bob.close()


def test_kafka_tools_over_sasl_ssl_with_scram(tmp_path):
    """Kafka's Java client (in kafka-acls.sh and kafka-topics.sh) over a SASL_SSL listener:
    TLS with a PEM truststore and hostname verification, SCRAM-SHA-512 login."""
    from tls_certs import make_certificates

    from minikafka.core.security_config import client_listeners
    certs = make_certificates(tmp_path / "certs")
    listeners = client_listeners({
        "listeners": "SASL_SSL://127.0.0.1:0", "sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config":
            "org.apache.kafka.common.security.scram.ScramLoginModule required;",
        "ssl.keystore.type": "PEM", "ssl.keystore.location": str(certs.broker)})
    config = tmp_path / "admin.properties"
    config.write_text(
        "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\nssl.truststore.type=PEM\n"
        f"ssl.truststore.location={certs.ca}\nsasl.jaas.config=org.apache.kafka.common."
        'security.scram.ScramLoginModule required username="admin" password="admin-secret";\n')
    cluster = Cluster(brokers=1)
    cluster.enable_acls(super_users=["User:admin"])
    cluster.set_scram_credential("admin", "admin-secret", "SCRAM-SHA-512")
    with cluster.serve(port=0, listeners=listeners) as server:
        created = tool(server, "TopicCommand", "--command-config", str(config), "--create",
                       "--topic", "over-tls")
        assert created.stdout == "Created topic over-tls.\n"
        added = tool(server, "AclCommand", "--command-config", str(config), "--add",
                     "--allow-principal", "User:alice", "--operation", "Write", "--topic",
                     "over-tls")
        assert "(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)" in \
            added.stdout
