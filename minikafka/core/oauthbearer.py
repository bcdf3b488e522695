"""SASL/OAUTHBEARER with Kafka's unsecured JWTs (RFC 7628), the server side.

A broker with `sasl.enabled.mechanisms=OAUTHBEARER` and no
`sasl.server.callback.handler.class` validates tokens with Kafka's
OAuthBearerUnsecuredValidatorCallbackHandler: an *unsecured* JWS (header `{"alg":"none"}`,
no signature), for development only, since anyone can write one. The client's one message:

    n,,\\x01auth=Bearer <header>.<claims>.\\x01[key=value\\x01]*\\x01

The token must carry the principal claim (`sub`, or the JAAS option
unsecuredValidatorPrincipalClaimName) as a string and `exp` (seconds) in the future; `iat`
and `nbf`, when present, must come before `exp`; unsecuredValidatorRequiredScope lists
scopes the `scope` claim must hold. A token that fails gets Kafka's two-step refusal: the
server answers `{"status":"invalid_token"}`, the client sends `\\x01`, and the login fails
with that JSON as the error message. The principal is `User:<sub>`.

Java clients make such a token with OAuthBearerLoginModule's
`unsecuredLoginStringClaim_sub="alice"`; librdkafka (confluent-kafka) with
`enable.sasl.oauthbearer.unsecure.jwt=true` and `sasl.oauthbearer.config=principal=alice`.
"""
from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Mapping

from .scram import ScramError

__all__ = ["OAuthBearerServer", "SaslAuthenticationError", "unsecured_jws"]

MECHANISM = "OAUTHBEARER"
_SEPARATOR = "\x01"
# OAuthBearerClientInitialResponse's pattern: gs2 header, then key=value pairs.
_INITIAL = re.compile("n,(?:a=(?P<authzid>[^,]*))?,\x01(?P<pairs>(?:[A-Za-z]+=[\x21-\x7E \t\r\n]*\x01)*)\x01")
_AUTH = re.compile(r"(?P<scheme>\w+) +(?P<token>[-_~+/.a-zA-Z0-9]+=*)")


class SaslAuthenticationError(ScramError):
    """Kafka's SaslAuthenticationException: its message goes to the client as it is."""

    verbatim = True


class _IllegalToken(Exception):
    def __init__(self, reason: str, scope: str | None = None) -> None:
        super().__init__(reason)
        self.scope = scope


def _b64(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def unsecured_jws(claims: Mapping[str, object]) -> str:
    """An unsecured JWS with CLAIMS, as Kafka's unsecured login module writes one."""
    def encode(obj: object) -> str:
        raw = json.dumps(obj, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    return f"{encode({'alg': 'none'})}.{encode(dict(claims))}."


def validate_unsecured(token: str, now_ms: int, options: Mapping[str, str]) -> str:
    """The principal name in TOKEN, checked as OAuthBearerUnsecuredValidatorCallbackHandler
    checks it at NOW_MS; _IllegalToken if it fails."""
    principal_claim = options.get("unsecuredValidatorPrincipalClaimName", "").strip() or "sub"
    scope_claim = options.get("unsecuredValidatorScopeClaimName", "").strip() or "scope"
    required = options.get("unsecuredValidatorRequiredScope", "").split()
    skew = int(options.get("unsecuredValidatorAllowableClockSkewMs", "0") or 0)
    if ".." in token:
        raise _IllegalToken("Malformed compact serialization contains '..'")
    parts = token.split(".")
    if len(parts) == 2 and token.endswith("."):
        parts.append("")
    if len(parts) != 3:
        raise _IllegalToken("Unsecured JWS compact serializations must have 3 dot-separated "
                            "Base64URL-encoded values")
    try:
        header, claims = json.loads(_b64(parts[0])), json.loads(_b64(parts[1]))
    except ValueError as exc:
        raise _IllegalToken(f"Invalid JWS: {exc}") from None
    if not isinstance(header, dict) or not isinstance(claims, dict):
        raise _IllegalToken("Invalid JWS: header and claims must be JSON objects")
    if header.get("alg") != "none":
        raise _IllegalToken("Unsecured JWS must have 'none' for an algorithm")
    if parts[2]:
        raise _IllegalToken("Unsecured JWS must not contain a digital signature")
    exp = claims.get("exp")
    if not isinstance(exp, int | float) or isinstance(exp, bool):
        raise _IllegalToken("No expiration time in JWT")
    principal = claims.get(principal_claim)
    if not isinstance(principal, str) or not principal.strip():
        raise _IllegalToken(f"No principal name in JWT claim: {principal_claim}")
    iat, nbf = claims.get("iat"), claims.get("nbf")
    if isinstance(iat, int | float) and iat * 1000 > now_ms + skew:
        raise _IllegalToken("The Issued At value is after the current time")
    if exp * 1000 <= now_ms - skew:
        raise _IllegalToken("The indicated time is before the current time")
    for name, value in (("iat", iat), ("nbf", nbf)):
        if isinstance(value, int | float) and value >= exp:
            raise _IllegalToken(f"The {name} claim does not precede the expiration time")
    scope = claims.get(scope_claim, [])
    scopes = scope.split() if isinstance(scope, str) else list(scope)
    missing = [s for s in required if s not in scopes]
    if missing:
        raise _IllegalToken(f"The provided scope lacks: {' '.join(missing)}", " ".join(required))
    return principal


class OAuthBearerServer:
    """One OAUTHBEARER login, validated at `now_ms()` with the listener's JAAS options."""

    def __init__(self, options: Mapping[str, str], now_ms: Callable[[], int]) -> None:
        self.options = dict(options)
        self.now_ms = now_ms
        self.username: str | None = None
        self.complete = False
        self._error: str | None = None

    def evaluate(self, token: bytes) -> bytes:
        if token == b"\x01" and self._error is not None:
            raise SaslAuthenticationError(self._error)  # the client acknowledged our error
        self._error = None
        message = token.decode("utf-8", "replace")
        initial = _INITIAL.fullmatch(message)
        if initial is None:
            raise ScramError("Invalid OAUTHBEARER client first message")
        pairs = dict(p.split("=", 1) for p in initial["pairs"].split(_SEPARATOR) if p)
        auth = _AUTH.fullmatch(pairs.get("auth", ""))
        if auth is None or auth["scheme"].lower() != "bearer":
            raise ScramError("Invalid OAUTHBEARER client first message")
        try:
            principal = validate_unsecured(auth["token"], self.now_ms(), self.options)
        except _IllegalToken as exc:
            # OAuthBearerSaslServer.jsonErrorResponse's exact text
            self._error = ('{"status":"invalid_token"}' if exc.scope is None else
                           f'{{"status":"insufficient_scope", "scope":"{exc.scope}"}}')
            return self._error.encode()
        authzid = initial["authzid"] or ""
        if authzid and authzid != principal:
            raise SaslAuthenticationError(
                f"Authentication failed: Client requested an authorization id ({authzid}) that "
                f"is different from the token's principal name ({principal})")
        self.username, self.complete = principal, True
        return b""
