"""Lesson 5's experiments: durability over seeded fault schedules, and the story of the
last follower that returns (eligible leader replicas, KIP-966)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from minikafka.course.reading import read_topic
from minikafka.course.tables import Table


def durability_table(seeds: Iterable[int] = range(20), acks: Sequence[Any] = (0, 1, "all"),
                     min_insync_replicas: Sequence[int] = (1, 2),
                     unclean: Sequence[bool] = (False,),
                     idempotent: Sequence[bool | None] = (None,),
                     lose_responses: bool = False, steps: int = 12) -> Table:
    """Run ``minikafka.chaos.run_trial`` for every seed and every combination of
    settings, and add up what the history checker found.

    Columns: records the application sent; acknowledged (the producer was told "stored
    at offset N"); lost (acknowledged, then missing when the partitions are read back:
    a broken promise); read back (records a reader finds at the end, copies
    included); trials with a loss; duplicated (records found more than once); reordered
    pairs (sent a then b to one partition, stored b
    before a). acks=0 never gets an answer, so nothing counts as acknowledged and its
    losses show only as records missing from the log. idempotent=None is the producer's
    default (on for acks=all); lose_responses drops some produce responses, so the
    producer retries writes that had in fact succeeded.
    """
    from minikafka.chaos import run_trial, schedule

    seeds = list(seeds)
    rows = []
    for a in acks:
        for isr in min_insync_replicas:
            for u in unclean:
                for idem in idempotent:
                    sent = acked = lost = stored = losing = dup = reordered = 0
                    for seed in seeds:
                        r = run_trial(seed, acks=a, min_insync_replicas=isr, unclean=u,
                                      steps=steps, idempotent=idem,
                                      lose_responses=lose_responses)
                        sent += sum(s.records for s in schedule(seed, steps))
                        acked += r.acknowledged
                        lost += len(r.lost)
                        losing += bool(r.lost)
                        dup += len(r.duplicated)
                        reordered += len(r.reordered)
                        stored += r.observed
                    rows.append({"acks": str(a), "min.insync.replicas": isr,
                                 "unclean election": u,
                                 "idempotence": idem if idem is not None else
                                 str(a) in ("all", "-1"),
                                 "trials": len(seeds), "sent": sent, "acknowledged": acked,
                                 "lost": lost, "read back": stored,
                                 "trials with a loss": losing, "duplicated": dup,
                                 "reordered": reordered})
    return Table(rows, title=f"{len(seeds)} seeded fault schedules per row")


def last_follower_returns(elr: bool = True, crash: bool = False
                          ) -> tuple[Any, list[bytes] | str]:
    """Lesson 5's story 3, the presenter's eligible-leaders scenario
    (minikafka.demo.scenarios.elr) on a fresh cluster: payments-0 (3 replicas,
    min.insync.replicas=2) loses one follower, then the other (stopped, or crashed when
    ``crash``), then its leader; the follower that went last restarts. Prints the
    partition after each step as kafka-topics.sh --describe shows it, and returns its
    PartitionDescription at the end with what a consumer reads then (a string when the
    partition is offline). ``elr`` sets the eligible.leader.replicas.version feature."""
    from minikafka.demo.scenario import Run
    from minikafka.demo.scenarios.elr import story
    from minikafka.tools.topics import partition_line

    scenario = story(elr=elr, crash=crash)
    run = Run(scenario)
    scenario.setup(run)
    moments = ("broker {first} stops", "broker {last} " + ("crashes" if crash else "stops"),
               "broker {leader} (the leader) stops", "broker {last} comes back")
    for step, moment in zip(scenario.steps, moments):
        step.do(run)
        p = run.partition()
        print(moment.format(**run.facts) + ":\n" + partition_line(
            scenario.topic, 0, p.leader, p.replicas, p.isr, p.elr, p.last_known_elr))
    if p.leader is None:
        return p, "nothing, it is offline"
    return p, [r.value for r in read_topic(run.cluster, scenario.topic)[0]]
