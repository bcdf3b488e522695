"""What the consumer-group handlers share.

The group coordinator (minikafka.core.groups) answers JoinGroup, SyncGroup and
OffsetCommit through a callback, often later: a join waits at the rebalance
barrier until every member has rejoined, a sync until the leader's assignment is
written, a commit until __consumer_offsets has replicated it. `answer_later`
turns such a call into a response now or a `Deferred` the server re-polls on its
ticks (the served cluster's clock moves with them, firing the coordinator's timers).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..registry import Deferred, RequestContext

# Kafka's AclEntry.supportedOperations(GROUP): READ 3, DELETE 6, DESCRIBE 8,
# DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11. A broker without an authorizer allows
# them all, so that is the group's authorized_operations.
GROUP_OPERATION_SET = frozenset({3, 6, 8, 10, 11})

# Beyond the coordinator's own limit (rebalance timeout, offsets.commit.timeout.ms),
# how long a parked request may wait before the wire layer gives up on it. The
# coordinator always answers first unless the served clock stalls.
SLACK_MS = 5_000

T = TypeVar("T")


def member_host(ctx: RequestContext) -> str:
    """The client host as Kafka stores and prints it ("/127.0.0.1")."""
    return "/" + ctx.client_host


def answer_later(ctx: RequestContext, start: Callable[[Callable[[T], None]], None],
                 answer: Callable[[T], Any], wait_ms: int,
                 on_timeout: Callable[[], Any]) -> Any:
    """Call `start(respond)`; if the coordinator responded at once, return `answer`
    of it, else a Deferred answering once it does (or `on_timeout()` after wait_ms)."""
    box: list[T] = []
    start(box.append)
    if box:
        return answer(box[0])

    def poll() -> Any:
        return answer(box[0]) if box else None

    return Deferred(ctx.now_ms + wait_ms + SLACK_MS, poll, on_timeout)


def group_rebalance_timeout(ctx: RequestContext, group_id: str, default: int = 300_000) -> int:
    """The longest rebalance timeout among the group's members: how long a SyncGroup can
    wait for the leader before the coordinator gives up on it."""
    group = ctx.cluster.groups.groups.get(group_id)
    if group is None or not group.members:
        return default
    return max(m.rebalance_timeout_ms for m in group.members.values())
