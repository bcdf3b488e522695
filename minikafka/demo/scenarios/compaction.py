"""Log compaction: a compacted topic keeps the latest value of every key. The cleaner
rewrites old segments without the superseded records (offsets never change, so holes
appear), and a tombstone deletes a key, itself removed after delete.retention.ms."""

from __future__ import annotations

from ..scenario import Diverged, Run, Scenario, Step

UPDATES = [("AAPL", "190"), ("MSFT", "410"), ("AAPL", "191"), ("GOOG", "170"),
           ("AAPL", "193"), ("MSFT", "415")]


def setup(run: Run) -> None:
    run.cluster.create_topic("prices", partitions=1, replication_factor=3, config={
        "cleanup.policy": "compact", "segment.ms": "10000",
        "min.cleanable.dirty.ratio": "0.01", "delete.retention.ms": "20000"})
    run.cluster.advance(100)


def _send(run: Run, pairs: list[tuple[str, str]]) -> None:
    sent = run.produce([v for _, v in pairs], keys=[k for k, _ in pairs])
    run.require(len(sent.acked) == len(pairs), f"the producer got {sent}")


def write(run: Run) -> None:
    _send(run, UPDATES)


def roll(run: Run) -> None:
    run.cluster.advance(11_000)
    _send(run, [("GOOG", "172")])
    leader = run.cluster.leader_replica("prices", 0)
    run.require(leader is not None, "prices-0 has no leader")
    run.facts.update(segments=len(leader.log.segments))


def clean(run: Run) -> None:
    events = run.cluster.run_log_cleaner(force=True)
    if not events:
        raise Diverged("the cleaner found nothing to clean")
    before, after = events[0].fields["records"]
    run.facts.update(before=before, after=after)
    run.notes["latest values"] = _table(run)


def delete_key(run: Run) -> None:
    run.tombstone("MSFT")
    run.cluster.advance(11_000)
    _send(run, [("AAPL", "195")])
    run.cluster.run_log_cleaner(force=True)
    run.notes["latest values"] = _table(run)


def forget(run: Run) -> None:
    run.cluster.advance(21_000)
    _send(run, [("GOOG", "175")])
    run.cluster.advance(11_000)
    _send(run, [("AAPL", "196")])
    run.cluster.run_log_cleaner(force=True)
    run.notes["latest values"] = _table(run)


def _table(run: Run) -> str:
    """What a consumer reading from the start ends up with, key by key."""
    latest: dict[str, str] = {}
    replica = run.cluster.leader_replica("prices", 0)
    run.require(replica is not None, "prices-0 has no leader")
    for batch in replica.log.read(replica.log_start_offset, replica.high_watermark, 1 << 62):
        for r in batch.iter_records():
            key = r.key.decode()
            if r.value is None:
                latest.pop(key, None)
            else:
                latest[key] = r.value.decode()
    return " · ".join(f"{k}={v}" for k, v in sorted(latest.items()))


SCENARIO = Scenario(
    name="log-compaction",
    title="Log compaction",
    summary="the cleaner keeps the latest value per key and leaves holes; a tombstone "
            "deletes a key",
    topic="prices",
    setup=setup,
    columns=11,
    intro="Topic prices: cleanup.policy=compact. Each record is a key (a ticker) and a "
          "value (its price); only the latest price per key matters.",
    steps=(
        Step("A producer writes 6 price updates; AAPL changes 3 times, MSFT twice.", write),
        Step("segment.ms (10 s) passes and the next write rolls a new segment: {segments} "
             "segments. The cleaner never touches the active (newest) segment.", roll),
        Step("The log cleaner rewrites the old segment: {before} records in, {after} out, "
             "the latest per key. Offsets never change, so the removed ones leave holes (·).",
             clean),
        Step("A tombstone (key MSFT, value null) deletes a key. After the next clean, MSFT's "
             "older record is gone; the tombstone stays for delete.retention.ms (20 s) so "
             "consumers see the delete.", delete_key),
        Step("delete.retention.ms has passed: the next clean drops the tombstone too. A new "
             "consumer reading from offset 0 rebuilds the table without MSFT. (AAPL 195 "
             "stays for now: the newer 196 is in the active segment, which the cleaner "
             "never reads.)", forget),
    ),
)
