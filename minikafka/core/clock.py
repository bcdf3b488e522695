"""The simulated clock: one event heap, one seeded RNG.

Everything that takes time in minikafka (network hops, follower fetches, session
timeouts, linger.ms) is an event on this heap. The same seed and the same calls give
the same history, which is what makes lessons reproducible and grading fair.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable
from typing import Any

# 2026-01-01T00:00:00Z: record timestamps look like real epoch milliseconds.
EPOCH_MS = 1_767_225_600_000


class Timer:
    """A scheduled callback; cancel() keeps it on the heap but makes it a no-op."""

    __slots__ = ("when", "fn", "args", "cancelled")

    def __init__(self, when: int, fn: Callable[..., Any], args: tuple) -> None:
        self.when = when
        self.fn = fn
        self.args = args
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class SimClock:
    """Milliseconds since EPOCH_MS advance only when the simulation says so."""

    def __init__(self, seed: int = 0, start_ms: int = EPOCH_MS) -> None:
        self.now_ms = start_ms
        self.random = random.Random(seed)
        self._heap: list[tuple[int, int, Timer]] = []
        self._seq = 0

    def call_at(self, when: int, fn: Callable[..., Any], *args: Any) -> Timer:
        if when < self.now_ms:
            when = self.now_ms
        timer = Timer(when, fn, args)
        self._seq += 1
        heapq.heappush(self._heap, (when, self._seq, timer))
        return timer

    def call_later(self, delay_ms: float, fn: Callable[..., Any], *args: Any) -> Timer:
        return self.call_at(self.now_ms + int(delay_ms), fn, *args)

    def next_event_time(self) -> int | None:
        heap = self._heap
        while heap and heap[0][2].cancelled:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def run_next(self, deadline: int) -> bool:
        """Run the earliest event due at or before deadline; False when there is none."""
        heap = self._heap
        while heap:
            when, _, timer = heap[0]
            if when > deadline:
                return False
            heapq.heappop(heap)
            if timer.cancelled:
                continue
            self.now_ms = when
            timer.fn(*timer.args)
            return True
        return False

    def run_until(self, deadline: int) -> None:
        """Run every event due up to deadline, then stand the clock at deadline."""
        while self.run_next(deadline):
            pass
        if deadline > self.now_ms:
            self.now_ms = deadline

    def run_while(self, pending: Callable[[], bool], deadline: int) -> bool:
        """Run events until pending() is false or deadline passes; returns not pending()."""
        while pending():
            if not self.run_next(deadline):
                if deadline > self.now_ms:
                    self.now_ms = deadline
                return not pending()
        return True
