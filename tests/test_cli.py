"""Kafka's command-line tools (minikafka topics, console-producer, console-consumer,
consumer-groups, dump-log) against a served minikafka cluster on ephemeral loopback
ports, run through minikafka.cli.main as a shell would run them (and once as a real
subprocess), checking what they print."""
from __future__ import annotations

import io
import logging
import re
import socket
import subprocess
import sys
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, KafkaConsumer
from kafka.errors import NonEmptyGroupError

from minikafka.cli import main
from minikafka.cluster import Cluster
from minikafka.tools.topics import kafka_uuid

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60)]

KEYED = ["alice:latte", "bob:espresso", "carol:tea", "alice:mocha", "dave:flat white",
         "bob:cortado", "erin:chai", "carol:americano"]


def cli(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `minikafka ARGV...`."""
    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                rc = main(list(argv))
            except SystemExit as exc:
                rc = exc.code
    finally:
        sys.stdin = old_stdin
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def served():
    # New groups start at once (Kafka waits group.initial.rebalance.delay.ms, 3 s).
    cluster = Cluster(brokers=3, seed=23, broker_config={"group.initial.rebalance.delay.ms": 0})
    with cluster.serve(port=0) as server:
        yield cluster, server.bootstrap_servers


def table(text: str) -> list[list[str]]:
    """The rows under a kafka-consumer-groups header, split on runs of spaces."""
    lines = [line for line in text.splitlines() if line.strip()]
    return [re.split(r"\s+", line.strip()) for line in lines[1:]]


def test_topics_create_list_describe_alter_delete(served):
    cluster, bootstrap = served
    rc, out, err = cli("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "cities",
                       "--partitions", "3", "--replication-factor", "2",
                       "--config", "retention.ms=86400000", "--config", "min.insync.replicas=2")
    assert (rc, out, err) == (0, "Created topic cities.\n", "")

    rc, out, err = cli("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "cities")
    assert rc == 1 and out == ""
    assert err == "Error while executing topic command : Topic 'cities' already exists.\n"
    assert cli("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "cities",
               "--if-not-exists")[0] == 0

    rc, out, _ = cli("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "my_data.v1")
    assert rc == 0 and out.startswith("WARNING: Due to limitations in metric names")
    assert cli("topics", "--bootstrap-server", bootstrap, "--list")[1].split() == \
        ["cities", "my_data.v1"]

    rc, out, _ = cli("topics", "--bootstrap-server", bootstrap, "--describe", "--topic", "cities")
    with cluster.lock:
        described = cluster.describe_topic("cities")
        topic_id = kafka_uuid(cluster.controller.topics["cities"].topic_id)
    head, *rows = out.splitlines()
    assert head.split("\t")[:4] == ["Topic: cities", f"TopicId: {topic_id}", "PartitionCount: 3",
                                    "ReplicationFactor: 2"]
    configs = head.split("\t")[4].removeprefix("Configs: ").split(",")
    assert sorted(configs) == ["min.insync.replicas=2", "retention.ms=86400000"]
    assert rows == [
        f"\tTopic: cities\tPartition: {p.partition}\tLeader: {p.leader}"
        f"\tReplicas: {','.join(map(str, p.replicas))}\tIsr: {','.join(map(str, p.isr))}"
        "\tElr: \tLastKnownElr: " for p in described.partitions]

    assert cli("topics", "--bootstrap-server", bootstrap, "--alter", "--topic", "cities",
               "--partitions", "5") == (0, "", "")
    with cluster.lock:
        assert cluster.partitions_for("cities") == 5
    rc, _, err = cli("topics", "--bootstrap-server", bootstrap, "--alter", "--topic", "cities",
                     "--partitions", "2")
    assert rc == 1 and err.startswith("Error while executing topic command : ")
    assert "5 partitions" in err and err.count("\n") == 1

    assert cli("topics", "--bootstrap-server", bootstrap, "--delete", "--topic", "my_data.v1") == \
        (0, "", "")
    rc, _, err = cli("topics", "--bootstrap-server", bootstrap, "--describe", "--topic",
                     "my_data.v1")
    assert (rc, err) == (1, "Error while executing topic command : Topic 'my_data.v1' does not "
                            "exist as expected\n")
    assert cli("topics", "--bootstrap-server", bootstrap, "--list")[1].split() == ["cities"]


def produce_keyed(bootstrap: str, topic: str, lines: list[str]) -> None:
    rc, out, err = cli("console-producer", "--bootstrap-server", bootstrap, "--topic", topic,
                       "--property", "parse.key=true", "--property", "key.separator=:",
                       "--producer-property", "acks=all", stdin="\n".join(lines) + "\n")
    assert (rc, out, err) == (0, "", "")


def consume(bootstrap: str, topic: str, *extra: str) -> tuple[list[str], str]:
    rc, out, err = cli("console-consumer", "--bootstrap-server", bootstrap, "--topic", topic,
                       *extra)
    assert rc == 0, err
    return out.splitlines(), err


def test_describe_lists_eligible_leader_replicas_as_kafka_topics_does():
    # The docs/cli.md example: stop brokers 3 and 1 of a served cluster's `orders`.
    cluster = Cluster(brokers=3, seed=0)
    with cluster.serve(port=0) as server:
        bootstrap = server.bootstrap_servers
        assert cli("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "orders",
                   "--partitions", "3", "--replication-factor", "3",
                   "--config", "min.insync.replicas=2")[0] == 0
        with cluster.lock:
            cluster.stop_broker(3)
            cluster.stop_broker(1)  # leaves an ISR below min.insync.replicas: into the ELR
        rc, out, _ = cli("topics", "--bootstrap-server", bootstrap, "--describe",
                         "--topic", "orders")
    assert rc == 0
    assert out.splitlines()[1] == ("\tTopic: orders\tPartition: 0\tLeader: 2\tReplicas: 2,3,1"
                                   "\tIsr: 2\tElr: 1\tLastKnownElr: ")
    assert [line.split("\t")[5:] for line in out.splitlines()[1:]] == \
        [["Isr: 2", "Elr: 1", "LastKnownElr: "]] * 3


def test_keyed_lines_go_in_and_come_back_with_their_keys(served):
    cluster, bootstrap = served
    assert cli("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "orders",
               "--partitions", "2", "--replication-factor", "3")[0] == 0
    produce_keyed(bootstrap, "orders", KEYED)
    lines, err = consume(bootstrap, "orders", "--from-beginning", "--max-messages", "8",
                         "--property", "print.key=true", "--property", "key.separator=:",
                         "--property", "print.partition=true")
    assert err == "Processed a total of 8 messages\n"
    by_partition: dict[str, list[str]] = {}
    for line in lines:  # Partition:P:KEY:VALUE (every column ends in key.separator)
        label, partition, key, value = line.split(":", 3)
        assert label == "Partition"
        by_partition.setdefault(partition, []).append(f"{key}:{value}")
    assert sorted(x for part in by_partition.values() for x in part) == sorted(KEYED)
    # Same key, same partition, in the order sent.
    for part in by_partition.values():
        for key in {line.split(":")[0] for line in part}:
            assert [x for x in part if x.startswith(key + ":")] == \
                [x for x in KEYED if x.startswith(key + ":")]
    assert len(by_partition) == 2

    rc, _, err = cli("console-producer", "--bootstrap-server", bootstrap, "--topic", "orders",
                     "--property", "parse.key=true", "--property", "key.separator=:",
                     stdin="no separator here\n")
    assert (rc, err) == (1, "Error: No key separator found on line number 1: "
                            "'no separator here'\n")


def test_kafka_4_2_flag_names_work_beside_the_old_ones(served, tmp_path):
    """KIP-1147 (Kafka 4.2): --reader-property, --formatter-property, --command-property
    and --command-config mean what --property, --producer-/--consumer-property and
    --producer.config/--consumer.config mean."""
    _, bootstrap = served
    assert cli("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "renamed",
               "--partitions", "1", "--replication-factor", "1")[0] == 0
    config = tmp_path / "producer.properties"
    config.write_text("compression.type=gzip\n")
    rc, out, err = cli("console-producer", "--bootstrap-server", bootstrap, "--topic", "renamed",
                       "--reader-property", "parse.key=true",
                       "--reader-property", "key.separator=:",
                       "--command-property", "acks=1", "--command-config", str(config),
                       stdin=f"k1:{'v' * 1000}\nk2:v2\n")
    assert (rc, out, err) == (0, "", "")
    cluster = served[0]
    with cluster.lock:
        first = next(iter(cluster.leader_replica("renamed", 0).log.batches()))
    # gzip, so --command-config was read (kafka-python sends a batch uncompressed only
    # when compressing would not make it smaller: not so for 1,000 v's).
    assert first.compression == 1
    lines, _ = consume(bootstrap, "renamed", "--from-beginning", "--max-messages", "2",
                       "--formatter-property", "print.key=true",
                       "--formatter-property", "key.separator=|",
                       "--command-property", "isolation.level=read_committed")
    assert lines == [f"k1|{'v' * 1000}", "k2|v2"]


def test_a_group_consumer_commits_what_it_printed_and_the_next_one_goes_on_from_there(served):
    _, bootstrap = served
    assert cli("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "tickets",
               "--partitions", "1", "--replication-factor", "3")[0] == 0
    produce_keyed(bootstrap, "tickets", [f"k{i}:t{i}" for i in range(6)])
    lines, _ = consume(bootstrap, "tickets", "--group", "desk", "--from-beginning",
                       "--max-messages", "4")
    assert lines == ["t0", "t1", "t2", "t3"]
    rc, out, _ = cli("consumer-groups", "--bootstrap-server", bootstrap, "--describe",
                     "--group", "desk")
    row = out.splitlines()[2].split()  # GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG
    assert rc == 0 and row[:6] == ["desk", "tickets", "0", "4", "6", "2"]
    lines, _ = consume(bootstrap, "tickets", "--group", "desk", "--timeout-ms", "1500")
    assert lines == ["t4", "t5"]


def test_groups_list_describe_lag_and_reset_replays_two_per_partition(served):
    cluster, bootstrap = served
    topic, group = "payments", "billing"
    assert cli("topics", "--bootstrap-server", bootstrap, "--create", "--topic", topic,
               "--partitions", "2", "--replication-factor", "3")[0] == 0
    produce_keyed(bootstrap, topic, KEYED)
    lines, _ = consume(bootstrap, topic, "--group", group, "--from-beginning",
                       "--max-messages", "8")
    assert sorted(lines) == sorted(line.split(":", 1)[1] for line in KEYED)
    produce_keyed(bootstrap, topic, ["zoe:latte", "yann:tea", "xia:mocha"])

    rc, out, _ = cli("consumer-groups", "--bootstrap-server", bootstrap, "--list")
    assert rc == 0 and group in out.split()

    rc, out, err = cli("consumer-groups", "--bootstrap-server", bootstrap, "--describe",
                       "--group", group)
    assert rc == 0 and err == f"\nConsumer group '{group}' has no active members.\n"
    assert out.startswith("\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  "
                          "LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            "
                          "CLIENT-ID\n")
    with cluster.lock:
        ends = {p.partition: p.high_watermark for p in cluster.describe_topic(topic).partitions}
        committed = {p: c.offset for (_, p), c in cluster.groups.offset_fetch(None, group)[1].items()}
    assert sum(committed.values()) == 8 and sum(ends.values()) == 11
    assert table(out) == [[group, topic, str(p), str(committed[p]), str(ends[p]),
                           str(ends[p] - committed[p]), "-", "-", "-"] for p in (0, 1)]

    # While a member is in the group, a reset is refused with Kafka's message.
    member = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    member.partitions_for_topic(topic)  # metadata before joining (see tests/wire/test_groups_wire)
    member.subscribe([topic])
    try:
        deadline = time.monotonic() + 15
        while not member.assignment() and time.monotonic() < deadline:
            member.poll(timeout_ms=100)
        assert member.assignment()
        rc, out, _ = cli("consumer-groups", "--bootstrap-server", bootstrap, "--describe",
                         "--group", group)
        assert {row[6] for row in table(out)} == {member._coordinator._generation.member_id}
        rc, out, err = cli("consumer-groups", "--bootstrap-server", bootstrap, "--reset-offsets",
                           "--group", group, "--topic", topic, "--to-earliest", "--execute")
        # As Kafka's tool: the refusal on stdout, the group skipped, exit status 0.
        assert (rc, out, err) == (0, f"\nError: Assignments can only be reset if the group "
                                     f"'{group}' is inactive, but the current state is Stable.\n",
                                  "")
    finally:
        member.close(autocommit=False)

    rc, out, _ = cli("consumer-groups", "--bootstrap-server", bootstrap, "--reset-offsets",
                     "--group", group, "--topic", topic, "--shift-by", "-2", "--dry-run")
    plan = {int(row[2]): int(row[3]) for row in table(out)}
    assert rc == 0 and plan == {p: committed[p] - 2 for p in (0, 1)}
    with cluster.lock:  # a dry run changes nothing
        assert {p: c.offset for (_, p), c in
                cluster.groups.offset_fetch(None, group)[1].items()} == committed
    with cluster.lock:  # the in-process admin plans the same: one implementation
        in_process = cluster.admin().reset_offsets(group, [topic], shift_by=-2)
        assert {tp.partition: o for tp, o in in_process.items()} == plan

    # --to-offset 0 is a scenario too (0 is not "no value").
    rc, out, _ = cli("consumer-groups", "--bootstrap-server", bootstrap, "--reset-offsets",
                     "--group", group, "--topic", topic, "--to-offset", "0", "--dry-run")
    assert rc == 0 and {int(row[2]): int(row[3]) for row in table(out)} == {0: 0, 1: 0}

    rc, out, _ = cli("consumer-groups", "--bootstrap-server", bootstrap, "--reset-offsets",
                     "--group", group, "--topic", topic, "--shift-by", "-2", "--execute")
    assert rc == 0 and {int(row[2]): int(row[3]) for row in table(out)} == plan

    # The group now replays two records per partition, and then the three new ones.
    lines, err = consume(bootstrap, topic, "--group", group, "--timeout-ms", "1500",
                         "--property", "print.partition=true")
    replayed: dict[int, list[str]] = {}
    for line in lines:
        partition, value = line.split("\t")
        replayed.setdefault(int(partition.removeprefix("Partition:")), []).append(value)
    with cluster.lock:
        for p in (0, 1):
            replica = cluster.leader_replica(topic, p)
            stored = [r.value.decode() for b in replica.log.read(0, replica.high_watermark, 1 << 20)
                      for r in b.iter_records()]
            assert replayed[p] == stored[plan[p]:], p
            assert len(stored[plan[p]:committed[p]]) == 2
    assert err == f"Processed a total of {len(lines)} messages\n" and len(lines) == 4 + 3


def test_unreachable_server_fails_in_one_line_within_seconds():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for argv in (["topics", "--list"], ["consumer-groups", "--list"],
                 ["console-consumer", "--topic", "t"], ["console-producer", "--topic", "t"]):
        started = time.monotonic()
        rc, out, err = cli(*argv, "--bootstrap-server", f"127.0.0.1:{port}", stdin="x\n")
        assert time.monotonic() - started < 8
        assert rc == 1 and out == "" and err.count("\n") == 1, (argv, err)
        assert "cannot connect to any bootstrap server" in err and "Connection refused" in err


def test_a_tool_run_in_process_leaves_kafka_pythons_logging_as_it_was(served, caplog):
    """A notebook or a test that runs a tool (a kafka-*.sh work-alike, or `minikafka kafka
    status` asking a node) still sees kafka-python's own log lines after."""
    from minikafka.realkafka.nodes import _ask

    cluster, bootstrap = served
    if "tool-logging" not in cluster.controller.topics:  # its own topic: any order, any worker
        cluster.create_topic("tool-logging", partitions=1, replication_factor=3)
    names = ("kafka", "kafka.conn", "kafka.client", "kafka.net", "kafka.net.manager")
    before = {n: (logging.getLogger(n).level, logging.getLogger(n).propagate,
                  list(logging.getLogger(n).handlers)) for n in names}
    assert cli("topics", "--bootstrap-server", bootstrap, "--list")[0] == 0
    assert "tool-logging" in _ask(bootstrap, "list_topics", 10.0)
    assert {n: (logging.getLogger(n).level, logging.getLogger(n).propagate,
                list(logging.getLogger(n).handlers)) for n in names} == before
    with caplog.at_level(logging.ERROR, logger="kafka.net.manager"):
        logging.getLogger("kafka.net.manager").error("Connection failed: seen")
    assert "Connection failed: seen" in caplog.text


def test_bad_flags_fail_in_one_line():
    rc, out, err = cli("topics", "--bootstrap-server", "localhost:9092", "--list", "--bogus")
    assert (rc, out) == (2, "")
    assert err == "minikafka topics: error: unrecognized arguments: --bogus " \
                  "(see minikafka topics --help)\n"
    rc, _, err = cli("topics", "--bootstrap-server", "localhost:9092", "--list", "--create")
    assert rc == 2 and "exactly one action" in err and err.count("\n") == 1
    rc, _, err = cli("consumer-groups", "--bootstrap-server", "localhost:9092", "--reset-offsets",
                     "--group", "g", "--topic", "t")
    assert rc == 2 and "--shift-by" in err and err.count("\n") == 1
    rc, _, err = cli("console-consumer", "--topic", "t")
    assert rc == 2 and "--bootstrap-server" in err and err.count("\n") == 1
    rc, _, err = cli("topics", "--bootstrap-server", "nohost", "--list")
    assert (rc, err) == (1, "Error while executing topic command : --bootstrap-server must be "
                            "HOST:PORT[,HOST:PORT...], got 'nohost'\n")


def test_dump_log_prints_a_segment_file(tmp_path):
    cluster = Cluster(brokers=1, seed=3, log_dir=tmp_path)
    cluster.create_topic("t", partitions=1, replication_factor=1)
    producer = cluster.producer(linger_ms=0)
    producer.send("t", key=b"k1", value=b"hello").get()
    producer.send("t", key=b"k2", value=b"world").get()
    [segment] = Path(tmp_path).glob("broker-1/t-0/*.log")
    rc, out, _ = cli("dump-log", "--files", str(segment), "--print-data-log")
    assert rc == 0
    lines = out.splitlines()
    assert lines[:2] == [f"Dumping {segment}", "Log starting offset: 0"]
    batches = [line for line in lines if line.startswith("baseOffset:")]
    assert len(batches) == 2 and all("isvalid: true" in b for b in batches)
    assert [line.split(" key: ")[1] for line in lines if line.startswith("| offset:")] == \
        ["k1 payload: hello", "k2 payload: world"]
    assert "Dumping" not in "\n".join(lines[1:])  # only the files named, as in Kafka
    rc, out, _ = cli("dump-log", "--files", str(segment))
    assert rc == 0 and "payload" not in out and out.count("baseOffset:") == 2
    # Index files are dumped by their suffix; anything else is skipped with a note.
    rc, out, _ = cli("dump-log", "--files", str(segment.with_suffix(".index")))
    assert (rc, out) == (0, f"Dumping {segment.with_suffix('.index')}\n"
                            f"{segment.with_suffix('.index')} is empty.\n")
    for _ in range(10):  # an index entry every index.interval.bytes (4096)
        producer.send("t", value=b"v" * 1000).get()
    index, timeindex = segment.with_suffix(".index"), segment.with_suffix(".timeindex")
    rc, out, err = cli("dump-log", "--files", f"{index},{timeindex},{tmp_path / 'notes.txt'}")
    assert (rc, err) == (0, f"Ignoring unknown file {tmp_path / 'notes.txt'}\n")
    lines = out.splitlines()
    assert lines[0] == f"Dumping {index}" and lines[-1] == f"Dumping {tmp_path / 'notes.txt'}"
    at = lines.index(f"Dumping {timeindex}")
    offsets = [line for line in lines[1:at] if line.startswith("offset: ")]
    stamps = [line for line in lines[at + 1:-1] if line.startswith("timestamp: ")]
    assert (len(offsets), len(stamps)) == (at - 1, len(lines) - at - 2)  # nothing else
    assert offsets and stamps
    rc, _, err = cli("dump-log", "--files", str(tmp_path / "missing.log"))
    assert (rc, err) == (1, f"Error: {tmp_path / 'missing.log'}: no such file\n")


def test_the_installed_command_reads_stdin_in_a_subprocess(served):
    """The console script as a student runs it: a pipe into console-producer."""
    cluster, bootstrap = served
    with cluster.lock:
        cluster.create_topic("piped", partitions=1, replication_factor=1)
    done = subprocess.run(
        [sys.executable, "-m", "minikafka.cli", "console-producer", "--bootstrap-server",
         bootstrap, "--topic", "piped"], input=b"one\ntwo\nthree\n", capture_output=True,
        timeout=30)
    assert done.returncode == 0, done.stderr.decode()
    with cluster.lock:
        replica = cluster.leader_replica("piped", 0)
        values = [r.value for b in replica.log.read(0, replica.high_watermark, 1 << 20)
                  for r in b.iter_records()]
    assert values == [b"one", b"two", b"three"]


def test_consumer_groups_describes_a_kip848_group(served):
    """A consumer group of type consumer (confluent-kafka, group.protocol=consumer):
    --describe, --state and --members --verbose read it with ConsumerGroupDescribe."""
    from confluent_kafka import Consumer

    cluster, bootstrap = served
    topic, group = "kip848-orders", "kip848-billing"
    assert cli("topics", "--bootstrap-server", bootstrap, "--create", "--topic", topic,
               "--partitions", "2", "--replication-factor", "3")[0] == 0
    member = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                       "group.protocol": "consumer", "client.id": "ck"})
    member.subscribe([topic])
    try:
        deadline = time.monotonic() + 30
        while len(member.assignment()) < 2:
            assert time.monotonic() < deadline, "no assignment"
            member.poll(0.1)
        with cluster.lock:
            [member_id] = cluster.groups.groups[group].members
        rc, out, _ = cli("consumer-groups", "--bootstrap-server", bootstrap, "--describe",
                         "--group", group)
        assert rc == 0
        assert [row[1:3] + row[6:] for row in table(out)] == [
            [topic, "0", member_id, "/127.0.0.1", "ck"], [topic, "1", member_id, "/127.0.0.1", "ck"]]
        rc, out, _ = cli("consumer-groups", "--bootstrap-server", bootstrap, "--describe",
                         "--group", group, "--state")
        assert rc == 0 and table(out)[0][-3:] == ["uniform", "Stable", "1"]
        rc, out, _ = cli("consumer-groups", "--bootstrap-server", bootstrap, "--describe",
                         "--group", group, "--members", "--verbose")
        assert rc == 0 and table(out) == [[group, member_id, "/127.0.0.1", "ck", "2", "2",
                                           f"{topic}:0,1", "2", f"{topic}:0,1"]]
        # DescribeGroups calls the group Dead: the reset asks ConsumerGroupDescribe and is
        # refused up front with Kafka's message, in the tool and in the in-process admin.
        refusal = (f"Assignments can only be reset if the group '{group}' is inactive, but "
                   "the current state is Stable.")
        rc, out, err = cli("consumer-groups", "--bootstrap-server", bootstrap,
                           "--reset-offsets", "--group", group, "--topic", topic,
                           "--to-earliest", "--execute")
        assert (rc, out, err) == (0, f"\nError: {refusal}\n", ""), (out, err)
        with cluster.lock:
            admin = cluster.admin()
            assert [(r.topic, r.partition, r.consumer_id)
                    for r in admin.describe_consumer_group(group)] == [
                (topic, 0, member_id), (topic, 1, member_id)]
            with pytest.raises(NonEmptyGroupError, match=re.escape(refusal)):
                admin.reset_offsets(group, [topic], to_earliest=True, execute=True)
            assert cluster.groups.offset_fetch(None, group, None)[1] == {}
    finally:
        member.close()


