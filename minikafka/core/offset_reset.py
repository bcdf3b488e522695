"""``kafka-consumer-groups --reset-offsets``: reading its time arguments, choosing each
partition's new offset and printing the plan, the same for the admin client's
``reset_offsets()`` and the ``consumer-groups`` tool.

    >>> target_offset(earliest=2, latest=9, committed=5, shift_by=-2)
    3
    >>> target_offset(earliest=2, latest=9, committed=None, to_current=True)
    9
    >>> parse_duration("PT1H30M")
    datetime.timedelta(seconds=5400)
    >>> parse_datetime("2026-01-01T00:00:00Z")
    1767225600000
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any


def parse_duration(text: str) -> timedelta:
    """ISO-8601 durations as kafka-consumer-groups takes them: PnDTnHnMn.nS."""
    m = re.fullmatch(r"(-)?P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?",
                     text.strip().upper())
    if not m or text.strip().upper() in ("P", "PT", "-P", "-PT"):
        raise ValueError(f"Invalid ISO-8601 duration {text!r}, e.g. PT1H or P7D")
    sign, days, hours, minutes, seconds = m.groups()
    delta = timedelta(days=int(days or 0), hours=int(hours or 0), minutes=int(minutes or 0),
                      seconds=float(seconds or 0))
    return -delta if sign else delta


def parse_datetime(value: Any) -> int:
    """Epoch ms from an int, a datetime, or an ISO-8601 string. Without a zone it is
    UTC, as Kafka's tool takes it (Utils.getDateTime appends the Z), so a lesson gives the
    same answer on every laptop."""
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return int(value.timestamp() * 1000)
    raise TypeError(f"Cannot read a date-time from {value!r}")


def format_reset_plan(group_id: str, plan: Mapping[Any, int]) -> str:
    """The table kafka-consumer-groups prints for --reset-offsets; ``plan`` maps
    TopicPartitions (anything with .topic and .partition) to their new offsets."""
    lines = [f"{'GROUP':<30} {'TOPIC':<30} {'PARTITION':<10} {'NEW-OFFSET':<15}".rstrip()]
    for tp, offset in sorted(plan.items()):
        lines.append(f"{group_id:<30} {tp.topic:<30} {tp.partition:<10} {offset:<15}".rstrip())
    return "\n".join(lines)


class NoCommittedOffset(ValueError):
    """--shift-by for a partition the group has never committed."""


def target_offset(*, earliest: int, latest: int, committed: int | None,
                  to_earliest: bool = False, to_latest: bool = False, to_current: bool = False,
                  to_offset: int | None = None, shift_by: int | None = None,
                  found: int | None = None) -> int:
    """One partition's new offset for the one scenario given, before the tool's range
    check (ConsumerGroupCommand's checkOffsetsRange, which --to-offset and --shift-by
    get: a caller clamps those into [earliest, latest]). ``found`` is ListOffsets' answer
    for --to-datetime / --by-duration: -1 (no record that late) means the log end.
    --to-current keeps the committed offset, or takes the log end where there is none."""
    if to_earliest:
        return earliest
    if to_latest:
        return latest
    if to_current:
        return latest if committed is None else committed
    if shift_by is not None:
        if committed is None:
            raise NoCommittedOffset("no current committed offset")
        return committed + shift_by
    if to_offset is not None:
        return to_offset
    if found is not None:
        return latest if found < 0 else found
    raise ValueError("no reset scenario given")
