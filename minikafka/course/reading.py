"""Reading and polling on the simulated clock: everything a topic holds
(``read_topic``), a consumer polled until quiet (``drain``), consumers polled side by side
for a while (``keep_polling``), and sends scheduled for later (``send_every``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from kafka.structs import TopicPartition

if TYPE_CHECKING:
    from ..cluster import Cluster


def read_topic(cluster: Cluster, topic: str, *, isolation_level: str = "read_uncommitted",
               timeout_ms: int = 10_000) -> dict[int, list]:
    """Every record a consumer can read from each partition of ``topic`` (up to the
    high watermark, or the last stable offset for read_committed), by partition."""
    consumer = cluster.consumer(auto_offset_reset="earliest", isolation_level=isolation_level,
                                enable_auto_commit=False)
    tps = [TopicPartition(topic, p) for p in range(cluster.partitions_for(topic))]
    consumer.assign(tps)
    ends = consumer.end_offsets(tps)
    out: dict[int, list] = {tp.partition: [] for tp in tps}
    deadline = cluster.now_ms + timeout_ms

    def done() -> bool:
        return all(consumer.position(tp) >= ends[tp] for tp in tps)

    while not done() and cluster.now_ms < deadline:
        for tp, records in consumer.poll(timeout_ms=200).items():
            out[tp.partition].extend(records)
    consumer.close()
    return out


def drain(consumer: Any, *, quiet_polls: int = 2, timeout_ms: int = 500,
          max_polls: int = 200) -> list:
    """Poll until ``quiet_polls`` polls in a row bring nothing new; returns the records
    in the order the polls returned them (a group's first polls also join it)."""
    out: list = []
    quiet = 0
    for _ in range(max_polls):
        batch = consumer.poll(timeout_ms=timeout_ms)
        if batch:
            quiet = 0
            for records in batch.values():
                out.extend(records)
        elif _settled(consumer):  # polls while a group is still forming do not count
            quiet += 1
            if quiet >= quiet_polls:
                break
    return out


def keep_polling(consumers: Sequence[Any], ms: int, poll_ms: int = 500) -> list:
    """Poll each consumer in turn, as their applications would, until ``ms`` simulated
    milliseconds have passed; returns every record they got."""
    if not consumers:
        return []
    cluster = consumers[0].cluster
    deadline = cluster.now_ms + ms
    out: list = []
    while cluster.now_ms < deadline:
        before = cluster.now_ms
        for consumer in consumers:
            for records in consumer.poll(timeout_ms=min(poll_ms, max(1, deadline - cluster.now_ms))).values():
                out.extend(records)
        if cluster.now_ms == before:  # every poll returned at once: let time move
            cluster.advance(min(poll_ms, deadline - cluster.now_ms))
    return out


def send_every(producer: Any, topic: str, every_ms: int, count: int,
               value: bytes = b"x" * 100) -> None:
    """Schedule ``count`` sends of ``value`` on the simulated clock, one every
    ``every_ms`` from now: records that arrive while a consumer waits in poll()."""
    clock = producer.cluster.clock
    for i in range(1, count + 1):
        clock.call_later(i * every_ms, producer.send, topic, value)


def clock_sleep(cluster: Cluster, waits: list[float]) -> Callable[[float], None]:
    """A ``sleep(seconds)`` for application code under test: it notes each wait in
    `waits` and moves the cluster's simulated clock instead of the wall clock, so a
    retry with backoff takes no real time."""
    def sleep(seconds: float) -> None:
        waits.append(seconds)
        cluster.advance(int(seconds * 1000))
    return sleep


def _settled(consumer: Any) -> bool:
    from kafka.structs import MemberState

    meta = consumer.group_metadata()
    return meta.group_id is None or meta.state == MemberState.STABLE
