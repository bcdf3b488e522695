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

# Field-name tuples, one per distinct shape of event (a handful per kind), shared by
# every event of that shape.
_SHAPES: dict[tuple[str, ...], tuple[str, ...]] = {}


class Event:
    """(seq, time_ms, kind, fields), kept compact: a served cluster holds a window of
    100,000 of these, several per batch. The field names are a tuple shared by every
    event of the same shape and the values a tuple; `fields` builds the dict when asked.

    >>> e = Event(7, 1000, "hw.advanced", {"topic": "t", "partition": 0, "hw": 3})
    >>> e.hw, e.fields, e.kind
    (3, {'topic': 't', 'partition': 0, 'hw': 3}, 'hw.advanced')
    """

    __slots__ = ("seq", "time_ms", "kind", "_names", "_values")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, seq: int, time_ms: int, kind: str, fields: dict) -> None:
        self.seq = seq
        self.time_ms = time_ms
        self.kind = kind
        names = tuple(fields)
        self._names = _SHAPES.setdefault(names, names)
        self._values = tuple(fields.values())

    @property
    def fields(self) -> dict:
        return dict(zip(self._names, self._values))

    def get(self, name: str, default=None):
        """One field, or `default` when the event has none of that name."""
        try:
            return self._values[self._names.index(name)]
        except ValueError:
            return default

    def __getattr__(self, name: str):
        if name.startswith("_"):  # slots not set yet (copy, pickle): no field lookup
            raise AttributeError(name)
        try:
            return self._values[self._names.index(name)]
        except ValueError:
            raise AttributeError(name) from None

    def __iter__(self) -> Iterator:
        """Unpacks as the tuple (seq, time_ms, kind, fields)."""
        return iter((self.seq, self.time_ms, self.kind, self.fields))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Event):
            return NotImplemented
        return (self.seq, self.time_ms, self.kind, self._names, self._values) == (
            other.seq, other.time_ms, other.kind, other._names, other._values)

    def __repr__(self) -> str:
        return (f"Event(seq={self.seq}, time_ms={self.time_ms}, kind={self.kind!r}, "
                f"fields={self.fields!r})")

    def __getstate__(self) -> tuple:
        return self.seq, self.time_ms, self.kind, self._names, self._values

    def __setstate__(self, state: tuple) -> None:
        self.seq, self.time_ms, self.kind, self._names, self._values = state


def _weight(event: Event) -> int:
    """What an event costs against the bound: 1, plus 1 per record it carries."""
    records = event.get("records")
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
