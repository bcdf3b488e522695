"""One broker, one API, for authorization: the same principal (User:alice) through the
in-process clients and through kafka-python over SASL/PLAIN against `minikafka serve`,
on the same seeded cluster with the StandardAuthorizer, is refused with the same error,
then allowed as the ACLs it needs are added. Both doors ask the same rules
(minikafka.core.api.authz); what they answer is Kafka's (KafkaApis)."""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from kafka import TopicPartition
from kafka.admin import (
    ACL,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    ConfigResource,
    ConfigResourceType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from kafka.errors import KafkaError
from kafka.structs import OffsetAndMetadata

from minikafka.cluster import Cluster
from minikafka.core.security_config import client_listeners

from .doors import BROKERS, SEED, Door, through_both
from .test_parity import same_everywhere

pytestmark = [pytest.mark.interop, pytest.mark.timeout(180)]

ALICE = {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN",
         "sasl_plain_username": "alice", "sasl_plain_password": "alice-secret"}
ADMIN = {**ALICE, "sasl_plain_username": "admin", "sasl_plain_password": "admin-secret"}
PROPERTIES = {
    "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
    "sasl.enabled.mechanisms": "PLAIN",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config":
        'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
        'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";',
}
TOPIC = "orders"
TP = TopicPartition(TOPIC, 0)


def secured_cluster() -> Cluster:
    """ACLs on (User:admin a super user), alice and admin known to both doors (SCRAM
    credentials in process, the JAAS users on the listener), and the topic `orders`."""
    cluster = Cluster(brokers=BROKERS, seed=SEED)
    cluster.enable_acls(super_users=["User:admin"])
    for user in ("admin", "alice"):
        cluster.set_scram_credential(user, f"{user}-secret")
    cluster.create_topic(TOPIC, partitions=1, replication_factor=3)
    return cluster


def through_both_secured(scenario: Callable[[Door], Any]) -> dict[str, Any]:
    """What `scenario` observes through each door, after the admin wrote one record."""
    def seeded(door: Door) -> Any:
        door.producer(**ADMIN).send(TOPIC, b"order-1").get(timeout=10)
        return scenario(door)

    return through_both(seeded, secured_cluster, client_listeners(PROPERTIES))


def allow(door: Door, operation: ACLOperation, kind: ResourceType, name: str) -> None:
    """The admin lets alice do `operation` on the resource (from any host)."""
    door.admin(**ADMIN).create_acls([ACL("User:alice", "*", operation, ACLPermissionType.ALLOW,
                                         ResourcePattern(kind, name))])


def outcome(action: Callable[[], Any]) -> str:
    """'OK', or the class name of the error the action raised; a send's future is
    waited for (kafka-python refuses some sends in send(), some through the future).
    kafka-python wraps an error code its transaction manager does not expect in a plain
    KafkaError ("Unexpected error in InitProducerIdResponse: [Error 31] ..."): the
    broker's answer is the class it names."""
    try:
        result = action()
        if hasattr(result, "add_errback"):
            result.get(timeout=20)
    except KafkaError as exc:
        named = re.search(r"\[Error -?\d+\] (\w+)", str(exc))
        return named.group(1) if type(exc) is KafkaError and named else type(exc).__name__
    return "OK"


# ---------------------------------------------------------------- Produce


def _produce_scenario(door: Door) -> dict:
    def send() -> Any:
        return door.producer(**ALICE).send(TOPIC, b"from-alice")

    def transaction() -> None:
        producer = door.producer(transactional_id="alice-tx", **ALICE)
        producer.init_transactions()
        producer.begin_transaction()
        producer.send(TOPIC, b"in-a-transaction")
        producer.commit_transaction()

    seen = {"no acl": outcome(send)}
    allow(door, ACLOperation.DESCRIBE, ResourceType.TOPIC, TOPIC)
    seen["describe only"] = outcome(send)
    allow(door, ACLOperation.WRITE, ResourceType.TOPIC, TOPIC)
    seen["write"] = outcome(send)
    seen["transaction, no transactional id acl"] = outcome(transaction)
    allow(door, ACLOperation.WRITE, ResourceType.TRANSACTIONAL_ID, "alice-tx")
    seen["transaction, write on it"] = outcome(transaction)
    return seen


def test_produce_needs_write_on_the_topic_and_the_transactional_id():
    """Metadata needs DESCRIBE on the topic; an idempotent producer's InitProducerId needs
    WRITE on some topic (CLUSTER_AUTHORIZATION_FAILED, KIP-679); Produce needs WRITE;
    transactions need WRITE on the transactional id."""
    seen = same_everywhere(through_both_secured(_produce_scenario))
    assert seen == {
        "no acl": "TopicAuthorizationFailedError",
        "describe only": "ClusterAuthorizationFailedError",
        "write": "OK",
        "transaction, no transactional id acl": "TransactionalIdAuthorizationFailedError",
        "transaction, write on it": "OK",
    }


# ---------------------------------------------------------------- Fetch (a group's consumer)


def _poll_until_records(consumer: Any, polls: int = 30) -> list[bytes]:
    for _ in range(polls):
        records = [r.value for batch in consumer.poll(timeout_ms=200).values() for r in batch]
        if records:
            return records
    return []


def _consume_scenario(door: Door) -> dict:
    def consume(group_id: str | None, subscribed: bool) -> list[bytes]:
        consumer = door.consumer(group_id=group_id, auto_offset_reset="earliest",
                                 enable_auto_commit=False, **ALICE)
        if subscribed:
            consumer.subscribe([TOPIC])
        else:
            consumer.assign([TP])
        try:
            return _poll_until_records(consumer)
        finally:
            consumer.close()

    def in_group() -> list[bytes]:
        return consume("team", subscribed=True)

    def assigned(group_id: str | None = None) -> list[bytes]:
        return consume(group_id, subscribed=False)

    seen: dict[str, Any] = {"group, no acl": outcome(in_group)}
    allow(door, ACLOperation.DESCRIBE, ResourceType.TOPIC, TOPIC)
    seen["assigned, describe only"] = outcome(assigned)
    allow(door, ACLOperation.READ, ResourceType.TOPIC, TOPIC)
    seen["assigned, read"] = assigned()
    allow(door, ACLOperation.DESCRIBE, ResourceType.GROUP, "team")
    seen["assigned in a group, describe on it"] = assigned("team")
    allow(door, ACLOperation.READ, ResourceType.GROUP, "team")
    seen["group, read on both"] = in_group()
    return seen


def test_consume_needs_read_on_the_group_and_the_topic():
    """FindCoordinator and JoinGroup need the group (GROUP_AUTHORIZATION_FAILED), DESCRIBE
    and READ; a consumer of assigned partitions does not join and needs DESCRIBE only;
    ListOffsets needs DESCRIBE on the topic, Fetch READ (TOPIC_AUTHORIZATION_FAILED).
    (A consumer refused the topic's metadata, DESCRIBE, is not compared: kafka-python
    logs that refusal from its metadata listener and polls on with nothing to fetch.)"""
    seen = same_everywhere(through_both_secured(_consume_scenario))
    assert seen == {"group, no acl": "GroupAuthorizationFailedError",
                    "assigned, describe only": "TopicAuthorizationFailedError",
                    "assigned, read": [b"order-1"],
                    "assigned in a group, describe on it": [b"order-1"],
                    "group, read on both": [b"order-1"]}


# ---------------------------------------------------------------- OffsetCommit, OffsetFetch


def _commit_scenario(door: Door) -> dict:
    consumer = door.consumer(group_id="team", enable_auto_commit=False, **ALICE)
    consumer.assign([TP])

    def commit() -> None:
        consumer.commit({TP: OffsetAndMetadata(1, "", -1)})

    seen: dict[str, Any] = {"no acl": outcome(commit),
                            "committed, no acl": outcome(lambda: consumer.committed(TP))}
    allow(door, ACLOperation.READ, ResourceType.GROUP, "team")
    seen["read on the group"] = outcome(commit)
    allow(door, ACLOperation.READ, ResourceType.TOPIC, TOPIC)
    seen["read on both"] = outcome(commit)
    seen["committed"] = consumer.committed(TP)
    return seen


def test_commit_needs_read_on_the_group_and_the_topic():
    seen = same_everywhere(through_both_secured(_commit_scenario))
    assert seen == {"no acl": "GroupAuthorizationFailedError",
                    "committed, no acl": "GroupAuthorizationFailedError",
                    "read on the group": "TopicAuthorizationFailedError",
                    "read on both": "OK", "committed": 1}


# ---------------------------------------------------------------- AddOffsetsToTxn,
# TxnOffsetCommit (send_offsets_to_transaction)


def _txn_offsets_scenario(door: Door) -> dict:
    allow(door, ACLOperation.WRITE, ResourceType.TRANSACTIONAL_ID, "alice-tx")
    allow(door, ACLOperation.WRITE, ResourceType.TOPIC, TOPIC)

    def send_offsets() -> None:
        producer = door.producer(transactional_id="alice-tx", **ALICE)
        producer.init_transactions()
        producer.begin_transaction()
        producer.send(TOPIC, b"transformed")
        producer.send_offsets_to_transaction({TP: OffsetAndMetadata(1, "", -1)}, "team")
        producer.commit_transaction()

    seen: dict[str, Any] = {"no group acl": outcome(send_offsets)}
    allow(door, ACLOperation.READ, ResourceType.GROUP, "team")
    seen["read on the group"] = outcome(send_offsets)
    allow(door, ACLOperation.READ, ResourceType.TOPIC, TOPIC)
    seen["read on both"] = outcome(send_offsets)
    seen["committed"] = door.admin(**ADMIN).list_group_offsets(["team"])["team"][TP].offset
    return seen


def test_send_offsets_to_transaction_needs_read_on_the_group_and_the_topic():
    """AddOffsetsToTxn needs READ on the group, TxnOffsetCommit READ on each topic (and
    both WRITE on the transactional id)."""
    seen = same_everywhere(through_both_secured(_txn_offsets_scenario))
    assert seen == {"no group acl": "GroupAuthorizationFailedError",
                    "read on the group": "TopicAuthorizationFailedError",
                    "read on both": "OK", "committed": 1}


# ---------------------------------------------------------------- CreateTopics


def _create_topic_scenario(door: Door) -> dict:
    spec = {"alice-new": {"num_partitions": 1, "replication_factor": 1}}

    def code() -> int:
        return door.create_topics(spec, False, **ALICE)["alice-new"][0]

    seen = {"no acl": code()}
    allow(door, ACLOperation.CREATE, ResourceType.TOPIC, "alice-new")
    seen["create on the topic"] = code()
    return seen


def test_create_topics_needs_create():
    seen = same_everywhere(through_both_secured(_create_topic_scenario))
    assert seen == {"no acl": 29, "create on the topic": 0}  # TOPIC_AUTHORIZATION_FAILED


# ---------------------------------------------------------------- DescribeConfigs,
# IncrementalAlterConfigs, DeleteRecords


def _error_code(answer: str) -> int:
    """The code in an alter_configs answer: 0 for 'OK', else the '[Error N]' it names."""
    return 0 if answer == "OK" else int(re.search(r"\[Error (-?\d+)\]", answer).group(1))


def _admin_scenario(door: Door) -> dict:
    # alice sees the topic (DESCRIBE): kafka-python's delete_records looks its leader up
    # first, and takes a topic it may not describe for an unknown one.
    allow(door, ACLOperation.DESCRIBE, ResourceType.TOPIC, TOPIC)
    admin = door.admin(**ALICE)
    topic = ConfigResource(ConfigResourceType.TOPIC, TOPIC)

    def described() -> int:
        return len(admin.describe_configs([topic], config_filter="all")["topic"][TOPIC])

    def altered() -> int:
        answer = admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, TOPIC,
                                                     configs={"retention.ms": "86400000"})],
                                     raise_on_unknown=False)
        return _error_code(answer["topic"][TOPIC])

    def delete_records() -> Any:
        return admin.delete_records({TP: 1})

    seen: dict[str, Any] = {"configs described, no acl": described(),
                            "configs altered, no acl": altered(),
                            "records deleted, no acl": outcome(delete_records)}
    allow(door, ACLOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, TOPIC)
    allow(door, ACLOperation.ALTER_CONFIGS, ResourceType.TOPIC, TOPIC)
    allow(door, ACLOperation.DELETE, ResourceType.TOPIC, TOPIC)
    seen["configs described"] = described() > 0
    seen["configs altered"] = altered()
    seen["records deleted"] = outcome(delete_records)
    return seen


