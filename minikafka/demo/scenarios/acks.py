"""acks=1 loses acknowledged writes when the leader dies before its followers copy
them; acks=all does not. The history checker gives the verdict for each."""

from __future__ import annotations

from ..scenario import Run, Scenario, Step, verdict_text

ACKS1 = [f"one{i}" for i in range(3)]
ACKSALL = [f"all{i}" for i in range(3)]


def setup(run: Run) -> None:
    run.cluster.create_topic("payments", partitions=1, replication_factor=3,
                             config={"min.insync.replicas": "2"})
    run.cluster.advance(100)
    run.produce(["ok0", "ok1", "ok2"], acks="all")
    run.facts.update(leader=run.leader())


def stall(run: Run) -> None:
    followers = run.followers()
    for b in followers:
        run.cluster.pause_follower(b)
    run.facts.update(followers=" and ".join(map(str, followers)), leader=run.leader())


def send_acks1(run: Run) -> None:
    sent = run.produce(ACKS1, acks=1)
    run.require(len(sent.acked) == len(ACKS1), f"the producer got {sent}")
    run.facts.update(sent1=sent)


def crash(run: Run) -> None:
    old = run.leader()
    run.cluster.crash_broker(old)
    for b in run.cluster.broker_ids:
        run.cluster.resume_follower(b)
    run.wait_for(lambda: run.leader() not in (old, None), 60_000, "no new leader")
    run.facts.update(old=old, new=run.leader())


def come_back(run: Run) -> None:
    old = run.facts["old"]
    run.cluster.start_broker(old)
    run.wait_for(lambda: old in run.partition().isr, 30_000,
                 f"broker {old} did not rejoin the ISR")
    result = run.verdict(ACKS1)
    run.notes["checker, acks=1"] = verdict_text(result)
    run.facts.update(lost=len(result.lost), acked=result.acknowledged)


def stall_again(run: Run) -> None:
    followers = run.followers()
    for b in followers:
        run.cluster.pause_follower(b)
    run.facts.update(leader=run.leader(), followers=" and ".join(map(str, followers)))
    run.facts.update(sentall=run.produce(ACKSALL, acks="all", wait_ms=2_000))


def crash_again(run: Run) -> None:
    old = run.leader()
    run.cluster.crash_broker(old)
    for b in run.cluster.broker_ids:
        run.cluster.resume_follower(b)
    run.wait_for(lambda: run.leader() not in (old, None), 60_000, "no new leader")
    run.facts.update(old2=old, new2=run.leader())


def settle(run: Run) -> None:
    run.cluster.start_broker(run.facts["old2"])
    run.wait_for(lambda: all(f.is_done for f in run.pending), 120_000,
                 "the producer's retries never got an answer")
    run.cluster.advance(5_000)
    result = run.verdict(ACKSALL)
    run.notes["checker, acks=all"] = verdict_text(result)
    run.facts.update(acked_all=result.acknowledged, lost_all=len(result.lost))


SCENARIO = Scenario(
    name="acks",
    title="acks=1 loses data, acks=all does not",
    summary="the leader dies before its followers copy the writes: acks=1 loses them, "
            "acks=all does not",
    topic="payments",
    setup=setup,
    columns=7,
    intro="Topic payments: one partition on 3 brokers, min.insync.replicas=2. Broker "
          "{leader} leads; 3 records are already safely on every replica.",
    steps=(
        Step("The followers ({followers}) stall (a long GC pause): they stop fetching but "
             "stay in the ISR until replica.lag.time.max.ms (30 s) passes.", stall),
        Step("A producer with acks=1 sends 3 records. The leader answers as soon as it has "
             "written them: {sent1}. Only broker {leader} holds them (? = above the high "
             "watermark).", send_acks1),
        Step("Broker {old} crashes. The controller elects broker {new} from the ISR; its "
             "log ends before those 3 records.", crash),
        Step("Broker {old} returns, sees its log diverged from the new leader epoch and "
             "truncates. History checker: {lost} of {acked} acknowledged acks=1 writes are "
             "gone for good.", come_back),
        Step("Now acks=all. The followers of broker {leader} stall again and a producer sends "
             "3 records: {sentall}. The leader waits for the ISR before answering.",
             stall_again),
        Step("Broker {old2} crashes too. Nothing was acknowledged, so nothing can be lost; "
             "the producer retries against the new leader, broker {new2}.", crash_again),
        Step("The retries land on broker {new2}. History checker: {acked_all} acknowledged "
             "acks=all writes, {lost_all} lost.", settle),
    ),
)
