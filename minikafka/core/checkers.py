"""History checkers: did the cluster keep its promises to the producer?

Each checker compares what producers were told (acknowledged writes, from the
journal's "produce.acked" events) with what a reader finds in the log afterwards.

Worked example. A producer with acks=1 writes v1..v3 to partition 0 of topic t; the
leader (broker 1) acknowledges all three and crashes before its followers fetched v3.
Broker 2 becomes leader without v3; broker 1 returns, finds its log diverged from the
new leader epoch and truncates v3. Reading t-0 afterwards gives [v1, v2]:

    >>> acked = [Write("t", 0, 0, b"v1"), Write("t", 0, 1, b"v2"), Write("t", 0, 2, b"v3")]
    >>> check(acked, {("t", 0): [(0, b"v1"), (1, b"v2")]}).lost
    [Write(topic='t', partition=0, offset=2, value=b'v3')]

The same run with acks=all and min.insync.replicas=2 never acknowledges v3 before a
follower has it, so the lost list stays empty.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from .journal import Journal


class Write(NamedTuple):
    topic: str
    partition: int
    offset: int
    value: bytes | None


@dataclass
class CheckResult:
    """The verdict: lost, duplicated and reordered acknowledged writes."""

    acknowledged: int = 0
    observed: int = 0
    lost: list[Write] = field(default_factory=list)
    duplicated: list[bytes] = field(default_factory=list)
    reordered: list[tuple[bytes, bytes]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.lost or self.duplicated or self.reordered)

    def summary(self) -> str:
        return (f"{self.acknowledged} acknowledged, {self.observed} read back: "
                f"{len(self.lost)} lost, {len(self.duplicated)} duplicated, "
                f"{len(self.reordered)} reordered")


def acknowledged_writes(journal: Journal | Iterable) -> list[Write]:
    """Every record a producer got an acknowledgement (with an offset) for."""
    out = []
    for event in journal:
        if event.kind != "produce.acked":
            continue
        f = event.fields
        for record in f["records"]:  # (offset delta, timestamp, key, value, headers)
            out.append(Write(f["topic"], f["partition"], f["base_offset"] + record[0], record[3]))
    return out


def check_lost(acked: Sequence[Write], observed: Mapping[tuple[str, int], Sequence]) -> list[Write]:
    """Acknowledged values a reader cannot find in their partition any more.

    A write acknowledged at t-0 offset 5 with value b"x" is lost if no record of t-0
    carries b"x" (values are assumed unique per test run)."""
    present = {tp: {v for _, v in recs} for tp, recs in observed.items()}
    return [w for w in acked if w.value not in present.get((w.topic, w.partition), ())]


def check_duplicates(observed: Mapping[tuple[str, int], Sequence]) -> list[bytes]:
    """Values that appear more than once (a retried send written twice).

    [(0, b"a"), (1, b"b"), (2, b"a")] -> [b"a"]"""
    counts = Counter(v for recs in observed.values() for _, v in recs)
    return sorted(v for v, n in counts.items() if n > 1)


def check_order(sent: Mapping[tuple[str, int], Sequence[bytes]],
                observed: Mapping[tuple[str, int], Sequence]) -> list[tuple[bytes, bytes]]:
    """Pairs (earlier, later) sent in that order to one partition but stored the other way.

    sent [a, b, c], stored [(0, a), (1, c), (2, b)] -> [(b, c)]"""
    out = []
    for tp, values in sent.items():
        position = {}
        for offset, value in observed.get(tp, ()):
            position.setdefault(value, offset)
        last_value, last_pos = None, -1
        for value in values:
            pos = position.get(value)
            if pos is None:
                continue
            if pos < last_pos:
                out.append((last_value, value))
            else:
                last_value, last_pos = value, pos
    return out


def check(acked: Sequence[Write], observed: Mapping[tuple[str, int], Sequence],
          sent: Mapping[tuple[str, int], Sequence[bytes]] | None = None) -> CheckResult:
    return CheckResult(
        acknowledged=len(acked),
        observed=sum(len(r) for r in observed.values()),
        lost=check_lost(acked, observed),
        duplicated=check_duplicates(observed),
        reordered=check_order(sent or {}, observed),
    )
