"""Real clients against a secured served cluster: kafka-python and confluent-kafka log in
with SASL/PLAIN and SCRAM over SASL_PLAINTEXT and SASL_SSL, and with a client
certificate over SSL; wrong passwords fail with Kafka's error; ACLs refuse, then allow.
The certificates come from a throwaway CA (tests/tls_certs.py, the openssl command)."""
from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, KafkaError, Producer
from confluent_kafka import TopicPartition as CTopicPartition
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
    ScramMechanism,
    UserScramCredentialUpsertion,
)
from kafka.errors import (
    ClusterAuthorizationFailedError,
    GroupAuthorizationFailedError,
    KafkaConnectionError,
    KafkaTimeoutError,
    TopicAuthorizationFailedError,
)
from tls_certs import CLIENT_DN, make_certificates

from minikafka.cluster import Cluster
from minikafka.core.security_config import client_listeners

pytestmark = [pytest.mark.interop, pytest.mark.timeout(120)]

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
              'username="admin" password="admin-secret" user_admin="admin-secret" '
              'user_alice="alice-secret";')
SCRAM_JAAS = ('org.apache.kafka.common.security.scram.ScramLoginModule required '
              'username="admin" password="admin-secret";')


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_certificates(tmp_path_factory.mktemp("certs"))


@pytest.fixture
def secured(certs):
    """Two brokers on three listeners: SASL_PLAINTEXT, SASL_SSL and SSL (client
    certificates required), the StandardAuthorizer with User:admin as super user."""
    properties = {
        "listeners": "SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0,SSL://127.0.0.1:0",
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "ssl.keystore.type": "PEM", "ssl.keystore.location": str(certs.broker),
        "ssl.truststore.type": "PEM", "ssl.truststore.location": str(certs.ca),
        "listener.name.ssl.ssl.client.auth": "required",
    }
    for listener in ("sasl_plaintext", "sasl_ssl"):
        properties[f"listener.name.{listener}.plain.sasl.jaas.config"] = PLAIN_JAAS
        for mechanism in ("scram-sha-256", "scram-sha-512"):
            properties[f"listener.name.{listener}.{mechanism}.sasl.jaas.config"] = SCRAM_JAAS
    cluster = Cluster(brokers=2, seed=23)
    cluster.enable_acls(super_users=["User:admin"])
    cluster.set_scram_credential("admin", "admin-secret")
    cluster.set_scram_credential("bob", "bob-secret", "SCRAM-SHA-512")
    cluster.create_topic("orders-eu", partitions=1, replication_factor=2)
    with cluster.serve(port=0, listeners=client_listeners(properties)) as server:
        yield cluster, server


def kafka_python(server, listener: str, certs, mechanism="PLAIN", user="admin",
                 password="admin-secret") -> dict:
    config = {"bootstrap_servers": server.listener_bootstrap(listener),
              "security_protocol": listener}
    if listener.startswith("SASL"):
        config.update(sasl_mechanism=mechanism, sasl_plain_username=user,
                      sasl_plain_password=password)
    if listener.endswith("SSL"):
        config.update(ssl_cafile=str(certs.ca), ssl_check_hostname=True)
    return config


def confluent(server, listener: str, certs, mechanism="PLAIN", user="admin",
              password="admin-secret") -> dict:
    config = {"bootstrap.servers": server.listener_bootstrap(listener),
              "security.protocol": listener}
    if listener.startswith("SASL"):
        config.update({"sasl.mechanism": mechanism, "sasl.username": user,
                       "sasl.password": password})
    if listener.endswith("SSL"):
        config["ssl.ca.location"] = str(certs.ca)
    return config


@pytest.mark.parametrize("listener,mechanism", [
    ("SASL_PLAINTEXT", "PLAIN"), ("SASL_PLAINTEXT", "SCRAM-SHA-256"), ("SASL_SSL", "PLAIN"),
    ("SASL_SSL", "SCRAM-SHA-256")])
