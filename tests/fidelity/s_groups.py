"""Consumer groups: assignments for each assignor, static membership, committed offsets."""
from __future__ import annotations

import threading
import time

from kafka import TopicPartition
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
from kafka.structs import OffsetAndMetadata

from .registry import CONFLUENT, attempt, drain, rows, scenario

GROUP_TIMEOUTS = {"heartbeat_interval_ms": 100, "session_timeout_ms": 6000}


class Member(threading.Thread):
    """A kafka-python group member polling in its own thread until told to stop; its latest
    assignment (as sorted [topic-label, partition] pairs) is readable from the outside."""

    def __init__(self, door, topics: list[str], labels: dict[str, str], **config) -> None:
        super().__init__(daemon=True)
        self.consumer = door.consumer(*topics, **GROUP_TIMEOUTS, **config)
        # Join only once the client's metadata has every topic: kafka-python 3.0.12 can
        # drop the JoinGroup it sends when metadata for topics made just before arrives
        # mid-join, and then sits silent until its session expires (docs/fidelity.md,
        # "Open observations"). A consumer that knows its topics first never takes that path.
        deadline = time.monotonic() + 30
        while not all(self.consumer.partitions_for_topic(t) for t in topics) \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        self.labels = labels
        self.assigned: list = []
        self.running = True
        self.lock = threading.Lock()

    def run(self) -> None:
        while self.running:
            with self.lock:
                self.consumer.poll(timeout_ms=50)
                self.assigned = sorted([self.labels[tp.topic], tp.partition]
                                       for tp in self.consumer.assignment())

    def generation(self) -> int:
        return self.consumer._coordinator._generation.generation_id

    def halt(self) -> None:
        self.running = False
        self.join(10)


def stable(members: list, total: int, quiet_s: float = 1.0, timeout_s: float = 30) -> list:
    """Wait until the members' assignments cover `total` partitions once each and stay
    unchanged for `quiet_s`; returns them."""
    deadline = time.monotonic() + timeout_s
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        now = [list(m.assigned) for m in members]
        flat = [tuple(p) for a in now for p in a]
        if now != last:
            last, since = now, time.monotonic()
        elif len(flat) == total and len(set(flat)) == total and all(now) and \
                time.monotonic() - since >= quiet_s:
            return now
        time.sleep(0.05)
    return last or []


def _assignments(door, assignor, consumers: int = 2, partitions: tuple = (3, 3)) -> dict:
    labels = {door.topic(f"ga{i}"): "AB"[i] for i in range(len(partitions))}
    for topic, n in zip(labels, partitions, strict=True):
        door.create_topic(topic, partitions=n)
    group = door.topic("g")
    members: list[Member] = []
    steps = []
    try:
        for i in range(consumers):  # join one at a time: each step's assignment is stable
            member = Member(door, list(labels), labels, group_id=group, client_id=f"c{i}",
                            partition_assignment_strategy=[assignor])
            member.start()
            members.append(member)
            steps.append(stable(members, sum(partitions)))
    finally:
        for m in members:
            m.halt()
    return {"steps": steps}


@scenario("groups", lesson="09")
def range_assignor(door):
    """RangeAssignor, two topics of 3 partitions, consumers joining one at a time."""
    return _assignments(door, RangePartitionAssignor, consumers=3, partitions=(3, 2))


@scenario("groups", lesson="09")
def roundrobin_assignor(door):
    """RoundRobinAssignor on the same topics."""
    return _assignments(door, RoundRobinPartitionAssignor, consumers=3, partitions=(3, 2))


@scenario("groups", lesson="09")
def sticky_assignor(door):
    """StickyAssignor: balanced, and partitions stay where they were when a member joins."""
    return _assignments(door, StickyPartitionAssignor, consumers=3, partitions=(3, 2))


