"""Lesson 19's helpers (minikafka.course.security): the SASL messages a login sends, the
authorizer's answers in words, and a cluster's ACLs as a table."""
from __future__ import annotations

import pytest

from minikafka.cluster import Cluster
from minikafka.core.acl import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from minikafka.core.scram import ScramError
from minikafka.course.security import SASL_BROKER_FILE, acl_table, ask, sasl_exchange


@pytest.fixture
def cluster() -> Cluster:
    cluster = Cluster(brokers=1, seed=19)
    cluster.set_scram_credential("alice", "alice-secret")
    return cluster


def test_plain_sends_the_password_and_scram_a_proof(cluster: Cluster) -> None:
    plain = sasl_exchange(cluster, "PLAIN", "alice", "alice-secret")
    assert plain.column("message")[0] == "alice\\x00alice\\x00alice-secret"
    scram = sasl_exchange(cluster, "SCRAM-SHA-256", "alice", "alice-secret")
    assert scram.column("from") == ["client", "broker", "client", "broker"]
    messages = scram.column("message")
    assert messages[0] == "n,,n=alice,r=clientnonce0019"
    assert ",i=4096" in messages[1] and ",p=" in messages[2] and messages[3].startswith("v=")
    assert not any("alice-secret" in m for m in messages)
    assert sasl_exchange(cluster, "SCRAM-SHA-256", "alice", "alice-secret").rows == scram.rows
    with pytest.raises(ScramError):
        sasl_exchange(cluster, "SCRAM-SHA-256", "alice", "wrong")


def test_ask_says_who_may_do_what_and_why(cluster: Cluster) -> None:
    auth = cluster.enable_acls(super_users=["User:admin"])
    cluster.create_acls([AclBinding(ResourceType.TOPIC, "orders-", PatternType.PREFIXED,
                                    "User:alice", "*", AclOperation.READ,
                                    AclPermissionType.ALLOW)])
    assert ask(auth, "User:alice", "read", "topic", "orders-2027") == (
        "User:alice may READ topic orders-2027 (an ALLOW matched: (principal=User:alice, "
        "host=*, operation=READ, permissionType=ALLOW) on TOPIC:PREFIXED:orders-)")
    assert ask(auth, "User:alice", "WRITE", "TOPIC", "orders-eu") == (
        "User:alice may not WRITE topic orders-eu (no ACL allows it)")
    assert ask(auth, "User:admin", "DELETE", "TOPIC", "x").endswith("(super user)")
    table = acl_table(cluster)
    assert table.rows == [{"resource": "TOPIC:PREFIXED:orders-", "principal": "User:alice",
                           "host": "*", "operation": "READ", "permission": "ALLOW"}]


def test_the_broker_file_is_the_one_docs_describe() -> None:
    assert SASL_BROKER_FILE.name == "server-sasl.properties" and SASL_BROKER_FILE.exists()
    assert SASL_BROKER_FILE.parent.name == "docs"
