"""Share sessions (KIP-932): what a broker remembers of one member's ShareFetch stream.

A member opens a session with epoch 0 (a full fetch naming its partitions), then sends
epochs 1, 2, 3, ... each naming only partitions to add (or forget); epoch -1 closes it,
and the broker releases the records the member still holds. Acknowledgements may ride on
any request but the opening one. Kafka's checks and error codes::

    epoch 0 with acknowledgements            INVALID_REQUEST
    epoch > 0 or -1, no session              errors.SHARE_SESSION_NOT_FOUND
    epoch > 0, not the one expected          errors.INVALID_SHARE_SESSION_EPOCH
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .. import errors

INITIAL_EPOCH = 0
FINAL_EPOCH = -1

TP = tuple[str, int]


@dataclass
class ShareSession:
    group_id: str
    member_id: str
    epoch: int = 1  # the epoch the next request must carry
    partitions: list[TP] = field(default_factory=list)

    def add(self, tps: Iterable[TP]) -> None:
        for tp in tps:
            if tp not in self.partitions:
                self.partitions.append(tp)

    def forget(self, tps: Iterable[TP]) -> None:
        gone = set(tps)
        self.partitions = [tp for tp in self.partitions if tp not in gone]


class ShareSessionCache:
    """One broker's share sessions, keyed by (group id, member id)."""

    def __init__(self) -> None:
        self.sessions: dict[tuple[str, str], ShareSession] = {}

    def get(self, group_id: str, member_id: str) -> ShareSession | None:
        return self.sessions.get((group_id, member_id))

    def check(self, group_id: str, member_id: str, epoch: int,
              has_acknowledgements: bool) -> int:
        """The error code a request with this session epoch gets (NONE if it may go on)."""
        if epoch == INITIAL_EPOCH:
            return errors.INVALID_REQUEST if has_acknowledgements else errors.NONE
        session = self.get(group_id, member_id)
        if session is None:
            return errors.SHARE_SESSION_NOT_FOUND
        if epoch != FINAL_EPOCH and epoch != session.epoch:
            return errors.INVALID_SHARE_SESSION_EPOCH
        return errors.NONE

    def open(self, group_id: str, member_id: str, tps: Iterable[TP]) -> ShareSession:
        session = ShareSession(group_id, member_id)
        session.add(tps)
        self.sessions[(group_id, member_id)] = session
        return session

    def next(self, group_id: str, member_id: str) -> ShareSession:
        """A checked epoch was used: the next request must carry the one after it."""
        session = self.sessions[(group_id, member_id)]
        session.epoch = session.epoch + 1 if session.epoch < 2**31 - 1 else 1
        return session

    def close(self, group_id: str, member_id: str) -> ShareSession | None:
        return self.sessions.pop((group_id, member_id), None)