@scenario("groups", lesson="09")
def describe_group_after_join(door):
    """DescribeGroups of a stable group: state, protocol type and name, members' clients."""
    topic, group = door.topic("dg"), door.topic("g")
    door.create_topic(topic, partitions=2)
    members = []
    try:
        for i in range(2):
            m = Member(door, [topic], {topic: "A"}, group_id=group, client_id=f"c{i}",
                       partition_assignment_strategy=[RoundRobinPartitionAssignor])
            m.start()
            members.append(m)
            stable(members, 2)
        described = door.admin().describe_groups([group])[group]
    finally:
        for m in members:
            m.halt()
    return {"state": described["group_state"], "protocol_type": described["protocol_type"],
            "protocol": described["protocol_data"], "error": described["error"],
            "members": sorted([m["client_id"], m["member_id"].startswith(m["client_id"] + "-"),
                               m["group_instance_id"]] for m in described["members"])}


@scenario("groups", lesson="09")
def static_member_restart_keeps_assignment(door):
    """Static membership (group.instance.id): a member that restarts within the session
    timeout gets its partitions back without a rebalance (same generation)."""
    topic, group = door.topic("static"), door.topic("g")
    door.create_topic(topic, partitions=4)
    members = []
    try:
        for i in range(2):
            m = Member(door, [topic], {topic: "A"}, group_id=group, client_id=f"c{i}",
                       group_instance_id=f"instance-{i}",
                       partition_assignment_strategy=[RangePartitionAssignor])
            m.start()
            members.append(m)
            before = stable(members, 4)
        generation = members[0].generation()
        members[1].halt()
        members[1].consumer.close()
        again = Member(door, [topic], {topic: "A"}, group_id=group, client_id="c1",
                       group_instance_id="instance-1",
                       partition_assignment_strategy=[RangePartitionAssignor])
        again.start()
        members[1] = again
        after = stable(members, 4)
        described = door.admin().describe_groups([group])[group]
        return {"before": before, "after": after,
                "generation_moved": members[0].generation() - generation,
                "instances": sorted(m["group_instance_id"] for m in described["members"])}
    finally:
        for m in members:
            m.halt()


@scenario("groups", lesson="10", in_process=True)
def committed_offsets_and_metadata(door):
    """commit() with offsets and metadata; committed() and ListGroupOffsets read them back;
    a new member of the group starts from them."""
    topic, group = door.topic("co"), door.topic("g")
    door.create_topic(topic, partitions=2)
    producer = door.producer()
    for i in range(10):
        producer.send(topic, value=f"v{i}".encode(), partition=i % 2)
    producer.flush(15)
    consumer = door.consumer(group_id=group, enable_auto_commit=False)
    tps = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
    consumer.assign(tps)
    consumer.commit({tps[0]: OffsetAndMetadata(3, "note", -1),
                     tps[1]: OffsetAndMetadata(5, "", -1)})
    committed = {tp.partition: consumer.committed(tp, metadata=True) for tp in tps}
    consumer.close()
    listed = door.admin().list_group_offsets({group: None})[group]
    reader = door.consumer(topic, group_id=group, auto_offset_reset="earliest",
                           enable_auto_commit=False)
    return {
        "committed": {p: [c.offset, c.metadata] for p, c in committed.items()},
        "listed": {tp.partition: [o.offset, o.metadata] for tp, o in listed.items()},
        "resumed": rows(drain(reader, 2)),
    }


@scenario("groups", lesson="10", in_process=True)
def auto_offset_reset_and_unknown_committed(door):
    """Without a committed offset, earliest starts at the log start, latest at the end;
    committed() of an uncommitted partition is None."""
    topic = door.topic("reset")
    door.create_topic(topic, partitions=1)
    producer = door.producer()
    for i in range(3):
        producer.send(topic, value=f"v{i}".encode())
    producer.flush(15)
    tp = TopicPartition(topic, 0)
    out = {}
    for reset in ("earliest", "latest"):
        c = door.consumer(group_id=door.topic("g"), auto_offset_reset=reset,
                          enable_auto_commit=False)
        c.assign([tp])
        out[reset] = {"committed": c.committed(tp), "position": c.position(tp)}
    return out


@scenario("groups", lesson="10", client=CONFLUENT)
def confluent_commit_and_committed(door):
    """confluent-kafka: commit offsets synchronously, read them back with committed()."""
    from confluent_kafka import TopicPartition as CTP
    topic, group = door.topic("co-ck"), door.topic("g")
    door.create_topic(topic, partitions=2)
    consumer = door.ck_consumer(**{"group.id": group, "enable.auto.commit": False})
    consumer.commit(offsets=[CTP(topic, 0, 7), CTP(topic, 1, 2)], asynchronous=False)
    got = consumer.committed([CTP(topic, 0), CTP(topic, 1), ], timeout=10)
    return {"committed": [[tp.partition, tp.offset] for tp in got]}