def test_groups_list_leaves_share_groups_out_as_kafka_does(served):
    """kafka-consumer-groups --list asks for consumer groups only (types classic and
    consumer): a share group is kafka-share-groups' to list."""
    cluster, bootstrap = served
    topic = "audit-log"
    assert cli("topics", "--bootstrap-server", bootstrap, "--create", "--topic", topic)[0] == 0
    with cluster.lock:
        share = cluster.share_consumer("auditors", [topic])
        share.poll(timeout_ms=200)
        assert "auditors" in cluster.share_groups.groups
    try:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        try:  # ListGroups without a filter does answer with the share group
            assert "auditors" in {g["group_id"] for g in admin.list_groups()}
        finally:
            admin.close()
        rc, out, _ = cli("consumer-groups", "--bootstrap-server", bootstrap, "--list")
        assert rc == 0 and "auditors" not in out.split()
        rc, out, _ = cli("consumer-groups", "--bootstrap-server", bootstrap, "--list",
                         "--state")
        assert rc == 0 and "auditors" not in {row[0] for row in table("\n" + out)}
    finally:
        with cluster.lock:
            share.close()


class _RebalancingConsumer:
    """A consumer whose first `refusals` commits meet a rebalance (REBALANCE_IN_PROGRESS)."""

    def __init__(self, refusals: int, poll_error: Exception | None = None) -> None:
        self.refusals, self.polls, self.committed = refusals, 0, None
        self.poll_error = poll_error

    def commit(self, offsets):
        from kafka.errors import RebalanceInProgressError

        if self.refusals:
            self.refusals -= 1
            raise RebalanceInProgressError()
        self.committed = {tp: o.offset for tp, o in offsets.items()}

    def poll(self, timeout_ms, max_records):
        self.polls += 1
        if self.poll_error is not None:
            raise self.poll_error
        return {}


