"""ACLs in process: the admin client's create/describe/delete_acls (kafka-python's shapes),
and in-process clients acting as a principal, refused then allowed, with kafka-python's
errors."""
from __future__ import annotations

import pytest
from kafka.admin import (
    ACL,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from kafka.errors import (
    ClusterAuthorizationFailedError,
    GroupAuthorizationFailedError,
    SaslAuthenticationFailedError,
    SecurityDisabledError,
    TopicAuthorizationFailedError,
    TransactionalIdAuthorizationFailedError,
)

from minikafka.cluster import Cluster

ALICE = {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN",
         "sasl_plain_username": "alice", "sasl_plain_password": "alice-secret"}
ADMIN = {**ALICE, "sasl_plain_username": "admin", "sasl_plain_password": "admin-secret"}


def allow(principal, operation, kind, name, pattern=ACLResourcePatternType.LITERAL) -> ACL:
    return ACL(principal, "*", operation, ACLPermissionType.ALLOW,
               ResourcePattern(kind, name, pattern))


EVERYTHING = ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY,
                       ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY))


@pytest.fixture
def cluster() -> Cluster:
    cluster = Cluster(brokers=3, seed=4)
    cluster.enable_acls(super_users=["User:admin"])
    cluster.set_scram_credential("admin", "admin-secret")
    cluster.set_scram_credential("alice", "alice-secret")
    admin = cluster.admin(**ADMIN)
    admin.create_topics({"orders-eu": {"num_partitions": 1, "replication_factor": 3},
                         "payments": {"num_partitions": 1, "replication_factor": 3}})
    producer = cluster.producer(**ADMIN)
    producer.send("orders-eu", b"order-1")
    producer.flush()
    return cluster


def test_a_consumer_is_refused_then_allowed_by_prefixed_acls(cluster):
    def poll_as_alice():
        consumer = cluster.consumer("orders-eu", group_id="team-eu",
                                    auto_offset_reset="earliest", **ALICE)
        try:
            return [r.value for records in consumer.poll(timeout_ms=5000).values()
                    for r in records]
        finally:
            consumer.close()

    with pytest.raises(GroupAuthorizationFailedError):
        poll_as_alice()
    admin = cluster.admin(**ADMIN)
    admin.create_acls([allow("User:alice", ACLOperation.READ, ResourceType.GROUP, "team-",
                             ACLResourcePatternType.PREFIXED)])
    with pytest.raises(TopicAuthorizationFailedError) as refused:
        poll_as_alice()
    assert refused.value.args[0] == {"orders-eu"}
    admin.create_acls([allow("User:alice", ACLOperation.READ, ResourceType.TOPIC, "orders-",
                             ACLResourcePatternType.PREFIXED)])
    assert poll_as_alice() == [b"order-1"]


def test_admin_acl_api_has_kafka_pythons_shapes(cluster):
    admin = cluster.admin(**ADMIN)
    read = allow("User:alice", ACLOperation.READ, ResourceType.TOPIC, "orders-",
                 ACLResourcePatternType.PREFIXED)
    write = allow("User:alice", ACLOperation.WRITE, ResourceType.TOPIC, "payments")
    bad = allow("alice", ACLOperation.READ, ResourceType.TOPIC, "x")
    result = admin.create_acls([read, write, bad])
    assert result["succeeded"] == [read, write]
    assert [e.__name__ for e in result["failed"]] == ["InvalidRequestError"]
    acls, error = admin.describe_acls(EVERYTHING)
    assert set(acls) == {read, write} and error.__name__ == "NoError"
    [(_, removed, error)] = admin.delete_acls([ACLFilter(
        "User:alice", None, ACLOperation.WRITE, ACLPermissionType.ANY,
        ResourcePatternFilter(ResourceType.TOPIC, None, ACLResourcePatternType.ANY))])
    assert removed == [write]
    assert admin.describe_acls(EVERYTHING)[0] == [read]
    alice = cluster.admin(**ALICE)
    assert alice.create_acls([write])["failed"] == [ClusterAuthorizationFailedError]
    with pytest.raises(ClusterAuthorizationFailedError):
        alice.describe_acls(EVERYTHING)
    assert alice.list_topics() == ["orders-eu"]  # READ on orders- implies DESCRIBE


def test_producers_need_write_and_their_transactional_id(cluster):
    producer = cluster.producer(**ALICE)
    with pytest.raises(TopicAuthorizationFailedError):
        producer.send("payments", b"x")
    cluster.admin(**ADMIN).create_acls([allow("User:alice", ACLOperation.WRITE,
                                              ResourceType.TOPIC, "payments")])
    assert producer.send("payments", b"paid").get(timeout=5).offset == 0
    transactional = cluster.producer(transactional_id="payer", **ALICE)
    with pytest.raises(TransactionalIdAuthorizationFailedError):
        transactional.init_transactions()


