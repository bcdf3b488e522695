"""The StandardAuthorizer's rules (core.acl) and ACLs and SCRAM credentials in the
metadata log."""
from __future__ import annotations

import pytest

from minikafka.cluster import Cluster
from minikafka.core.acl import (
    ALLOWED,
    DENIED,
    NO_ACL_EVERYONE,
    NO_MATCH,
    SUPER_USER,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AclStore,
    Authorizer,
    Decision,
    InvalidAcl,
    PatternType,
    ResourceType,
)
from minikafka.core.scram import ScramError, ScramServer, make_credential

Op, Perm, T, P = AclOperation, AclPermissionType, ResourceType, PatternType
HOST = "10.0.0.7"


def acl(name, op, principal="User:alice", perm=Perm.ALLOW, pattern=P.LITERAL, kind=T.TOPIC,
        host="*") -> AclBinding:
    return AclBinding(kind, name, pattern, principal, host, op, perm)


def authorizer(*acls: AclBinding, **settings) -> Authorizer:
    store = AclStore()
    for i, a in enumerate(acls):
        store.add(a, str(i))
    return Authorizer(store, **settings)


def can(auth: Authorizer, op, name, principal="User:alice", kind=T.TOPIC, host=HOST) -> bool:
    return auth.authorize(principal, host, op, kind, name)


def test_literal_prefixed_and_wildcard_patterns():
    auth = authorizer(acl("orders", Op.READ), acl("pay-", Op.WRITE, pattern=P.PREFIXED),
                      acl("*", Op.DESCRIBE, principal="User:bob"))
    assert can(auth, Op.READ, "orders")
    assert not can(auth, Op.READ, "orders-eu")  # literal: that name only
    assert can(auth, Op.WRITE, "pay-eu") and can(auth, Op.WRITE, "pay-")
    assert not can(auth, Op.WRITE, "pa")
    assert can(auth, Op.DESCRIBE, "anything", principal="User:bob")
    assert not can(auth, Op.READ, "anything", principal="User:bob")


def test_implied_operations():
    auth = authorizer(acl("t", Op.READ), acl("u", Op.ALTER_CONFIGS), acl("v", Op.ALL))
    assert can(auth, Op.DESCRIBE, "t")  # READ implies DESCRIBE
    assert not can(auth, Op.WRITE, "t")
    assert can(auth, Op.DESCRIBE_CONFIGS, "u") and not can(auth, Op.DESCRIBE, "u")
    assert all(can(auth, op, "v") for op in (Op.READ, Op.WRITE, Op.DELETE, Op.ALTER_CONFIGS))


def test_deny_wins_and_is_not_widened():
    auth = authorizer(acl("orders-", Op.ALL, pattern=P.PREFIXED),
                      acl("orders-secret", Op.READ, perm=Perm.DENY))
    assert not can(auth, Op.READ, "orders-secret")
    # a DENY of READ does not deny DESCRIBE, which READ would imply as an ALLOW
    assert can(auth, Op.DESCRIBE, "orders-secret")
    assert can(auth, Op.READ, "orders-public")
    everyone_denied = authorizer(acl("t", Op.READ),
                                 acl("t", Op.ALL, principal="User:*", perm=Perm.DENY))
    assert not can(everyone_denied, Op.READ, "t")


def test_decide_names_the_rule_and_the_acl_that_decided():
    allow = acl("orders-", Op.READ, pattern=P.PREFIXED)
    deny = acl("orders-secret", Op.READ, principal="User:*", perm=Perm.DENY)
    auth = authorizer(allow, deny, super_users={"User:admin"})
    assert auth.decide("User:admin", HOST, Op.READ, T.TOPIC, "orders-secret") == Decision(
        True, SUPER_USER)
    assert auth.decide("User:alice", HOST, Op.READ, T.TOPIC, "orders-secret") == Decision(
        False, DENIED, deny)
    assert auth.decide("User:alice", HOST, Op.DESCRIBE, T.TOPIC, "orders-eu") == Decision(
        True, ALLOWED, allow)  # the READ that implies DESCRIBE
    assert auth.decide("User:bob", HOST, Op.READ, T.TOPIC, "orders-eu") == Decision(
        False, NO_MATCH)
    open_auth = authorizer(allow, allow_everyone_if_no_acl_found=True)
    assert open_auth.decide("User:bob", HOST, Op.READ, T.TOPIC, "audit").rule == NO_ACL_EVERYONE
    # authorize is decide's answer, for every question
    for principal in ("User:admin", "User:alice", "User:bob"):
        for op in (Op.READ, Op.WRITE, Op.DESCRIBE):
            for name in ("orders-eu", "orders-secret", "audit"):
                assert auth.authorize(principal, HOST, op, T.TOPIC, name) is auth.decide(
                    principal, HOST, op, T.TOPIC, name).allowed


def test_host_and_principal_must_match():
    auth = authorizer(acl("t", Op.READ, host="10.0.0.8"), acl("t", Op.WRITE, principal="User:*"))
    assert not can(auth, Op.READ, "t")
    assert can(auth, Op.READ, "t", host="10.0.0.8")
    assert can(auth, Op.WRITE, "t", principal="User:carol")


