"""SASL and ACLs over the wire, through the sans-IO Session: what Kafka answers before,
during and after authentication, and each API refused with Kafka's error."""
from __future__ import annotations

import struct

import pytest
from kafka.net.sasl.scram import ScramClient
from kafka.protocol.admin import (
    AlterUserScramCredentialsRequest,
    CreateAclsRequest,
    CreateTopicsRequest,
    DeleteAclsRequest,
    DescribeAclsRequest,
    DescribeGroupsRequest,
    DescribeUserScramCredentialsRequest,
)
from kafka.protocol.consumer import FetchRequest, ListOffsetsRequest
from kafka.protocol.consumer.group import JoinGroupRequest, OffsetFetchRequest
from kafka.protocol.metadata import ApiVersionsRequest, FindCoordinatorRequest, MetadataRequest
from kafka.protocol.producer import InitProducerIdRequest, ProduceRequest
from kafka.protocol.sasl import SaslAuthenticateRequest, SaslHandshakeRequest

from minikafka.cluster import Cluster
from minikafka.core.acl import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from minikafka.core.scram import salted_password
from minikafka.core.security_config import client_listeners
from minikafka.wire import Session, default_registry, encode_request
from minikafka.wire.codec import response_class

REGISTRY = default_registry()
Op, Perm, T, P = AclOperation, AclPermissionType, ResourceType, PatternType
PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
              'username="admin" password="admin-secret" user_admin="admin-secret" '
              'user_alice="alice-secret";')
SCRAM_JAAS = ('org.apache.kafka.common.security.scram.ScramLoginModule required '
              'username="admin" password="admin-secret";')
SASL_PROPERTIES = {
    "listeners": "SASL_PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
    "listener.security.protocol.map": "SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
    "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
    "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": SCRAM_JAAS,
}
TOPIC_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED = 29, 30, 31
UNSUPPORTED_SASL_MECHANISM, ILLEGAL_SASL_STATE, SASL_AUTHENTICATION_FAILED = 33, 34, 58
TRANSACTIONAL_ID_AUTHORIZATION_FAILED, SECURITY_DISABLED = 53, 54


class Connection:
    """One client connection driven by hand: requests in, decoded responses out."""

    def __init__(self, cluster: Cluster, listener=None, principal: str = "User:ANONYMOUS",
                 host: str = "127.0.0.1") -> None:
        self.session = Session(REGISTRY, broker_id=1, cluster=cluster, listener=listener,
                               principal=principal, client_host=host)
        self.correlation_id = 0
        self.closed = None

    def call(self, request, version: int):
        """The response, or None when the connection closed without one."""
        self.correlation_id += 1
        self.session.receive_data(encode_request(request, self.correlation_id, "test",
                                                 version=version))
        out = self.session.process(0)
        self.closed = out.close
        if not out.data:
            return None
        (size,) = struct.unpack_from(">i", out.data)
        return response_class(request.API_KEY).decode(out.data[4:4 + size], version=version,
                                                      header=True)


@pytest.fixture
def cluster() -> Cluster:
    cluster = Cluster(brokers=1, seed=7)
    cluster.create_topic("orders-eu", partitions=1, replication_factor=1)
    cluster.create_topic("payments", partitions=1, replication_factor=1)
    cluster.enable_acls(super_users=["User:admin"])
    cluster.set_scram_credential("bob", "bob-secret")
    return cluster


@pytest.fixture
def listener():
    [sasl] = client_listeners(SASL_PROPERTIES)
    return sasl


def handshake(conn: Connection, mechanism: str, version: int = 1):
    return conn.call(SaslHandshakeRequest(mechanism=mechanism), version)


def authenticate(conn: Connection, token: bytes, version: int = 2):
    return conn.call(SaslAuthenticateRequest(auth_bytes=token), version)


def metadata(conn: Connection, topics=None, version: int = 12, **flags):
    wanted = None if topics is None else [MetadataRequest.MetadataRequestTopic(name=t)
                                          for t in topics]
    return conn.call(MetadataRequest(topics=wanted, allow_auto_topic_creation=False, **flags),
                     version)


# -- SASL -----------------------------------------------------------------------------


