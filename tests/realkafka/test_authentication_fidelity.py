"""Lesson 22's claims, against `minikafka serve` and Apache Kafka 4.4.0's three native nodes
with one broker file (the lesson's certificates and listener settings):

- SSL: a client trusting the lesson's CA agrees on TLS, one trusting only the system's
  CAs fails the handshake; with ssl.client.auth=required a client without a certificate is
  dropped; ssl.principal.mapping.rules make alice's certificate User:alice (an ACL for her
  whole subject does nothing, one for User:alice lets her write), bob has no ACL;
- SASL_SSL beside it: the broker-wide ssl.client.auth does not apply there (KIP-684), so
  SCRAM-SHA-256/512 clients log in without a certificate; the SASL login is the principal;
  a wrong password is refused;
- OAUTHBEARER with Kafka's unsecured JWTs (confluent-kafka's built-in token): a token for
  alice writes, one without a `sub` claim gets {"status":"invalid_token"};
- client-id quotas throttle a burst: kafka-python's throttle-time-max, producer and
  consumer, within 15% of each other on both brokers.

Set-up goes through a PLAINTEXT listener whose User:ANONYMOUS is a super user (the native
nodes' INTERNAL listener, as realkafka.broker_overrides configures it; SETUP on serve)."""
from __future__ import annotations

import os
import re
import time

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import (
    ACL,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    NewTopic,
    ResourcePattern,
    ResourceType,
    ScramMechanism,
    UserScramCredentialUpsertion,
)
from kafka.errors import KafkaError
from kafka.protocol.admin import AlterClientQuotasRequest

from minikafka.cluster import Cluster
from minikafka.core.security_config import client_listeners
from minikafka.course.authentication import (
    DelegationToken,
    listener_properties,
    make_certificates,
    oauthbearer_produce,
    send_request,
    served_throttle,
    tls_handshake,
    token_produce,
)
from minikafka.realkafka.nodes import NativeKafka, broker_overrides
from minikafka.wire.messages import (
    CreateDelegationTokenRequest,
    DescribeDelegationTokenRequest,
    ExpireDelegationTokenRequest,
    RenewDelegationTokenRequest,
)

from .nodes_meanwhile import started_meanwhile

pytestmark = [pytest.mark.real_kafka, pytest.mark.slow, pytest.mark.timeout(900)]

# Ports: after the other real-Kafka fidelity tests' (MINIKAFKA_TEST_KAFKA_PORT + 10, + 20).
BASE = int(os.environ.get("MINIKAFKA_TEST_KAFKA_PORT", "9192"))
REAL_PORT = BASE + 40

RULES = "RULE:^CN=([^,]+),OU=course,O=minikafka$/$1/L, DEFAULT"
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
# Real brokers learn ACLs, credentials, tokens and quotas from the metadata log a moment
# after the controller answers; minikafka's brokers share one metadata image, changed before
# the answer, so there nothing is waited for.
PROPAGATION_S = 1.5


def broker_file(certs) -> dict[str, str]:
    """An SSL listener (client certificates required, the mapping rules) and a SASL_SSL
    one (SCRAM and OAUTHBEARER), with the StandardAuthorizer."""
    settings = listener_properties(certs, "SSL", client_auth="required", mapping_rules=RULES)
    sasl = listener_properties(certs, "SASL_SSL",
                               mechanisms=("SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"))
    settings.update({k: v for k, v in sasl.items() if k.startswith("listener.name.")
                     and not k.endswith("ssl.client.auth")})
    settings.update({"listeners": "SSL://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
                     "sasl.enabled.mechanisms": sasl["sasl.enabled.mechanisms"],
                     "authorizer.class.name": STANDARD_AUTHORIZER, "super.users": "User:admin",
                     "delegation.token.secret.key": "course-secret"})
    return settings


def first(bootstrap: str) -> str:
    return bootstrap.split(",")[0]


