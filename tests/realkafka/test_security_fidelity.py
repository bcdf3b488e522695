"""One broker file with SASL and ACLs (docs/server-sasl.properties), two brokers: `minikafka
serve` and Apache Kafka 4.4.0's three native nodes (`minikafka kafka up --config`). The
same client steps run against each, and what the clients see must be the same: logins,
Kafka's error for a wrong password, a consumer refused by the group and then the topic,
allowed by prefixed ACLs, what kafka-acls lists, and a user without ALTER on the cluster
refused."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import uuid

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import (
    ACL,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    NewTopic,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from kafka.errors import (
    GroupAuthorizationFailedError,
    KafkaTimeoutError,
    TopicAuthorizationFailedError,
)

from minikafka.core.server_config import read_properties
from minikafka.realkafka.nodes import NativeKafka, broker_overrides

from .jvm import run_java
from .nodes_meanwhile import started_meanwhile

pytestmark = [pytest.mark.real_kafka, pytest.mark.slow, pytest.mark.timeout(900)]

# Ports: the real cluster after the session's (MINIKAFKA_TEST_KAFKA_PORT + 0..2), serve after it.
BASE = int(os.environ.get("MINIKAFKA_TEST_KAFKA_PORT", "9192"))
REAL_PORT, SERVE_PORT = BASE + 10, BASE + 20


def login(bootstrap: str, user: str, password: str | None = None) -> dict:
    return {"bootstrap_servers": bootstrap, "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": "PLAIN", "sasl_plain_username": user,
            "sasl_plain_password": password or f"{user}-secret"}


def observe(bootstrap: str) -> dict:
    """What a course's client steps see on the broker at `bootstrap`."""
    seen: dict = {}
    topic, group = f"orders-{uuid.uuid4().hex[:6]}", f"team-{uuid.uuid4().hex[:6]}"
    admin = KafkaAdminClient(**login(bootstrap, "admin"))
    admin.create_topics([NewTopic(topic, 1, 3)])
    producer = KafkaProducer(**login(bootstrap, "admin"), acks="all")
    producer.send(topic, b"order-1").get(timeout=30)
    producer.close()

    try:  # the error answer comes just before the close: kafka-python mostly sees the close
        KafkaAdminClient(**login(bootstrap, "alice", "wrong"), bootstrap_timeout_ms=3000)
        seen["wrong password"] = "logged in"
    except KafkaTimeoutError:
        seen["wrong password"] = "refused"

    alice = login(bootstrap, "alice")
    seen["alice sees"] = [t for t in KafkaAdminClient(**alice).list_topics()
                          if t.startswith("orders-")]

    def consume() -> list:
        consumer = KafkaConsumer(**alice, group_id=group, auto_offset_reset="earliest",
                                 consumer_timeout_ms=15000)
        consumer.assign([TopicPartition(topic, 0)])
        try:
            return [r.value for r in consumer]
        except (GroupAuthorizationFailedError, TopicAuthorizationFailedError) as exc:
            return [type(exc).__name__]
        finally:
            consumer.close()

    seen["no acl"] = consume()
    prefixed = ACLResourcePatternType.PREFIXED
    read_group = ACL("User:alice", "*", ACLOperation.READ, ACLPermissionType.ALLOW,
                     ResourcePattern(ResourceType.GROUP, "team-", prefixed))
    read_topic = ACL("User:alice", "*", ACLOperation.READ, ACLPermissionType.ALLOW,
                     ResourcePattern(ResourceType.TOPIC, "orders-", prefixed))
    # Real brokers learn new ACLs from the metadata log a moment after CreateAcls answers.
    seen["create group acl"] = admin.create_acls([read_group])
    time.sleep(1)
    seen["group acl only"] = consume()
    seen["create topic acl"] = admin.create_acls([read_topic])
    time.sleep(1)
    seen["both acls"] = consume()
    seen["alice sees with acl"] = [t == topic for t in KafkaAdminClient(**alice).list_topics()
                                   if t.startswith("orders-")]
    seen["alice creates acl"] = KafkaAdminClient(**alice).create_acls([read_topic])["failed"]

    config = ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config="
              'org.apache.kafka.common.security.plain.PlainLoginModule required '
              'username="admin" password="admin-secret";\n')
    path = f"/tmp/minikafka-acls-{uuid.uuid4().hex[:6]}.properties"
    with open(path, "w") as f:
        f.write(config)
    try:
        listed = run_java("org.apache.kafka.tools.AclCommand", "--bootstrap-server", bootstrap,
                          "--command-config", path, "--list", "--principal", "User:alice")
    finally:
        os.unlink(path)
    # the tool prints its resources in HashMap order, which changes from run to run, and its
    # "ACLs for principal" line heads whichever comes first: each goes in a block of its own
    blocks = re.split(r"\n\n|\n(?=Current ACLs for resource)", listed.stdout)
    seen["kafka-acls --list"] = (listed.returncode, sorted(b for b in blocks if b.strip()))
    [(_, removed, _)] = admin.delete_acls([ACLFilter(
        "User:alice", None, ACLOperation.ANY, ACLPermissionType.ANY,
        ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY))])
    seen["removed"] = sorted(map(repr, removed))
    admin.close()
    return seen


@pytest.fixture(scope="module")
def student_file(repo_root) -> dict[str, str]:
    return read_properties((repo_root / "docs" / "server-sasl.properties").read_text())


def test_the_same_sasl_acl_broker_file_on_minikafka_and_kafka(repo_root, student_file,
                                                              tmp_path):
    shared, _ = broker_overrides(student_file)
    kafka = NativeKafka(tmp_path / "kafka", port=REAL_PORT, overrides=shared)
    with started_meanwhile(kafka) as kafka_ready:
        serve = subprocess.Popen(
            [sys.executable, "-c", "from minikafka.cli import main; raise SystemExit(main())",
             "serve", str(repo_root / "docs" / "server-sasl.properties"), "--port",
             str(SERVE_PORT)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            for line in serve.stdout:
                if line.startswith("bootstrap servers:"):
                    break
            else:
                pytest.fail(f"minikafka serve did not start: rc={serve.wait()}")
            mini = observe(f"localhost:{SERVE_PORT}")
        finally:
            serve.terminate()
            serve.wait(30)
        kafka_ready()
        real = observe(kafka.bootstrap_servers)

    assert mini["wrong password"] == "refused"
    assert mini["no acl"] == ["GroupAuthorizationFailedError"]
    assert mini["group acl only"] == ["TopicAuthorizationFailedError"]
    assert mini["both acls"] == [b"order-1"]
    differences = {k: (mini[k], real.get(k)) for k in mini if mini[k] != real.get(k)}
    assert not differences
