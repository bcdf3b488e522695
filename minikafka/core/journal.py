"""Every state change of the cluster as an event, in order.

Views, the replay slider and the history checkers read only the journal. An event
is (seq, time_ms, kind, fields); kinds are short Kafka-flavoured names such as
"broker.stopped", "leader.elected", "isr.shrink", "hw.advanced", "produce.acked".

A lesson keeps the whole history (the default). A long-running `minikafka serve`
keeps a bounded window of the newest events: memory then follows the window, not
everything the server ever did. The bound, `max_events`, counts an event once plus once
per record it carries (a "produce.acked" event holds its batch's records for the
checkers, and a batch can hold thousands), so the window's memory is bounded whatever
the batch sizes. Sequence numbers stay absolute, so `next_seq` taken as a mark and
`since(mark)` work in both modes; the checkers judge the window they are given.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from itertools import islice
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


def _weight(event: Event) -> int:
    """What an event costs against the bound: 1, plus 1 per record it carries."""
    records = event.fields.get("records")
    return 1 + (len(records) if records is not None else 0)


class Journal:
    def __init__(self, max_events: int | None = None) -> None:
        if max_events is not None and max_events < 1:
            raise ValueError(f"max_events must be at least 1, got {max_events}")
        self.max_events = max_events
        self._events: list[Event] | deque[Event] = [] if max_events is None else deque()
        self._weight = 0  # of the retained events, when bounded
        self.next_seq = 0  # the seq of the next event: a mark for since()

    def record(self, time_ms: int, kind: str, **fields) -> Event:
        event = Event(self.next_seq, time_ms, kind, fields)
        self.next_seq += 1
        self._events.append(event)
        if self.max_events is not None:
            self._weight += _weight(event)
            events = self._events
            while self._weight > self.max_events and len(events) > 1:
                self._weight -= _weight(events.popleft())  # type: ignore[union-attr]
        return event

    @property
    def events(self) -> list[Event]:
        """The retained events, oldest first (all of them unless bounded)."""
        events = self._events
        return events if isinstance(events, list) else list(events)

    @property
    def first_seq(self) -> int:
        """The seq of the oldest retained event (older ones were dropped)."""
        return self.next_seq - len(self._events)

    def __len__(self) -> int:
        """Retained events; equal to next_seq unless the journal is bounded."""
        return len(self._events)

    def __iter__(self) -> Iterator[Event]:
        return iter(self._events)

    def of_kind(self, *kinds: str) -> list[Event]:
        wanted = set(kinds)
        return [e for e in self._events if e.kind in wanted]

    def since(self, seq: int) -> list[Event]:
        """Retained events with seq >= `seq`."""
        skip = max(0, seq - self.first_seq)
        if isinstance(self._events, list):
            return self._events[skip:]
        return list(islice(self._events, skip, None))
