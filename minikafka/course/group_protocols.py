"""Lesson 17's experiment: one consumer group scenario under the classic protocol (eager
and cooperative) and under the consumer protocol of KIP-848, as a timeline of who owns
which partition.

The scenario: consumers c1, c2, c3 share topic ``orders`` (6 partitions); ``c4`` joins at
1 s; ``c2`` leaves cleanly (``close()``) at ``leave_at_ms``. Members poll every
``poll_ms``, except ``slow`` (c3), whose processing of each batch takes ``slow_poll_ms``
between two polls: the member the classic join barrier waits for. Every revocation and
assignment the members' rebalance listeners are told about is noted with its simulated
time. ``protocol_timeline()`` returns plain data that
``minikafka.viz.protocol_timeline_view()`` draws and the lesson's check reads::

    {"label": "classic · eager (range)", "protocol": "classic" | "consumer",
     "partitions": 6, "members": ["c1", ...], "end_ms": 20000,
     "moments": [{"time_ms", "what": "c2 revoked [2, 3]", "owners": {p: member | None}}],
     "idle_ms": {p: ms nobody owned p}, "stopped_at_once": the most partitions unowned at
     one moment, "epochs": [group generation or group epoch after each moment]}

Deterministic: the same seed gives the same timeline.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..cluster import Cluster, settle_group
from .rebalance import TimedRebalanceLog

__all__ = ["CLASSIC_CONSUMER_CONFIG", "CONSUMER_PROTOCOL_UNSUPPORTED", "PROTOCOLS",
           "in_process_settings", "member_epochs", "protocol_timeline", "protocol_timelines",
           "timeline_summary", "unowned_intervals"]

# label -> the consumer settings that choose it
PROTOCOLS: dict[str, dict[str, Any]] = {
    "classic · eager (range)": {"partition_assignment_strategy": ["range"]},
    "classic · cooperative (cooperative-sticky)":
        {"partition_assignment_strategy": ["cooperative-sticky"]},
    "consumer · KIP-848 (uniform)": {"group_protocol": "consumer"},
}

# A classic consumer's configuration as a confluent-kafka (librdkafka) or Java
# application writes it: the starting point of the lesson's exercise.
CLASSIC_CONSUMER_CONFIG: dict[str, Any] = {
    "bootstrap.servers": "localhost:9092",
    "group.id": "orders-app",
    "client.id": "orders-app",
    "auto.offset.reset": "earliest",
    "enable.auto.commit": False,
    "max.poll.interval.ms": 300_000,
    "partition.assignment.strategy": "cooperative-sticky",
    "session.timeout.ms": 45_000,
    "heartbeat.interval.ms": 3_000,
}

# Client settings the consumer protocol moved to the broker: the Java client
# (ConsumerConfig's CONSUMER_PROTOCOL_UNSUPPORTED_CONFIGS) and librdkafka refuse them
# with group.protocol=consumer.
CONSUMER_PROTOCOL_UNSUPPORTED: dict[str, str] = {
    "partition.assignment.strategy": "the broker assigns: name one of its assignors "
                                     "with group.remote.assignor (uniform or range)",
    "session.timeout.ms": "the broker's group.consumer.session.timeout.ms (or the group's "
                          "consumer.session.timeout.ms) sets it",
    "heartbeat.interval.ms": "the broker's group.consumer.heartbeat.interval.ms (or the "
                             "group's consumer.heartbeat.interval.ms) sets it",
}

# Broker-side assignors of Kafka 4.x (group.consumer.assignors' defaults).
REMOTE_ASSIGNORS = ("uniform", "range")


def in_process_settings(config: dict[str, Any]) -> dict[str, Any]:
    """A Java/librdkafka-style consumer config as minikafka's in-process consumer takes
    it (kafka-python's names: dots become underscores); bootstrap.servers is dropped."""
    return {k.replace(".", "_"): v for k, v in config.items() if k != "bootstrap.servers"}


TOPIC = "orders"
GROUP = "orders-app"


def _epoch(cluster: Cluster) -> int | None:
    snap = cluster.groups.snapshot().get(GROUP, {})
    return snap.get("group_epoch", snap.get("generation"))


def protocol_timeline(label: str, *, seed: int = 17, partitions: int = 6,
                      poll_ms: int = 200, slow: str = "c3", slow_poll_ms: int = 2_000,
                      join_at_ms: int = 1_000, leave_at_ms: int = 11_000,
                      end_ms: int = 20_000) -> dict[str, Any]:
    """Run the scenario with the protocol named by `label` (a key of PROTOCOLS)."""
    settings = PROTOCOLS[label]
    cluster = Cluster(brokers=3, seed=seed)
    cluster.create_topic(TOPIC, partitions=partitions, replication_factor=3)
    events: list[tuple[int, str, str, list[int]]] = []

    def member(name: str) -> Any:
        consumer = cluster.consumer(group_id=GROUP, client_id=name, **settings)
        consumer.subscribe([TOPIC], listener=TimedRebalanceLog(cluster, name, events))
        return consumer

    members = {name: member(name) for name in ("c1", "c2", "c3")}
    settle_group(list(members.values()))
    owners: dict[int, str | None] = {
        tp.partition: name for name, c in members.items() for tp in c.assignment()}
    events.clear()
    start = cluster.now_ms
    next_poll = dict.fromkeys(members, start)
    moments = [{"time_ms": 0, "what": "c1, c2, c3 own everything", "owners": dict(sorted(owners.items())),
                "epoch": _epoch(cluster)}]

    def note_events() -> None:
        for time_ms, who, what, parts in events:
            for p in parts:
                if what == "assigned":
                    owners[p] = who
                elif owners.get(p) == who:
                    owners[p] = None
            moments.append({"time_ms": time_ms - start, "what": f"{who} {what} {parts}",
                            "owners": dict(sorted(owners.items())), "epoch": _epoch(cluster)})
        events.clear()

    step = 100
    while cluster.now_ms - start < end_ms:
        now = cluster.now_ms - start
        if now >= join_at_ms and "c4" not in members and "c4" not in next_poll:
            members["c4"] = member("c4")
            next_poll["c4"] = cluster.now_ms
            moments.append({"time_ms": now, "what": "c4 joins", "owners": dict(sorted(owners.items())),
                            "epoch": _epoch(cluster)})
        if now >= leave_at_ms and "c2" in members:
            members.pop("c2").close(autocommit=False)
            note_events()
            moments.append({"time_ms": cluster.now_ms - start, "what": "c2 leaves",
                            "owners": dict(sorted(owners.items())), "epoch": _epoch(cluster)})
        for name, consumer in members.items():
            if cluster.now_ms >= next_poll[name]:
                consumer.poll(timeout_ms=0)
                next_poll[name] = cluster.now_ms + (slow_poll_ms if name == slow else poll_ms)
        note_events()
        cluster.advance(step)
    for consumer in members.values():
        consumer.close(autocommit=False)
    idle = dict.fromkeys(range(partitions), 0)
    for p, begin, end in unowned_intervals(moments, end_ms):
        idle[p] += end - begin
    return {"label": label, "protocol": settings.get("group_protocol", "classic"),
            "partitions": partitions, "members": ["c1", "c2", "c3", "c4"],
            "end_ms": end_ms, "moments": moments, "idle_ms": idle,
            "stopped_at_once": max(sum(o is None for o in m["owners"].values())
                                   for m in moments),
            "epochs": [m["epoch"] for m in moments]}


def unowned_intervals(moments: list[dict[str, Any]],
                      end_ms: int) -> list[tuple[int, int, int]]:
    """(partition, from_ms, to_ms) for every stretch in which nobody owned a partition
    (one stretch however many moments it spans)."""
    open_since: dict[int, int] = {}
    out = []
    for i, m in enumerate(moments):
        until = moments[i + 1]["time_ms"] if i + 1 < len(moments) else end_ms
        for p, owner in m["owners"].items():
            if owner is None:
                open_since.setdefault(p, m["time_ms"])
            elif p in open_since:
                out.append((p, open_since.pop(p), m["time_ms"]))
        if i + 1 == len(moments):
            out += [(p, begin, until) for p, begin in open_since.items()]
    return sorted((p, b, e) for p, b, e in out if e > b)


def protocol_timelines(**kwargs: Any) -> list[dict[str, Any]]:
    """The scenario under every protocol of PROTOCOLS, in order."""
    return [protocol_timeline(label, **kwargs) for label in PROTOCOLS]


def timeline_summary(timelines: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per protocol: the worst moment and the total reading time lost."""
    return [{"protocol": t["label"],
             "most partitions unread at once": t["stopped_at_once"],
             "partition-seconds unread": round(sum(t["idle_ms"].values()) / 1000, 1),
             "longest pause of one partition (s)":
                 round(max((end - begin for _, begin, end in
                            unowned_intervals(t["moments"], t["end_ms"])), default=0) / 1000, 1)}
            for t in timelines]


def member_epochs(cluster: Cluster, group_id: str, since_seq: int = 0,
                  start_ms: int | None = None) -> list[dict[str, Any]]:
    """The coordinator's journal of a consumer group (KIP-848) since a journal mark
    (``cluster.journal.next_seq``), one row per change: the group epoch moving on, a new
    target assignment, a member reaching an epoch (with what it owns and what it still
    has to revoke). Members are named by client id; times count from `start_ms` (the
    first row's time when not given)."""
    names = {e.fields["member"]: e.fields.get("client") or e.fields["member"]
             for e in cluster.journal.of_kind("group.member.joined")
             if e.fields.get("group") == group_id}  # removed members keep their names
    start = start_ms
    rows = []
    for e in cluster.journal.since(since_seq):
        f = e.fields
        if f.get("group") != group_id or e.kind not in (
                "group.epoch", "group.target", "group.member.epoch", "group.member.removed"):
            continue
        start = e.time_ms if start is None else start
        row = {"time (s)": round((e.time_ms - start) / 1000, 3), "event": e.kind[6:]}
        if e.kind == "group.epoch":
            row |= {"member": None, "epoch": f["epoch"], "detail": "group epoch"}
        elif e.kind == "group.target":
            row |= {"member": None, "epoch": f["epoch"], "detail": "target: " + "; ".join(
                f"{names.get(m, m)} {','.join(p.split('-')[-1] for p in ps)}"
                for m, ps in sorted(f["target"].items(), key=lambda i: names.get(i[0], i[0])))}
        elif e.kind == "group.member.removed":
            row |= {"member": names.get(f["member"], f["member"]), "epoch": None,
                    "detail": f"removed: {f.get('reason')}"}
        else:
            row |= {"member": names.get(f["member"], f["member"]), "epoch": f["epoch"],
                    "detail": f"{f['state']}: owns {','.join(p.split('-')[-1] for p in f['assigned']) or '-'}"
                    + (f"; revoking {','.join(p.split('-')[-1] for p in f['revoking'])}"
                       if f["revoking"] else "")}
        rows.append(row)
    return rows
