"""Every state change of the cluster as an event, in order.

Views, the replay slider and the history checkers read only the journal. An event
is (seq, time_ms, kind, fields); kinds are short Kafka-flavoured names such as
"broker.stopped", "leader.elected", "isr.shrink", "hw.advanced", "produce.acked".
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple


class Event(NamedTuple):
    seq: int
    time_ms: int
    kind: str
    fields: dict

    def __getattr__(self, name: str):
        try:
            return self.fields[name]
        except KeyError:
            raise AttributeError(name) from None


class Journal:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def record(self, time_ms: int, kind: str, **fields) -> Event:
        event = Event(len(self.events), time_ms, kind, fields)
        self.events.append(event)
        return event

    def __len__(self) -> int:
        return len(self.events)

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    def of_kind(self, *kinds: str) -> list[Event]:
        wanted = set(kinds)
        return [e for e in self.events if e.kind in wanted]

    def since(self, seq: int) -> list[Event]:
        return self.events[seq:]
