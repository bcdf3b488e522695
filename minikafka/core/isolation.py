"""Kafka's isolation.level (Fetch, ListOffsets): what a consumer may read of a partition."""

from __future__ import annotations

from enum import IntEnum
from typing import Any


class IsolationLevel(IntEnum):
    """Kafka's isolation.level as the protocol numbers it."""

    READ_UNCOMMITTED = 0
    READ_COMMITTED = 1

    @classmethod
    def of(cls, value: Any) -> IsolationLevel:
        """From a number, a name ("read_committed") or kafka-python's IsolationLevel."""
        if isinstance(value, cls):
            return value
        if value is None:
            return cls.READ_UNCOMMITTED
        if isinstance(value, int):
            return cls(value)
        name = str(getattr(value, "name", value)).upper()
        return cls[name]


READ_UNCOMMITTED = IsolationLevel.READ_UNCOMMITTED
READ_COMMITTED = IsolationLevel.READ_COMMITTED
