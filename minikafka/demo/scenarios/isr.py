"""ISR shrink: a slow follower holds acks=all producers up until the leader drops it
from the in-sync replicas; with too few in-sync replicas left, writes are refused."""

from __future__ import annotations

from ..scenario import Run, Scenario, Step


def setup(run: Run) -> None:
    run.cluster.create_topic("clicks", partitions=1, replication_factor=3,
                             config={"min.insync.replicas": "2"})
    run.cluster.advance(100)
    run.produce([f"c{i}" for i in range(3)], acks="all")
    run.facts.update(leader=run.leader(), lag_s=_lag_s(run))


def _lag_s(run: Run) -> int:
    return run.cluster.broker_config["replica.lag.time.max.ms"] // 1000


def slow(run: Run) -> None:
    slow_one, other = run.followers()
    run.cluster.slow_follower(slow_one, 120_000)
    run.facts.update(slow=slow_one, other=other)
    run.facts.update(sent=run.produce(["c3", "c4"], acks="all", wait_ms=3_000))


def shrink(run: Run) -> None:
    slow = run.facts["slow"]
    run.wait_for(lambda: slow not in run.partition().isr, 60_000,
                 f"broker {slow} stayed in the ISR")
    run.wait_for(lambda: all(f.is_done for f in run.pending), 5_000,
                 "the waiting producer got no answer")
    run.pending.clear()
    d = run.partition()
    run.facts.update(isr=", ".join(map(str, d.isr)), hw=d.high_watermark)


def write_on(run: Run) -> None:
    sent = run.produce(["c5", "c6", "c7"], acks="all")
    run.require(len(sent.acked) == 3, f"the producer got {sent}")
    run.facts.update(sent=sent)


def lose_another(run: Run) -> None:
    other = run.facts["other"]
    run.cluster.crash_broker(other)
    run.wait_for(lambda: other not in run.partition().isr, 60_000,
                 f"broker {other} stayed in the ISR")
    seq = run.cluster.journal.next_seq
    run.produce(["c8", "c9"], acks="all", wait_ms=3_000)
    rejected = [e for e in run.cluster.journal.since(seq) if e.kind == "produce.rejected"]
    run.facts.update(isr=", ".join(map(str, run.partition().isr)), tries=len(rejected),
                     error=rejected[0].fields["error"] if rejected else "no error")


def recover(run: Run) -> None:
    run.cluster.resume_follower(run.facts["slow"])
    run.cluster.start_broker(run.facts["other"])
    run.wait_for(lambda: len(run.partition().isr) == 3, 60_000, "the ISR did not grow back")
    run.cluster.advance(500)
    run.facts.update(isr=", ".join(map(str, run.partition().isr)))


SCENARIO = Scenario(
    name="isr-shrink",
    title="ISR shrink from a slow follower",
    summary="a slow follower holds acks=all writes up until it leaves the ISR; too few "
            "in-sync replicas and writes are refused",
    topic="clicks",
    setup=setup,
    columns=11,
    intro="Topic clicks: one partition, 3 replicas, min.insync.replicas=2. Broker {leader} "
          "leads; all three replicas are in sync (●).",
    steps=(
        Step("Broker {slow}'s disk turns slow: each fetch now takes 2 minutes. An acks=all producer "
             "sends 2 records and waits, because broker {slow} is still in the ISR: {sent}.",
             slow),
        Step("After replica.lag.time.max.ms ({lag_s} s) without catching up, the leader drops "
             "broker {slow} from the ISR (◌ OUT OF SYNC). ISR = {isr}: the high watermark moves "
             "to {hw} and the waiting producer gets its answer.", shrink),
        Step("With 2 in-sync replicas (= min.insync.replicas) acks=all writes go through again: "
             "{sent}.", write_on),
        Step("Broker {other} crashes: ISR = {isr}, fewer than min.insync.replicas. The leader "
             "answers acks=all writes with {error} ({tries} tries in 3 s); the producer keeps "
             "retrying. Availability is traded for durability.", lose_another),
        Step("The slow disk recovers and broker {other} restarts. Both followers catch up "
             "and the ISR grows back to {isr}.", recover),
    ),
)
