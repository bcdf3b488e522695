"""Delegation tokens on the wire (keys 38-41) and a SCRAM login with one
(tokenauth=true): Kafka's errors by name and code, and its rules on who may ask."""
from __future__ import annotations

import base64

import pytest
from kafka.net.sasl.scram import ScramClient
from kafka.protocol.sasl import SaslAuthenticateRequest, SaslHandshakeRequest

from minikafka.cluster import Cluster
from minikafka.core.acl import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from minikafka.core.security_config import ListenerConfig
from minikafka.course.authentication import TokenScramClient
from minikafka.wire import Session, encode_request
from minikafka.wire.codec import response_class
from minikafka.wire.messages import (
    CreateDelegationTokenRequest,
    DescribeDelegationTokenRequest,
    ExpireDelegationTokenRequest,
    RenewDelegationTokenRequest,
)

from .test_handlers import REGISTRY, Client

SECRET = {"delegation.token.secret.key": "course-secret"}
DAY, WEEK = 86_400_000, 604_800_000


def connected(cluster: Cluster, principal: str = "User:alice", protocol: str = "SASL_SSL") -> Client:
    """A connection that logged in as PRINCIPAL over PROTOCOL."""
    client = Client(cluster, 1)
    client.session.security_protocol = protocol
    client.session.principal = principal
    return client


def create(client: Client, version: int = 3, owner: str | None = None, renewers=(),
           max_lifetime_ms: int = -1):
    renewer = CreateDelegationTokenRequest.CreatableRenewers
    return client.call(CreateDelegationTokenRequest(
        owner_principal_type="User" if owner else None, owner_principal_name=owner,
        renewers=[renewer(principal_type=t, principal_name=n) for t, n in renewers],
        max_lifetime_ms=max_lifetime_ms), version)


def test_create_gives_an_id_an_hmac_and_kafkas_default_lifetimes():
    cluster = Cluster(brokers=1, seed=7, broker_config=SECRET)
    answer = create(connected(cluster))
    assert answer.error_code == 0
    assert (answer.principal_type, answer.principal_name) == ("User", "alice")
    assert answer.token_requester_principal_name == "alice"
    assert answer.expiry_timestamp_ms - answer.issue_timestamp_ms == DAY
    assert answer.max_timestamp_ms - answer.issue_timestamp_ms == WEEK
    assert len(answer.hmac) == 64  # HMAC-SHA512
    shorter = create(connected(cluster), max_lifetime_ms=3_600_000)
    assert shorter.max_timestamp_ms - shorter.issue_timestamp_ms == 3_600_000
    assert shorter.expiry_timestamp_ms == shorter.max_timestamp_ms


@pytest.mark.parametrize("protocol,principal", [("PLAINTEXT", "User:alice"),
                                                ("SSL", "User:ANONYMOUS")])
def test_plaintext_and_one_way_tls_may_not_ask_64(protocol, principal):
    cluster = Cluster(brokers=1, broker_config=SECRET)
    client = connected(cluster, principal, protocol)
    assert create(client).error_code == 64  # DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    assert client.call(DescribeDelegationTokenRequest(owners=None), 3).error_code == 64
    # mutual TLS names the client: allowed
    assert create(connected(cluster, "User:CN=alice", "SSL")).error_code == 0


def test_without_a_secret_key_tokens_are_disabled_61():
    answer = create(connected(Cluster(brokers=1)))
    assert answer.error_code == 61  # DELEGATION_TOKEN_AUTH_DISABLED


def test_another_owner_needs_create_tokens_and_renewers_must_be_users():
    cluster = Cluster(brokers=1, broker_config=SECRET)
    cluster.enable_acls(super_users=["User:admin"])
    client = connected(cluster)
    assert create(client, owner="spark").error_code == 65  # ..._AUTHORIZATION_FAILED
    cluster.create_acls([AclBinding(ResourceType.USER, "User:spark", PatternType.LITERAL,
                                    "User:alice", "*", AclOperation.CREATE_TOKENS,
                                    AclPermissionType.ALLOW)])
    on_behalf = create(client, owner="spark")
    assert (on_behalf.error_code, on_behalf.principal_name) == (0, "spark")
    assert create(client, renewers=[("Group", "ops")]).error_code == 67  # INVALID_PRINCIPAL_TYPE


def test_renew_expire_and_describe_as_kafka_answers_them():
    cluster = Cluster(brokers=1, broker_config=SECRET)
    cluster.enable_acls(super_users=["User:admin"])  # without an authorizer all may describe
    alice, bob, carol = (connected(cluster, f"User:{n}") for n in ("alice", "bob", "carol"))
    token = create(alice, renewers=[("User", "bob")])
    renew = RenewDelegationTokenRequest
    assert alice.call(renew(hmac=b"nope", renew_period_ms=1000), 2).error_code == 62  # NOT_FOUND
    assert carol.call(renew(hmac=token.hmac, renew_period_ms=1000), 2).error_code == 63  # OWNER_MISMATCH
    renewed = bob.call(renew(hmac=token.hmac, renew_period_ms=1000), 2)
    assert renewed.error_code == 0 and renewed.expiry_timestamp_ms == cluster.now_ms + 1000
    described = carol.call(DescribeDelegationTokenRequest(owners=None), 3)
    assert (described.error_code, described.tokens) == (0, [])  # not carol's to see
    [seen] = bob.call(DescribeDelegationTokenRequest(owners=None), 3).tokens
    assert (seen.token_id, seen.principal_name, [r.principal_name for r in seen.renewers]) == \
        (token.token_id, "alice", ["bob"])
    cluster.advance_to(cluster.now_ms + 2000)
    assert alice.call(renew(hmac=token.hmac, renew_period_ms=1000), 2).error_code == 66  # EXPIRED
    expire = ExpireDelegationTokenRequest
    assert alice.call(expire(hmac=token.hmac, expiry_time_period_ms=1000), 2).error_code == 66
    gone = alice.call(expire(hmac=token.hmac, expiry_time_period_ms=-1), 2)
    assert (gone.error_code, gone.expiry_timestamp_ms) == (0, cluster.now_ms)
    assert alice.call(DescribeDelegationTokenRequest(owners=None), 3).tokens == []


