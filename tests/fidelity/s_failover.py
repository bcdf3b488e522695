"""Failover: acks=all with min ISR, leader election, KIP-966 eligible leader replicas.

Kafka picks each partition's replicas and leader at random; a scenario finds who leads and
names replicas by role (leader, f1, f2 in replica order) so both clusters can be compared.
Only one node stops at a time: three combined KRaft nodes lose their controller quorum
with two down, and then metadata does not change at all.
"""
from __future__ import annotations

from .doors import wait_until
from .registry import attempt, drain, rows, scenario


def describe(door, topic: str) -> dict:
    """Partition 0's leader, replicas, ISR and ELR from DescribeTopicPartitions."""
    page = door.admin().describe_topic_partitions([topic])
    partitions = page["topics"][0]["partitions"] if page["topics"] else []
    if not partitions:  # a broker that has not yet learnt of a new topic lists none
        return {"leader": -1, "replicas": [], "isr": [], "elr": [], "last_known_elr": []}
    p = partitions[0]
    return {"leader": p["leader_id"], "replicas": list(p["replica_nodes"]),
            "isr": sorted(p["isr_nodes"] or []),
            "elr": sorted(p["eligible_leader_replicas"] or []),
            "last_known_elr": sorted(p["last_known_elr"] or [])}


def roles(state: dict, names: dict[int, str]) -> dict:
    """A partition state with node ids replaced by role names."""
    def name(n):
        return names.get(n, "none" if n in (None, -1) else f"?{n}")
    return {"leader": name(state["leader"]),
            "isr": sorted(map(name, state["isr"])), "elr": sorted(map(name, state["elr"])),
            "last_known_elr": sorted(map(name, state["last_known_elr"]))}


def role_names(state: dict) -> dict[int, str]:
    followers = [r for r in state["replicas"] if r != state["leader"]]
    return {state["leader"]: "leader", followers[0]: "f1", followers[1]: "f2"}


def _topic(door, prefix: str, min_isr: int) -> tuple[str, dict, dict[int, str]]:
    topic = door.topic(prefix)
    door.create_topic(topic, partitions=1, replication_factor=3,
                      configs={"min.insync.replicas": str(min_isr)})
    state = wait_until(lambda: (s := describe(door, topic))["leader"] >= 0 and
                       len(s["isr"]) == 3 and s, 15)
    return topic, state, role_names(state)


def _until(door, topic: str, names, predicate, timeout_s: float = 20) -> dict:
    """Describe until `predicate(roles)` holds (or time-out); the roles seen last."""
    seen = {}

    def check():
        nonlocal seen
        seen = roles(describe(door, topic), names)
        return predicate(seen)
    wait_until(check, timeout_s, 0.2)
    return seen


@scenario("failover", lesson="05")
def acks_all_refused_below_min_isr(door):
    """min.insync.replicas=3, a follower stops: the ISR shrinks, acks=all is refused with
    NOT_ENOUGH_REPLICAS, acks=1 is written; the follower returns and acks=all works again."""
    topic, _, names = _topic(door, "minisr3", 3)
    strict = door.producer(acks="all", retries=0, enable_idempotence=False,
                           request_timeout_ms=8000)
    loose = door.producer(acks=1, retries=0)
    first = strict.send(topic, value=b"a").get(timeout=15).offset
    f1 = next(n for n, r in names.items() if r == "f1")
    door.stop(f1)
    shrunk = _until(door, topic, names, lambda s: "f1" not in s["isr"])
    refused = attempt(lambda: strict.send(topic, value=b"b").get(timeout=15).offset)
    written = attempt(lambda: loose.send(topic, value=b"c").get(timeout=15).offset)
    door.start(f1)
    back = _until(door, topic, names, lambda s: len(s["isr"]) == 3, 30)
    again = attempt(lambda: strict.send(topic, value=b"d").get(timeout=15).offset)
    return {"first": first, "after_stop": shrunk, "acks_all": refused, "acks_1": written,
            "after_start": back, "acks_all_again": again}