def test_listener_config_reads_kafkas_keys(listener):
    assert listener.protocol == "SASL_PLAINTEXT" and listener.sasl and not listener.tls
    assert listener.mechanisms == ("PLAIN", "SCRAM-SHA-256")
    assert listener.plain_users == {"admin": "admin-secret", "alice": "alice-secret"}


def test_plain_login_names_the_principal(cluster, listener):
    conn = Connection(cluster, listener)
    assert conn.call(ApiVersionsRequest(), 0).error_code == 0  # allowed first, as in Kafka
    answer = handshake(conn, "PLAIN")
    assert (answer.error_code, answer.mechanisms) == (0, ["PLAIN", "SCRAM-SHA-256"])
    assert authenticate(conn, b"\0alice\0alice-secret").error_code == 0
    assert conn.session.principal == "User:alice" and conn.closed is None
    # alice has no ACL: the topic exists but she may not see it
    [topic] = metadata(conn, ["orders-eu"]).topics
    assert topic.error_code == TOPIC_AUTHORIZATION_FAILED
    # once authenticated, another handshake is an illegal SASL state (KafkaApis answers it)
    assert handshake(conn, "PLAIN").error_code == ILLEGAL_SASL_STATE
    assert authenticate(conn, b"\0alice\0alice-secret").error_code == ILLEGAL_SASL_STATE


def test_wrong_password_fails_with_kafkas_error_and_closes(cluster, listener):
    conn = Connection(cluster, listener)
    handshake(conn, "PLAIN")
    answer = authenticate(conn, b"\0alice\0nope")
    assert answer.error_code == SASL_AUTHENTICATION_FAILED
    assert answer.error_message == "Authentication failed: Invalid username or password"
    assert conn.closed is not None


def test_unknown_mechanism_lists_the_enabled_ones_and_closes(cluster, listener):
    conn = Connection(cluster, listener)
    answer = handshake(conn, "GSSAPI")
    assert answer.error_code == UNSUPPORTED_SASL_MECHANISM
    assert answer.mechanisms == ["PLAIN", "SCRAM-SHA-256"]
    assert conn.closed is not None


@pytest.mark.parametrize("first", ["metadata", "authenticate"])
def test_requests_before_authentication_close_the_connection(cluster, listener, first):
    conn = Connection(cluster, listener)
    answer = metadata(conn) if first == "metadata" else authenticate(conn, b"\0a\0b")
    assert answer is None
    assert "during SASL handshake" in conn.closed.reason


def test_scram_login_against_credentials_in_the_metadata_log(cluster, listener):
    conn = Connection(cluster, listener)
    handshake(conn, "SCRAM-SHA-256")
    client = ScramClient("bob", "bob-secret", "SCRAM-SHA-256")
    first = authenticate(conn, client.first_message())
    assert first.error_code == 0
    client.process_server_first_message(bytes(first.auth_bytes))
    final = authenticate(conn, client.final_message())
    assert final.error_code == 0
    client.process_server_final_message(bytes(final.auth_bytes))  # the server proved itself
    assert conn.session.principal == "User:bob"

    wrong = Connection(cluster, listener)
    handshake(wrong, "SCRAM-SHA-256")
    client = ScramClient("bob", "not-bobs", "SCRAM-SHA-256")
    client.process_server_first_message(bytes(authenticate(wrong, client.first_message())
                                              .auth_bytes))
    answer = authenticate(wrong, client.final_message())
    assert answer.error_code == SASL_AUTHENTICATION_FAILED
    assert answer.error_message == ("Authentication failed during authentication due to "
                                    "invalid credentials with SASL mechanism SCRAM-SHA-256")
    assert wrong.closed is not None


def test_handshake_v0_then_bare_tokens(cluster, listener):
    conn = Connection(cluster, listener)
    assert handshake(conn, "PLAIN", version=0).error_code == 0
    token = b"\0alice\0alice-secret"
    conn.session.receive_data(struct.pack(">i", len(token)) + token)
    out = conn.session.process(0)
    assert out.data == b"\0\0\0\0" and out.close is None  # PLAIN's empty challenge
    assert conn.session.principal == "User:alice"


def test_sasl_on_a_plaintext_listener_is_an_illegal_state(cluster):
    conn = Connection(cluster)
    assert handshake(conn, "PLAIN").error_code == ILLEGAL_SASL_STATE
    assert conn.closed is None