def produce(bootstrap: str, certs, *, who: str | None = None, login: tuple | None = None) -> str:
    """One record to `orders` over SSL with WHO's certificate, or over SASL_SSL with LOGIN
    (mechanism, user, password): "wrote" or the error's name."""
    config = {"bootstrap_servers": bootstrap, "ssl_cafile": str(certs.ca), "max_block_ms": 10000}
    if who is not None:
        cert, key = certs.client[who]
        config.update(security_protocol="SSL", ssl_certfile=str(cert), ssl_keyfile=str(key))
    else:
        mechanism, user, password = login
        config.update(security_protocol="SASL_SSL", sasl_mechanism=mechanism,
                      sasl_plain_username=user, sasl_plain_password=password)
    try:
        producer = KafkaProducer(**config)
    except KafkaError as exc:
        return error_name(exc)
    try:
        producer.send("orders", b"x").get(timeout=20)
        return "wrote"
    except KafkaError as exc:
        return error_name(exc)
    finally:
        producer.close()


def error_name(exc: KafkaError) -> str:
    """The broker's error a client exception carries (kafka-python wraps some, as
    "Unexpected error in InitProducerIdResponse: [Error 31] ClusterAuthorizationFailedError")."""
    found = re.search(r"\[Error \d+\] (\w+)", str(exc))
    return found.group(1) if found else type(exc).__name__


def set_quota(admin: KafkaAdminClient, client_id: str, key: str, value: float) -> None:
    """kafka-configs --alter --entity-type clients: AlterClientQuotas (kafka-python's admin
    has no method for it, so the request goes through its connection manager)."""
    entry = AlterClientQuotasRequest.EntryData
    request = AlterClientQuotasRequest(validate_only=False, entries=[entry(
        entity=[entry.EntityData(entity_type="client-id", entity_name=client_id)],
        ops=[entry.OpData(key=key, value=float(value), remove=False)])])

    response = send_request(admin, request)
    assert [e.error_code for e in response.entries] == [0]


def observe_tokens(sasl: str, setup: str, certs, propagation_s: float) -> dict:
    """Delegation tokens: refused over PLAINTEXT; alice's token logs in as alice; renew by
    a stranger refused; expired now, it no longer logs in."""
    seen: dict = {}
    renewer = CreateDelegationTokenRequest.CreatableRenewers
    create = CreateDelegationTokenRequest(owner_principal_type=None, owner_principal_name=None,
                                          renewers=[renewer(principal_type="User",
                                                            principal_name="bob")],
                                          max_lifetime_ms=-1)
    plain = KafkaAdminClient(bootstrap_servers=setup)
    seen["create over PLAINTEXT"] = send_request(plain, create).error_code
    plain.close()

    def as_user(user: str, mechanism: str) -> KafkaAdminClient:
        return KafkaAdminClient(bootstrap_servers=sasl, security_protocol="SASL_SSL",
                                ssl_cafile=str(certs.ca), sasl_mechanism=mechanism,
                                sasl_plain_username=user, sasl_plain_password=f"{user}-secret")
    alice = as_user("alice", "SCRAM-SHA-256")
    token = send_request(alice, create)
    seen["create as alice"] = (token.error_code, token.principal_name,
                               token.max_timestamp_ms - token.issue_timestamp_ms,
                               token.expiry_timestamp_ms - token.issue_timestamp_ms)
    time.sleep(propagation_s)
    issued = DelegationToken("NONE", "User:alice", token.token_id, bytes(token.hmac), 0, 0)
    seen["token login"] = token_produce(sasl, issued, ca=certs.ca).split(" offset")[0]
    described = send_request(alice, DescribeDelegationTokenRequest(owners=None))
    seen["describe as alice"] = [(t.principal_name, [r.principal_name for r in t.renewers])
                                 for t in described.tokens]
    bob = as_user("bob", "SCRAM-SHA-512")
    seen["renew as bob (renewer)"] = send_request(bob, RenewDelegationTokenRequest(
        hmac=token.hmac, renew_period_ms=3_600_000)).error_code
    bob.close()
    seen["renew, unknown hmac"] = send_request(alice, RenewDelegationTokenRequest(
        hmac=b"nope", renew_period_ms=1000)).error_code
    seen["expire now"] = send_request(alice, ExpireDelegationTokenRequest(
        hmac=token.hmac, expiry_time_period_ms=-1)).error_code
    alice.close()
    time.sleep(propagation_s)
    seen["token login after expiry"] = token_produce(sasl, issued, ca=certs.ca)
    return seen


