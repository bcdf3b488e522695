"""A consumer over time: how far the log goes (high watermark), how far the consumer
has read (its position, the next offset poll() returns) and how far its group has
committed (where a successor would start).

`poll_commit_timeline()` runs a seeded scenario (a producer keeps writing, a consumer
polls and commits every few polls) and samples the three numbers after every step;
`position_timeline_view()` draws one bar per sample.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import graphviz
from kafka.structs import TopicPartition

from .bars import bar_timeline, offset_bar
from .html import td
from .palette import BLACK, BLUE, BLUISH_GREEN, WHITE, YELLOW


@dataclass(frozen=True)
class Sample:
    """The consumer's numbers for one partition after one step."""

    time_ms: int  # simulated ms since the scenario started
    action: str
    high_watermark: int
    position: int
    committed: int | None  # None until the group first commits


def poll_commit_timeline(*, steps: int = 8, per_step: int = 20, max_poll_records: int = 12,
                         commit_every: int = 3, seed: int = 8) -> list[Sample]:
    """A producer writes `per_step` records per second to a one-partition topic; a
    consumer in group `dashboard` polls once per second (at most `max_poll_records`
    records) and commits after every `commit_every`-th poll."""
    from minikafka.cluster import Cluster

    cluster = Cluster(brokers=3, seed=seed)
    cluster.create_topic("trucks_gps", partitions=1, replication_factor=3)
    producer = cluster.producer(linger_ms=0)
    consumer = cluster.consumer("trucks_gps", group_id="dashboard", client_id="dashboard-1",
                                enable_auto_commit=False, auto_offset_reset="earliest",
                                max_poll_records=max_poll_records)
    tp = TopicPartition("trucks_gps", 0)
    while not consumer.assignment():  # the first polls join the group
        consumer.poll(timeout_ms=500)
    start = cluster.now_ms
    samples = []
    for step in range(1, steps + 1):
        for i in range(per_step):
            producer.send("trucks_gps", key=b"truck-%d" % (i % 5), value=b"report")
        producer.flush()
        consumer.poll(timeout_ms=200)
        action = f"+{per_step} written, poll"
        if step % commit_every == 0:
            consumer.commit()
            action += ", commit"
        cluster.advance(max(0, start + step * 1_000 - cluster.now_ms))
        hw = cluster.leader_replica("trucks_gps", 0).high_watermark
        samples.append(Sample(cluster.now_ms - start, action, hw, consumer.position(tp),
                              consumer.committed(tp)))
    consumer.close(autocommit=False)
    return samples


SEGMENTS = (  # (colour, text colour, what the stretch of offsets is)
    (BLUISH_GREEN, WHITE, "committed: done, a successor skips these"),
    (BLUE, WHITE, "read, not committed: a successor reads these again"),
    (YELLOW, BLACK, "not read yet: the lag"),
)


def position_timeline_view(samples: Sequence[Sample], *, width: int = 240,
                           title: str = "one consumer over time: committed offset ≤ "
                                        "position ≤ high watermark") -> graphviz.Digraph:
    """One row per sample: time, action, a bar of the partition's offsets split at the
    committed offset (C), the position (P) and the high watermark (HW), and the numbers."""
    top = max((s.high_watermark for s in samples), default=1) or 1
    scale = width / top
    rows = []
    for s in samples:
        committed = s.committed or 0
        cuts = [committed, max(committed, s.position), max(s.position, s.high_watermark)]
        bar = offset_bar([f for f, _, _ in SEGMENTS], cuts, scale, width)
        numbers = ((f"C {s.committed}" if s.committed is not None else "no commit")
                   + f" · P {s.position}"
                   f" · HW {s.high_watermark} · lag {s.high_watermark - s.position}")
        rows.append("<TR>" + td(f"{s.time_ms / 1000:g} s", border=0, point=10, align="RIGHT")
                    + td(s.action, border=0, point=10, align="LEFT",
                         bold=s.action.endswith("commit"))
                    + f'<TD BORDER="0">{bar}</TD>'
                    + td(numbers, border=0, point=10, align="LEFT") + "</TR>")
    return bar_timeline("positions", title, (
        ("time", "RIGHT"), ("step", "LEFT"), (f"offsets 0 … {top}", "LEFT"),
        ("C · P · HW · lag", "LEFT")), rows, [(f, w) for f, _, w in SEGMENTS])