def test_scram_credentials_altered_and_described(cluster):
    admin = Connection(cluster, principal="User:admin")
    salt = b"0123456789abcdef"
    upsert = AlterUserScramCredentialsRequest.ScramCredentialUpsertion(
        name="carol", mechanism=1, iterations=8192, salt=salt,
        salted_password=salted_password("SCRAM-SHA-256", "carol-secret", salt, 8192))
    too_few = AlterUserScramCredentialsRequest.ScramCredentialUpsertion(
        name="dave", mechanism=1, iterations=100, salt=salt, salted_password=b"x" * 32)
    gone = AlterUserScramCredentialsRequest.ScramCredentialDeletion(name="erin", mechanism=1)
    answer = admin.call(AlterUserScramCredentialsRequest(
        deletions=[gone], upsertions=[upsert, too_few]), 0)
    assert {(r.user, r.error_code, r.error_message) for r in answer.results} == {
        ("erin", 91, "Attempt to delete a user credential that does not exist"),
        ("carol", 0, None), ("dave", 93, "Too few iterations")}
    assert cluster.controller.scram_credentials[("carol", "SCRAM-SHA-256")].check_password(
        "carol-secret")
    described = admin.call(DescribeUserScramCredentialsRequest(users=None), 0)
    assert [(r.user, [(c.mechanism, c.iterations) for c in r.credential_infos])
            for r in described.results] == [("bob", [(1, 4096)]), ("carol", [(1, 8192)])]
    alice = Connection(cluster, principal="User:alice")
    assert alice.call(DescribeUserScramCredentialsRequest(users=None), 0).error_code == \
        CLUSTER_AUTHORIZATION_FAILED


# -- ACLs -------------------------------------------------------------------------------


def create(conn: Connection, *bindings: AclBinding):
    return conn.call(CreateAclsRequest(creations=[CreateAclsRequest.AclCreation(
        resource_type=b.resource_type, resource_name=b.resource_name,
        resource_pattern_type=b.pattern_type, principal=b.principal, host=b.host,
        operation=b.operation, permission_type=b.permission_type) for b in bindings]), 3)


def allow(name, op, principal="User:alice", pattern=P.LITERAL, kind=T.TOPIC) -> AclBinding:
    return AclBinding(kind, name, pattern, principal, "*", op, Perm.ALLOW)


def test_acl_apis_need_an_authorizer_and_alter_on_the_cluster():
    plain = Cluster(brokers=1)
    answer = create(Connection(plain), allow("t", Op.READ))
    assert [r.error_code for r in answer.results] == [SECURITY_DISABLED]
    assert Connection(plain).call(DescribeAclsRequest(
        resource_type_filter=1, resource_name_filter=None, pattern_type_filter=1,
        principal_filter=None, host_filter=None, operation=1, permission_type=1),
        3).error_code == SECURITY_DISABLED
    secured = Cluster(brokers=1)
    secured.enable_acls()
    assert [r.error_code for r in create(Connection(secured, principal="User:alice"),
                                         allow("t", Op.READ)).results] == \
        [CLUSTER_AUTHORIZATION_FAILED]


def test_create_describe_delete_acls(cluster):
    admin = Connection(cluster, principal="User:admin")
    answer = create(admin, allow("orders-", Op.READ, pattern=P.PREFIXED),
                    allow("payments", Op.WRITE), allow("t", Op.READ, principal="alice"))
    assert [r.error_code for r in answer.results] == [0, 0, 42]
    assert "Could not parse principal" in answer.results[2].error_message

    def describe(**filters):
        anything = {"resource_type_filter": 1, "resource_name_filter": None,
                    "pattern_type_filter": 1, "principal_filter": None, "host_filter": None,
                    "operation": 1, "permission_type": 1}
        answer = admin.call(DescribeAclsRequest(**{**anything, **filters}), 3)
        assert answer.error_code == 0
        return sorted((r.resource_name, r.pattern_type, a.operation)
                      for r in answer.resources for a in r.acls)

    assert describe() == [("orders-", 4, 3), ("payments", 3, 4)]
    assert describe(resource_name_filter="orders-eu", pattern_type_filter=2) == [
        ("orders-", 4, 3)]
    assert describe(operation=4) == [("payments", 3, 4)]
    removed = admin.call(DeleteAclsRequest(filters=[DeleteAclsRequest.DeleteAclsFilter(
        resource_type_filter=2, resource_name_filter="payments", pattern_type_filter=3,
        principal_filter="User:alice", host_filter=None, operation=1, permission_type=1)]), 3)
    [result] = removed.filter_results
    assert [(m.resource_name, m.operation) for m in result.matching_acls] == [("payments", 4)]
    assert describe() == [("orders-", 4, 3)]


