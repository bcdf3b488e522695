"""SCRAM credentials and the server side of a SCRAM exchange (RFC 5802, 7677).

Kafka keeps a SCRAM credential per user and mechanism in the metadata log
(UserScramCredentialRecord: salt, stored key, server key, iterations), never the
password; AlterUserScramCredentials sets one (kafka-configs --add-config
'SCRAM-SHA-256=[password=...]'). A login is three messages:

    client-first   n,,n=alice,r=<client nonce>
    server-first   r=<client nonce + server nonce>,s=<salt>,i=<iterations>
    client-final   c=biws,r=<nonce>,p=<proof>        (checked against the stored key)
    server-final   v=<server signature>

`ScramServer` plays the server: feed it the client's messages, it returns its own or
raises ScramError (Kafka then answers SASL_AUTHENTICATION_FAILED).
"""
from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass

__all__ = ["MECHANISMS", "ScramCredential", "ScramError", "ScramServer", "make_credential"]

# mechanism -> (hash name, Kafka's ScramMechanism type code, minimum iterations)
MECHANISMS: dict[str, tuple[str, int, int]] = {
    "SCRAM-SHA-256": ("sha256", 1, 4096),
    "SCRAM-SHA-512": ("sha512", 2, 4096),
}
MAX_ITERATIONS = 16384  # Kafka's ScramMechanism.maxIterations
DEFAULT_ITERATIONS = 4096


class ScramError(Exception):
    """The exchange failed; str() is the message Kafka sends with the error."""


@dataclass(frozen=True, slots=True)
class ScramCredential:
    mechanism: str
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def as_record(self) -> dict[str, object]:
        return {"mechanism": self.mechanism, "salt": self.salt.hex(),
                "stored_key": self.stored_key.hex(), "server_key": self.server_key.hex(),
                "iterations": self.iterations}

    @classmethod
    def from_record(cls, fields: dict) -> ScramCredential:
        return cls(fields["mechanism"], bytes.fromhex(fields["salt"]),
                   bytes.fromhex(fields["stored_key"]), bytes.fromhex(fields["server_key"]),
                   fields["iterations"])

    def check_password(self, password: str) -> bool:
        """Whether `password` is the one this credential was made from."""
        other = from_salted_password(self.mechanism, salted_password(
            self.mechanism, password, self.salt, self.iterations), self.salt, self.iterations)
        return hmac.compare_digest(other.stored_key, self.stored_key)


def _hash(mechanism: str) -> str:
    return MECHANISMS[mechanism][0]


def salted_password(mechanism: str, password: str, salt: bytes, iterations: int) -> bytes:
    """SCRAM's SaltedPassword: PBKDF2 with HMAC over the mechanism's hash (RFC 5802)."""
    pbkdf2 = getattr(hashlib, "pbkdf2_hmac", None) or pbkdf2_hmac
    return pbkdf2(_hash(mechanism), password.encode(), salt, iterations)


def pbkdf2_hmac(name: str, password: bytes, salt: bytes, iterations: int) -> bytes:
    """PBKDF2 (RFC 8018) for one block of the hash's length, all SCRAM needs, in Python:
    hashlib has no pbkdf2_hmac without OpenSSL (the browser edition's Pyodide)."""
    mac = hmac.new(password, digestmod=name)

    def prf(data: bytes) -> bytes:
        m = mac.copy()
        m.update(data)
        return m.digest()

    u = prf(salt + b"\x00\x00\x00\x01")
    block = int.from_bytes(u, "big")
    for _ in range(iterations - 1):
        u = prf(u)
        block ^= int.from_bytes(u, "big")
    return block.to_bytes(len(u), "big")


def from_salted_password(mechanism: str, salted: bytes, salt: bytes,
                         iterations: int) -> ScramCredential:
    name = _hash(mechanism)
    client_key = hmac.digest(salted, b"Client Key", name)
    return ScramCredential(mechanism, salt, hashlib.new(name, client_key).digest(),
                           hmac.digest(salted, b"Server Key", name), iterations)


def make_credential(mechanism: str, password: str, iterations: int,
                    salt: bytes) -> ScramCredential:
    """A credential as the controller stores it."""
    if mechanism not in MECHANISMS:
        raise ValueError(f"Unsupported mechanism {mechanism}")
    return from_salted_password(mechanism, salted_password(mechanism, password, salt, iterations),
                                salt, iterations)


