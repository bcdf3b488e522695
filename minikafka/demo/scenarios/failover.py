"""Leader failover: the leader of a partition crashes, the controller elects another
replica from the ISR, producers carry on, and the old leader comes back as a follower."""

from __future__ import annotations

from ..scenario import Run, Scenario, Step, verdict_text


def setup(run: Run) -> None:
    run.cluster.create_topic("orders", partitions=3, replication_factor=3,
                             config={"min.insync.replicas": "2"})
    run.cluster.advance(100)
    run.facts.update(leader=run.leader(), old=run.leader())


def produce_first(run: Run) -> None:
    sent = run.produce([f"v{i}" for i in range(6)], acks="all")
    run.facts.update(sent=sent, leader=run.leader())


def crash_leader(run: Run) -> None:
    old = run.leader()
    run.require(old is not None and run.cluster.brokers[old].running,
                "orders-0 has no running leader to crash")
    run.cluster.crash_broker(old)
    run.cluster.advance(1_000)
    run.facts.update(old=old, session=run.cluster.broker_config["broker.session.timeout.ms"]
                     // 1000)


def elect(run: Run) -> None:
    run.cluster.advance(9_000)
    old = run.facts["old"]
    run.wait_for(lambda: run.leader() not in (old, None), 1_000,
                 "no new leader for orders-0")
    d = run.partition()
    run.facts.update(new=d.leader, epoch=d.leader_epoch,
                     isr=", ".join(map(str, d.isr)))


def produce_more(run: Run) -> None:
    sent = run.produce([f"v{i}" for i in range(6, 9)], acks="all")
    run.require(len(sent.acked) == 3, f"the producer got {sent}")
    run.facts.update(more=sent, first=min(sent.acked, default="?"),
                     last=max(sent.acked, default="?"))
    run.notes["checker"] = _verdict(run)


def restart(run: Run) -> None:
    old = run.facts["old"]
    run.cluster.start_broker(old)
    run.wait_for(lambda: old in run.partition().isr, 30_000,
                 f"broker {old} did not rejoin the ISR")
    run.cluster.advance(1_000)
    run.facts.update(isr=", ".join(map(str, run.partition().isr)))


def prefer(run: Run) -> None:
    preferred = run.partition().replicas[0]
    run.cluster.elect_leaders("orders", [0], election_type="preferred")
    run.wait_for(lambda: run.leader() == preferred, 1_000,
                 f"broker {preferred} did not take the lead back")
    run.cluster.advance(500)
    run.facts.update(leader=run.leader())
    run.notes["checker"] = _verdict(run)


def _verdict(run: Run) -> str:
    return verdict_text(run.verdict(f"v{i}" for i in range(9)))


SCENARIO = Scenario(
    name="leader-failover",
    title="Leader failover",
    summary="the leader of orders-0 crashes; the controller elects a new one from the ISR",
    topic="orders",
    setup=setup,
    intro="Three brokers; topic orders has 3 partitions, each copied to all 3 brokers. "
          "Broker {leader} leads orders-0 (★): producers and consumers talk to it.",
    steps=(
        Step("A producer writes 6 records to orders-0 with acks=all: the leader, broker "
             "{leader}, answers once every in-sync replica has them ({sent}).", produce_first),
        Step("Broker {old} crashes (kill -9). Nothing changes yet: the controller waits "
             "broker.session.timeout.ms ({session} s) for a heartbeat before it acts.",
             crash_leader),
        Step("No heartbeat for {session} s: the controller fences broker {old} and elects "
             "broker {new}, an in-sync replica, as leader of orders-0 (leader epoch {epoch}). "
             "ISR is now {isr}.", elect),
        Step("Producers refresh metadata and write to broker {new}: offsets {first}-{last}. "
             "The checker finds every acknowledged record.", produce_more),
        Step("Broker {old} restarts as a follower, fetches what it missed from broker {new} "
             "and rejoins the ISR ({isr}).", restart),
        Step("A preferred leader election (kafka-leader-election.sh --election-type "
             "preferred) hands orders-0 back to broker {leader}, the first replica listed.",
             prefer),
    ),
)
