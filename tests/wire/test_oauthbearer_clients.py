"""SASL/OAUTHBEARER with Kafka's unsecured JWTs through `serve`: confluent-kafka's built-in
unsecured token (enable.sasl.oauthbearer.unsecure.jwt) and kafka-python's token provider
log in as User:<sub>; a token the broker refuses gets SASL_AUTHENTICATION_FAILED (58) with
Kafka's {"status":"invalid_token"}."""
from __future__ import annotations

import logging
import time

import pytest
from confluent_kafka import KafkaError, Producer
from kafka import KafkaAdminClient, KafkaProducer
from kafka.errors import KafkaTimeoutError
from kafka.net.sasl.oauth import AbstractTokenProvider

from minikafka.cluster import Cluster
from minikafka.core.acl import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from minikafka.core.oauthbearer import unsecured_jws
from minikafka.core.security_config import client_listeners

pytestmark = [pytest.mark.interop, pytest.mark.timeout(120)]

OAUTH_JAAS = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"


@pytest.fixture
def served():
    properties = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0",
                  "sasl.enabled.mechanisms": "OAUTHBEARER",
                  "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config": OAUTH_JAAS}
    cluster = Cluster(brokers=1, seed=22)
    cluster.create_topic("orders", partitions=1, replication_factor=1)
    cluster.enable_acls(super_users=["User:admin"])
    cluster.create_acls([AclBinding(
        ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", "*",
        AclOperation.WRITE, AclPermissionType.ALLOW)])
    with cluster.serve(port=0, listeners=client_listeners(properties)) as server:
        yield server


def confluent_produce(server, config: str) -> tuple[list, list]:
    errors, delivered = [], []
    producer = Producer({"bootstrap.servers": server.bootstrap_servers,
                         "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
                         "enable.sasl.oauthbearer.unsecure.jwt": True,
                         "sasl.oauthbearer.config": config, "error_cb": errors.append,
                         "logger": logging.getLogger("quiet-librdkafka"),
                         "message.timeout.ms": 5000})
    producer.produce("orders", b"x", on_delivery=lambda err, msg: delivered.append(err or msg.offset()))
    deadline = time.monotonic() + 10
    while not delivered and time.monotonic() < deadline:
        producer.poll(0.1)
    producer.flush(1)
    return errors, delivered


def test_confluent_kafkas_unsecured_jwt_logs_in_as_its_principal(served):
    errors, delivered = confluent_produce(served, "principal=alice")
    assert delivered == [0] and not errors
    # bob logs in too, and the authorizer, not the login, refuses him
    errors, delivered = confluent_produce(served, "principal=bob")
    assert delivered[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_a_token_without_the_sub_claim_is_refused_with_invalid_token(served):
    errors, delivered = confluent_produce(served, "principal=alice principalClaimName=azp")
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION
    assert '{"status":"invalid_token"}' in errors[0].str()


class Token(AbstractTokenProvider):
    def __init__(self, claims: dict) -> None:
        self.claims = claims

    def token(self) -> str:
        return unsecured_jws(self.claims)


def test_kafka_python_with_a_token_provider(served, caplog):
    now = int(time.time())
    producer = KafkaProducer(bootstrap_servers=served.bootstrap_servers,
                             security_protocol="SASL_PLAINTEXT", sasl_mechanism="OAUTHBEARER",
                             sasl_oauth_token_provider=Token({"sub": "alice", "iat": now,
                                                              "exp": now + 600}))
    assert producer.send("orders", b"y").get(timeout=10).offset == 0
    producer.close()
    # An expired token: the error answer comes just before the close, as from Kafka
    # (connection.failed.authentication.delay.ms); kafka-python logs it and times out.
    expired = Token({"sub": "alice", "iat": now - 600, "exp": now - 300})
    with pytest.raises(KafkaTimeoutError):
        KafkaAdminClient(bootstrap_servers=served.bootstrap_servers,
                         security_protocol="SASL_PLAINTEXT", sasl_mechanism="OAUTHBEARER",
                         sasl_oauth_token_provider=expired, bootstrap_timeout_ms=5000)
    reasons = {reason.reason for _, _, reason in served.wire.closed_connections}
    assert reasons == {'{"status":"invalid_token"}'}
    assert any('[Error 58] SaslAuthenticationFailedError' in r.getMessage()
               for r in caplog.records), [(r.name, r.getMessage()) for r in caplog.records
                                          if r.name.startswith("kafka")]
