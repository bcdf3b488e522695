"""SASL on a connection: Kafka's SaslServerAuthenticator, sans-IO.

On a SASL_PLAINTEXT or SASL_SSL listener a client must authenticate before anything
else: ApiVersions (answered as usual), then SaslHandshake (key 17) naming a mechanism,
then SaslAuthenticate (key 36) carrying the mechanism's tokens until it succeeds. As in
Kafka:

- any other request first is an illegal SASL state: the connection closes unanswered;
- a mechanism the listener has not enabled gets UNSUPPORTED_SASL_MECHANISM with the
  enabled ones, and the connection closes;
- wrong credentials get SASL_AUTHENTICATION_FAILED with Kafka's message, and the
  connection closes;
- once authenticated, the connection's principal is `User:<name>`; a second
  SaslHandshake or SaslAuthenticate reaches the handlers, which answer
  ILLEGAL_SASL_STATE.

SaslHandshake v0 (no SaslAuthenticate framing: the tokens follow as bare size-prefixed
frames) is served too, as Kafka still does.

PLAIN checks the listener's JAAS `user_<name>="<password>"` options; SCRAM-SHA-256/512
check the credentials in the metadata log (AlterUserScramCredentials); OAUTHBEARER
validates an unsecured JWT (core/oauthbearer.py) against the cluster's clock.
"""
from __future__ import annotations

import secrets
import time
from typing import TYPE_CHECKING, Any

from kafka.protocol.sasl import SaslAuthenticateResponse, SaslHandshakeResponse

from ..core import errors
from ..core.api.delegation_tokens import token_credential
from ..core.oauthbearer import OAuthBearerServer
from ..core.scram import ScramError, ScramServer
from ..core.security_config import ListenerConfig
from .codec import API_VERSIONS_KEY, KafkaRequest

if TYPE_CHECKING:
    from ..core.api.port import ClusterPort

__all__ = ["SASL_AUTHENTICATE_KEY", "SASL_HANDSHAKE_KEY", "SaslAuthenticator", "SaslStep"]

SASL_HANDSHAKE_KEY = 17
SASL_AUTHENTICATE_KEY = 36

HANDSHAKE, AUTHENTICATE, COMPLETE = "handshake", "authenticate", "complete"


class SaslStep:
    """What the authenticator answers one request with: a response to send (or None),
    and why the connection must close afterwards (or None)."""

    __slots__ = ("response", "close", "passthrough")

    def __init__(self, response: Any = None, close: str | None = None,
                 passthrough: bool = False) -> None:
        self.response = response
        self.close = close
        self.passthrough = passthrough  # not the authenticator's: dispatch it as usual


# A failed login, whatever the mechanism: str() is the message Kafka sends back.
LoginFailed = ScramError


class _Plain:
    def __init__(self, users: dict[str, str]) -> None:
        self.users = users
        self.username: str | None = None
        self.complete = False

    def evaluate(self, token: bytes) -> bytes:
        parts = token.split(b"\0")
        if len(parts) != 3:
            raise LoginFailed("Authentication failed: Invalid SASL/PLAIN response: expected 3 "
                             f"tokens, got {len(parts)}")
        authzid, user, password = (p.decode("utf-8", "replace") for p in parts)
        if not user:
            raise LoginFailed("Authentication failed: username not specified")
        if not password:
            raise LoginFailed("Authentication failed: password not specified")
        expected = self.users.get(user)
        if expected is None or expected != password:
            raise LoginFailed("Authentication failed: Invalid username or password")
        if authzid and authzid != user:
            raise LoginFailed("Authentication failed: Client requested an authorization id "
                             "that is different from username")
        self.username, self.complete = user, True
        return b""