def _ck_assignments(door, strategy: str, consumers: int, partitions: int) -> dict:
    topic, group = door.topic("ck-g"), door.topic("g")
    door.create_topic(topic, partitions=partitions)
    members = []
    steps = []
    try:
        for i in range(consumers):
            m = CkMember(door, topic, group, f"c{i}", strategy)
            m.start()
            members.append(m)
            steps.append(stable(members, partitions))
    finally:
        for m in members:
            m.halt()
    return {"steps": steps}


class CkMember(Member):
    """The same member with confluent-kafka (librdkafka's assignors)."""

    def __init__(self, door, topic: str, group: str, client_id: str, strategy: str) -> None:
        threading.Thread.__init__(self, daemon=True)
        self.consumer = door.ck_consumer(**{
            "group.id": group, "client.id": client_id,
            "partition.assignment.strategy": strategy, "heartbeat.interval.ms": 100,
            "session.timeout.ms": 6000, "auto.offset.reset": "earliest"})
        self.consumer.subscribe([topic])
        self.assigned = []
        self.running = True
        self.lock = threading.Lock()

    def run(self) -> None:
        while self.running:
            self.consumer.poll(0.05)
            self.assigned = sorted(["A", tp.partition] for tp in self.consumer.assignment())


@scenario("groups", lesson="09", client=CONFLUENT)
def confluent_range(door):
    """librdkafka's range assignor, consumers joining one at a time."""
    return _ck_assignments(door, "range", consumers=2, partitions=5)


@scenario("groups", lesson="09", client=CONFLUENT)
def confluent_roundrobin(door):
    """librdkafka's roundrobin assignor."""
    return _ck_assignments(door, "roundrobin", consumers=3, partitions=5)


@scenario("groups", lesson="09", client=CONFLUENT)
def confluent_cooperative_sticky(door):
    """librdkafka's cooperative-sticky assignor (incremental rebalances)."""
    return _ck_assignments(door, "cooperative-sticky", consumers=2, partitions=4)


@scenario("groups", lesson="09")
def leave_group_reassigns(door):
    """A member that closes leaves the group: the rest take its partitions."""
    topic, group = door.topic("leave"), door.topic("g")
    door.create_topic(topic, partitions=3)
    members = []
    try:
        for i in range(2):
            m = Member(door, [topic], {topic: "A"}, group_id=group, client_id=f"c{i}",
                       partition_assignment_strategy=[RangePartitionAssignor])
            m.start()
            members.append(m)
            stable(members, 3)
        members[0].halt()
        members[0].consumer.close()
        after = stable(members[1:], 3)
        described = attempt(lambda: len(door.admin().describe_groups([group])[group]["members"]))
        return {"after_leave": after, "members": described}
    finally:
        for m in members:
            m.halt()


class Kip848Member(CkMember):
    """A confluent-kafka member of a KIP-848 consumer group (group.protocol=consumer): no
    client-side assignor, no session timeout; the broker sets the heartbeat interval."""

    def __init__(self, door, topic: str, group: str, client_id: str, assignor: str,
                 **config) -> None:
        threading.Thread.__init__(self, daemon=True)
        self.consumer = door.ck_consumer(**{
            "group.id": group, "client.id": client_id, "group.protocol": "consumer",
            "group.remote.assignor": assignor, "auto.offset.reset": "earliest", **config})
        self.consumer.subscribe([topic])
        self.assigned = []
        self.running = True
        self.lock = threading.Lock()


