"""One broker's request counters (Kafka's RequestMetrics: RequestsPerSec, TotalTimeMs),
on the simulated clock; core.metrics reads them under Kafka's MBean names."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .clock import SimClock

# The request types Kafka's RequestMetrics distinguish for the data path.
REQUESTS = ("Produce", "FetchConsumer", "FetchFollower")

WINDOW_MS = 10_000


def requests_per_sec(request: str) -> str:
    return f"kafka.network:type=RequestMetrics,name=RequestsPerSec,request={request}"


def total_time_ms(request: str) -> str:
    return f"kafka.network:type=RequestMetrics,name=TotalTimeMs,request={request}"


class RequestMetrics:
    """One broker's answered requests: (answered at, time taken) per request type,
    kept for the last window."""

    def __init__(self, window_ms: int = WINDOW_MS) -> None:
        self.window_ms = window_ms
        self.answered: dict[str, deque[tuple[int, int]]] = {r: deque() for r in REQUESTS}
        self.total: dict[str, int] = dict.fromkeys(REQUESTS, 0)

    def record(self, request: str, received_ms: int, answered_ms: int) -> None:
        self.answered[request].append((answered_ms, answered_ms - received_ms))
        self.total[request] += 1
        self._prune(request, answered_ms)

    def timed(self, request: str, clock: SimClock, respond: Callable[..., Any]
              ) -> Callable[..., Any]:
        """`respond`, counting the request and its time (on `clock`, the simulated
        clock) when it is answered."""
        return _Timed(self, request, clock, respond)

    def _prune(self, request: str, now_ms: int) -> None:
        q = self.answered[request]
        while q and q[0][0] <= now_ms - self.window_ms:
            q.popleft()

    def rate(self, request: str, now_ms: int) -> float:
        self._prune(request, now_ms)
        return len(self.answered[request]) * 1000 / self.window_ms

    def time_ms(self, request: str, now_ms: int) -> dict[str, float]:
        self._prune(request, now_ms)
        times = [t for _, t in self.answered[request]]
        return {"Mean": sum(times) / len(times) if times else 0.0,
                "Max": float(max(times, default=0)), "Count": self.total[request]}


class _Timed:
    """A request's answer callback that records it in RequestMetrics first. An object
    rather than a closure: every produce and fetch makes one, and a closure over five
    names is six objects for the garbage collector to track, this one is one."""

    __slots__ = ("metrics", "request", "clock", "respond", "received")

    def __init__(self, metrics: RequestMetrics, request: str, clock: SimClock,
                 respond: Callable[..., Any]) -> None:
        self.metrics = metrics
        self.request = request
        self.clock = clock
        self.respond = respond
        self.received = clock.now_ms

    def __call__(self, *args: Any) -> Any:
        self.metrics.record(self.request, self.received, self.clock.now_ms)
        return self.respond(*args)
