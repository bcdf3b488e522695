"""What an outside user tried first: topic names that collide, DescribeCluster's operations,
an unknown group, keyless records in a batch to a compacted topic (KIP-467) and requests
that do not parse."""
from __future__ import annotations

import socket
import struct

from .doors import wait_until
from .registry import CONFLUENT, attempt, scenario


def _create_answer(door, name: str) -> list:
    """[error name, message] of CreateTopics for one name, from either door."""
    from kafka.errors import for_code
    result = door.admin().create_topics({name: {"num_partitions": 1, "replication_factor": 1}},
                                        raise_errors=False)
    if door.wire:
        t, = result["topics"]
        return [for_code(t["error_code"]).__name__, t["error_message"]]
    exc = result[name]
    return ["NoError", None] if exc is None else [type(exc).__name__,
                                                  exc.args[0] if exc.args else None]


@scenario("errors", lesson="01", in_process=True)
def colliding_topic_names(door):
    """'.' and '_' collide in metric names: a name equal to an existing one once they are
    unified is refused with INVALID_TOPIC_EXCEPTION; the same name is TOPIC_ALREADY_EXISTS."""
    base = door.topic("col")
    first = _create_answer(door, f"{base}.x")
    collide = _create_answer(door, f"{base}_x")
    same = _create_answer(door, f"{base}.x")
    return {label: [a[0], a[1] and a[1].replace(base, "<t>")]
            for label, a in (("first", first), ("collide", collide), ("same", same))}


@scenario("admin", lesson="08", in_process=True)
def describe_cluster_authorized_operations(door):
    """Without an authorizer every operation a cluster has is allowed: Kafka's
    AclEntry.supportedOperations(CLUSTER), which has no token operations."""
    return {"operations": sorted(door.admin().describe_cluster()["authorized_operations"])}


@scenario("groups", lesson="09", in_process=True)
def describe_an_unknown_group(door):
    """DescribeGroups of a group nobody joined: Dead, GROUP_ID_NOT_FOUND (KIP-1043)."""
    admin = door.admin()
    group = door.topic("nogroup")
    # A fresh Kafka answers COORDINATOR_NOT_AVAILABLE until __consumer_offsets exists.
    found = wait_until(lambda: (d := attempt(lambda: admin.describe_groups([group])[group]))
                       and "error" in d and d.get("group_state") and d, 30, 0.5)
    return {"state": found["group_state"],
            "error": found["error"] and found["error"].replace(group, "<g>")}


@scenario("produce", lesson="11", client=CONFLUENT)
def keyless_records_in_a_batch_to_a_compacted_topic(door):
    """100 records in one batch to a compacted topic, every tenth without a key: the
    broker refuses the batch and names the 10 bad records (KIP-467); librdkafka reports
    those as INVALID_RECORD and the other 90 of the batch as _INVALID_DIFFERENT_RECORD."""
    topic = door.topic("kip467")
    door.create_topic(topic, partitions=1, configs={"cleanup.policy": "compact"})
    producer = door.ck_producer(**{"linger.ms": 500, "batch.num.messages": 1000,
                                   "enable.idempotence": False})
    outcome: dict[str, int] = {}

    def report(error, _message):
        name = "delivered" if error is None else error.name()
        outcome[name] = outcome.get(name, 0) + 1
    for i in range(100):
        producer.produce(topic, key=None if i % 10 == 0 else f"k{i}".encode(),
                         value=f"v{i}".encode(), on_delivery=report)
    producer.flush(30)  # the refused records count as reported, not as left over
    return {"outcome": dict(sorted(outcome.items()))}


def _frame(api_key: int, version: int, body: bytes) -> bytes:
    """A request frame with a flexible (v2) header, client id 'probe'."""
    payload = struct.pack(">hhih", api_key, version, 7, 5) + b"probe\x00" + body
    return struct.pack(">i", len(payload)) + payload


_MALFORMED = {
    "list_groups_null_state": _frame(16, 4, b"\x02\x00\x00"),  # states_filter [null]
    "find_coordinator_null_key": _frame(10, 4, b"\x00\x02\x00\x00"),  # coordinator_keys [null]
    "metadata_truncated": _frame(3, 12, b"\x02"),
}


@scenario("errors", lesson="08", client="raw socket")
def malformed_requests_close_the_connection(door):
    """A null element in a non-nullable array, or a body cut short: the broker answers
    nothing and closes the connection."""
    host, port = door.bootstrap.split(",")[0].rsplit(":", 1)
    out = {}
    for name, frame in _MALFORMED.items():
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(frame)
            try:
                out[name] = "closed" if sock.recv(65536) == b"" else "answered"
            except ConnectionResetError:
                out[name] = "closed"
    return out


@scenario("groups", lesson="10", in_process=True)
def deleting_a_topic_drops_its_committed_offsets(door):
    """A group committed offsets for two topics; one is deleted: its offsets leave the
    group (Kafka's coordinator writes tombstones), the other's stay, and once both are
    gone the group is Empty with nothing committed. Found by the differential fuzzer."""
    from kafka import TopicPartition
    from kafka.structs import OffsetAndMetadata
    admin = door.admin()
    gone, kept, group = door.topic("gone"), door.topic("kept"), door.topic("group")
    for topic in (gone, kept):
        door.create_topic(topic, partitions=1, replication_factor=1)
    admin.alter_group_offsets(group, {TopicPartition(gone, 0): OffsetAndMetadata(3, "", -1),
                                      TopicPartition(kept, 0): OffsetAndMetadata(1, "", -1)})

    def committed():
        return {("gone" if tp.topic == gone else "kept"): o.offset
                for tp, o in admin.list_group_offsets(group)[group].items()}
    admin.delete_topics([gone])
    wait_until(lambda: "gone" not in committed(), 10)
    after_one = committed()
    admin.delete_topics([kept])
    wait_until(lambda: committed() == {}, 10)
    after_both = committed()
    return {"after_one": after_one, "after_both": after_both,
            "state": admin.describe_groups([group])[group]["group_state"]}