@scenario("groups", lesson="09", client=CONFLUENT)
def confluent_kip848_group(door):
    """KIP-848 (group.protocol=consumer, range assignor on the broker): members join one at
    a time; every partition is owned once; ConsumerGroupDescribe shows a Stable "consumer"
    group whose members own their target assignment, and kafka-python's classic
    DescribeGroups and ListGroups what they say of it; a member that leaves hands its
    partitions over."""
    from confluent_kafka import ConsumerGroupType
    topic, group = door.topic("kip848"), door.topic("g")
    door.create_topic(topic, partitions=4)
    admin = door.ck_admin()
    members: list = []
    steps = []

    def describe() -> dict:
        d = admin.describe_consumer_groups([group])[group].result()
        def parts(a) -> list[int]:
            return sorted(tp.partition for tp in (a.topic_partitions if a else []))
        return {"type": str(d.type), "state": str(d.state), "assignor": d.partition_assignor,
                "members": sorted([parts(m.assignment), parts(m.target_assignment)]
                                  for m in d.members)}

    try:
        for i in range(2):
            m = Kip848Member(door, topic, group, f"c{i}", "range")
            m.start()
            members.append(m)
            steps.append(sorted(stable(members, 4, timeout_s=60)))
        described = describe()
        listed = admin.list_consumer_groups(types={ConsumerGroupType.CONSUMER}).result()
        # kafka-python speaks the classic APIs only: what do they say of a consumer group?
        kp = door.admin()
        classic_view = kp.describe_groups([group])[group]
        classic_view = {k: (classic_view.get(k) or "").replace(group, "G")
                        if k == "error" else classic_view.get(k)
                        for k in ("group_state", "error", "members")}
        kp_listed = [(g["group_id"] == group, g["group_type"], g["protocol_type"])
                     for g in kp.list_groups() if g["group_id"] == group]
        members[0].halt()
        members[0].consumer.close()
        after_leave = stable(members[1:], 4, timeout_s=60)
    finally:
        for m in members:
            m.halt()
    return {"steps": steps, "described": described, "after_leave": after_leave,
            "listed": [g.group_id == group for g in listed.valid],
            "describe_groups": classic_view, "list_groups": kp_listed}


