"""SCRAM's salted password without OpenSSL: the pure-Python PBKDF2 the browser edition uses
gives what hashlib's does."""
from __future__ import annotations

import hashlib

import pytest

from minikafka.core.scram import MECHANISMS, pbkdf2_hmac, salted_password


@pytest.mark.parametrize("mechanism", sorted(MECHANISMS))
@pytest.mark.parametrize("iterations", [1, 2, 4096])
def test_pure_python_pbkdf2_matches_hashlib(mechanism: str, iterations: int) -> None:
    name = MECHANISMS[mechanism][0]
    for password, salt in [(b"alice-secret", b"salt-1"), (b"", b"\x00" * 16)]:
        assert pbkdf2_hmac(name, password, salt, iterations) == hashlib.pbkdf2_hmac(
            name, password, salt, iterations)


def test_salted_password_uses_the_fallback_where_hashlib_has_no_pbkdf2(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with_openssl = salted_password("SCRAM-SHA-512", "bob-secret", b"s", 4096)
    monkeypatch.delattr(hashlib, "pbkdf2_hmac")
    assert salted_password("SCRAM-SHA-512", "bob-secret", b"s", 4096) == with_openssl
    assert salted_password("SCRAM-SHA-512", "bob-secret!", b"s", 4096) != with_openssl
