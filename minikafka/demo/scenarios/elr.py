"""Eligible leader replicas (KIP-966, Kafka 4.1): the followers of payments-0 stop one
after the other, then its leader. The follower that stopped last comes back and is
elected cleanly: its removal left the ISR smaller than min.insync.replicas, so the high
watermark could not pass it, and it holds every committed record.

The presenter shows SCENARIO; lesson 5 runs the same story with ELR off and with the
last follower crashing instead (``story(elr=..., crash=...)``, through
minikafka.course.durability.last_follower_returns)."""

from __future__ import annotations

from functools import partial

from ..scenario import Run, Scenario, Step, verdict_text

# Brokers 1-3 also vote in the controller quorum: with the partition on 3, 4 and 5, two
# voters stay up whatever happens to it, and the controller can keep electing.
REPLICAS = [3, 4, 5]
COMMITTED = ["p0", "p1", "p2"]
LATE = ["late"]


def _ids(brokers) -> str:
    return ", ".join(map(str, brokers)) or "empty"


def _state(run: Run) -> None:
    d = run.partition()
    run.facts.update(isr=_ids(d.isr), elr=_ids(d.elr), lke=_ids(d.last_known_elr),
                     hw=d.high_watermark, leo=d.log_end_offset)


def setup(run: Run) -> None:
    run.cluster.create_topic("payments", partitions=1, replication_factor=3,
                             replica_assignment=[REPLICAS],
                             config={"min.insync.replicas": "2"})
    run.cluster.advance(100)
    run.produce(COMMITTED, acks="all")
    run.cluster.advance(1_000)  # the followers learn the high watermark
    first, last = run.followers()
    run.facts.update(leader=run.leader(), first=first, last=last)


def stop_first(run: Run) -> None:
    run.cluster.stop_broker(run.facts["first"])
    _state(run)


def stop_last(run: Run, crash: bool = False) -> None:
    if crash:
        run.cluster.crash_broker(run.facts["last"])
        run.cluster.advance(10_000)  # the controller notices after broker.session.timeout.ms
    else:
        run.cluster.stop_broker(run.facts["last"])
    sent = run.produce(LATE, acks=1)
    run.require(len(sent.acked) == 1, f"the acks=1 producer got {sent}")
    run.facts.update(late=sent)
    _state(run)


def stop_leader(run: Run) -> None:
    run.cluster.stop_broker(run.facts["leader"])
    _state(run)


def return_last(run: Run, eligible: bool = True) -> None:
    last = run.facts["last"]
    run.cluster.start_broker(last)
    if eligible:
        run.wait_for(lambda: run.leader() == last, 10_000,
                     f"broker {last} was not elected from the ELR")
    else:  # nobody the controller may elect cleanly is back: the partition stays offline
        run.cluster.advance(5_000)
    _state(run)
    offline = run.leader() is None
    run.facts.update(read="nothing, it is offline" if offline else
                     ", ".join(run.read()) or "nothing")


def all_back(run: Run) -> None:
    run.cluster.start_broker(run.facts["leader"])
    run.cluster.start_broker(run.facts["first"])
    run.wait_for(lambda: len(run.partition().isr) == 3, 60_000, "the ISR did not grow back")
    run.cluster.advance(1_000)
    _state(run)
    late, committed = run.verdict(LATE), run.verdict(COMMITTED)
    run.require(committed.ok, f"committed records were lost: {committed.summary()}")
    run.notes["checker, acks=all"] = verdict_text(committed)
    run.notes["checker, acks=1"] = verdict_text(late)
    run.facts.update(late_lost=len(late.lost), kept=committed.acknowledged)


def story(elr: bool = True, crash: bool = False) -> Scenario:
    """The story on a cluster with the eligible.leader.replicas.version feature on or off
    (before Kafka 4.1: off), the last follower stopped cleanly or crashed (a crashed
    replica loses its place in the ELR). Only the presenter's story, ELR on and a clean
    stop, elects the returning follower; the narration is written for that one."""
    return Scenario(
        name="eligible-leaders",
        title="Eligible leader replicas (Kafka 4.1)",
        summary="payments-0 loses its followers, then its leader; the follower that stopped "
                "last returns and is elected cleanly from the ELR",
        topic="payments",
        setup=setup,
        brokers=5,
        features={"eligible.leader.replicas.version": int(elr)},
        columns=6,
        intro="Five brokers; topic payments has one partition on brokers 3, 4 and 5, "
              "min.insync.replicas=2. Broker {leader} leads; 3 records are committed on all "
              "three replicas.",
        steps=(
            Step("Broker {first} stops cleanly. ISR = {isr}: still min.insync.replicas "
                 "members, so writes go on and the eligible leader replicas stay empty "
                 "(ELR = {elr}).", stop_first),
            Step("Broker {last} stops too. ISR = {isr}, below min.insync.replicas: broker "
                 "{last} leaves it for the ELR = {elr}, because the high watermark cannot move "
                 "without it. An acks=1 producer sends one record: {late}. The HW stays at {hw}: "
                 "the record is not committed, and consumers do not see it.",
                 partial(stop_last, crash=crash)),
            Step("The leader, broker {leader}, stops. No leader; ISR = {isr}, ELR = {elr}, "
                 "LastKnownElr = {lke}. Before Kafka 4.1 only broker {leader}, the last ISR "
                 "member, could lead again.", stop_leader),
            Step("Broker {last} restarts and the controller elects it from the ELR, a clean "
                 "election: ISR = {isr}. A reader finds {read}: every committed record.",
                 partial(return_last, eligible=elr and not crash)),
            Step("Brokers {leader} and {first} return and catch up; broker {leader} truncates "
                 "the acks=1 record only it held. History checker: {kept} committed records "
                 "kept, {late_lost} acks=1 record lost: acknowledged, never committed.",
                 all_back),
        ),
    )


SCENARIO = story()
