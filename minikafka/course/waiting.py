"""Waiting for what a lab checks: a real cluster and real processes settle in their own
time, later on a loaded machine. ``wait_for`` reads the state until it is what the lab
wants, and has stayed so, then returns that very reading, so a check asserts on the state
that was waited for; when the deadline passes it says what it waited for and what it saw."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(read: Callable[[], T], ok: Callable[[T], bool], *, what: str,
             timeout_s: float = 180, steady_s: float = 0, every_s: float = 0.2) -> T:
    """Call ``read()`` every ``every_s`` seconds until ``ok`` holds for the reading and the
    same reading has come back for ``steady_s`` seconds (a group between two rebalances
    can look settled for a moment); return it. Raise TimeoutError after ``timeout_s``."""
    start = time.monotonic()
    since, held = None, None
    while True:
        state, now = read(), time.monotonic()
        if ok(state):
            if since is None or state != held:
                since, held = now, state
            if now - since >= steady_s:
                return state
        else:
            since = held = None
        if now - start > timeout_s:
            raise TimeoutError(f"waited {timeout_s:g} s for {what}; last seen: {state!r}")
        time.sleep(every_s)