def scram_login(cluster: Cluster, user: str, password: str, tokenauth: bool):
    """SaslHandshake and SaslAuthenticate on a SASL_SSL session, as the Java client logs in
    with `ScramLoginModule required username=<token id> password=<hmac> tokenauth=true;`."""
    listener = ListenerConfig("SASL_SSL", "127.0.0.1", 0, "SASL_SSL", ("SCRAM-SHA-512",))
    session = Session(REGISTRY, broker_id=1, cluster=cluster, listener=listener)
    client = Client.__new__(Client)
    client.session, client.correlation_id, client.pending = session, 0, []
    assert client.call(SaslHandshakeRequest(mechanism="SCRAM-SHA-512"), 1).error_code == 0
    scram = (TokenScramClient if tokenauth else ScramClient)(user, password, "SCRAM-SHA-512")
    answer = authenticate(session, scram.first_message())
    if answer.error_code:
        return client, answer
    scram.process_server_first_message(answer.auth_bytes)
    answer = authenticate(session, scram.final_message())
    if not answer.error_code:
        scram.process_server_final_message(answer.auth_bytes)
    return client, answer


def authenticate(session: Session, token: bytes):
    """One SaslAuthenticate; its answer even when the session then closes (a failed login)."""
    session.receive_data(encode_request(SaslAuthenticateRequest(auth_bytes=token), 99, "test",
                                        version=2))
    data = session.process(0).data
    return response_class(36).decode(data[4:], version=2, header=True)


def test_a_token_logs_in_with_scram_as_its_owner_and_may_not_ask_for_more():
    cluster = Cluster(brokers=1, broker_config=SECRET)
    token = create(connected(cluster))
    password = base64.b64encode(token.hmac).decode()
    client, answer = scram_login(cluster, token.token_id, password, tokenauth=True)
    assert answer.error_code == 0
    assert (client.session.principal, client.session.token_authenticated) == ("User:alice", True)
    assert create(client).error_code == 64  # a token's login may not ask for tokens
    # without tokenauth=true the id is a user name nobody has
    _, refused = scram_login(cluster, token.token_id, password, tokenauth=False)
    assert refused.error_code == 58
    # an expired (removed) token no longer logs in
    connected(cluster).call(ExpireDelegationTokenRequest(hmac=token.hmac,
                                                         expiry_time_period_ms=-1), 2)
    _, refused = scram_login(cluster, token.token_id, password, tokenauth=True)
    assert (refused.error_code, refused.error_message) == (
        58, "Authentication failed during authentication due to invalid credentials with SASL "
            "mechanism SCRAM-SHA-512")


def test_tokens_outlive_a_restart_and_still_log_in(tmp_path):
    """Tokens are DelegationTokenRecords in the metadata log (the HMAC is not: every start
    computes it again from the secret key), so a restarted cluster, `minikafka serve
    --log-dir` among them, still knows them, renewed or expired as they were."""
    cluster = Cluster(brokers=1, seed=7, broker_config=SECRET, log_dir=tmp_path)
    alice = connected(cluster)
    kept, dropped = create(alice), create(alice)
    renewed = alice.call(RenewDelegationTokenRequest(hmac=kept.hmac, renew_period_ms=3_600_000),
                         2).expiry_timestamp_ms
    assert alice.call(ExpireDelegationTokenRequest(hmac=dropped.hmac, expiry_time_period_ms=-1),
                      2).error_code == 0
    again = Cluster(brokers=1, seed=7, broker_config=SECRET, log_dir=tmp_path)
    [token] = connected(again).call(DescribeDelegationTokenRequest(owners=None), 3).tokens
    assert (token.token_id, token.hmac, token.expiry_timestamp) == (kept.token_id, kept.hmac,
                                                                     renewed)
    _, answer = scram_login(again, kept.token_id, base64.b64encode(kept.hmac).decode(), True)
    assert answer.error_code == 0


def test_the_controller_sweeps_expired_tokens():
    """Every delegation.token.expiry.check.interval.ms the controller removes tokens past
    their expiry: until then an expired token is still described and answers
    DELEGATION_TOKEN_EXPIRED (66); after, it is gone (DELEGATION_TOKEN_NOT_FOUND, 62)."""
    cluster = Cluster(brokers=1, broker_config={
        **SECRET, "delegation.token.expiry.check.interval.ms": 600_000})
    alice = connected(cluster)
    short, long = create(alice, max_lifetime_ms=60_000), create(alice)
    renew = RenewDelegationTokenRequest
    cluster.advance(61_000)  # short has expired; the sweep has not run yet
    assert len(alice.call(DescribeDelegationTokenRequest(owners=None), 3).tokens) == 2
    assert alice.call(renew(hmac=short.hmac, renew_period_ms=1000), 2).error_code == 66
    cluster.advance(600_000)
    [left] = alice.call(DescribeDelegationTokenRequest(owners=None), 3).tokens
    assert left.token_id == long.token_id
    assert alice.call(renew(hmac=short.hmac, renew_period_ms=1000), 2).error_code == 62
    assert [e.token_id for e in cluster.journal.events
            if e.kind == "delegation_token.expired"] == [short.token_id]
    assert [r.fields for r in cluster.controller.log
            if r.type == "RemoveDelegationTokenRecord"] == [{"token_id": short.token_id}]
