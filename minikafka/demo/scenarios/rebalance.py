"""A consumer crashes: its partitions stand still until the group coordinator gives up
on it (session.timeout.ms), then a rebalance hands them to the survivor, which resumes
from the last committed offsets and reads some records a second time."""

from __future__ import annotations

from minikafka.viz.consumers import GroupConsumers

from ..scenario import Diverged, Run, Scenario, Step

GROUP = "billing"


def setup(run: Run) -> None:
    run.cluster.create_topic("orders", partitions=3, replication_factor=3)
    run.cluster.advance(100)
    for p in range(3):
        run.produce([f"o{p}-{i}" for i in range(8)], partition=p)
    run.consumers = GroupConsumers(run.cluster, GROUP, "orders", poll_records=3)


def _owners(run: Run) -> str:
    desc = run.consumers.description()
    names = {m["member_id"]: m.get("client_id") or m["member_id"] for m in desc["members"]}
    parts = []
    for m in desc["members"]:
        tps = sorted(str(a).rsplit("-", 1)[-1] for a in m["assignment"])
        parts.append(f"{names[m['member_id']]} has {', '.join(tps) or 'nothing'}")
    return "; ".join(parts) or "nobody"


def _settle(run: Run, timeout_ms: int = 120_000) -> None:
    """Poll every live consumer until the group is Stable with all of them (a rebalance
    only moves while members poll)."""
    group = run.cluster.groups
    deadline = run.cluster.now_ms + timeout_ms
    while run.cluster.now_ms < deadline:
        snap = group.snapshot().get(GROUP, {})
        if snap.get("state") == "Stable" and len(snap.get("members", {})) == len(
                run.consumers.consumers):
            return
        run.consumers.poll()
    raise Diverged("the group did not settle")


def _join(run: Run) -> None:
    said = run.consumers.add()
    run.require("group stable" in said, "the group did not settle")
    run.facts.update(owners=_owners(run))


def poll_commit(run: Run) -> None:
    polled = run.consumers.poll()
    committed = run.consumers.commit()
    run.require("Error" not in committed, committed)
    run.consumers.poll()
    run.facts.update(polled=polled.removeprefix("poll: "))


def crash(run: Run) -> None:
    run.consumers.crash("c2")
    run.cluster.advance(5_000)
    run.consumers.poll()
    run.facts.update(session=_session_s(run))


def _session_s(run: Run) -> int:
    return next(iter(run.consumers.consumers.values())).config["session_timeout_ms"] // 1000


def expire(run: Run) -> None:
    run.cluster.advance(_session_s(run) * 1000)
    _settle(run)
    gen = run.cluster.groups.snapshot()[GROUP]["generation"]
    run.facts.update(owners=_owners(run), generation=gen)


def catch_up(run: Run) -> None:
    for _ in range(8):
        run.consumers.poll()
    run.consumers.commit()
    parts = run.consumers.description()["partitions"]
    run.require(all(p["committed"] == p["log_end_offset"] for p in parts),
                "c1 did not catch up")


SCENARIO = Scenario(
    name="consumer-rebalance",
    title="Consumer crash and rebalance",
    summary="a consumer crashes; after session.timeout.ms its partition moves to the "
            "survivor, which resumes from the committed offset",
    topic="orders",
    partition=2,
    group=GROUP,
    setup=setup,
    columns=9,
    intro="Topic orders: 3 partitions with 8 records each. No consumer in group billing "
          "yet: every partition's lag is the whole log.",
    steps=(
        Step("Consumer c1 joins group billing. The coordinator makes it leader of the group; "
             "the range assignor gives it every partition ({owners}).", _join),
        Step("Consumer c2 joins: a rebalance splits the partitions ({owners}).", _join),
        Step("Both consumers poll ({polled}) and commit, then poll again without committing. "
             "Lag counts from the committed offset, not from what was read.", poll_commit),
        Step("c2 is killed (kill -9, no LeaveGroup). Its partition stands still: the "
             "coordinator waits session.timeout.ms ({session} s) for a heartbeat.", crash),
        Step("{session} s without a heartbeat: the coordinator removes c2 and rebalances "
             "(generation {generation}): {owners}. c1 resumes c2's partition from its "
             "committed offset: records c2 read but never committed are read again "
             "(at-least-once).", expire),
        Step("c1 polls and commits until it has caught up: lag 0 everywhere.", catch_up),
    ),
)