def test_console_consumer_commits_what_it_printed_through_a_rebalance(capsys, monkeypatch):
    """--group: the final commit of the records printed survives a rebalance (the member
    rejoins with a poll and commits again); past the deadline it says so."""
    from minikafka.tools import console_consumer

    consumer = _RebalancingConsumer(refusals=2)
    console_consumer._commit(consumer, {("t", 0): 10, ("t", 1): 4})
    assert (consumer.committed, consumer.polls) == ({("t", 0): 10, ("t", 1): 4}, 2)
    assert capsys.readouterr().err == ""

    from kafka.errors import KafkaConnectionError

    lost = _RebalancingConsumer(refusals=1, poll_error=KafkaConnectionError())
    console_consumer._commit(lost, {("t", 0): 10})  # the rejoin fails: said, not raised
    assert lost.committed is None
    assert "(KafkaConnectionError); the group will read" in capsys.readouterr().err

    monkeypatch.setattr(console_consumer, "COMMIT_TIMEOUT_S", 0)
    stuck = _RebalancingConsumer(refusals=1000)
    console_consumer._commit(stuck, {("t", 0): 10})
    assert stuck.committed is None
    assert capsys.readouterr().err == ("[WARN] could not commit the offsets printed "
                                       "(RebalanceInProgressError); the group will read those "
                                       "records again\n")
