"""The simulated network: latency on every hop, and the faults a lesson can inject.

Nodes are broker ids (ints) and client names (strings). A stopped broker is
unreachable from everything; cut(a, b) severs one link; isolate(b) severs a broker
from every other broker and controller while clients can still reach it (the
classic "zombie leader").
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from .clock import SimClock

Node = int | str


class Network:
    def __init__(self, clock: SimClock, rng: random.Random, latency_ms: int = 1) -> None:
        self.clock = clock
        self.rng = rng
        self.latency_ms = latency_ms
        self.down: set[int] = set()
        self.cuts: set[frozenset] = set()
        self.isolated: set[int] = set()
        # (src, dst) pairs whose next messages are dropped: lose_responses fault
        self.drop_next: dict[tuple[Node, Node], int] = {}

    def reachable(self, a: Node, b: Node) -> bool:
        if not (self.down or self.cuts or self.isolated):
            return True  # the common case: a healthy network
        if a == b:
            return a not in self.down
        if a in self.down or b in self.down:
            return False
        if isinstance(a, int) and isinstance(b, int):
            if a in self.isolated or b in self.isolated:
                return False
            return frozenset((a, b)) not in self.cuts
        return True

    def send(self, src: Node, dst: Node, fn: Callable[..., Any], *args: Any,
             extra_delay_ms: int = 0) -> bool:
        """Deliver fn(*args) at dst after the link's latency; False if dropped now."""
        if not self.reachable(src, dst):
            return False
        if self.drop_next and self.drop_next.get((src, dst)):
            self.drop_next[(src, dst)] -= 1
            return True  # the sender cannot tell: it just never hears back
        self.clock.call_later(self.latency_ms + extra_delay_ms, self._deliver, src, dst, fn, args)
        return True

    def _deliver(self, src: Node, dst: Node, fn: Callable[..., Any], args: tuple) -> None:
        if self.reachable(src, dst):
            fn(*args)