def test_metadata_hides_and_refuses_what_the_principal_may_not_describe(cluster):
    cluster.create_acls([allow("orders-", Op.READ, pattern=P.PREFIXED)])
    alice = Connection(cluster, principal="User:alice")
    listing = metadata(alice, version=12, include_topic_authorized_operations=True)
    assert [(t.name, t.error_code) for t in listing.topics] == [("orders-eu", 0)]
    assert listing.topics[0].authorized_operations == {int(Op.READ), int(Op.DESCRIBE)}
    by_name = metadata(alice, ["payments", "no-such-topic"])
    assert [(t.name, t.error_code) for t in by_name.topics] == [
        ("payments", TOPIC_AUTHORIZATION_FAILED), ("no-such-topic", TOPIC_AUTHORIZATION_FAILED)]
    admin = metadata(Connection(cluster, principal="User:admin"),
                     include_topic_authorized_operations=True)
    assert {t.name for t in admin.topics} >= {"orders-eu", "payments"}
    assert len(admin.topics[0].authorized_operations) == 8


def test_produce_and_fetch_need_write_and_read(cluster):
    cluster.create_acls([allow("orders-", Op.READ, pattern=P.PREFIXED)])
    alice = Connection(cluster, principal="User:alice")
    produced = alice.call(ProduceRequest(transactional_id=None, acks=1, timeout_ms=1000,
                                         topic_data=[ProduceRequest.TopicProduceData(
                                             name="orders-eu", partition_data=[
                                                 ProduceRequest.TopicProduceData
                                                 .PartitionProduceData(index=0,
                                                                       records=b"x")])]), 9)
    assert produced.responses[0].partition_responses[0].error_code == TOPIC_AUTHORIZATION_FAILED

    def fetch(topic):
        answer = alice.call(FetchRequest(
            replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20, isolation_level=0,
            topics=[FetchRequest.FetchTopic(topic=topic, partitions=[
                FetchRequest.FetchTopic.FetchPartition(partition=0, fetch_offset=0,
                                                       partition_max_bytes=1 << 20)])]), 11)
        return answer.responses[0].partitions[0].error_code

    assert fetch("orders-eu") == 0
    assert fetch("payments") == TOPIC_AUTHORIZATION_FAILED
    offsets = alice.call(ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=[
        ListOffsetsRequest.ListOffsetsTopic(name="payments", partitions=[
            ListOffsetsRequest.ListOffsetsTopic.ListOffsetsPartition(partition_index=0,
                                                                     timestamp=-1)])]), 7)
    assert offsets.topics[0].partitions[0].error_code == TOPIC_AUTHORIZATION_FAILED


def test_groups_need_read_and_describe_on_the_group(cluster):
    cluster.create_acls([allow("team-", Op.READ, pattern=P.PREFIXED, kind=T.GROUP)])
    alice = Connection(cluster, principal="User:alice")

    def find(group):
        return alice.call(FindCoordinatorRequest(key=group, key_type=0), 3).error_code

    assert find("team-a") == 0
    assert find("other") == GROUP_AUTHORIZATION_FAILED
    joined = alice.call(JoinGroupRequest(
        group_id="other", session_timeout_ms=10000, rebalance_timeout_ms=10000, member_id="",
        protocol_type="consumer", protocols=[JoinGroupRequest.JoinGroupRequestProtocol(
            name="range", metadata=b"")]), 5)
    assert joined.error_code == GROUP_AUTHORIZATION_FAILED
    described = alice.call(DescribeGroupsRequest(groups=["team-a", "other"],
                                                 include_authorized_operations=True), 5)
    assert [(g.group_id, g.error_code) for g in described.groups] == [
        ("team-a", 0), ("other", GROUP_AUTHORIZATION_FAILED)]
    assert described.groups[0].authorized_operations == {int(Op.READ), int(Op.DESCRIBE)}
    fetched = alice.call(OffsetFetchRequest(group_id="other", topics=None), 7)
    assert fetched.error_code == GROUP_AUTHORIZATION_FAILED


