"""One broker, one API, for Metadata (key 3) and DescribeCluster (key 60): the admin's
describe_cluster, describe_topics and list_topics, and a producer's Metadata that
auto-creates a topic, through the in-process clients and through kafka-python against
`minikafka serve`, on the same seeded cluster. Both doors call core.api.metadata and
core.api.describe_cluster, so both must observe the same thing."""
from __future__ import annotations

import pytest

from .doors import Door, through_both
from .test_parity import same_everywhere

pytestmark = [pytest.mark.interop, pytest.mark.timeout(120)]


def _without_endpoints(description: dict) -> dict:
    """A broker's host and port are the door's own (an in-process broker has no socket);
    the operations come as a list in set order from kafka-python."""
    out = dict(description, authorized_operations=sorted(description["authorized_operations"]))
    out["brokers"] = [{k: v for k, v in b.items() if k not in ("host", "port")}
                      for b in description["brokers"]]
    return out


def _cluster_scenario(door: Door) -> dict:
    admin = door.admin()
    before = _without_endpoints(admin.describe_cluster())
    door.setup(lambda c: c.stop_broker(3))
    door.wait_until(lambda c: c.controller.brokers[3].fenced, "broker 3 fenced")
    # a fresh admin: kafka-python's does not retry a request to the broker that stopped
    # (a Java admin would); its bootstrap list skips the stopped broker
    after = _without_endpoints(door.admin().describe_cluster())
    return {"before": before, "after": after}


def test_describe_cluster():
    """DescribeCluster with fenced brokers: the seeded cluster id, the controller, the
    brokers, a stopped broker listed as fenced once the controller fences it."""
    seen = same_everywhere(through_both(_cluster_scenario))
    assert [b["broker_id"] for b in seen["before"]["brokers"]] == [1, 2, 3]
    assert not any(b["is_fenced"] for b in seen["before"]["brokers"])
    assert [(b["broker_id"], b["is_fenced"]) for b in seen["after"]["brokers"]] == \
        [(1, False), (2, False), (3, True)]
    assert seen["before"]["controller_id"] in (1, 2, 3)
    assert "DESCRIBE" in seen["before"]["authorized_operations"]
    assert len(seen["before"]["cluster_id"]) == 22  # Kafka's base64 UUID


def _topics_scenario(door: Door) -> dict:
    door.setup(lambda c: c.create_topic("shown", 2, 2))
    door.setup(lambda c: c.create_topic("other", 1, 3))
    admin = door.admin()

    def described(names):
        return [dict(t, authorized_operations=sorted(t["authorized_operations"] or []))
                for t in admin.describe_topics(names)]
    return {"listed": sorted(admin.list_topics()),
            "named": described(["shown", "nope", "no way"]),
            "all": sorted((t["name"], len(t["partitions"])) for t in described(None)),
            "created": door.setup(lambda c: sorted(c.controller.topics))}


def test_describe_topics_and_list_topics():
    """Metadata without auto-creation: a topic's partitions with leader, epoch, replicas,
    ISR; an unknown topic UNKNOWN_TOPIC_OR_PARTITION (3), an illegal name
    INVALID_TOPIC_EXCEPTION (17), and neither is created."""
    seen = same_everywhere(through_both(_topics_scenario))
    assert seen["listed"] == ["other", "shown"]
    shown, nope, illegal = seen["named"]
    assert shown["error_code"] == 0 and shown["topic_id"]
    assert [(p["partition_index"], len(p["replica_nodes"]), p["isr_nodes"] == p["replica_nodes"],
             p["leader_id"] == p["replica_nodes"][0]) for p in shown["partitions"]] == \
        [(0, 2, True, True), (1, 2, True, True)]
    assert "DESCRIBE" in shown["authorized_operations"]
    assert (nope["error_code"], nope["partitions"]) == (3, [])
    assert (illegal["error_code"], illegal["partitions"]) == (17, [])
    assert seen["all"] == [("other", 1), ("shown", 2)]
    assert seen["created"] == ["other", "shown"]


def _auto_create_scenario(door: Door) -> dict:
    producer = door.producer()
    producer.send("autocreated", b"v").get(timeout=30)
    producer.flush()
    admin = door.admin()
    topic, = admin.describe_topics(["autocreated"])
    return {"partitions": sorted(producer.partitions_for("autocreated")),
            "described": (topic["error_code"], len(topic["partitions"]),
                          sorted(len(p["replica_nodes"]) for p in topic["partitions"])),
            "journal": door.setup(lambda c: [e.fields["topic"] for e in
                                             c.journal.of_kind("topic.created")])}


def test_metadata_auto_creates_a_topic_for_a_producer():
    """A producer's Metadata for an unknown topic creates it with num.partitions and
    default.replication.factor, 1 and 1 unless configured (auto.create.topics.enable,
    Kafka's default)."""
    assert same_everywhere(through_both(_auto_create_scenario)) == {
        "partitions": [0], "described": (0, 1, [1]),
        "journal": ["autocreated"]}
