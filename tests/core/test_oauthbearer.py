"""OAUTHBEARER's server side with Kafka's unsecured-JWT validation (core/oauthbearer.py):
the messages and checks of OAuthBearerSaslServer and
OAuthBearerUnsecuredValidatorCallbackHandler."""
from __future__ import annotations

import base64
import json

import pytest

from minikafka.core.oauthbearer import OAuthBearerServer, SaslAuthenticationError, unsecured_jws
from minikafka.core.scram import ScramError

NOW_MS = 1_800_000_000_000
NOW_S = NOW_MS // 1000


def first_message(token: str, authzid: str = "", extensions: str = "") -> bytes:
    gs2 = f"n,a={authzid}," if authzid else "n,,"
    return f"{gs2}\x01auth=Bearer {token}\x01{extensions}\x01".encode()


def login(token: str, options=None, **kwargs) -> OAuthBearerServer:
    server = OAuthBearerServer(options or {}, lambda: NOW_MS)
    answer = server.evaluate(first_message(token, **kwargs))
    if answer:  # Kafka's two-step refusal: the error, then the client's \x01
        server.evaluate(b"\x01")
    return server


def test_a_valid_unsecured_token_logs_in_as_its_sub():
    server = login(unsecured_jws({"sub": "alice", "iat": NOW_S, "exp": NOW_S + 3600}))
    assert server.complete and server.username == "alice"


def test_extensions_are_accepted():
    token = unsecured_jws({"sub": "alice", "exp": NOW_S + 60})
    assert login(token, extensions="traceId=123\x01").username == "alice"


@pytest.mark.parametrize("claims", [
    {"sub": "alice", "exp": NOW_S - 1},                     # expired
    {"sub": "alice"},                                        # no exp
    {"exp": NOW_S + 60},                                     # no sub
    {"azp": "alice", "exp": NOW_S + 60},                     # the principal under another claim
    {"sub": "alice", "iat": NOW_S + 600, "exp": NOW_S + 900},  # issued in the future
    {"sub": "", "exp": NOW_S + 60},                          # blank principal
])
def test_a_token_that_fails_validation_is_refused_with_invalid_token(claims):
    server = OAuthBearerServer({}, lambda: NOW_MS)
    assert server.evaluate(first_message(unsecured_jws(claims))) == b'{"status":"invalid_token"}'
    with pytest.raises(SaslAuthenticationError) as refused:
        server.evaluate(b"\x01")
    assert str(refused.value) == '{"status":"invalid_token"}'
    assert not server.complete


def test_a_signed_token_or_another_algorithm_is_not_an_unsecured_jws():
    header = base64.urlsafe_b64encode(json.dumps({"alg": "HS256"}).encode()).rstrip(b"=").decode()
    body = unsecured_jws({"sub": "alice", "exp": NOW_S + 60}).split(".")[1]
    for token in (f"{header}.{body}.", unsecured_jws({"sub": "alice", "exp": NOW_S + 60}) + "c2ln"):
        server = OAuthBearerServer({}, lambda: NOW_MS)
        assert server.evaluate(first_message(token)) == b'{"status":"invalid_token"}'


def test_the_principal_claim_and_required_scope_come_from_the_jaas_options():
    options = {"unsecuredValidatorPrincipalClaimName": "azp",
               "unsecuredValidatorRequiredScope": "LOGIN_TO_KAFKA"}
    ok = unsecured_jws({"azp": "svc", "scope": ["LOGIN_TO_KAFKA"], "exp": NOW_S + 60})
    assert login(ok, options).username == "svc"
    server = OAuthBearerServer(options, lambda: NOW_MS)
    lacking = unsecured_jws({"azp": "svc", "scope": "OTHER", "exp": NOW_S + 60})
    assert server.evaluate(first_message(lacking)) == \
        b'{"status":"insufficient_scope", "scope":"LOGIN_TO_KAFKA"}'


def test_an_authorization_id_other_than_the_principal_is_refused_with_kafkas_message():
    token = unsecured_jws({"sub": "alice", "exp": NOW_S + 60})
    server = OAuthBearerServer({}, lambda: NOW_MS)
    with pytest.raises(SaslAuthenticationError, match=r"Client requested an authorization id "
                       r"\(bob\) that is different from the token's principal name \(alice\)"):
        server.evaluate(first_message(token, authzid="bob"))


@pytest.mark.parametrize("message", [b"", b"n,,auth=Bearer x", b"n,,\x01auth=Basic abc\x01\x01",
                                     b"\x01"])
def test_a_malformed_first_message_fails_without_detail(message):
    # a SaslException: the broker sends its generic message, not this one
    with pytest.raises(ScramError) as failed:
        OAuthBearerServer({}, lambda: NOW_MS).evaluate(message)
    assert not getattr(failed.value, "verbatim", False)