def test_a_share_consumer_needs_read_on_its_group_and_describe_then_read_on_the_topic(cluster):
    """ShareGroupHeartbeat: READ on the group, DESCRIBE on the subscribed topics; ShareFetch:
    READ on the topics. The same consumer goes on once the ACLs are there."""
    cluster.alter_share_group_config("workers", {"share.auto.offset.reset": "earliest"})
    consumer = cluster.share_consumer("workers", ["orders-eu"], **ALICE)
    admin = cluster.admin(**ADMIN)
    with pytest.raises(GroupAuthorizationFailedError):
        consumer.poll(timeout_ms=1000)
    admin.create_acls([allow("User:alice", ACLOperation.READ, ResourceType.GROUP, "workers")])
    with pytest.raises(TopicAuthorizationFailedError) as refused:
        for _ in range(10):  # the next heartbeat's answer, raised by the poll after it
            consumer.poll(timeout_ms=1000)
    assert refused.value.args[0] == {"orders-eu"}
    admin.create_acls([allow("User:alice", ACLOperation.DESCRIBE, ResourceType.TOPIC,
                             "orders-eu")])
    with pytest.raises(TopicAuthorizationFailedError):
        for _ in range(10):  # until the heartbeat brings the assignment, then ShareFetch
            consumer.poll(timeout_ms=1000)
    admin.create_acls([allow("User:alice", ACLOperation.READ, ResourceType.TOPIC,
                             "orders-eu")])
    records = []
    for _ in range(10):
        records += [r.value for batch in consumer.poll(timeout_ms=1000).values() for r in batch]
        if records:
            break
    assert records == [b"order-1"]
    consumer.close()


def test_clients_metadata_hides_what_the_principal_may_not_describe(cluster):
    cluster.admin(**ADMIN).create_acls([allow("User:alice", ACLOperation.DESCRIBE,
                                              ResourceType.TOPIC, "orders-eu")])
    consumer = cluster.consumer(**ALICE)
    assert {t for t in consumer.topics() if not t.startswith("__")} == {"orders-eu"}
    assert consumer.partitions_for_topic("payments") == set()
    assert consumer.partitions_for_topic("orders-eu") == {0}
    with pytest.raises(TopicAuthorizationFailedError):
        cluster.producer(**ALICE).partitions_for("payments")


def test_wrong_password_and_anonymous_clients(cluster):
    with pytest.raises(SaslAuthenticationFailedError,
                       match="Authentication failed: Invalid username or password"):
        cluster.consumer(**{**ALICE, "sasl_plain_password": "nope"})
    anonymous = cluster.admin()
    assert anonymous.principal == "User:ANONYMOUS" and anonymous.list_topics() == []
    with pytest.raises(TopicAuthorizationFailedError):
        anonymous.create_topics(["new"])


def test_without_an_authorizer_acls_are_disabled_and_nothing_is_checked():
    cluster = Cluster(brokers=1)
    admin = cluster.admin()
    with pytest.raises(SecurityDisabledError):
        admin.describe_acls(EVERYTHING)
    admin.create_topics(["t"])
    assert cluster.producer().send("t", b"v").get(timeout=5).offset == 0


def test_the_broker_refuses_a_queued_batch_after_its_write_acl_goes(cluster):
    """The in-process Produce meets the wire's broker-side checks (core.api.produce):
    a batch queued while WRITE was allowed fails once the ACL is gone."""
    admin = cluster.admin(**ADMIN)
    write = allow("User:alice", ACLOperation.WRITE, ResourceType.TOPIC, "payments")
    admin.create_acls([write, allow("User:alice", ACLOperation.DESCRIBE, ResourceType.TOPIC,
                                    "payments")])
    producer = cluster.producer(linger_ms=50, enable_idempotence=False, acks=1, **ALICE)
    assert producer.send("payments", b"p-1").get(timeout=5).offset == 0
    queued = producer.send("payments", b"p-2")
    admin.delete_acls([ACLFilter("User:alice", None, ACLOperation.WRITE,
                                 ACLPermissionType.ANY,
                                 ResourcePatternFilter(ResourceType.TOPIC, "payments",
                                                       ACLResourcePatternType.LITERAL))])
    with pytest.raises(TopicAuthorizationFailedError):
        queued.get(timeout=5)