def test_kafka_python_logs_in_produces_and_consumes(secured, certs, listener, mechanism):
    cluster, server = secured
    config = kafka_python(server, listener, certs, mechanism)
    producer = KafkaProducer(**config, acks="all")
    sent = producer.send("orders-eu", b"order-1").get(timeout=20)
    producer.close()
    consumer = KafkaConsumer(**config, auto_offset_reset="earliest", consumer_timeout_ms=5000)
    consumer.assign([TopicPartition("orders-eu", 0)])
    consumer.seek(TopicPartition("orders-eu", 0), sent.offset)
    assert next(iter(consumer)).value == b"order-1"
    consumer.close()


def test_kafka_python_wrong_password_is_refused(secured, certs):
    """As from Kafka, the error answer comes 100 ms after the login, just before the close
    (connection.failed.authentication.delay.ms): kafka-python mostly reports the close."""
    _, server = secured
    config = kafka_python(server, "SASL_PLAINTEXT", certs, "PLAIN", "alice", "not-hers")
    with pytest.raises(KafkaTimeoutError):
        KafkaAdminClient(**config, bootstrap_timeout_ms=2000)
    reasons = {reason.reason for _, _, reason in server.wires["SASL_PLAINTEXT"].closed_connections}
    assert reasons == {"Authentication failed: Invalid username or password"}


def _consume_one(config: dict, topic: str) -> bytes:
    consumer = Consumer({**config, "group.id": "unused", "enable.auto.commit": False})
    try:
        consumer.assign([CTopicPartition(topic, 0, 0)])
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is not None:
                assert message.error() is None, message.error()
                return message.value()
        raise AssertionError("no message")
    finally:
        consumer.close()


@pytest.mark.parametrize("listener,mechanism", [
    ("SASL_PLAINTEXT", "PLAIN"), ("SASL_SSL", "SCRAM-SHA-256"), ("SASL_SSL", "SCRAM-SHA-512")])
def test_confluent_kafka_logs_in(secured, certs, listener, mechanism):
    cluster, server = secured
    user, password = ("bob", "bob-secret") if mechanism == "SCRAM-SHA-512" \
        else ("admin", "admin-secret")
    if user == "bob":  # bob may write and read the topic (librdkafka looks up its group too)
        cluster.create_acls([_allow("orders-eu", ACLOperation.ALL, "User:bob"),
                             _allow("unused", ACLOperation.READ, "User:bob",
                                    resource=ResourceType.GROUP)])
    config = confluent(server, listener, certs, mechanism, user, password)
    producer = Producer(config)
    errors = []
    producer.produce("orders-eu", b"from-librdkafka", on_delivery=lambda e, m: errors.append(e))
    assert producer.flush(20) == 0 and errors == [None]
    assert _consume_one(config, "orders-eu") in (b"from-librdkafka",)


def test_confluent_kafka_wrong_password_gets_kafkas_error(secured, certs):
    _, server = secured
    seen = []
    config = confluent(server, "SASL_PLAINTEXT", certs, "SCRAM-SHA-256", "admin", "wrong")
    producer = Producer({**config, "error_cb": seen.append})
    deadline = time.monotonic() + 20
    while not seen and time.monotonic() < deadline:
        producer.poll(0.1)
    assert seen and seen[0].code() == KafkaError._AUTHENTICATION
    assert "Authentication failed during authentication due to invalid credentials with SASL " \
           "mechanism SCRAM-SHA-256" in seen[0].str()


def _allow(topic: str, operation, principal: str, pattern=ACLResourcePatternType.LITERAL,
           resource=ResourceType.TOPIC):
    from minikafka.core.acl import (
        AclBinding,
        AclOperation,
        AclPermissionType,
        PatternType,
    )
    from minikafka.core.acl import ResourceType as Kind
    return AclBinding(Kind(int(resource)), topic, PatternType(int(pattern)), principal, "*",
                      AclOperation(int(operation)), AclPermissionType.ALLOW)