def test_create_topics_and_producer_ids_need_their_acls(cluster):
    cluster.create_acls([allow("new-", Op.CREATE, pattern=P.PREFIXED)])
    alice = Connection(cluster, principal="User:alice")
    topic = CreateTopicsRequest.CreatableTopic
    created = alice.call(CreateTopicsRequest(topics=[
        topic(name="new-1", num_partitions=1, replication_factor=1, assignments=[], configs=[]),
        topic(name="old-1", num_partitions=1, replication_factor=1, assignments=[],
              configs=[])], timeout_ms=1000, validate_only=False), 5)
    assert [(t.name, t.error_code) for t in created.topics] == [
        ("new-1", 0), ("old-1", TOPIC_AUTHORIZATION_FAILED)]
    assert "old-1" not in cluster.controller.topics
    txn = alice.call(InitProducerIdRequest(transactional_id="tx", transaction_timeout_ms=60000),
                     4)
    assert txn.error_code == TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    idempotent = alice.call(InitProducerIdRequest(transactional_id=None,
                                                  transaction_timeout_ms=60000), 4)
    assert idempotent.error_code == CLUSTER_AUTHORIZATION_FAILED
    cluster.create_acls([allow("new-", Op.WRITE, pattern=P.PREFIXED)])
    assert alice.call(InitProducerIdRequest(transactional_id=None,
                                            transaction_timeout_ms=60000), 4).error_code == 0


def test_host_acls_see_the_clients_address(cluster):
    cluster.create_acls([AclBinding(T.TOPIC, "payments", P.LITERAL, "User:alice", "10.1.1.1",
                                    Op.DESCRIBE, Perm.ALLOW)])
    near = metadata(Connection(cluster, principal="User:alice", host="10.1.1.1"), ["payments"])
    far = metadata(Connection(cluster, principal="User:alice", host="10.1.1.2"), ["payments"])
    assert near.topics[0].error_code == 0
    assert far.topics[0].error_code == TOPIC_AUTHORIZATION_FAILED


def test_without_an_authorizer_everything_is_allowed():
    cluster = Cluster(brokers=1)
    cluster.create_topic("t", partitions=1, replication_factor=1)
    answer = metadata(Connection(cluster, principal="User:nobody"),
                      include_topic_authorized_operations=True)
    assert [(t.name, t.error_code, len(t.authorized_operations)) for t in answer.topics] == [
        ("t", 0, 8)]


