"""The simulated clock: one event heap, one seeded RNG.

Everything that takes time in minikafka (network hops, follower fetches, session
timeouts, linger.ms) is an event on this heap. The same seed and the same calls give
the same history, which is what makes lessons reproducible and grading fair.
"""

from __future__ import annotations

import bisect
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
        self.args = ()  # it never runs: what it was given need not live until its time


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
        when = self.now_ms + (delay_ms if delay_ms.__class__ is int else int(delay_ms))
        timer = Timer(when, fn, args)
        self._seq += 1
        heapq.heappush(self._heap, (when, self._seq, timer))
        return timer

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


_PURGE_MIN = 16


class Deadlines:
    """Many timeouts behind one timer: entries come in (mostly) deadline order, so only
    the earliest needs a heap event. A linger.ms per batch or a request timeout per
    request would otherwise put thousands of events on the heap that never matter."""

    def __init__(self, clock: SimClock, expire: Callable[[Any], None],
                 settled: Callable[[Any], bool] | None = None) -> None:
        self.clock = clock
        self.expire = expire
        # Items answered before their deadline are dropped once the entries double, as
        # Kafka's purgatory purges completed operations: a request timeout of 30 s would
        # otherwise keep every request of the last 30 s (and its batches) alive.
        self.settled = settled
        self._purge_at = _PURGE_MIN
        # Sorted by deadline, equal deadlines in the order added; two lists rather than
        # a (deadline, item) tuple each, which the garbage collector would track.
        self._deadlines: list[int] = []
        self._items: list[Any] = []
        self._timer: Timer | None = None

    def add(self, deadline: int, item: Any) -> None:
        deadlines, items = self._deadlines, self._items
        if self.settled is not None and len(items) >= self._purge_at:
            settled = self.settled
            kept = [i for i, it in enumerate(items) if not settled(it)]
            self._deadlines = deadlines = [deadlines[i] for i in kept]
            self._items = items = [items[i] for i in kept]
            self._purge_at = max(_PURGE_MIN, 2 * len(items))
        if deadlines and deadline < deadlines[-1]:
            i = bisect.bisect_right(deadlines, deadline)
            deadlines.insert(i, deadline)
            items.insert(i, item)
        else:
            deadlines.append(deadline)
            items.append(item)
        if self._timer is None or deadline < self._timer.when:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = self.clock.call_at(deadlines[0], self._fire)

    def _fire(self) -> None:
        self._timer = None
        i = bisect.bisect_right(self._deadlines, self.clock.now_ms)
        due = self._items[:i]
        # Expiring an item may add entries: the lists hold only what is not yet due.
        self._deadlines, self._items = self._deadlines[i:], self._items[i:]
        for item in due:
            self.expire(item)
        if self._deadlines and self._timer is None:
            self._timer = self.clock.call_at(self._deadlines[0], self._fire)
