"""Futures whose get() drives the simulation until they resolve."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kafka.errors import KafkaTimeoutError

if TYPE_CHECKING:
    from .port import Runner


class Future:
    """kafka-python's Future interface: get(), add_callback/add_errback, succeeded()."""

    __slots__ = ("value", "exception", "is_done", "_callbacks", "_errbacks", "_cluster")

    def __init__(self, cluster: Runner) -> None:
        self._cluster = cluster
        self.value: Any = None
        self.exception: BaseException | None = None
        self.is_done = False
        # Made on first use: a producer makes a future per batch and rarely adds a
        # callback, and two empty lists each would be traversed by every collection.
        self._callbacks: list | None = None
        self._errbacks: list | None = None

    def succeeded(self) -> bool:
        return self.is_done and self.exception is None

    def failed(self) -> bool:
        return self.is_done and self.exception is not None

    def success(self, value: Any) -> Future:
        self.value, self.is_done = value, True
        if self._callbacks:
            for fn in self._callbacks:
                fn(value)
        return self

    def failure(self, exc: BaseException) -> Future:
        self.exception, self.is_done = exc, True
        if self._errbacks:
            for fn in self._errbacks:
                fn(exc)
        return self

    def add_callback(self, fn: Callable, *args: Any, **kwargs: Any) -> Future:
        call = (lambda v: fn(*args, v, **kwargs)) if args or kwargs else fn
        if self.is_done and self.exception is None:
            call(self.value)
        elif not self.is_done:
            if self._callbacks is None:
                self._callbacks = []
            self._callbacks.append(call)
        return self

    def add_errback(self, fn: Callable, *args: Any, **kwargs: Any) -> Future:
        call = (lambda e: fn(*args, e, **kwargs)) if args or kwargs else fn
        if self.is_done and self.exception is not None:
            call(self.exception)
        elif not self.is_done:
            if self._errbacks is None:
                self._errbacks = []
            self._errbacks.append(call)
        return self

    def add_both(self, fn: Callable, *args: Any, **kwargs: Any) -> Future:
        self.add_callback(fn, *args, **kwargs)
        return self.add_errback(fn, *args, **kwargs)

    def get(self, timeout: float | None = None) -> Any:
        """Run the simulation until done; timeout is in (simulated) seconds as in kafka-python."""
        if not self.is_done:
            limit = 3_600_000 if timeout is None else int(timeout * 1000)
            self._cluster.run_until(lambda: self.is_done, limit)
            if not self.is_done:
                raise KafkaTimeoutError(f"Timeout after waiting for {limit} ms.")
        if self.exception is not None:
            raise self.exception
        return self.value