def test_kip848_and_share_group_apis_need_their_acls(cluster):
    """ConsumerGroupHeartbeat and ShareGroupHeartbeat need READ on the group and DESCRIBE on
    each subscribed topic; the describes need DESCRIBE on the group; ShareFetch and
    ShareAcknowledge READ on the group and on each topic; the share-group offset APIs
    DESCRIBE, READ or DELETE on the group and access to each topic."""
    from minikafka.wire.messages import (
        AlterShareGroupOffsetsRequest,
        ConsumerGroupDescribeRequest,
        ConsumerGroupHeartbeatRequest,
        DeleteShareGroupOffsetsRequest,
        DescribeShareGroupOffsetsRequest,
        ShareAcknowledgeRequest,
        ShareFetchRequest,
        ShareGroupDescribeRequest,
        ShareGroupHeartbeatRequest,
    )
    cluster.create_acls([allow("team-", Op.READ, pattern=P.PREFIXED, kind=T.GROUP),
                         allow("orders-", Op.READ, pattern=P.PREFIXED)])
    alice = Connection(cluster, principal="User:alice")

    def consumer_heartbeat(group, topics):
        return alice.call(ConsumerGroupHeartbeatRequest(
            group_id=group, member_id="m-1", member_epoch=0, rebalance_timeout_ms=30000,
            subscribed_topic_names=topics, topic_partitions=[]), 1).error_code

    def share_heartbeat(group, topics):
        return alice.call(ShareGroupHeartbeatRequest(
            group_id=group, member_id="m-1", member_epoch=0, rack_id=None,
            subscribed_topic_names=topics), 1).error_code

    for heartbeat in (consumer_heartbeat, share_heartbeat):
        assert heartbeat("other", ["orders-eu"]) == GROUP_AUTHORIZATION_FAILED
        assert heartbeat("team-b", ["payments"]) == TOPIC_AUTHORIZATION_FAILED
    assert consumer_heartbeat("team-a", ["orders-eu"]) == 0
    assert share_heartbeat("team-s", ["orders-eu"]) == 0

    consumer_groups = alice.call(ConsumerGroupDescribeRequest(
        group_ids=["team-a", "other"], include_authorized_operations=True), 1).groups
    assert [(g.group_id, g.error_code) for g in consumer_groups] == [
        ("team-a", 0), ("other", GROUP_AUTHORIZATION_FAILED)]
    read_describe = (1 << int(Op.READ)) | (1 << int(Op.DESCRIBE))
    assert consumer_groups[0].authorized_operations == read_describe
    share_groups = alice.call(ShareGroupDescribeRequest(
        group_ids=["team-s", "other"], include_authorized_operations=True), 1).groups
    assert [(g.group_id, g.error_code) for g in share_groups] == [
        ("team-s", 0), ("other", GROUP_AUTHORIZATION_FAILED)]
    assert share_groups[0].authorized_operations == read_describe

    ids = {t: cluster.controller.topics[t].topic_id for t in ("orders-eu", "payments")}
    fetch_topic = ShareFetchRequest.FetchTopic

    def share_fetch(group):
        return alice.call(ShareFetchRequest(
            group_id=group, member_id="m-1", share_session_epoch=0, max_wait_ms=0,
            min_bytes=1, max_bytes=1 << 20, max_records=500, batch_size=500,
            topics=[fetch_topic(topic_id=ids[t], partitions=[fetch_topic.FetchPartition(
                partition_index=0, acknowledgement_batches=[])]) for t in ids],
            forgotten_topics_data=[]), 1)

    assert share_fetch("other").error_code == GROUP_AUTHORIZATION_FAILED
    fetched = share_fetch("team-s")
    assert fetched.error_code == 0
    assert {str(t.topic_id): t.partitions[0].error_code for t in fetched.responses} == {
        ids["orders-eu"]: 0, ids["payments"]: TOPIC_AUTHORIZATION_FAILED}
    ack_topic = ShareAcknowledgeRequest.AcknowledgeTopic
    acked = alice.call(ShareAcknowledgeRequest(
        group_id="team-s", member_id="m-1", share_session_epoch=1,
        topics=[ack_topic(topic_id=ids["payments"], partitions=[ack_topic.AcknowledgePartition(
            partition_index=0, acknowledgement_batches=[])])]), 1)
    assert [p.error_code for t in acked.responses for p in t.partitions] == [
        TOPIC_AUTHORIZATION_FAILED]
    assert alice.call(ShareAcknowledgeRequest(
        group_id="other", member_id="m-1", share_session_epoch=1, topics=[]), 1
    ).error_code == GROUP_AUTHORIZATION_FAILED

    described = alice.call(DescribeShareGroupOffsetsRequest(groups=[
        DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestGroup(
            group_id=g, topics=[DescribeShareGroupOffsetsRequest
                                .DescribeShareGroupOffsetsRequestGroup
                                .DescribeShareGroupOffsetsRequestTopic(
                                    topic_name="payments", partitions=[0])])
        for g in ("team-s", "other")]), 1).groups
    assert [g.error_code for g in described] == [0, GROUP_AUTHORIZATION_FAILED]
    assert [p.error_code for p in described[0].topics[0].partitions] == [
        TOPIC_AUTHORIZATION_FAILED]
    alter_topic = AlterShareGroupOffsetsRequest.AlterShareGroupOffsetsRequestTopic
    altered = alice.call(AlterShareGroupOffsetsRequest(group_id="team-x", topics=[
        alter_topic(topic_name="payments", partitions=[
            alter_topic.AlterShareGroupOffsetsRequestPartition(partition_index=0,
                                                               start_offset=0)])]), 0)
    assert [p.error_code for t in altered.responses for p in t.partitions] == [
        TOPIC_AUTHORIZATION_FAILED]
    assert alice.call(AlterShareGroupOffsetsRequest(group_id="other", topics=[]), 0
                      ).error_code == GROUP_AUTHORIZATION_FAILED
    delete_topic = DeleteShareGroupOffsetsRequest.DeleteShareGroupOffsetsRequestTopic
    # alice may READ team-s but not DELETE it
    assert alice.call(DeleteShareGroupOffsetsRequest(group_id="team-s", topics=[
        delete_topic(topic_name="orders-eu")]), 0).error_code == GROUP_AUTHORIZATION_FAILED