def observe(ssl: str, sasl: str, setup: str, certs, propagation_s: float) -> dict:
    """What the lesson's steps see on the SSL and SASL_SSL listeners; SETUP is PLAINTEXT,
    a super user's."""
    seen: dict = {}
    admin = KafkaAdminClient(bootstrap_servers=setup)
    admin.create_topics([NewTopic("orders", 1, 3), NewTopic("trucks", 1, 3)])
    admin.alter_user_scram_credentials([
        UserScramCredentialUpsertion("alice", ScramMechanism.SCRAM_SHA_256, "alice-secret"),
        UserScramCredentialUpsertion("bob", ScramMechanism.SCRAM_SHA_512, "bob-secret")])
    orders = ResourcePattern(ResourceType.TOPIC, "orders", ACLResourcePatternType.LITERAL)

    seen["SSL, trusting the CA"] = sorted(tls_handshake(first(ssl), certs.ca,
                                                        cert=certs.client["alice"]))
    seen["SSL, system CAs"] = "CERTIFICATE_VERIFY_FAILED" in \
        tls_handshake(first(ssl)).get("error", "agreed")
    seen["SSL, no client certificate"] = sorted(tls_handshake(first(ssl), certs.ca))
    seen["SASL_SSL, no client certificate"] = sorted(tls_handshake(first(sasl), certs.ca))

    admin.create_acls([ACL(f"User:{certs.subjects['alice']}", "*", ACLOperation.WRITE,
                           ACLPermissionType.ALLOW, orders)])
    time.sleep(propagation_s)
    seen["alice, ACL for her whole subject"] = produce(ssl, certs, who="alice")
    admin.create_acls([ACL("User:alice", "*", ACLOperation.WRITE, ACLPermissionType.ALLOW,
                           orders)])
    time.sleep(propagation_s)
    seen["alice, ACL for User:alice"] = produce(ssl, certs, who="alice")
    seen["bob, no ACL"] = produce(ssl, certs, who="bob")

    admin.create_acls([ACL("User:bob", "*", ACLOperation.READ, ACLPermissionType.ALLOW,
                           orders)])
    time.sleep(propagation_s)
    seen["SCRAM-SHA-256 alice"] = produce(sasl, certs, login=("SCRAM-SHA-256", "alice", "alice-secret"))
    seen["SCRAM-SHA-512 bob"] = produce(sasl, certs, login=("SCRAM-SHA-512", "bob", "bob-secret"))
    seen["SCRAM-SHA-256 wrong password"] = produce(
        sasl, certs, login=("SCRAM-SHA-256", "alice", "not-hers"))

    seen["OAUTHBEARER alice"] = oauthbearer_produce(first(sasl), "principal=alice",
                                                    ca=certs.ca).split(" offset")[0]
    seen["OAUTHBEARER without sub"] = oauthbearer_produce(
        first(sasl), "principal=alice principalClaimName=azp", ca=certs.ca)

    set_quota(admin, "truck-loader", "producer_byte_rate", 20_000)
    set_quota(admin, "truck-reader", "consumer_byte_rate", 10_000)
    admin.close()
    time.sleep(propagation_s)
    throttled = served_throttle(setup, "trucks", producer_client_id="truck-loader",
                                consumer_client_id="truck-reader", records=250, record_bytes=1_000)
    return seen, {row["client"]: row["throttle-time-max (ms)"] for row in throttled}


