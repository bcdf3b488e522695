"""Lesson 23 against real Apache Kafka 4.4.0's own kafka-transactions.sh
(org.apache.kafka.tools.TransactionsCommand), run against `minikafka serve` and against the
native cluster alike: a producer's open transaction pins the LSO and stalls read_committed;
list, describe and describe-producers show it; find-hanging does not list it (its
coordinator will end it); abort --start-offset writes the marker (WriteTxnMarkers) and the
committed record behind it becomes readable. Then the lesson's late writes, the same on
both: refused by partition verification (KIP-890); with it switched off, appended, found
by find-hanging and aborted; fenced behind a marker at the bumped epoch. And a transactional
offset commit the same partition verification refuses when its group was never added."""
from __future__ import annotations

import re
import time
import uuid

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import (
    AbortTransactionSpec,
    ConfigResource,
    ConfigResourceType,
    KafkaAdminClient,
    NewTopic,
)
from kafka.net.compat import KafkaNetClient
from kafka.protocol.consumer import OffsetFetchRequest
from kafka.protocol.metadata import FindCoordinatorRequest
from kafka.protocol.producer import TxnOffsetCommitRequest
from kafka.protocol.producer.produce import ProduceRequest
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.structs import TopicPartition

from minikafka.cluster import Cluster
from minikafka.core.offsets import partition_for

from .jvm import run_java, tools_jvm

pytestmark = [pytest.mark.real_kafka, pytest.mark.slow, pytest.mark.timeout(600)]

HOUR_MS = 3_600_000
VERIFICATION = "transaction.partition.verification.enable"


@pytest.fixture(scope="module", autouse=True)
def warm_tools():
    """The module's tools share one warm JVM (jvm.tools_jvm), stopped by pid at the end."""
    with tools_jvm():
        yield


@pytest.fixture(scope="module")
def served():
    with Cluster(brokers=3).serve(port=0) as server:
        yield server


# The native cluster is asked for by name inside the fixture, where the conftest's grouping
# cannot see it: the mark puts those tests on the worker that holds the cluster's ports.
@pytest.fixture(params=["serve", pytest.param("native", marks=pytest.mark.xdist_group("native_kafka"))])
def target(request):
    if request.param == "serve":
        return request.getfixturevalue("served").bootstrap_servers
    return request.getfixturevalue("real_kafka").bootstrap_servers


def transactions(bootstrap: str, *args: str, rc: int = 0) -> list[list[str]]:
    done = run_java("org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server",
                    bootstrap, *args)
    assert done.returncode == rc, f"{args}: rc={done.returncode}\n{done.stdout}\n{done.stderr}"
    return [line.split() for line in done.stdout.splitlines()]


def read_committed(bootstrap: str, topic: str) -> list[bytes]:
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                             isolation_level="read_committed", consumer_timeout_ms=4_000)
    try:
        return [r.value for r in consumer]
    finally:
        consumer.close()


def test_a_stuck_transaction_listed_described_and_aborted(target):
    topic, txn_id = f"pay-{uuid.uuid4().hex[:8]}", f"checkout-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=target)
    admin.create_topics([NewTopic(topic, 1, 3)])
    admin.close()
    stuck = KafkaProducer(bootstrap_servers=target, transactional_id=txn_id)
    refunds = KafkaProducer(bootstrap_servers=target, transactional_id=txn_id + "-refunds")
    try:
        stuck.init_transactions()
        stuck.begin_transaction()
        # An hour-old timestamp: find-hanging ages a transaction by its last batch's.
        stuck.send(topic, b"pay-1", timestamp_ms=int(time.time() * 1000) - HOUR_MS).get(30)
        refunds.init_transactions()
        refunds.begin_transaction()
        refunds.send(topic, b"refund-1").get(30)
        refunds.commit_transaction()
        assert read_committed(target, topic) == []  # the LSO is stuck at offset 0

        listed = transactions(target, "list")
        assert listed[0] == ["TransactionalId", "Coordinator", "ProducerId", "TransactionState"]
        [row] = [r for r in listed[1:] if r[0] == txn_id]
        assert row[3] == "Ongoing"
        described = transactions(target, "describe", "--transactional-id", txn_id)
        assert described[1][4] == "Ongoing" and described[1][-1] == f"{topic}-0"
        producers = transactions(target, "describe-producers", "--topic", topic,
                                 "--partition", "0")
        assert producers[0][-1] == "CurrentTransactionStartOffset"
        assert sorted(r[-1] for r in producers[1:]) == ["0", "None"]
        # The coordinator's transaction includes the partition: not hanging.
        hanging = transactions(target, "find-hanging", "--topic", topic,
                               "--max-transaction-timeout", "1")
        assert hanging[0][:2] == ["Topic", "Partition"] and hanging[1:] == []

        missing = transactions(target, "abort", "--topic", topic, "--partition", "0",
                               "--start-offset", "7", rc=1)
        assert missing == []
        transactions(target, "abort", "--topic", topic, "--partition", "0",
                     "--start-offset", "0")
        deadline = time.monotonic() + 20
        while (seen := read_committed(target, topic)) != [b"refund-1"] \
                and time.monotonic() < deadline:
            time.sleep(0.5)
        assert seen == [b"refund-1"]
        after = transactions(target, "describe-producers", "--topic", topic, "--partition", "0")
        assert [r[-1] for r in after[1:]] == ["None", "None"]
    finally:
        for producer in (stuck, refunds):
            producer.close(timeout=5)