def commit_once(consumer, outcomes: list, offsets: list, timeout_s: float = 60) -> None:
    """Commit with confluent-kafka until one commit succeeds, then stop. Every successful
    OffsetCommit writes one record to __consumer_offsets, so a commit is repeated only after
    the broker refused the previous one (STALE_MEMBER_EPOCH while the member's epoch moves,
    COORDINATOR_LOAD_IN_PROGRESS, ...), never because a read-back came too early. `outcomes`
    is the list the consumer's on_commit callback appends (error, partitions) to; poll()
    serves that callback, so call this only when no other thread polls the consumer
    (confluent-kafka 2.16 lets a thread polling in a tight loop starve every other call)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        outcomes.clear()
        consumer.commit(offsets=offsets, asynchronous=True)
        while not outcomes and time.monotonic() < deadline:
            consumer.poll(0.1)  # the topic is empty: this only serves the callback
        if outcomes and outcomes[0][0] is None and all(
                tp.error is None for tp in outcomes[0][1]):
            return
        time.sleep(0.5)
    raise TimeoutError(f"offsets {offsets} not committed within {timeout_s}s")


@scenario("groups", lesson="10", client=CONFLUENT)
def kip848_records_in_consumer_offsets(door):
    """The records a KIP-848 group leaves in __consumer_offsets, read back with kafka-python
    and decoded by minikafka's decoder (core.offsets): one member joins (epoch 2 in a new
    group), commits, leaves (three tombstones, one more group epoch and a new target)."""
    from confluent_kafka import TopicPartition as CTP
    from kafka import TopicPartition as KTP

    from minikafka.core.offsets import OFFSETS_TOPIC, decode_key, decode_value, partition_for

    topic, group = door.topic("kip848-rec"), door.topic("g")
    door.create_topic(topic, partitions=2)
    # One OffsetKey record exactly: the only commit is commit_once's (auto-commit off, so
    # close() commits nothing), and it is repeated only when the broker refused it.
    outcomes: list = []
    member = Kip848Member(door, topic, group, "c0", "uniform", **{
        "enable.auto.commit": False,
        "on_commit": lambda error, partitions: outcomes.append((error, partitions))})
    member.start()
    try:
        stable([member], 2, timeout_s=60)
        member.halt()  # a call from this thread could wait forever behind the polling one
        commit_once(member.consumer, outcomes, [CTP(topic, 0, 5)])
    finally:
        member.halt()
        member.consumer.close()  # leaves: epoch -1
    tp = KTP(OFFSETS_TOPIC, partition_for(group, 3))
    reader = door.consumer(exclude_internal_topics=False, enable_auto_commit=False)
    reader.assign([tp])
    reader.seek_to_beginning(tp)
    end = reader.end_offsets([tp])[tp]
    seen = []
    deadline = time.monotonic() + 30
    while reader.position(tp) < end and time.monotonic() < deadline:
        for records in reader.poll(timeout_ms=500).values():
            for r in records:
                key = decode_key(r.key)
                if key.group != group:
                    continue
                value = decode_value(key, r.value)
                kind = type(key).__name__ + (f"/{key.type}" if hasattr(key, "type") else "")
                if value is None:
                    seen.append([kind, None])
                    continue
                fields = {k: v for k, v in value.__dict__.items()
                          if k in ("epoch", "assignment_epoch", "member_epoch",
                                   "previous_member_epoch", "state", "offset",
                                   "subscribed_topic_names", "server_assignor")}
                if "subscribed_topic_names" in fields:
                    fields["subscribed_topic_names"] = ["T" for _ in fields[
                        "subscribed_topic_names"]]
                seen.append([kind, fields])
    # On Kafka the coordinator may learn of the new topic a moment after the first join,
    # which costs one more group epoch: compare what does not depend on that moment.
    epochs = [f["epoch"] for kind, f in seen if kind == "ConsumerGroupKey/3" and f]
    commit = next(i for i, (kind, _) in enumerate(seen) if kind == "OffsetKey")
    first = next(f for kind, f in seen if kind == "ConsumerGroupKey/8" and f)
    left = seen[commit + 1:]
    return {"kinds": sorted({kind for kind, _ in seen}),
            "first_join": [first["member_epoch"], first["previous_member_epoch"]],
            "first_records": [kind for kind, _ in seen[:5]],
            "epochs_go_up": epochs == sorted(set(epochs)),
            "leave": [[kind, f is None] for kind, f in left],
            "leave_bumps_once": [f for k, f in left if k.endswith("/3")][0]["epoch"]
            == epochs[-2] + 1}


@scenario("groups", lesson="09", client=CONFLUENT)
def mixed_group_upgrade_and_downgrade(door):
    """A mixed group (Kafka 4.x, group.consumer.migration.policy=bidirectional): a
    kafka-python member (classic protocol) owns all 4 partitions; a confluent-kafka member
    with group.protocol=consumer joins, the group is upgraded online to a consumer group and
    the two share the partitions; when the confluent member leaves, the group is downgraded
    to a classic group and the kafka-python member owns everything again."""
    topic, group = door.topic("mixed"), door.topic("g")
    door.create_topic(topic, partitions=4)
    admin, kp = door.ck_admin(), door.admin()

    def group_type() -> list:
        return [(g["group_type"], g["protocol_type"]) for g in kp.list_groups()
                if g["group_id"] == group]

    classic = Member(door, [topic], {topic: "A"}, group_id=group, client_id="classic",
                     partition_assignment_strategy=[RangePartitionAssignor])
    classic.start()
    modern = None
    try:
        alone = stable([classic], 4, timeout_s=60)
        before = group_type()
        modern = Kip848Member(door, topic, group, "modern", "range")
        modern.start()
        shared = stable([classic, modern], 4, timeout_s=90)
        described = admin.describe_consumer_groups([group])[group].result()
        mixed = {"type": str(described.type), "state": str(described.state),
                 "members": len(described.members), "listed": group_type(),
                 "sizes": sorted(len(a) for a in shared)}
        modern.halt()
        modern.consumer.close()
        after = stable([classic], 4, timeout_s=90)
        view = kp.describe_groups([group])[group]
        downgraded = {"listed": group_type(), "state": view.get("group_state"),
                      "protocol_type": view.get("protocol_type"),
                      "members": len(view.get("members") or [])}
    finally:
        classic.halt()
        if modern is not None:
            modern.halt()
    return {"alone": alone, "before": before, "mixed": mixed, "after": after,
            "downgraded": downgraded}