def test_lesson_22_authentication_on_minikafka_and_kafka(tmp_path):
    certs = make_certificates(tmp_path / "certs", ["alice", "bob"])
    settings = broker_file(certs)

    served = {**settings, "listeners": "SSL://127.0.0.1:0,SASL_SSL://127.0.0.1:0,"
                                       "SETUP://127.0.0.1:0",
              "listener.security.protocol.map": "SSL:SSL,SASL_SSL:SASL_SSL,SETUP:PLAINTEXT"}
    shared, _ = broker_overrides(settings)
    kafka = NativeKafka(tmp_path / "kafka", port=REAL_PORT, overrides=shared)
    with started_meanwhile(kafka) as kafka_ready:
        cluster = Cluster(brokers=3, seed=22,
                          broker_config={"delegation.token.secret.key": "course-secret"})
        cluster.enable_acls(super_users=["User:admin", "User:ANONYMOUS"])
        with cluster.serve(port=0, listeners=client_listeners(served)) as server:
            mini, mini_throttle = observe(server.listener_bootstrap("SSL"),
                                          server.listener_bootstrap("SASL_SSL"),
                                          server.listener_bootstrap("SETUP"), certs, 0)
            mini.update(observe_tokens(server.listener_bootstrap("SASL_SSL"),
                                       server.listener_bootstrap("SETUP"), certs, 0))
        kafka_ready()
        setup = f"127.0.0.1:{kafka.internal_port(1)}"
        real, real_throttle = observe(kafka.bootstrap_servers, kafka.listener_bootstrap("SASL_SSL"),
                                      setup, certs, PROPAGATION_S)
        real.update(observe_tokens(kafka.listener_bootstrap("SASL_SSL"), setup, certs,
                                   PROPAGATION_S))

    print("seen on both:", mini, "\nthrottle-time-max, minikafka:", mini_throttle, "Kafka:",
          real_throttle)
    # minikafka answers as Apache Kafka does ...
    differences = {k: (mini[k], real.get(k)) for k in mini if mini[k] != real.get(k)}
    assert not differences
    for client, ms in mini_throttle.items():
        assert abs(ms - real_throttle[client]) <= 0.15 * real_throttle[client], \
            (client, mini_throttle, real_throttle)
    # ... and both as the lesson says.
    assert mini["SSL, trusting the CA"] == ["broker", "version"] and mini["SSL, system CAs"]
    assert mini["SSL, no client certificate"] == ["error"]
    assert mini["SASL_SSL, no client certificate"] == ["broker", "version"]
    assert mini["alice, ACL for her whole subject"] != "wrote"
    assert mini["alice, ACL for User:alice"] == "wrote" and mini["bob, no ACL"] != "wrote"
    assert mini["SCRAM-SHA-256 alice"] == "wrote"
    # bob may READ orders, not WRITE: the idempotent producer's InitProducerId is refused
    assert mini["SCRAM-SHA-512 bob"] == "ClusterAuthorizationFailedError"
    assert mini["SCRAM-SHA-256 wrong password"] != "wrote"
    assert mini["OAUTHBEARER alice"] == "wrote"
    assert mini["OAUTHBEARER without sub"] == '{"status":"invalid_token"}'
    assert 2_000 < mini_throttle["truck-loader"] < mini_throttle["truck-reader"]
    assert mini["create over PLAINTEXT"] == 64  # DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    assert mini["create as alice"] == (0, "alice", 7 * 86_400_000, 86_400_000)
    assert mini["token login"] == "wrote" and mini["describe as alice"] == [("alice", ["bob"])]
    assert (mini["renew as bob (renewer)"], mini["renew, unknown hmac"]) == (0, 62)
    assert mini["expire now"] == 0 and mini["token login after expiry"] != "wrote"