def test_ssl_client_certificate_is_the_principal(secured, certs):
    cluster, server = secured
    config = {"bootstrap_servers": server.listener_bootstrap("SSL"), "security_protocol": "SSL",
              "ssl_cafile": str(certs.ca), "ssl_certfile": str(certs.client_cert),
              "ssl_keyfile": str(certs.client_key)}
    producer = KafkaProducer(**config, max_block_ms=10000)
    with pytest.raises(TopicAuthorizationFailedError):
        producer.send("orders-eu", b"x").get(timeout=20)
    producer.close()
    cluster.create_acls([_allow("orders-eu", ACLOperation.WRITE, f"User:{CLIENT_DN}")])
    producer = KafkaProducer(**config, max_block_ms=10000)
    assert producer.send("orders-eu", b"signed").get(timeout=20).offset >= 0
    producer.close()


def test_kafka_python_admin_manages_acls_and_a_consumer_is_refused_then_allowed(secured, certs):
    cluster, server = secured
    admin = KafkaAdminClient(**kafka_python(server, "SASL_PLAINTEXT", certs))
    producer = KafkaProducer(**kafka_python(server, "SASL_PLAINTEXT", certs))
    producer.send("orders-eu", b"to-read").get(timeout=20)
    producer.close()
    alice = kafka_python(server, "SASL_PLAINTEXT", certs, "PLAIN", "alice", "alice-secret")

    def refused_with(error) -> None:
        consumer = KafkaConsumer(**alice, group_id="team-eu", auto_offset_reset="earliest")
        if error is GroupAuthorizationFailedError:
            consumer.subscribe(["orders-eu"])
        else:  # kafka-python raises the topic's refusal from a fetch, not from metadata
            consumer.assign([TopicPartition("orders-eu", 0)])
        with pytest.raises(error):
            for _ in range(50):
                consumer.poll(timeout_ms=200)
        consumer.close()

    refused_with(GroupAuthorizationFailedError)  # no ACL at all: the group comes first
    read_group = ACL("User:alice", "*", ACLOperation.READ, ACLPermissionType.ALLOW,
                     ResourcePattern(ResourceType.GROUP, "team-",
                                     ACLResourcePatternType.PREFIXED))
    assert admin.create_acls([read_group]) == {"succeeded": [read_group], "failed": []}
    refused_with(TopicAuthorizationFailedError)
    read_orders = ACL("User:alice", "*", ACLOperation.READ, ACLPermissionType.ALLOW,
                      ResourcePattern(ResourceType.TOPIC, "orders-",
                                      ACLResourcePatternType.PREFIXED))
    assert admin.create_acls([read_orders]) == {"succeeded": [read_orders], "failed": []}
    acls, _ = admin.describe_acls(ACLFilter(None, None, ACLOperation.ANY,
                                            ACLPermissionType.ANY, ResourcePatternFilter(
                                                ResourceType.ANY, None,
                                                ACLResourcePatternType.ANY)))
    assert set(acls) == {read_orders, read_group}

    consumer = KafkaConsumer("orders-eu", **alice, group_id="team-eu",
                             auto_offset_reset="earliest", consumer_timeout_ms=10000)
    assert next(iter(consumer)).value == b"to-read"
    consumer.close()

    alice_admin = KafkaAdminClient(**alice)
    refused = alice_admin.create_acls([read_orders])
    assert refused["failed"] == [ClusterAuthorizationFailedError]
    alice_admin.close()
    [(_, removed, _)] = admin.delete_acls([ACLFilter(
        "User:alice", None, ACLOperation.ANY, ACLPermissionType.ANY,
        ResourcePatternFilter(ResourceType.GROUP, None, ACLResourcePatternType.ANY))])
    assert removed == [read_group]
    admin.close()


def test_scram_users_made_with_alter_user_scram_credentials_log_in(secured, certs):
    _, server = secured
    admin = KafkaAdminClient(**kafka_python(server, "SASL_SSL", certs, "SCRAM-SHA-256"))
    admin.alter_user_scram_credentials([UserScramCredentialUpsertion(
        "carol", ScramMechanism.SCRAM_SHA_512, "carol-secret", iterations=8192)])
    described = admin.describe_user_scram_credentials(["carol"])
    admin.close()
    assert "carol" in str(described)
    carol = KafkaAdminClient(**kafka_python(server, "SASL_SSL", certs, "SCRAM-SHA-512",
                                            "carol", "carol-secret"))
    assert carol.list_topics() == []  # carol may see nothing: no ACLs name her
    carol.close()