class SaslAuthenticator:
    """The SASL state of one connection on listener `listener` of `cluster`."""

    def __init__(self, listener: ListenerConfig, cluster: ClusterPort) -> None:
        self.listener = listener
        self.cluster = cluster
        self.state = HANDSHAKE
        self.raw_tokens = False  # after a v0 handshake
        self.mechanism: str | None = None
        self.principal: str | None = None
        self.token_authenticated = False  # logged in with a delegation token
        self._server: Any = None

    @property
    def complete(self) -> bool:
        return self.state == COMPLETE

    def receive(self, request: KafkaRequest) -> SaslStep:
        """One request while not yet authenticated."""
        key = request.api_key
        if self.state == HANDSHAKE:
            if key == API_VERSIONS_KEY:
                return SaslStep(passthrough=True)
            if key == SASL_HANDSHAKE_KEY:
                return self._handshake(request)
        elif self.state == AUTHENTICATE and key == SASL_AUTHENTICATE_KEY:
            return self._authenticate(request)
        name = _api_name(key)
        return SaslStep(close=f"Unexpected Kafka request of type {name} during SASL "
                              f"{'handshake' if self.state == HANDSHAKE else 'authentication'}.")

    def receive_token(self, token: bytes) -> tuple[bytes | None, str | None]:
        """A bare token after a v0 handshake: (token to send back or None, close reason)."""
        try:
            answer = self._server.evaluate(token)
        except LoginFailed as exc:
            return None, self._failure(exc)
        if self._server.complete:
            self._succeed()
        return answer, None

    def _handshake(self, request: KafkaRequest) -> SaslStep:
        mechanism = request.body.mechanism
        enabled = list(self.listener.mechanisms)
        version = request.api_version
        if mechanism not in enabled:
            return SaslStep(SaslHandshakeResponse(
                version=version, error_code=errors.UNSUPPORTED_SASL_MECHANISM,
                mechanisms=enabled), close=f"Unsupported SASL mechanism {mechanism}")
        self.mechanism = mechanism
        if mechanism == "PLAIN":
            self._server = _Plain(self.listener.plain_users)
        elif mechanism == "OAUTHBEARER":
            cluster = self.cluster
            # Tokens carry wall-clock times (iat, exp) to the millisecond, and a served
            # cluster's clock follows the wall only tick by tick: a token written just now
            # must not look issued in the future.
            self._server = OAuthBearerServer(
                self.listener.oauthbearer_options,
                lambda: max(cluster.now_ms, int(time.time() * 1000)))
        else:
            credentials = self.cluster.controller.scram_credentials
            cluster = self.cluster
            self._server = ScramServer(mechanism,
                                       lambda user: credentials.get((user, mechanism)),
                                       secrets.token_urlsafe(24),
                                       lambda token_id: token_credential(cluster, token_id,
                                                                         mechanism))
        self.state = AUTHENTICATE
        self.raw_tokens = version == 0
        return SaslStep(SaslHandshakeResponse(version=version, error_code=errors.NONE,
                                              mechanisms=enabled))

    def _authenticate(self, request: KafkaRequest) -> SaslStep:
        version = request.api_version
        try:
            answer = self._server.evaluate(bytes(request.body.auth_bytes))
        except LoginFailed as exc:
            message = self._failure(exc)
            return SaslStep(SaslAuthenticateResponse(
                version=version, error_code=errors.SASL_AUTHENTICATION_FAILED,
                error_message=message, auth_bytes=b"", session_lifetime_ms=0), close=message)
        if self._server.complete:
            self._succeed()
        return SaslStep(SaslAuthenticateResponse(
            version=version, error_code=errors.NONE, error_message=None, auth_bytes=answer,
            session_lifetime_ms=0))

    def _failure(self, exc: LoginFailed) -> str:
        text = str(exc)
        if getattr(exc, "verbatim", False) or text.startswith("Authentication failed"):
            return text
        return ("Authentication failed during authentication due to invalid credentials with "
                f"SASL mechanism {self.mechanism}")

    def _succeed(self) -> None:
        self.state = COMPLETE
        self.principal = f"User:{self._server.username}"
        self.token_authenticated = getattr(self._server, "token_authenticated", False)


def _api_name(api_key: int) -> str:
    from .codec import request_class
    cls = request_class(api_key)
    name = cls.__name__.removesuffix("Request") if cls is not None else str(api_key)
    # Kafka's ApiKeys names: SASL_HANDSHAKE, FETCH ...
    out = ""
    for i, c in enumerate(name):
        if c.isupper() and i and not name[i - 1].isupper():
            out += "_"
        out += c.upper()
    return out
