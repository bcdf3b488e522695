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
from itertools import count, islice

# Field-name tuples, one per distinct shape of event (a handful per kind), shared by
# every event of that shape.
_SHAPES: dict[tuple[str, ...], tuple[str, ...]] = {}


def shape(*names: str) -> tuple[str, ...]:
    """The shared field-name tuple for Journal.add (one per shape, as record() keeps)."""
    return _SHAPES.setdefault(names, names)


class Event:
    """(seq, time_ms, kind, fields): a view of one journal entry.

    The journal keeps each entry as one plain tuple, (time_ms, kind, field names,
    *values), the names a tuple shared by every event of that shape, and the seq as the
    entry's position (first_seq + its index): a served cluster
    holds a window of 100,000 entries, several per batch, and a tuple of ints and
    strings is one small object that Python's garbage collector stops tracking, where
    an object per event (and a dict of its fields) would be traversed by every full
    collection. `fields` builds the dict when asked.

    >>> e = Event((1000, "hw.advanced", ("topic", "partition", "hw"), "t", 0, 3), 7)
    >>> e.seq, e.hw, e.fields, e.kind
    (7, 3, {'topic': 't', 'partition': 0, 'hw': 3}, 'hw.advanced')
    """

    __slots__ = ("_entry", "seq")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, entry: tuple, seq: int) -> None:
        self._entry = entry
        self.seq = seq

    @property
    def time_ms(self) -> int:
        return self._entry[0]

    @property
    def kind(self) -> str:
        return self._entry[1]

    @property
    def fields(self) -> dict:
        entry = self._entry
        return dict(zip(entry[2], entry[3:]))

    def get(self, name: str, default=None):
        """One field, or `default` when the event has none of that name."""
        return _field(self._entry, name, default)

    def __getattr__(self, name: str):
        if name.startswith("_"):  # the slot is not set yet (copy, pickle): no fields
            raise AttributeError(name)
        value = _field(self._entry, name, _MISSING)
        if value is _MISSING:
            raise AttributeError(name)
        return value

    def __iter__(self) -> Iterator:
        """Unpacks as the tuple (seq, time_ms, kind, fields)."""
        return iter((self.seq, self.time_ms, self.kind, self.fields))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Event):
            return NotImplemented
        return self.seq == other.seq and self._entry == other._entry

    def __repr__(self) -> str:
        return (f"Event(seq={self.seq}, time_ms={self.time_ms}, kind={self.kind!r}, "
                f"fields={self.fields!r})")

    def __getstate__(self) -> tuple:
        return self._entry, self.seq

    def __setstate__(self, state: tuple) -> None:
        self._entry, self.seq = state


_MISSING = object()


def _field(entry: tuple, name: str, default):
    try:
        return entry[3 + entry[2].index(name)]
    except ValueError:
        return default


def _weight(entry: tuple) -> int:
    """What an entry costs against the bound: 1, plus 1 per record it carries."""
    names = entry[2]
    if "records" in names:  # a test, not _field's ValueError: most events carry none
        records = entry[3 + names.index("records")]
        if records is not None:
            return 1 + len(records)
    return 1


class Journal:
    def __init__(self, max_events: int | None = None) -> None:
        if max_events is not None and max_events < 1:
            raise ValueError(f"max_events must be at least 1, got {max_events}")
        self.max_events = max_events
        # Entries as Event describes them: plain tuples, wrapped when read.
        self._events: list[tuple] | deque[tuple] = [] if max_events is None else deque()
        self._weight = 0  # of the retained events, when bounded
        self.next_seq = 0  # the seq of the next event: a mark for since()

    def record(self, time_ms: int, kind: str, **fields) -> None:
        """Append one event (read it back through `events`, `since` or iteration)."""
        names = tuple(fields)
        self._append((time_ms, kind, _SHAPES.setdefault(names, names), *fields.values()))

    def add(self, time_ms: int, kind: str, names: tuple[str, ...], *values) -> None:
        """record() for the events of every batch (an append, a follower's fetch, a high
        watermark's move, an acknowledgement): `names` from shape(), the values in its
        order. Keywords cost a dict and a shape lookup an event, three times this."""
        self._append((time_ms, kind, names, *values))

    def _append(self, entry: tuple) -> None:
        self.next_seq += 1
        self._events.append(entry)
        if self.max_events is not None:
            self._weight += _weight(entry)
            events = self._events
            while self._weight > self.max_events and len(events) > 1:
                self._weight -= _weight(events.popleft())  # type: ignore[union-attr]

    @property
    def events(self) -> list[Event]:
        """The retained events, oldest first (all of them unless bounded)."""
        return list(self)

    @property
    def first_seq(self) -> int:
        """The seq of the oldest retained event (older ones were dropped)."""
        return self.next_seq - len(self._events)

    def __len__(self) -> int:
        """Retained events; equal to next_seq unless the journal is bounded."""
        return len(self._events)

    def __iter__(self) -> Iterator[Event]:
        return map(Event, self._events, count(self.first_seq))

    def __reversed__(self) -> Iterator[Event]:
        """Newest first, without building the whole window."""
        return map(Event, reversed(self._events), count(self.next_seq - 1, -1))

    def of_kind(self, *kinds: str) -> list[Event]:
        wanted = set(kinds)
        return [Event(e, seq) for e, seq in zip(self._events, count(self.first_seq))
                if e[1] in wanted]

    def since(self, seq: int) -> list[Event]:
        """Retained events with seq >= `seq`."""
        first = self.first_seq
        skip = max(0, seq - first)
        entries = self._events[skip:] if isinstance(self._events, list) \
            else islice(self._events, skip, None)
        return list(map(Event, entries, count(first + skip)))