def test_admin_configs_and_delete_records_need_their_operations():
    """DESCRIBE_CONFIGS and ALTER_CONFIGS on the topic (a refused DescribeConfigs
    resource comes back with no entries, as kafka-python reads the error), DELETE on the
    topic for DeleteRecords."""
    seen = same_everywhere(through_both_secured(_admin_scenario))
    assert seen == {"configs described, no acl": 0, "configs altered, no acl": 29,
                    "records deleted, no acl": "TopicAuthorizationFailedError",
                    "configs described": True, "configs altered": 0, "records deleted": "OK"}


# ---------------------------------------------------------------- the ACL APIs themselves


def _acl_apis_scenario(door: Door) -> dict:
    everything = ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY,
                           ResourcePatternFilter(ResourceType.ANY, None,
                                                 ACLResourcePatternType.ANY))
    read_orders = ACL("User:bob", "*", ACLOperation.READ, ACLPermissionType.ALLOW,
                      ResourcePattern(ResourceType.TOPIC, TOPIC))

    def names(found: list) -> list[str]:
        return sorted(f"{a.principal} {a.operation.name}" for a in found)

    def as_(who: dict) -> dict:
        admin = door.admin(**who)
        created = admin.create_acls([read_orders])
        return {"created": [type(a).__name__ for a in created["succeeded"]],
                "create failed": [e.__name__ for e in created["failed"]],
                "described": outcome(lambda: admin.describe_acls(everything)),
                "deleted": [e.__name__ for _, _, e in admin.delete_acls([everything])]}

    seen = {"alice": as_(ALICE)}
    allow(door, ACLOperation.ALTER, ResourceType.CLUSTER, "kafka-cluster")
    allow(door, ACLOperation.DESCRIBE, ResourceType.CLUSTER, "kafka-cluster")
    seen["alice, alter and describe on the cluster"] = as_(ALICE)
    seen["left"] = names(door.admin(**ADMIN).describe_acls(everything)[0])
    return seen