def test_super_users_and_allow_everyone_if_no_acl_found():
    auth = authorizer(acl("t", Op.READ), super_users={"User:admin"})
    assert can(auth, Op.DELETE, "t", principal="User:admin")
    assert not can(auth, Op.READ, "other")  # no ACL: denied by default
    open_auth = authorizer(acl("t", Op.READ), allow_everyone_if_no_acl_found=True)
    assert can(open_auth, Op.WRITE, "other", principal="User:bob")  # no ACL on "other"
    assert not can(open_auth, Op.WRITE, "t", principal="User:bob")  # "t" has ACLs


def test_authorized_operations_and_by_resource_type():
    auth = authorizer(acl("t", Op.WRITE), acl("kafka-cluster", Op.IDEMPOTENT_WRITE,
                                              kind=T.CLUSTER, principal="User:bob"))
    assert auth.authorized_operations("User:alice", HOST, T.TOPIC, "t") == {
        int(Op.WRITE), int(Op.DESCRIBE)}
    assert auth.authorize_by_resource_type("User:alice", HOST, Op.WRITE, T.TOPIC)
    assert not auth.authorize_by_resource_type("User:bob", HOST, Op.WRITE, T.TOPIC)
    denied = authorizer(acl("t", Op.WRITE), acl("t", Op.WRITE, perm=Perm.DENY))
    assert not denied.authorize_by_resource_type("User:alice", HOST, Op.WRITE, T.TOPIC)


def test_filters_match_as_describe_acls_does():
    prefixed = acl("orders-", Op.READ, pattern=P.PREFIXED)
    literal = acl("orders-eu", Op.WRITE, principal="User:bob")
    wildcard = acl("*", Op.DESCRIBE)
    other = acl("g", Op.READ, kind=T.GROUP)
    every = [prefixed, literal, wildcard, other]

    def select(**kw):
        return [a for a in every if AclBindingFilter(**kw).matches(a)]

    assert select() == every
    assert select(resource_type=T.GROUP) == [other]
    assert select(resource_name="orders-eu") == [literal]
    assert select(resource_name="orders-eu", pattern_type=P.MATCH) == [prefixed, literal, wildcard]
    assert select(pattern_type=P.PREFIXED) == [prefixed]
    assert select(principal="User:bob") == [literal]
    assert select(operation=Op.READ, permission_type=Perm.ALLOW) == [prefixed, other]


@pytest.mark.parametrize("binding,message", [
    (acl("t", Op.ANY), "Invalid operation"),
    (acl("t", Op.READ, pattern=P.MATCH), "Invalid patternType"),
    (acl("t", Op.READ, kind=T.ANY), "Invalid resourceType"),
    (acl("t", Op.READ, principal="alice"), "Could not parse principal"),
    (acl("my-cluster", Op.ALTER, kind=T.CLUSTER), "kafka-cluster"),
])
def test_invalid_acls_are_refused_with_kafkas_message(binding, message):
    with pytest.raises(InvalidAcl, match=message):
        binding.validate()


def test_acls_and_scram_credentials_outlive_a_restart(tmp_path):
    cluster = Cluster(brokers=1, seed=3, log_dir=tmp_path)
    kept, removed = acl("orders-", Op.READ, pattern=P.PREFIXED), acl("t", Op.WRITE)
    assert [r.code for r in cluster.create_acls([kept, removed])] == [0, 0]
    assert cluster.delete_acls([AclBindingFilter(resource_name="t")]) == [[removed]]
    cluster.set_scram_credential("alice", "alice-secret")
    cluster.set_scram_credential("bob", "bob-secret", "SCRAM-SHA-512")
    cluster.delete_scram_credential("bob", "SCRAM-SHA-512")
    again = Cluster(brokers=1, seed=3, log_dir=tmp_path)
    assert again.describe_acls(AclBindingFilter()) == [kept]
    credentials = again.controller.scram_credentials
    assert list(credentials) == [("alice", "SCRAM-SHA-256")]
    assert credentials[("alice", "SCRAM-SHA-256")].check_password("alice-secret")
    assert not credentials[("alice", "SCRAM-SHA-256")].check_password("wrong")


def test_an_identical_acl_is_kept_once():
    cluster = Cluster(brokers=1)
    cluster.create_acls([acl("t", Op.READ)])
    cluster.create_acls([acl("t", Op.READ)])
    assert len(cluster.describe_acls(AclBindingFilter())) == 1


def _scram_login(mechanism: str, stored_password: str, password: str) -> ScramServer:
    from kafka.net.sasl.scram import ScramClient
    credential = make_credential(mechanism, stored_password, 4096, b"salt" * 8)
    server = ScramServer(mechanism, {"alice": credential}.get, "server-nonce")
    client = ScramClient("alice", password, mechanism)
    first = server.evaluate(client.first_message())
    client.process_server_first_message(first)
    final = server.evaluate(client.final_message())
    client.process_server_final_message(final)  # checks the server's signature
    return server


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_exchange_with_kafka_pythons_client(mechanism):
    server = _scram_login(mechanism, "s3cret", "s3cret")
    assert server.complete and server.username == "alice"
    with pytest.raises(ScramError, match="Invalid client credentials"):
        _scram_login(mechanism, "s3cret", "wrong")
