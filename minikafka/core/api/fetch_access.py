"""Who may Fetch (key 1): READ on each topic, asked by both doors before core.api.fetch
reads, as Kafka's KafkaApis.handleFetchRequest asks before ReplicaManager.fetchMessages.

A refused topic's partitions answer TOPIC_AUTHORIZATION_FAILED and are not read; the
rest are fetched as usual, the answer putting the refused ones back in their places.
The wire handler calls `authorize_fetch`; the in-process consumer sends `fetch_at_leader`
over the simulated network. (Beside core.api.fetch, not in it: the broker runs
core.api.fetch's steps, and the authorizer's port sees the broker.)
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from . import authz
from .fetch import FetchedPartition, FetchRequest, FetchResult

if TYPE_CHECKING:
    from ..broker import Broker
    from .authz import Caller
    from .port import ClusterPort


@dataclass(frozen=True)
class AuthorizedFetch:
    """A Fetch after its authorization: `asked` as it came, `request` with the partitions
    the caller may READ (answering at once when some were refused: the refusal is news
    enough), and `refused` answering the others, by their place in `asked`."""

    asked: FetchRequest
    request: FetchRequest
    refused: Mapping[int, FetchedPartition]

    def answer(self, fetched: list[FetchedPartition]) -> list[FetchedPartition]:
        """The answer to the request asked: `fetched` (the allowed partitions' answers,
        in order) with the refused ones put back in their places."""
        if not self.refused:
            return fetched
        allowed = iter(fetched)
        size = len(self.refused) + len(fetched)
        return [self.refused[i] if i in self.refused else next(allowed) for i in range(size)]


def authorize_fetch(cluster: ClusterPort, caller: Caller,
                    request: FetchRequest) -> AuthorizedFetch:
    """READ on each topic asked (core.api.authz.fetch): the partitions of a refused topic
    answer TOPIC_AUTHORIZATION_FAILED, with no records and offsets -1."""
    if cluster.authorizer is None:
        return AuthorizedFetch(request, request, {})
    denied = authz.fetch(cluster, caller, {p.topic for p in request.partitions})
    if not denied:
        return AuthorizedFetch(request, request, {})
    refused = {i: FetchedPartition(denied[p.topic])
               for i, p in enumerate(request.partitions) if p.topic in denied}
    allowed = tuple(p for p in request.partitions if p.topic not in denied)
    return AuthorizedFetch(request, replace(request, partitions=allowed, max_wait_ms=0), refused)


def fetch_at_leader(cluster: ClusterPort, broker: Broker, caller: Caller,
                    request: FetchRequest, respond: Callable[[FetchResult], None]) -> None:
    """The in-process consumer's Fetch at the leader: `authorize_fetch`, then the broker's
    fetch of what is allowed (Broker.handle_fetch: answered now, or parked for
    fetch.min.bytes), answered as the whole request."""
    checked = authorize_fetch(cluster, caller, request)
    if not checked.refused:
        broker.handle_fetch(request, respond)
        return
    broker.handle_fetch(checked.request, lambda result: respond(
        FetchResult(checked.answer(result.partitions), result.throttle_ms)))