def late_write(producer: KafkaProducer, bootstrap: str, topic: str, partition: int,
               value: bytes, sequence: int, timestamp_ms: int, message: list | None = None
               ) -> int:
    """The Produce request of `producer`'s transaction that was delayed in the network and
    reaches the partition's leader only now (Produce v9, as kafka-python sends it, with the
    producer's id and epoch); returns the partition's error code (its message appended to
    `message`, if given)."""
    state = producer._transaction_manager.producer_id_and_epoch
    batch = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=True,
                                      producer_id=state.producer_id,
                                      producer_epoch=state.epoch, base_sequence=sequence,
                                      batch_size=1 << 20)
    batch.append(0, timestamp=timestamp_ms, key=None, value=value, headers=[])
    data = ProduceRequest.TopicProduceData
    request = ProduceRequest(
        transactional_id=producer.config["transactional_id"], acks=-1, timeout_ms=30_000,
        topic_data=[data(name=topic, partition_data=[data.PartitionProduceData(
            index=partition, records=bytes(batch.build()))])], max_version=9)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    [described] = admin.describe_topics([topic])
    admin.close()
    [leader] = [p["leader_id"] for p in described["partitions"]
                if p["partition_index"] == partition]
    client = KafkaNetClient(bootstrap_servers=bootstrap)
    try:
        client.check_version()
        response = client.send_and_receive(leader, request)
    finally:
        client.close()
    answer = response.responses[0].partition_responses[0]
    if message is not None:
        message.append(answer.error_message)
    return answer.error_code


def finalized_transaction_version(bootstrap: str) -> str:
    """kafka-features.sh describe: transaction.version's finalized level."""
    done = run_java("org.apache.kafka.tools.FeatureCommand", "--bootstrap-server", bootstrap,
                    "describe")
    assert done.returncode == 0, done.stdout + done.stderr
    [line] = [line for line in done.stdout.splitlines()
              if "Feature: transaction.version" in line]
    return re.search(r"FinalizedVersionLevel: (\d+)", line).group(1)


def ended(admin: KafkaAdminClient, txn_id: str) -> str:
    """The coordinator's state of `txn_id` once it has written its markers: kafka-python's
    abort_transaction returns at PrepareAbort, and Kafka writes the markers after."""
    deadline = time.monotonic() + 20
    while True:
        state = admin.describe_transactions([txn_id])[txn_id].state
        state = getattr(state, "value", state)
        if not state.startswith("Prepare") or time.monotonic() > deadline:
            return state
        time.sleep(0.2)


def test_transaction_version_finalized(target):
    """A cluster formatted on 4.4.0 finalizes transaction version 2, and so does minikafka
    (tests/realkafka/test_transaction_versions.py compares the epochs it brings)."""
    assert finalized_transaction_version(target) == "2"