def _free_block(count: int) -> int:
    """A port p with p..p+count-1 free on loopback (checked by binding them)."""
    import random
    import socket
    for _ in range(50):
        base = random.randrange(20000, 60000 - count)
        socks = []
        try:
            for port in range(base, base + count):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise AssertionError("no free block of ports")


def test_serve_counts_each_listeners_ports_up_and_advertises_its_own(tmp_path):
    import subprocess
    import sys
    plain, sasl = _free_block(3), _free_block(3)
    config = tmp_path / "server.properties"
    config.write_text(
        f"listeners=PLAINTEXT://127.0.0.1:{plain},SASL_PLAINTEXT://127.0.0.1:{sasl}\n"
        "sasl.enabled.mechanisms=PLAIN\n"
        "listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security."
        'plain.PlainLoginModule required user_alice="alice-secret";\n')
    serve = subprocess.Popen([sys.executable, "-c", "from minikafka.cli import main; "
                              "raise SystemExit(main())", "serve", str(config), "--brokers", "3"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        banner = []
        for line in serve.stdout:
            banner.append(line.rstrip("\n"))
            if line.startswith("bootstrap servers:"):
                break
        assert banner[:6] == [f"broker {b} listening on 127.0.0.1:{plain + b - 1}"
                              for b in (1, 2, 3)] + [
            f"broker {b} listening on 127.0.0.1:{sasl + b - 1} (SASL_PLAINTEXT)"
            for b in (1, 2, 3)]
        admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{sasl}",
                                 security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
                                 sasl_plain_username="alice", sasl_plain_password="alice-secret")
        brokers = admin.describe_cluster()["brokers"]
        admin.close()
        assert sorted(b["port"] for b in brokers) == [sasl, sasl + 1, sasl + 2]
    finally:
        serve.terminate()
        serve.wait(30)


def test_pkcs12_keystore_and_truststore(certs, tmp_path):
    """ssl.keystore.type=PKCS12 and ssl.truststore.type=PKCS12 (read with `cryptography`):
    a client certificate signed by the truststore's CA logs in over SSL."""
    import subprocess
    keystore, truststore = tmp_path / "broker.p12", tmp_path / "trust.p12"
    subprocess.run(["openssl", "pkcs12", "-export", "-in", str(certs.broker_cert), "-inkey",
                    str(certs.broker_key), "-certfile", str(certs.ca), "-passout", "pass:ks-pw",
                    "-out", str(keystore)], check=True, capture_output=True)
    subprocess.run(["openssl", "pkcs12", "-export", "-nokeys", "-in", str(certs.ca),
                    "-passout", "pass:ts-pw", "-out", str(truststore)], check=True,
                   capture_output=True)
    listeners = client_listeners({
        "listeners": "SSL://127.0.0.1:0", "ssl.client.auth": "required",
        "ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(keystore),
        "ssl.keystore.password": "ks-pw", "ssl.truststore.type": "PKCS12",
        "ssl.truststore.location": str(truststore), "ssl.truststore.password": "ts-pw"})
    cluster = Cluster(brokers=1)
    with cluster.serve(port=0, listeners=listeners) as server:
        admin = KafkaAdminClient(bootstrap_servers=server.bootstrap_servers,
                                 security_protocol="SSL", ssl_cafile=str(certs.ca),
                                 ssl_certfile=str(certs.client_cert),
                                 ssl_keyfile=str(certs.client_key))
        admin.create_topics([NewTopic("over-tls", 1, 1)])
        assert admin.list_topics() == ["over-tls"]
        admin.close()


def _mapped_listener(certs, rules: str):
    return client_listeners({
        "listeners": "SSL://127.0.0.1:0", "ssl.client.auth": "required",
        "ssl.keystore.type": "PEM", "ssl.keystore.location": str(certs.broker),
        "ssl.truststore.type": "PEM", "ssl.truststore.location": str(certs.ca),
        "ssl.principal.mapping.rules": rules})


def _ssl_client(server, certs) -> dict:
    return {"bootstrap_servers": server.bootstrap_servers, "security_protocol": "SSL",
            "ssl_cafile": str(certs.ca), "ssl_certfile": str(certs.client_cert),
            "ssl_keyfile": str(certs.client_key)}


def test_ssl_principal_mapping_rules_name_the_certificate_user(certs):
    """RULE:^CN=(.*?),OU=.*$/$1/U makes CN=alice,OU=course,O=minikafka User:ALICE: an ACL
    for User:ALICE lets the producer write, one for the whole subject would not."""
    cluster = Cluster(brokers=1)
    cluster.enable_acls(super_users=["User:admin"])
    cluster.create_topic("orders-eu", partitions=1, replication_factor=1)
    cluster.create_acls([_allow("orders-eu", ACLOperation.WRITE, f"User:{CLIENT_DN}")])
    with cluster.serve(port=0, listeners=_mapped_listener(
            certs, "RULE:^CN=(.*?),OU=.*$/$1/U, DEFAULT")) as server:
        producer = KafkaProducer(**_ssl_client(server, certs), max_block_ms=10000)
        with pytest.raises(TopicAuthorizationFailedError):
            producer.send("orders-eu", b"x").get(timeout=20)
        producer.close()
        cluster.create_acls([_allow("orders-eu", ACLOperation.WRITE, "User:ALICE")])
        producer = KafkaProducer(**_ssl_client(server, certs), max_block_ms=10000)
        assert producer.send("orders-eu", b"mapped").get(timeout=20).offset >= 0
        producer.close()


def test_a_certificate_no_rule_maps_is_refused(certs):
    """No DEFAULT at the end and no rule matching: Kafka closes the connection."""
    cluster = Cluster(brokers=1)
    with cluster.serve(port=0, listeners=_mapped_listener(
            certs, "RULE:^CN=(.*?),OU=ops$/$1/")) as server:
        with pytest.raises((KafkaConnectionError, KafkaTimeoutError)):
            KafkaAdminClient(**_ssl_client(server, certs), request_timeout_ms=3000)


def test_serve_refuses_an_invalid_mapping_rule(certs, tmp_path, capsys):
    from minikafka.cli import main
    properties = tmp_path / "server.properties"
    properties.write_text(
        "listeners=SSL://127.0.0.1:0\nssl.keystore.type=PEM\n"
        f"ssl.keystore.location={certs.broker}\n"
        "ssl.principal.mapping.rules=RULE:^CN=(.*?)$/$1/LU\n")
    assert main(["serve", str(properties)]) != 0
    assert "Invalid rule" in capsys.readouterr().err


def test_a_plaintext_listener_after_a_secured_one_advertises_its_own_ports(certs):
    """A set-up PLAINTEXT listener behind an SSL one: Metadata through it names its own
    ports (before, a PLAINTEXT listener had no name and was told the first listener's,
    so an admin client bootstrapped there reconnected to the SSL port in plaintext and
    was dropped)."""
    properties = {"listeners": "SSL://127.0.0.1:0,SETUP://127.0.0.1:0",
                  "listener.security.protocol.map": "SSL:SSL,SETUP:PLAINTEXT",
                  "ssl.keystore.type": "PEM", "ssl.keystore.location": str(certs.broker),
                  "ssl.truststore.type": "PEM", "ssl.truststore.location": str(certs.ca)}
    cluster = Cluster(brokers=2, seed=23)
    with cluster.serve(port=0, listeners=client_listeners(properties)) as server:
        setup = server.listener_bootstrap("SETUP")
        admin = KafkaAdminClient(bootstrap_servers=setup)
        try:
            admin.create_topics([NewTopic("orders", 1, 1)])
            ports = sorted(b["port"] for b in admin.describe_cluster()["brokers"])
        finally:
            admin.close()
        assert ports == sorted(server.wires["SETUP"].bound_ports.values())
        assert set(ports).isdisjoint(server.wires["SSL"].bound_ports.values())