def test_the_acl_apis_need_alter_or_describe_on_the_cluster():
    """CreateAcls and DeleteAcls need ALTER on the cluster, DescribeAcls DESCRIBE (each
    filter and binding refused with CLUSTER_AUTHORIZATION_FAILED, DescribeAcls as a
    whole); alice's delete then removes every ACL, her own grants too."""
    seen = same_everywhere(through_both_secured(_acl_apis_scenario))
    refused = "ClusterAuthorizationFailedError"
    assert seen["alice"] == {"created": [], "create failed": [refused],
                             "described": refused, "deleted": [refused]}
    assert seen["alice, alter and describe on the cluster"] == {
        "created": ["ACL"], "create failed": [], "described": "OK", "deleted": ["NoError"]}
    assert seen["left"] == []


def test_without_an_authorizer_the_acl_apis_are_security_disabled():
    """Kafka answers SECURITY_DISABLED; kafka-python returns it for each binding and filter
    and raises it for DescribeAcls."""
    everything = ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY,
                           ResourcePatternFilter(ResourceType.ANY, None,
                                                 ACLResourcePatternType.ANY))

    def scenario(door: Door) -> dict:
        admin = door.admin()
        created = admin.create_acls([ACL("User:bob", "*", ACLOperation.READ,
                                         ACLPermissionType.ALLOW,
                                         ResourcePattern(ResourceType.TOPIC, TOPIC))])
        return {"create failed": [e.__name__ for e in created["failed"]],
                "describe": outcome(lambda: admin.describe_acls(everything)),
                "delete": [e.__name__ for _, _, e in admin.delete_acls([everything])]}

    seen = same_everywhere(through_both(scenario))
    assert seen == {"create failed": ["SecurityDisabledError"],
                    "describe": "SecurityDisabledError", "delete": ["SecurityDisabledError"]}
