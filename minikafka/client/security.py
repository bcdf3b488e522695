"""Who an in-process client is, and what the cluster's authorizer lets it do.

The in-process clients take kafka-python's own security settings, so a lesson's code
moves to a real broker unchanged:

    cluster.enable_acls(super_users=["User:admin"])
    cluster.set_scram_credential("alice", "alice-secret")
    consumer = cluster.consumer("orders-eu", group_id="team-eu",
                                security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
                                sasl_plain_username="alice", sasl_plain_password="alice-secret")
    consumer.poll()     # GroupAuthorizationFailedError until an ACL lets alice READ team-eu

There is no network here, so no listener and no JAAS file: a SASL client's password is
checked against the user's SCRAM credentials (cluster.set_scram_credential, the
metadata log's), whichever mechanism it names. Without SASL the client is
User:ANONYMOUS, as on a PLAINTEXT listener. Refusals raise kafka-python's classes
(TopicAuthorizationFailedError, GroupAuthorizationFailedError, ...).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kafka import errors as Errors

from ..core.acl import ANONYMOUS, CLUSTER_NAME, AclOperation, ResourceType

__all__ = ["IN_PROCESS_HOST", "SECURITY_DEFAULTS", "authenticate", "check", "refused_topics"]

# kafka-python's names and defaults for what a client says about itself.
SECURITY_DEFAULTS: dict[str, Any] = {
    "security_protocol": "PLAINTEXT",
    "sasl_mechanism": None,
    "sasl_plain_username": None,
    "sasl_plain_password": None,
}
# The client address host-scoped ACLs see for an in-process client.
IN_PROCESS_HOST = "127.0.0.1"
_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")


def authenticate(cluster: Any, config: Mapping[str, Any]) -> str:
    """The principal of a client with these settings; SaslAuthenticationFailedError
    (Kafka's error 58) for a wrong user or password."""
    protocol = str(config.get("security_protocol") or "PLAINTEXT").upper()
    if protocol not in _PROTOCOLS:
        raise Errors.KafkaConfigurationError(f"Invalid security_protocol {protocol!r}")
    if not protocol.startswith("SASL_"):
        return ANONYMOUS
    mechanism = str(config.get("sasl_mechanism") or "PLAIN").upper()
    user, password = config.get("sasl_plain_username"), config.get("sasl_plain_password")
    if not user or password is None:
        raise Errors.KafkaConfigurationError(
            f"sasl_plain_username and sasl_plain_password are required for {mechanism}")
    credentials = cluster.controller.scram_credentials
    known = [c for (name, m), c in credentials.items()
             if name == user and (mechanism == "PLAIN" or m == mechanism)]
    if not any(c.check_password(password) for c in known):
        if mechanism == "PLAIN":
            raise Errors.SaslAuthenticationFailedError(
                "Authentication failed: Invalid username or password")
        raise Errors.SaslAuthenticationFailedError(
            "Authentication failed during authentication due to invalid credentials with "
            f"SASL mechanism {mechanism}")
    return f"User:{user}"


def _allowed(cluster: Any, principal: str, operation: AclOperation, kind: ResourceType,
             name: str) -> bool:
    return cluster.authorize(principal, IN_PROCESS_HOST, operation, kind, name)


def refused_topics(cluster: Any, principal: str, operation: AclOperation,
                   topics: Iterable[str]) -> set[str]:
    """The topics among `topics` the principal may not `operation`."""
    if cluster.authorizer is None:
        return set()
    return {t for t in topics if not _allowed(cluster, principal, operation, ResourceType.TOPIC,
                                               t)}


def check(cluster: Any, principal: str, operation: AclOperation, kind: ResourceType,
          name: str = CLUSTER_NAME) -> None:
    """Raise kafka-python's authorization error unless the principal may do it."""
    if cluster.authorizer is None or _allowed(cluster, principal, operation, kind, name):
        return
    if kind == ResourceType.TOPIC:
        raise Errors.TopicAuthorizationFailedError({name})
    if kind == ResourceType.GROUP:
        raise Errors.GroupAuthorizationFailedError(name)
    if kind == ResourceType.TRANSACTIONAL_ID:
        raise Errors.TransactionalIdAuthorizationFailedError(name)
    raise Errors.ClusterAuthorizationFailedError(
        f"{principal} may not {operation.name} the cluster")
