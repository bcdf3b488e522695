"""Delegation tokens (KIP-48): CreateDelegationToken (key 38), RenewDelegationToken (39),
ExpireDelegationToken (40), DescribeDelegationToken (41), as Kafka 4.4's brokers
(KafkaApis) and controller (DelegationTokenControlManager) answer them.

A client that logged in with a strong mechanism asks for a token; its owner is itself, or
another user it has CREATE_TOKENS on. The token is an id (a random Uuid) and an HMAC-SHA512 of
the id under `delegation.token.secret.key`; a worker logs in with SCRAM using the id as
user name, the HMAC (base64) as password and the extension `tokenauth=true`, and becomes
the token's owner. Tokens live until `expiry` (issue + delegation.token.expiry.time.ms,
1 day, renewable) and never past `max` (issue + delegation.token.max.lifetime.ms, 7 days).

Kafka's refusals, in its order:
- errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED (64): over PLAINTEXT, over one-way TLS (an SSL
  client without a certificate), or on a connection that itself logged in with a token;
- errors.DELEGATION_TOKEN_AUTH_DISABLED (61): no delegation.token.secret.key;
- errors.DELEGATION_TOKEN_AUTHORIZATION_FAILED (65): a token for another owner without
  CREATE_TOKENS on that user; errors.INVALID_PRINCIPAL_TYPE (67): a renewer that is not a User;
- errors.DELEGATION_TOKEN_NOT_FOUND (62), errors.DELEGATION_TOKEN_EXPIRED (66),
  errors.DELEGATION_TOKEN_OWNER_MISMATCH (63: only the owner and the renewers renew or expire).
"""
from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import replace
from typing import TYPE_CHECKING

from .. import errors
from ..acl import AclOperation, ResourceType
from ..delegation_token import DelegationToken, token_hmac
from ..scram import MECHANISMS, ScramCredential, make_credential

if TYPE_CHECKING:
    from .port import ClusterPort

__all__ = ["DelegationToken", "allow_token_requests", "create", "describe", "expire", "renew",
           "sweep_expired", "token_credential"]


USER_TYPE = "User"
ANONYMOUS = "User:ANONYMOUS"


def allow_token_requests(protocol: str, principal: str, token_authenticated: bool) -> bool:
    """KafkaApis.allowTokenRequests: not over PLAINTEXT, not over one-way TLS, not with a
    token's own login."""
    return not (token_authenticated or protocol == "PLAINTEXT"
                or (protocol == "SSL" and principal == ANONYMOUS))


def _secret(cluster: ClusterPort) -> str | None:
    key = cluster.broker_config.get("delegation.token.secret.key")
    return str(key) if key else None


def _store(cluster: ClusterPort) -> dict[str, DelegationToken]:
    return cluster.controller.delegation_tokens


def create(cluster: ClusterPort, principal: str, owner: str | None, renewers: list[str],
           max_lifetime_ms: int) -> tuple[int, DelegationToken | None]:
    """(error, token) for CreateDelegationToken from PRINCIPAL (checks after
    allow_token_requests); OWNER None: the requester."""
    owner = owner or principal
    if owner != principal and cluster.authorizer is not None and not cluster.authorize(
            principal, "*", AclOperation.CREATE_TOKENS, ResourceType.USER, owner):
        return errors.DELEGATION_TOKEN_AUTHORIZATION_FAILED, None
    if any(not r.startswith(USER_TYPE + ":") for r in renewers):
        return errors.INVALID_PRINCIPAL_TYPE, None
    secret = _secret(cluster)
    if secret is None:
        return errors.DELEGATION_TOKEN_AUTH_DISABLED, None
    now = cluster.now_ms
    config = cluster.broker_config
    lifetime = int(config["delegation.token.max.lifetime.ms"])
    if max_lifetime_ms > 0:
        lifetime = min(lifetime, max_lifetime_ms)
    max_ms = now + lifetime
    expiry_ms = min(max_ms, now + int(config["delegation.token.expiry.time.ms"]))
    token_id = _random_uuid(cluster)
    token = DelegationToken(token_id, owner, principal, tuple(renewers), now, max_ms,
                            expiry_ms, token_hmac(secret, token_id))
    cluster.controller.put_delegation_token(token)
    cluster.publish_metadata()
    return errors.NONE, token


def _random_uuid(cluster: ClusterPort) -> str:
    """Kafka's Uuid.randomUuid() as it prints (22 characters of URL-safe base64, never
    starting with "-"), from the controller's seeded random: the same seed, the same ids."""
    while True:
        raw = cluster.controller.rng.getrandbits(128).to_bytes(16, "big")
        text = base64.urlsafe_b64encode(raw).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def _find(cluster: ClusterPort, mac: bytes) -> DelegationToken | None:
    return next((t for t in _store(cluster).values() if hmac.compare_digest(t.hmac, mac)), None)


