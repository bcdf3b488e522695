"""A delegation token as the controller keeps it (Kafka's TokenInformation, written as a
DelegationTokenRecord) and its HMAC, which no record holds: every broker computes it
from the token id and `delegation.token.secret.key`, as Kafka's DelegationTokenCache."""
from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass


def token_hmac(secret: str, token_id: str) -> bytes:
    """HMAC-SHA512 of the token id under the secret key: the token's password."""
    return hmac.new(secret.encode(), token_id.encode(), hashlib.sha512).digest()


@dataclass(frozen=True)
class DelegationToken:
    """Kafka's TokenInformation (a DelegationTokenRecord) and its HMAC."""

    token_id: str
    owner: str            # "User:alice"
    requester: str
    renewers: tuple[str, ...]
    issue_ms: int
    max_ms: int
    expiry_ms: int
    hmac: bytes

    def owner_or_renewer(self, principal: str) -> bool:
        return principal in (self.owner, self.requester) or principal in self.renewers

    def as_record(self) -> dict[str, object]:
        """DelegationTokenRecord's fields (no HMAC)."""
        return {"token_id": self.token_id, "owner": self.owner, "requester": self.requester,
                "renewers": list(self.renewers), "issue_timestamp": self.issue_ms,
                "max_timestamp": self.max_ms, "expiration_timestamp": self.expiry_ms}

    @classmethod
    def from_record(cls, fields: dict, secret: str | None) -> DelegationToken:
        """The token a DelegationTokenRecord describes; its HMAC under `secret` (none
        without a key: tokens are then disabled anyway)."""
        token_id = str(fields["token_id"])
        return cls(token_id, str(fields["owner"]), str(fields["requester"]),
                   tuple(fields["renewers"]), int(fields["issue_timestamp"]),
                   int(fields["max_timestamp"]), int(fields["expiration_timestamp"]),
                   token_hmac(secret, token_id) if secret else b"")
