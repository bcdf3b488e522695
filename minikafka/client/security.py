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
from typing import TYPE_CHECKING, Any

from kafka import errors as Errors

from .. import errors as kerrors
from ..core import errors
from ..core.acl import ANONYMOUS, CLUSTER_NAME
from ..core.api import authz

if TYPE_CHECKING:
    from ..core.api.port import ClusterPort

__all__ = ["IN_PROCESS_HOST", "SECURITY_DEFAULTS", "authenticate", "caller", "raise_refusals",
           "raise_refused", "refusals_error", "refused_error"]

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


def authenticate(cluster: ClusterPort, config: Mapping[str, Any]) -> str:
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


def caller(principal: str) -> authz.Caller:
    """An in-process client as the core's authorization rules (core.api.authz) take it."""
    return authz.Caller(principal, IN_PROCESS_HOST)


def refused_error(code: int, resource: str | Iterable[str] = CLUSTER_NAME) -> Errors.KafkaError:
    """kafka-python's exception for an authorization error code: the refused topics
    (a set, as kafka-python gives them), group, transactional id, or the cluster."""
    if code == errors.TOPIC_AUTHORIZATION_FAILED:
        return Errors.TopicAuthorizationFailedError(
            {resource} if isinstance(resource, str) else set(resource))
    if code == errors.GROUP_AUTHORIZATION_FAILED:
        return Errors.GroupAuthorizationFailedError(resource)
    if code == errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
        return Errors.TransactionalIdAuthorizationFailedError(resource)
    return kerrors.for_code(code, str(resource))


def raise_refused(code: int, resource: str = CLUSTER_NAME) -> None:
    """Raise kafka-python's error for a rule's answer (nothing for 0)."""
    if code:
        raise refused_error(code, resource)


def refusals_error(refusals: Mapping[str, int],
                   resource: str = CLUSTER_NAME) -> Errors.KafkaError | None:
    """kafka-python's error for a rule's per-topic answer (None if nothing was refused):
    the group's or transactional id's (`resource`) when that was refused, else
    TopicAuthorizationFailedError naming the refused topics."""
    if not refusals:
        return None
    codes = set(refusals.values())
    if codes == {errors.TOPIC_AUTHORIZATION_FAILED}:
        return refused_error(errors.TOPIC_AUTHORIZATION_FAILED, refusals)
    return refused_error(max(codes - {errors.TOPIC_AUTHORIZATION_FAILED}), resource)


def raise_refusals(refusals: Mapping[str, int], resource: str = CLUSTER_NAME) -> None:
    """Raise refusals_error's answer, if any."""
    exc = refusals_error(refusals, resource)
    if exc is not None:
        raise exc