def verification(admin: KafkaAdminClient, bootstrap: str, enable: bool | None) -> None:
    """kafka-configs.sh --entity-type brokers --entity-default: set (None: delete) the
    cluster-wide transaction.partition.verification.enable, and wait until every broker
    reports it."""
    change = ("--delete-config", VERIFICATION) if enable is None else (
        "--add-config", f"{VERIFICATION}={str(enable).lower()}")
    done = run_java("org.apache.kafka.tools.ConfigCommand", "--bootstrap-server", bootstrap,
                    "--entity-type", "brokers", "--entity-default", "--alter", *change)
    assert done.returncode == 0, done.stdout + done.stderr
    want = "true" if enable is None else str(enable).lower()
    brokers = [str(b["broker_id"]) for b in admin.describe_cluster()["brokers"]]
    deadline = time.monotonic() + 20
    while True:
        seen = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, b)
                                       for b in brokers], config_filter="all")["broker"]
        values = [seen[b][VERIFICATION]["value"] for b in brokers]
        if values == [want] * len(brokers):
            return
        assert time.monotonic() < deadline, f"{VERIFICATION}: {values}, not {want}"
        time.sleep(0.5)


@pytest.mark.parametrize("verify", [True, False], ids=["verified", "not-verified"])
def test_a_late_write(target, verify):
    """Lesson 23's late writes, from a kafka-python producer (transaction version 1: Produce
    v9, no epoch bump at commit or abort), the same on minikafka and Kafka 4.4.0. A late
    Produce to a partition outside the ended transaction: the leader verifies it with the
    coordinator (KIP-890, transaction.partition.verification.enable, on by default) and
    refuses it with INVALID_TXN_STATE (Produce below v11 knows no TRANSACTION_ABORTABLE),
    so nothing hangs. With verification off, as on brokers before 3.6, the leader appends
    it; find-hanging lists it and abort clears it. A late Produce behind a marker written
    with the bumped epoch, as a version-2 coordinator writes it: INVALID_PRODUCER_EPOCH."""
    topic, txn_id = f"late-{uuid.uuid4().hex[:8]}", f"refunds-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=target)
    admin.create_topics([NewTopic(topic, 2, 3)])
    producer = KafkaProducer(bootstrap_servers=target, transactional_id=txn_id)
    hour_ago = int(time.time() * 1000) - HOUR_MS
    try:
        if not verify:
            verification(admin, target, False)
        producer.init_transactions()
        producer.begin_transaction()
        producer.send(topic, b"refund-9", partition=0).get(30)
        producer.abort_transaction()
        assert ended(admin, txn_id) == "CompleteAbort"
        said: list = []
        late = late_write(producer, target, topic, 1, b"refund-9 (late)", 0, hour_ago, said)
        hanging = transactions(target, "find-hanging", "--topic", topic,
                               "--max-transaction-timeout", "1")[1:]
        producers = transactions(target, "describe-producers", "--topic", topic,
                                 "--partition", "1")[1:]
        if verify:
            assert late == 48  # INVALID_TXN_STATE: partition verification refused it
            assert said == ["Partition was not added to the transaction"]
            assert producers == [] and hanging == []
        else:
            assert late == 0
            assert [r[-1] for r in producers] == ["0"]  # its open transaction starts at 0
            assert [r[:2] + r[5:6] for r in hanging] == [[topic, "1", "0"]]
            transactions(target, "abort", "--topic", topic, "--partition", "1",
                         "--start-offset", "0")
            assert transactions(target, "find-hanging", "--topic", topic,
                                "--max-transaction-timeout", "1")[1:] == []

        producer.begin_transaction()
        producer.send(topic, b"refund-10", partition=0).get(30)
        state = producer._transaction_manager.producer_id_and_epoch
        # The coordinator epoch the partition last saw, as kafka-transactions.sh abort takes
        # it from DescribeProducers: it grows each time __transaction_state changes leader
        # (a node stopped by another test), and an older one is TRANSACTION_COORDINATOR_FENCED.
        tp0 = TopicPartition(topic, 0)
        [active] = admin.describe_producers([tp0])[tp0].active_producers
        admin.abort_transaction(AbortTransactionSpec(tp0, state.producer_id, state.epoch + 1,
                                                     active.coordinator_epoch))
        assert late_write(producer, target, topic, 0, b"refund-10 (late)", 2, hour_ago) == 47
    finally:
        if not verify:
            verification(admin, target, None)
        admin.close()
        producer.close(timeout=5)


def find_coordinator(client: KafkaNetClient, group_id: str) -> int:
    """FindCoordinator v3 for a group, retried while Kafka creates __consumer_offsets (the
    first lookup of a fresh cluster answers COORDINATOR_NOT_AVAILABLE)."""
    deadline = time.monotonic() + 30
    while True:
        answer = client.send_and_receive(client.least_loaded_node(), FindCoordinatorRequest(
            key=group_id, key_type=0, min_version=3, max_version=3))
        if answer.error_code != 15 or time.monotonic() > deadline:
            assert answer.error_code == 0, answer
            return answer.node_id
        time.sleep(0.5)


