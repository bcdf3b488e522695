"""`__transaction_state` values as Kafka's own codec reads and writes them.

tests/java/TxnLogValues.java runs Kafka 4.4.0's generated TransactionLogValue: it decodes
the values minikafka's coordinator writes (versions 0 and 1, tagged fields included) and
encodes the same fields, which must be minikafka's bytes exactly; minikafka decodes them
back to the same transaction."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from minikafka.core.transactions import (
    COMPLETE_ABORT,
    EMPTY,
    ONGOING,
    PREPARE_COMMIT,
    TV_1,
    TV_2,
    TransactionMetadata,
)
from minikafka.core.txn_log import STATUS, decode, txn_key, txn_value

from .jvm import compile_java, kafka_classpath, run_java

pytestmark = pytest.mark.real_kafka
SOURCE = Path(__file__).resolve().parents[1] / "java" / "TxnLogValues.java"
NOW = 1_700_000_123_456

CASES = {
    "empty, version 1 client": TransactionMetadata("a", 1000, 0, 60_000, EMPTY, set(), set(), 0),
    "ongoing, two topics": TransactionMetadata(
        "b", 1001, 5, 900_000, ONGOING, {("orders", 0), ("orders", 2), ("audit", 1)}, set(),
        NOW - 10),
    "version 2, after an epoch overflow": TransactionMetadata(
        "c", 2002, 0, 60_000, PREPARE_COMMIT, {("orders", 1)}, set(), NOW - 5,
        previous_producer_id=1002, client_version=TV_2),
    "version 2, next producer id allocated": TransactionMetadata(
        "d", 1003, 32767, 60_000, COMPLETE_ABORT, set(), set(), NOW - 1,
        next_producer_id=2003, client_version=TV_2),
}


def kafka_fields(meta: TransactionMetadata, version: int) -> dict:
    """The fields TransactionLogValueJsonConverter shows for `meta` at `version` (tagged
    fields only when not their default, as Kafka writes them)."""
    topics: dict[str, list[int]] = {}
    for topic, p in sorted(meta.partitions):
        topics.setdefault(topic, []).append(p)
    fields = {"producerId": meta.producer_id, "producerEpoch": meta.producer_epoch,
              "transactionTimeoutMs": meta.timeout_ms, "transactionStatus": STATUS[meta.state],
              "transactionPartitions": [{"topic": t, "partitionIds": ps}
                                        for t, ps in topics.items()],
              "transactionLastUpdateTimestampMs": NOW,
              "transactionStartTimestampMs": meta.started_ms}
    if version >= 1:
        if meta.previous_producer_id != -1:
            fields["previousProducerId"] = meta.previous_producer_id
        if meta.next_producer_id != -1:
            fields["nextProducerId"] = meta.next_producer_id
        if meta.client_version >= TV_2:
            fields["clientTransactionVersion"] = TV_2
    return fields


@pytest.fixture(scope="module")
def kafka_codec():
    classes = compile_java([SOURCE])

    def run(lines: list[str]) -> list[str]:
        done = run_java("TxnLogValues", classpath=kafka_classpath(classes),
                        input="\n".join(lines) + "\n")
        assert done.returncode == 0, done.stderr[-3000:]
        out = done.stdout.splitlines()
        assert len(out) == len(lines), done.stdout
        return out
    return run


def test_kafka_reads_what_minikafka_writes_and_writes_the_same_bytes(kafka_codec):
    ours = {(name, v): txn_value(meta, NOW, v) for name, meta in CASES.items() for v in (0, 1)}
    decoded = kafka_codec([f"decode {raw.hex()}" for raw in ours.values()])
    encoded = kafka_codec([f"encode {v} {json.dumps(kafka_fields(CASES[name], v))}"
                           for name, v in ours])
    for (name, v), raw, seen, theirs in zip(ours, ours.values(), decoded, encoded):
        fields = json.loads(seen)
        fields["transactionPartitions"] = fields["transactionPartitions"] or []
        assert fields == kafka_fields(CASES[name], v), (name, v)
        assert bytes.fromhex(theirs) == raw, (name, v)


def test_minikafka_reads_kafkas_values_back_to_the_same_transaction(kafka_codec):
    encoded = kafka_codec([f"encode 1 {json.dumps(kafka_fields(meta, 1))}"
                           for meta in CASES.values()])
    for meta, theirs in zip(CASES.values(), encoded):
        txn_id, back = decode(txn_key(meta.transactional_id), bytes.fromhex(theirs))
        assert txn_id == meta.transactional_id and back is not None
        assert (back.producer_id, back.producer_epoch, back.timeout_ms, back.state,
                back.partitions, back.started_ms) == (
            meta.producer_id, meta.producer_epoch, meta.timeout_ms, meta.state,
            meta.partitions, meta.started_ms)
        assert (back.previous_producer_id, back.next_producer_id) == (
            meta.previous_producer_id, meta.next_producer_id)
        assert back.client_version == (TV_2 if meta.client_version >= TV_2 else TV_1)