def test_operator_apis_need_their_acls(cluster):
    """Reassignment, the quorum and features need ALTER or DESCRIBE on the cluster; a
    transaction is listed and described only with DESCRIBE on its transactional id."""
    from kafka.protocol.admin import (
        AlterPartitionReassignmentsRequest,
        DescribeQuorumRequest,
        DescribeTransactionsRequest,
        ListPartitionReassignmentsRequest,
        ListTransactionsRequest,
        UpdateFeaturesRequest,
    )
    producer = cluster.producer(transactional_id="tx-1", security_protocol="SASL_PLAINTEXT",
                                sasl_mechanism="SCRAM-SHA-256", sasl_plain_username="bob",
                                sasl_plain_password="bob-secret")
    cluster.create_acls([allow("tx-1", Op.WRITE, principal="User:bob",
                               kind=T.TRANSACTIONAL_ID),
                         allow("orders-eu", Op.WRITE, principal="User:bob")])
    producer.init_transactions()
    producer.begin_transaction()
    producer.send("orders-eu", b"x")
    producer.flush()
    alice = Connection(cluster, principal="User:alice")
    topic = AlterPartitionReassignmentsRequest.ReassignableTopic
    moved = alice.call(AlterPartitionReassignmentsRequest(timeout_ms=1000, topics=[topic(
        name="orders-eu", partitions=[topic.ReassignablePartition(partition_index=0,
                                                                  replicas=[1])])]), 0)
    assert moved.error_code == CLUSTER_AUTHORIZATION_FAILED
    assert [p.error_code for t in moved.responses for p in t.partitions] == [
        CLUSTER_AUTHORIZATION_FAILED]
    assert alice.call(ListPartitionReassignmentsRequest(timeout_ms=1000, topics=None), 0
                      ).error_code == CLUSTER_AUTHORIZATION_FAILED
    quorum_topic = DescribeQuorumRequest.TopicData
    assert alice.call(DescribeQuorumRequest(topics=[quorum_topic(
        topic_name="__cluster_metadata", partitions=[quorum_topic.PartitionData(
            partition_index=0)])]), 1).error_code == CLUSTER_AUTHORIZATION_FAILED
    assert alice.call(UpdateFeaturesRequest(timeout_ms=1000, feature_updates=[
        UpdateFeaturesRequest.FeatureUpdateKey(feature="eligible.leader.replicas.version",
                                               max_version_level=0, upgrade_type=2)],
        validate_only=True), 1).error_code == CLUSTER_AUTHORIZATION_FAILED

    def listed(conn):
        answer = conn.call(ListTransactionsRequest(state_filters=[], producer_id_filters=[]),
                           0)
        return [t.transactional_id for t in answer.transaction_states]

    assert listed(alice) == []
    assert listed(Connection(cluster, principal="User:admin")) == ["tx-1"]
    described = alice.call(DescribeTransactionsRequest(transactional_ids=["tx-1"]), 0)
    assert [s.error_code for s in described.transaction_states] == [
        TRANSACTIONAL_ID_AUTHORIZATION_FAILED]
    cluster.create_acls([allow("tx-1", Op.DESCRIBE, kind=T.TRANSACTIONAL_ID)])
    [state] = alice.call(DescribeTransactionsRequest(transactional_ids=["tx-1"]), 0
                         ).transaction_states
    assert (state.error_code, state.transaction_state, state.topics) == (0, "Ongoing", [])
    [state] = Connection(cluster, principal="User:admin").call(
        DescribeTransactionsRequest(transactional_ids=["tx-1"]), 0).transaction_states
    assert [t.topic for t in state.topics] == ["orders-eu"]  # hidden from alice above
    producer.abort_transaction()