def _renewable(cluster: ClusterPort, principal: str, mac: bytes, check_expiry: bool
               ) -> tuple[int, DelegationToken | None]:
    """The token with HMAC MAC if PRINCIPAL may renew or expire it, else Kafka's error, in
    the controller's order (renew checks the expiry before the owner, expire after)."""
    if _secret(cluster) is None:
        return errors.DELEGATION_TOKEN_AUTH_DISABLED, None
    token = _find(cluster, mac)
    if token is None:
        return errors.DELEGATION_TOKEN_NOT_FOUND, None
    now = cluster.now_ms
    if check_expiry and (token.max_ms < now or token.expiry_ms < now):
        return errors.DELEGATION_TOKEN_EXPIRED, None
    if principal != token.owner and principal not in token.renewers:
        return errors.DELEGATION_TOKEN_OWNER_MISMATCH, None
    return errors.NONE, token


def renew(cluster: ClusterPort, principal: str, mac: bytes, renew_period_ms: int) -> tuple[int, int]:
    """(error, new expiry) for RenewDelegationToken."""
    error, token = _renewable(cluster, principal, mac, check_expiry=True)
    if token is None:
        return error, 0
    now = cluster.now_ms
    period = int(cluster.broker_config["delegation.token.expiry.time.ms"])
    if renew_period_ms > 0:
        period = min(period, renew_period_ms)
    expiry = min(token.max_ms, now + period)
    cluster.controller.put_delegation_token(replace(token, expiry_ms=expiry))
    cluster.publish_metadata()
    return errors.NONE, expiry


def expire(cluster: ClusterPort, principal: str, mac: bytes, expiry_period_ms: int) -> tuple[int, int]:
    """(error, expiry) for ExpireDelegationToken: a negative period removes the token now."""
    error, token = _renewable(cluster, principal, mac, check_expiry=False)
    if token is None:
        return error, 0
    now = cluster.now_ms
    if expiry_period_ms < 0:
        cluster.controller.remove_delegation_token(token.token_id)
        cluster.publish_metadata()
        return errors.NONE, now
    if token.max_ms < now or token.expiry_ms < now:
        return errors.DELEGATION_TOKEN_EXPIRED, 0
    expiry = min(token.max_ms, now + expiry_period_ms)
    cluster.controller.put_delegation_token(replace(token, expiry_ms=expiry))
    cluster.publish_metadata()
    return errors.NONE, expiry


def sweep_expired(cluster: ClusterPort) -> list[str]:
    """The controller's sweep, every delegation.token.expiry.check.interval.ms (1 hour):
    tokens past their expiry or their maximum lifetime are removed
    (DelegationTokenControlManager.sweepExpiredDelegationTokens); returns their ids."""
    now = cluster.now_ms
    gone = [t.token_id for t in _store(cluster).values() if t.max_ms < now or t.expiry_ms < now]
    for token_id in gone:
        cluster.controller.remove_delegation_token(token_id)
    if gone:
        cluster.publish_metadata()
    return gone


def describe(cluster: ClusterPort, principal: str, owners: list[str] | None
             ) -> tuple[int, list[DelegationToken]]:
    """(error, tokens) for DescribeDelegationToken: OWNERS None is every token, [] none;
    a principal sees its own tokens (owner, requester or renewer) and those it may
    DESCRIBE (the token, or DESCRIBE_TOKENS on its owner)."""
    if _secret(cluster) is None:
        return errors.DELEGATION_TOKEN_AUTH_DISABLED, []
    if owners is not None and not owners:
        return errors.NONE, []

    def visible(token: DelegationToken) -> bool:
        if owners is not None and not any(token.owner_or_renewer(o) for o in owners):
            return False
        if token.owner_or_renewer(principal) or cluster.authorizer is None:
            return True
        return cluster.authorize(principal, "*", AclOperation.DESCRIBE,
                                 ResourceType.DELEGATION_TOKEN, token.token_id) or \
            cluster.authorize(principal, "*", AclOperation.DESCRIBE_TOKENS, ResourceType.USER,
                              token.owner)

    return errors.NONE, [t for t in _store(cluster).values() if visible(t)]


def token_credential(cluster: ClusterPort, token_id: str, mechanism: str
                     ) -> tuple[ScramCredential, str] | None:
    """The SCRAM credential a token logs in with (password: its HMAC in base64, the
    mechanism's minimum iterations, as Kafka's DelegationTokenCache) and its owner; None
    for an unknown or expired token."""
    token = _store(cluster).get(token_id)
    if token is None or token.expiry_ms < cluster.now_ms or mechanism not in MECHANISMS:
        return None
    password = base64.b64encode(token.hmac).decode()
    salt = hashlib.sha256(token.token_id.encode()).digest()[:16]
    return make_credential(mechanism, password, MECHANISMS[mechanism][2], salt), token.owner