@scenario("failover", lesson="04")
def leader_stops_acks_all_keeps_every_record(door):
    """acks=all, min ISR 2: the leader stops mid-stream; a follower takes over and every
    acknowledged record is there, in order, at the same offsets."""
    topic, _, names = _topic(door, "fo", 2)
    producer = door.producer(acks="all", enable_idempotence=True, retry_backoff_ms=100,
                             request_timeout_ms=5000)
    acked = [producer.send(topic, value=f"v{i}".encode()).get(timeout=30).offset
             for i in range(5)]
    leader = next(n for n, r in names.items() if r == "leader")
    door.stop(leader)
    after = _until(door, topic, names, lambda s: s["leader"] not in ("leader", "none"))
    acked += [producer.send(topic, value=f"v{i}".encode()).get(timeout=30).offset
              for i in range(5, 10)]
    consumer = door.consumer(topic, auto_offset_reset="earliest", enable_auto_commit=False)
    return {"acked": acked, "new_leader_in": after["leader"] in ("f1", "f2"),
            "isr": len(after["isr"]), "read": [r[1:] for r in rows(drain(consumer, 10))]}


@scenario("elr", lesson="05")
def elr_after_a_follower_stops(door):
    """KIP-966: min.insync.replicas=3, a follower stops cleanly: it leaves the ISR, which is
    now below min ISR, and becomes an eligible leader replica."""
    topic, _, names = _topic(door, "elr1", 3)
    door.producer(acks="all").send(topic, value=b"x").get(timeout=15)
    f2 = next(n for n, r in names.items() if r == "f2")
    door.stop(f2)
    return {"after_stop": _until(door, topic, names, lambda s: "f2" not in s["isr"])}


@scenario("elr", lesson="05")
def elr_after_the_leader_stops(door):
    """KIP-966: min.insync.replicas=3, the leader stops: a follower from the ISR leads, the
    old leader is eligible (ELR); min ISR 2 for comparison: no ELR at all."""
    out = {}
    for min_isr in (3, 2):
        topic, _, names = _topic(door, f"elr-l{min_isr}", min_isr)
        door.producer(acks=1).send(topic, value=b"x").get(timeout=15)
        leader = next(n for n, r in names.items() if r == "leader")
        door.stop(leader)
        seen = _until(door, topic, names, lambda s: s["leader"] in ("f1", "f2"))
        seen["leader"] = "a follower" if seen["leader"] in ("f1", "f2") else seen["leader"]
        seen["isr"] = len(seen["isr"])
        out[f"min_isr_{min_isr}"] = seen
        door.start(leader)
        _until(door, topic, names, lambda s: len(s["isr"]) == 3, 30)
    return out


@scenario("elr", lesson="05")
def elr_clears_when_the_follower_returns(door):
    """The stopped follower starts again: it catches up, rejoins the ISR and leaves the ELR."""
    topic, _, names = _topic(door, "elr-back", 3)
    door.producer(acks=1).send(topic, value=b"x").get(timeout=15)
    f1 = next(n for n, r in names.items() if r == "f1")
    door.stop(f1)
    _until(door, topic, names, lambda s: "f1" not in s["isr"])
    door.producer(acks=1).send(topic, value=b"y").get(timeout=15)
    door.start(f1)
    return {"after_start": _until(door, topic, names, lambda s: len(s["isr"]) == 3, 30)}


@scenario("failover", lesson="04")
def leader_killed_acks_all_keeps_every_record(door):
    """The leader is killed (SIGKILL, no controlled shutdown): after the broker session
    timeout the controller elects a follower; an idempotent acks=all producer retries
    through it and every acknowledged record is there once, in order."""
    topic, _, names = _topic(door, "kill", 2)
    producer = door.producer(acks="all", enable_idempotence=True, retry_backoff_ms=200,
                             request_timeout_ms=5000, delivery_timeout_ms=60_000)
    acked = [producer.send(topic, value=f"v{i}".encode()).get(timeout=30).offset
             for i in range(3)]
    leader = next(n for n, r in names.items() if r == "leader")
    door.kill(leader)
    acked += [producer.send(topic, value=f"v{i}".encode()).get(timeout=60).offset
              for i in range(3, 6)]
    after = _until(door, topic, names, lambda s: s["leader"] in ("f1", "f2"))
    consumer = door.consumer(topic, auto_offset_reset="earliest", enable_auto_commit=False)
    return {"acked": acked, "new_leader_in": after["leader"] in ("f1", "f2"),
            "isr": sorted(after["isr"]) == sorted(["f1", "f2"]),
            "read": [r[1:] for r in rows(drain(consumer, 6))]}