def _attributes(message: str) -> dict[str, str]:
    out = {}
    for part in message.split(","):
        key, sep, value = part.partition("=")
        if not sep or len(key) != 1:
            raise ScramError(f"Invalid SCRAM message: {message!r}")
        out[key] = value
    return out


def _username(sasl_name: str) -> str:
    """RFC 5802 saslname: "=2C" is ",", "=3D" is "=" (Kafka's ScramFormatter.username)."""
    return sasl_name.replace("=2C", ",").replace("=3D", "=")


class ScramServer:
    """One SCRAM login. `lookup(username)` gives the user's credential for this
    mechanism, or None."""

    def __init__(self, mechanism: str, lookup, nonce: str, token_lookup=None) -> None:
        self.mechanism = mechanism
        self.lookup = lookup
        # A delegation token's login (extension tokenauth=true): token id -> (credential,
        # owner principal) or None.
        self.token_lookup = token_lookup
        self.nonce = nonce  # the server's part of the nonce: unpredictable, from the caller
        self.username: str | None = None
        self.token_authenticated = False
        self.complete = False
        self._first_bare = self._server_first = ""
        self._credential: ScramCredential | None = None

    def evaluate(self, token: bytes) -> bytes:
        """The client's next message in, the server's out."""
        message = token.decode("utf-8", "replace")
        if self._credential is None:
            return self._client_first(message)
        if not self.complete:
            return self._client_final(message)
        raise ScramError("SCRAM exchange already complete")

    def _client_first(self, message: str) -> bytes:
        gs2, sep, bare = message.partition(",")
        authzid, sep2, bare = bare.partition(",")
        if not sep or not sep2 or gs2 not in ("n", "y"):
            raise ScramError(f"Invalid SCRAM client first message: {message!r}")
        # n=<name>,r=<nonce>, then Kafka's extensions (key=value, e.g. tokenauth=true)
        parts = bare.split(",")
        attrs = _attributes(",".join(parts[:2]))
        if "n" not in attrs or "r" not in attrs:
            raise ScramError(f"Invalid SCRAM client first message: {message!r}")
        extensions = dict(p.partition("=")[::2] for p in parts[2:])
        username = _username(attrs["n"])
        if extensions.get("tokenauth", "").lower() == "true":
            found = self.token_lookup(username) if self.token_lookup is not None else None
            if found is None:
                raise ScramError(f"Token Authentication failed: Invalid tokenId : {username}")
            credential, owner = found
            username, self.token_authenticated = owner.partition(":")[2], True
        else:
            credential = self.lookup(username)
            if credential is None:
                raise ScramError("Authentication failed: Invalid user credentials")
        if authzid and authzid[2:] != username:
            raise ScramError("Authentication failed: Client requested an authorization id "
                             "that is different from username")
        self.username, self._credential = username, credential
        self._first_bare = bare
        self._nonce = attrs["r"] + self.nonce
        self._server_first = (f"r={self._nonce},s={base64.b64encode(credential.salt).decode()},"
                              f"i={credential.iterations}")
        return self._server_first.encode()

    def _client_final(self, message: str) -> bytes:
        credential = self._credential
        assert credential is not None
        without_proof, sep, proof_part = message.rpartition(",p=")
        if not sep:
            raise ScramError(f"Invalid SCRAM client final message: {message!r}")
        attrs = _attributes(without_proof)
        if attrs.get("r") != self._nonce:
            raise ScramError("Invalid client nonce in the final client message.")
        auth_message = f"{self._first_bare},{self._server_first},{without_proof}".encode()
        name = _hash(self.mechanism)
        signature = hmac.digest(credential.stored_key, auth_message, name)
        try:
            proof = base64.b64decode(proof_part, validate=True)
        except ValueError:
            raise ScramError("Invalid client proof") from None
        if len(proof) != len(signature):
            raise ScramError("Invalid client credentials")
        client_key = bytes(a ^ b for a, b in zip(proof, signature))
        if not hmac.compare_digest(hashlib.new(name, client_key).digest(), credential.stored_key):
            raise ScramError("Invalid client credentials")
        self.complete = True
        server_signature = hmac.digest(credential.server_key, auth_message, name)
        return b"v=" + base64.b64encode(server_signature)