def committed(client: KafkaNetClient, coordinator: int, group_id: str, topic: str,
              require_stable: bool) -> tuple[int, int]:
    """OffsetFetch v7 for partition 0: (committed offset, error code)."""
    answer = client.send_and_receive(coordinator, OffsetFetchRequest(
        group_id=group_id, require_stable=require_stable, min_version=7, max_version=7,
        topics=[OffsetFetchRequest.OffsetFetchRequestTopic(name=topic, partition_indexes=[0])]))
    [partition] = answer.topics[0].partitions
    return partition.committed_offset, partition.error_code


def abort_open_transactions(bootstrap: str, topic: str, partition: int) -> None:
    """kafka-transactions.sh abort for each transaction describe-producers shows open."""
    producers = transactions(bootstrap, "describe-producers", "--topic", topic,
                             "--partition", str(partition))[1:]
    for start in [r[-1] for r in producers if r[-1] != "None"]:
        transactions(bootstrap, "abort", "--topic", topic, "--partition", str(partition),
                     "--start-offset", start)


@pytest.mark.parametrize(("version", "verify", "code"), [
    (3, True, 48), (4, True, 120), (5, True, 0), (3, False, 0)],
    ids=["v3-verified", "v4-verified", "v5-added", "v3-not-verified"])
def test_offsets_without_add_offsets_to_txn(target, version, verify, code):
    """A TxnOffsetCommit whose group's __consumer_offsets partition was never added with
    AddOffsetsToTxn, the same on minikafka and Kafka 4.4.0. The group coordinator verifies
    it with the transaction coordinator (KIP-890): INVALID_TXN_STATE at v3 (kafka-python's
    version), TRANSACTION_ABORTABLE at v4 (the Java client's before transaction version 2),
    and no offset is written; from v5 (transaction version 2's, even from this version-1
    producer) it adds the partition and the commit moves the offset. With verification
    off it is written but no marker reaches that partition: after the commit the group's
    committed offset has not moved and a require_stable OffsetFetch answers
    UNSTABLE_OFFSET_COMMIT (88)."""
    suffix = uuid.uuid4().hex[:8]
    topic, txn_id, group = f"eos-{suffix}", f"etl-{suffix}", f"readers-{suffix}"
    admin = KafkaAdminClient(bootstrap_servers=target)
    admin.create_topics([NewTopic(topic, 1, 3)])
    producer = KafkaProducer(bootstrap_servers=target, transactional_id=txn_id)
    client = KafkaNetClient(bootstrap_servers=target)
    coordinator = None
    try:
        if not verify:
            verification(admin, target, False)
        producer.init_transactions()
        producer.begin_transaction()
        producer.send(topic, b"out-1", partition=0).get(30)
        state = producer._transaction_manager.producer_id_and_epoch
        client.check_version()
        coordinator = find_coordinator(client, group)
        Topic = TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic
        answer = client.send_and_receive(coordinator, TxnOffsetCommitRequest(
            transactional_id=txn_id, group_id=group, producer_id=state.producer_id,
            producer_epoch=state.epoch, generation_id=-1, member_id="", group_instance_id=None,
            topics=[Topic(name=topic, partitions=[Topic.TxnOffsetCommitRequestPartition(
                partition_index=0, committed_offset=1, committed_leader_epoch=-1,
                committed_metadata="")])], min_version=version, max_version=version))
        assert [p.error_code for t in answer.topics for p in t.partitions] == [code]
        producer.commit_transaction()
        assert ended(admin, txn_id) == "CompleteCommit"
        assert read_committed(target, topic) == [b"out-1"]
        added = code == 0 and verify  # v5: the group coordinator added the partition
        assert committed(client, coordinator, group, topic, False) == (1 if added else -1, 0)
        assert committed(client, coordinator, group, topic, True) == \
            (1 if added else -1, 0 if verify else 88)
    finally:
        if not verify:
            verification(admin, target, None)
            if coordinator is not None:  # Kafka's hanging offsets, aborted as lesson 23 does
                partitions = admin.describe_topics(["__consumer_offsets"])[0]["partitions"]
                abort_open_transactions(target, "__consumer_offsets",
                                        partition_for(group, len(partitions)))
        client.close()
        producer.close(timeout=5)
        admin.close()
