"""The lessons' exercises: each check runs the student's answer on a seeded minikafka
cluster and reports with the checkers the lessons use (``minikafka.semantics.check`` for
inputs against effects, ``minikafka.chaos`` for acknowledged writes)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kafka.structs import TopicPartition

from ..browser import BROWSER
from ..chaos import run_trial
from ..cluster import Cluster
from ..semantics import Crash, Report, caught_up
from ..semantics import check as check_effects
from . import solutions
from .exercise_registry import Outcome, exercise
from .reading import drain, read_topic
from .trucks import truck_id, truck_reports

DAY_MS = 24 * 3_600_000


def _report(report: Report, what: str = "records") -> str:
    dup = sum(n - 1 for _, n in report.duplicated)
    return f"{len(report.lost)} {what} lost, {dup} extra copies"


def _values(values: Any, limit: int = 8) -> str:
    values = [v.decode() if isinstance(v, bytes) else str(v) for v in values]
    more = f" ... ({len(values)} in all)" if len(values) > limit else ""
    return "[" + ", ".join(values[:limit]) + more + "]"


def _settings(answer: Callable[[], Any]) -> dict:
    settings = answer()
    if not isinstance(settings, dict):
        raise TypeError(f"return a dict of settings, not {type(settings).__name__}")
    return settings


# -- lesson 0 -------------------------------------------------------------------------------------

@exercise("00-billing", "Lesson 0 · a new reader of the orders",
          hint="A group keeps its own committed offsets: billing needs a group_id of its own "
               "(not shipping's), and a new group starts at auto_offset_reset, which is "
               "'latest' unless you say otherwise.",
          solution=solutions.billing_settings)
def check_billing(billing_settings: Callable[[], dict]) -> Outcome:
    settings = _settings(billing_settings)
    out = Outcome()
    cluster = Cluster(brokers=3, seed=0)
    cluster.create_topic("orders", partitions=3, replication_factor=3)
    producer = cluster.producer()
    orders = [b"order-%d" % i for i in range(1, 7)]
    for value in orders:
        producer.send("orders", value=value)
    producer.flush()
    shipping = cluster.consumer("orders", group_id="shipping", auto_offset_reset="earliest")
    drain(shipping)
    shipping.close()  # shipping has read and committed all six

    first = cluster.consumer("orders", **settings)
    got = [r.value for r in drain(first)]
    first.close()
    more = [b"order-%d" % i for i in range(7, 10)]
    for value in more:
        producer.send("orders", value=value)
    producer.flush()
    again = cluster.consumer("orders", **settings)
    got_again = [r.value for r in drain(again)]
    again.close()

    report = check_effects(orders, got)
    out.history = [f"shipping read and committed {_values(orders)}",
                   f"billing's first run read {_values(got)}",
                   f"3 new orders arrive; billing restarts and reads {_values(got_again)}"]
    out.expect(not report.lost, "billing's first run read all six old orders",
               f"billing's first run missed {len(report.lost)} of the 6 orders "
               f"({_values(report.lost)})")
    restart = check_effects(more, got_again)
    out.expect(restart.ok and len(got_again) == len(more),
               "after a restart billing resumed where it stopped: only the 3 new orders",
               f"after a restart billing read {len(got_again)} records where 3 were new: it "
               "should resume from its committed offsets")
    out.verdict = (f"first run: {_report(report, 'orders')}; "
                   f"after the restart: {_report(restart, 'orders')}, "
                   f"{max(0, len(got_again) - len(more))} old orders read again")
    return out


# -- lesson 1 -------------------------------------------------------------------------------------

@exercise("01-last-report", "Lesson 1 · where is a truck's latest report?",
          hint="A key always goes to the same partition, and offsets are only comparable "
               "within one partition: look in the partition that holds the truck's records "
               "and take the highest offset there.",
          solution=solutions.last_report)
def check_last_report(last_report: Callable[[dict, bytes], tuple[int, int]]) -> Outcome:
    out = Outcome()
    cluster = Cluster(brokers=3, seed=1)
    cluster.create_topic("trucks_gps", partitions=10, replication_factor=3)
    producer = cluster.producer()
    # Uneven traffic: truck-01 reports often, so partition offsets differ a lot.
    reports = truck_reports(trucks=5, reports=4, seed=1) + truck_reports(1, 6, seed=2)
    for key, value in reports:
        producer.send("trucks_gps", key=key, value=value)
    producer.flush()
    partitions = read_topic(cluster, "trucks_gps")
    for t in range(1, 6):
        truck = truck_id(t).encode()
        where = [(p, r.offset) for p, rs in partitions.items() for r in rs if r.key == truck]
        truth = max(where, key=lambda po: po[1])
        got = last_report({p: list(rs) for p, rs in partitions.items()}, truck)
        got = tuple(got) if isinstance(got, (tuple, list)) else got
        out.expect(got == truth, f"{truck.decode()}: partition {truth[0]}, offset {truth[1]}",
                   f"{truck.decode()}: you said {got}, the latest report is at partition "
                   f"{truth[0]}, offset {truth[1]}")
        out.history.append(f"{truck.decode()} reported at (partition, offset) {where}")
    out.verdict = f"{len(out.right)} of 5 trucks located"
    return out


# -- lesson 2 -------------------------------------------------------------------------------------

ROOMS = {"room A": (1, 2, 3), "room B": (4, 5, 6)}


@exercise("02-racks", "Lesson 2 · survive a room going dark",
          hint="broker.rack tells the placer where a broker stands. Give brokers in the same "
               "room the same rack name and brokers in different rooms different ones.",
          solution=solutions.broker_racks)
def check_racks(broker_racks: Callable[[], dict]) -> Outcome:
    racks = _settings(broker_racks)
    out = Outcome()
    for room, brokers in ROOMS.items():
        cluster = Cluster(brokers=6, seed=2, racks=racks)
        cluster.create_topic("payments", partitions=12, replication_factor=3)
        for b in brokers:
            cluster.crash_broker(b)
        cluster.advance(15_000)
        parts = cluster.describe_topic("payments").partitions
        offline = [p.partition for p in parts if p.leader is None]
        out.expect(not offline, f"{room} dark: all 12 partitions still have a leader",
                   f"{room} dark: partitions {offline} are offline (every replica was in "
                   f"{room})")
        out.history.append(f"{room} (brokers {brokers}) goes dark; replicas were "
                           + ", ".join(f"p{p.partition}:{list(p.replicas)}" for p in parts[:6])
                           + ", ...")
    out.verdict = f"racks {racks}"
    return out


# -- lesson 3 -------------------------------------------------------------------------------------

@exercise("03-keys", "Lesson 3 · keep each truck in order",
          hint="Order holds within a partition, and the key picks the partition: use "
               "something that is the same for all reports of one truck and differs "
               "between trucks.",
          solution=solutions.key_for)
def check_keys(key_for: Callable[[dict], Any]) -> Outcome:
    out = Outcome()
    cluster = Cluster(brokers=3, seed=3)
    cluster.create_topic("trucks_gps", partitions=6, replication_factor=3)
    # Small batches, as under heavy traffic: the sticky partitioner moves on after about
    # four reports, so records without a key land wherever the current batch goes.
    producer = cluster.producer(batch_size=512)
    for _, value in truck_reports(trucks=6, reports=5, seed=3):
        key = key_for(json.loads(value))
        if isinstance(key, str):
            key = key.encode()
        producer.send("trucks_gps", key=key, value=value)
    producer.flush()
    where: dict[str, dict[int, list[str]]] = {}
    for p, records in read_topic(cluster, "trucks_gps").items():
        for r in records:
            report = json.loads(r.value)
            at = report["event_time"][11:19]  # hh:mm:ss
            where.setdefault(report["truck_id"], {}).setdefault(p, []).append(at)
    for truck, parts in sorted(where.items()):
        out.expect(len(parts) == 1,
                   f"{truck}: all 5 reports in partition {next(iter(parts))}, in order",
                   f"{truck}: reports spread over partitions {sorted(parts)}: two consumers "
                   "can process them in any order")
        out.history.append(f"{truck}: " + ", ".join(f"partition {p} has reports {rs}"
                                                     for p, rs in sorted(parts.items())))
    used = sorted({p for parts in where.values() for p in parts})
    out.expect(len(used) > 1, f"the 6 trucks share partitions {used} out between them",
               f"all 6 trucks are in partition {used[0] if used else '-'}: in order, but one "
               "consumer does all the work while 5 partitions stay idle; give each truck "
               "its own key")
    spread = sum(len(parts) > 1 for parts in where.values())
    out.verdict = (f"{spread} of {len(where)} trucks have their reports in more than one "
                   f"partition; {len(used)} of 6 partitions in use")
    return out


# -- lesson 4 -------------------------------------------------------------------------------------

@exercise("04-high-watermark", "Lesson 4 · compute the high watermark",
          hint="A record is committed when every replica in the ISR has it. A follower "
               "outside the ISR does not hold the high watermark back.",
          solution=solutions.high_watermark)
def check_high_watermark(high_watermark: Callable[[dict, list], int]) -> Outcome:
    out = Outcome()
    cluster = Cluster(brokers=3, seed=4)
    cluster.create_topic("trucks_gps", partitions=1, replication_factor=3)
    producer = cluster.producer(acks=1)
    for i in range(5):
        producer.send("trucks_gps", value=b"r%d" % i).get()
    cluster.advance(1_000)
    replicas = cluster.describe_topic("trucks_gps").partitions[0].replicas
    cluster.pause_follower(replicas[-1])
    moments = ["5 records, all replicas caught up"]
    states = [_replica_state(cluster)]
    for i in range(5, 8):
        producer.send("trucks_gps", value=b"r%d" % i).get()
    cluster.advance(1_000)
    moments.append(f"3 more records; broker {replicas[-1]} stopped fetching")
    states.append(_replica_state(cluster))
    cluster.advance(40_000)
    moments.append(f"40 s later: broker {replicas[-1]} fell out of the ISR")
    states.append(_replica_state(cluster))
    for moment, (leo, isr, hw) in zip(moments, states, strict=True):
        got = high_watermark(dict(leo), list(isr))
        out.expect(got == hw, f"{moment}: high watermark {hw}",
                   f"{moment}: you said {got}, the leader's high watermark is {hw}")
        out.history.append(f"{moment}: log end offsets {leo}, ISR {isr}, high watermark {hw}")
    out.verdict = f"{len(out.right)} of {len(moments)} moments right"
    return out


def _replica_state(cluster: Cluster) -> tuple[dict, list, int]:
    p = cluster.describe_topic("trucks_gps").partitions[0]
    leo = {b: p.replica_offsets[b][0] for b in p.replicas}
    return leo, sorted(p.isr), p.replica_offsets[p.leader][1]


# -- lesson 5 -------------------------------------------------------------------------------------

@exercise("05-durability", "Lesson 5 · no acknowledged write lost",
          hint="Three settings work together: how many replicas must have a write before "
               "the producer hears 'stored' (acks), how many must be in sync for a write to be "
               "accepted (min.insync.replicas, at most replicas - 1 so one broker can be "
               "down), and whether a replica that missed writes may lead.",
          solution=solutions.durability_settings)
def check_durability(durability_settings: Callable[[], dict]) -> Outcome:
    s = _settings(durability_settings)
    missing = {"acks", "min.insync.replicas", "unclean.leader.election.enable"} - set(s)
    if missing:
        raise KeyError(f"missing settings: {sorted(missing)}")
    out = Outcome()
    lost = acked = 0
    example = None
    for seed in range(4):
        r = run_trial(seed, acks=s["acks"], min_insync_replicas=int(s["min.insync.replicas"]),
                      unclean=str(s["unclean.leader.election.enable"]).lower() == "true")
        lost += len(r.lost)
        acked += r.acknowledged
        out.history.append(f"fault schedule {seed}: {r.summary()}")
        if r.lost and example is None:
            example = r.lost[0]
    out.expect(lost == 0, "no acknowledged write was lost in 4 seeded fault schedules",
               f"{lost} acknowledged writes were lost")
    if example is not None:
        out.history.append(f"for example: {example.value.decode()} was acknowledged at "
                           f"{example.topic}-{example.partition} offset {example.offset}, "
                           "then gone from the log")
    out.expect(int(s["min.insync.replicas"]) <= 2,
               "min.insync.replicas leaves room for one broker to be down",
               f"min.insync.replicas={s['min.insync.replicas']} with 3 replicas refuses every "
               "write while any one broker is down")
    out.verdict = f"{acked} writes acknowledged, {lost} of them lost"
    return out


# -- lesson 6 -------------------------------------------------------------------------------------

TXN_POINTS = ("before commit_transaction", "after commit_transaction")


@exercise("06-transactions", "Lesson 6 · a loop that bills each order once",
          hint="The offsets of the orders you billed must commit in the same transaction as "
               "the invoices: producer.send_offsets_to_transaction(offsets, "
               "consumer.group_metadata()) before commit_transaction(), and no "
               "consumer.commit() at all.",
          solution=solutions.process_batch)
def check_transactions(process_batch: Callable[[Any, Any, dict], None]) -> Outcome:
    out = Outcome()
    for point in (None, *TXN_POINTS):
        report, crashed = _transfer_with_crash(process_batch, point)
        where = f"a crash {point}" if point else "no crash"
        if point and not crashed:
            out.wrong.append(f"{where}: your loop never called commit_transaction()")
            continue
        out.expect(report.ok, f"{where}: every order billed exactly once",
                   f"{where}: {_report(report, 'orders')}"
                   + (f"; billed twice: {_values(v for v, _ in report.duplicated)}"
                      if report.duplicated else "")
                   + (f"; never billed: {_values(report.lost)}" if report.lost else ""))
        out.history.append(f"{where}: invoices a read_committed reader sees: "
                           f"{_report(report, 'orders')}")
    out.verdict = f"{len(out.right)} of {1 + len(TXN_POINTS)} runs billed every order once"
    return out


class _CrashingProducer:
    """A transactional producer whose process dies at commit_transaction, once."""

    def __init__(self, producer: Any, point: str | None) -> None:
        self._producer, self._point, self.crashed = producer, point, False

    def commit_transaction(self) -> None:
        if self._point == "before commit_transaction" and not self.crashed:
            self.crashed = True
            raise Crash(self._point)
        self._producer.commit_transaction()
        if self._point == "after commit_transaction" and not self.crashed:
            self.crashed = True
            raise Crash(self._point)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._producer, name)


def _transfer_with_crash(process_batch: Callable, point: str | None) -> tuple[Report, bool]:
    cluster = Cluster(brokers=3, seed=6)
    cluster.create_topic("orders", partitions=2, replication_factor=3)
    cluster.create_topic("invoices", partitions=2, replication_factor=3)
    orders = [b"order-%d" % i for i in range(12)]
    producer = cluster.producer()
    for i, value in enumerate(orders):
        producer.send("orders", value=value, partition=i % 2)
    producer.flush()
    crashed = False
    for instance in (1, 2):
        consumer = cluster.consumer("orders", group_id="billing", client_id=f"billing-{instance}",
                                    auto_offset_reset="earliest", enable_auto_commit=False,
                                    max_poll_records=3, isolation_level="read_committed")
        txn = cluster.producer(transactional_id="billing")
        txn.init_transactions()  # fences the dead instance and aborts its open transaction
        wrapped = _CrashingProducer(txn, point if instance == 1 else None)
        try:
            for _ in range(200):
                if caught_up(consumer, "orders"):
                    break
                batch = consumer.poll(timeout_ms=500)
                if batch:
                    process_batch(consumer, wrapped, batch)
        except Crash:
            crashed = True
            consumer.crash()
            continue
        consumer.close(autocommit=False)
        if point is None:
            break
    invoices = [r.value for rs in read_topic(cluster, "invoices",
                                             isolation_level="read_committed").values()
                for r in rs]
    return check_effects(orders, invoices), crashed


# -- lesson 7 -------------------------------------------------------------------------------------

@exercise("07-batching", "Lesson 7 · fit the budget",
          hint="linger.ms lets batches fill (fewer, larger requests, a little more latency); "
               "compression works on a whole batch, so it pays most on big batches of similar "
               "JSON. Try the lesson's table with a few values.",
          solution=solutions.batching_settings)
def check_batching(batching_settings: Callable[[], dict]) -> Outcome:
    from .batching import producer_run

    s = _settings(batching_settings)
    run = producer_run(linger_ms=int(s.get("linger_ms", 0)),
                       batch_size=int(s.get("batch_size", 16_384)),
                       compression=s.get("compression"), records=300, every_ms=1)
    out = Outcome(history=[", ".join(f"{k}: {v}" for k, v in run.items())])
    out.expect(run["batches"] <= 30, f"{run['batches']} produce batches (at most 30)",
               f"{run['batches']} produce batches: the brokers allow at most 30")
    out.expect(run["stored bytes"] <= 12_000, f"{run['stored bytes']} bytes stored (at most "
               "12000)", f"{run['stored bytes']} bytes stored: the budget is 12000")
    out.expect(run["avg latency ms"] <= 50, f"average latency {run['avg latency ms']} ms "
               "(at most 50)", f"average latency {run['avg latency ms']} ms: at most 50 allowed")
    out.verdict = (f"{run['records']} records in {run['batches']} batches, ratio {run['ratio']}, "
                   f"average latency {run['avg latency ms']} ms")
    return out


# -- lesson 8 -------------------------------------------------------------------------------------

@exercise("08-seek-to-time", "Lesson 8 · replay from a point in time",
          hint="consumer.offsets_for_times({tp: timestamp_ms}) gives, per partition, the "
               "first offset whose timestamp is at or after it; then consumer.seek(tp, offset).",
          solution=solutions.seek_to_time)
def check_seek_to_time(seek_to_time: Callable[[Any, TopicPartition, int], None]) -> Outcome:
    out = Outcome()
    cluster = Cluster(brokers=3, seed=8)
    cluster.create_topic("trucks_gps", partitions=1, replication_factor=3)
    producer = cluster.producer(linger_ms=0)
    start = cluster.now_ms
    for minute in range(30):
        producer.send("trucks_gps", value=b"minute-%d" % minute).get()
        cluster.advance(60_000)
    tp = TopicPartition("trucks_gps", 0)
    for minute in (12, 25):
        consumer = cluster.consumer(auto_offset_reset="earliest", enable_auto_commit=False)
        consumer.assign([tp])
        consumer.poll(timeout_ms=100)  # the consumer reads from offset 0 first
        seek_to_time(consumer, tp, start + minute * 60_000)
        got = [r.value for r in drain(consumer)]
        want = [b"minute-%d" % m for m in range(minute, 30)]
        out.expect(got == want, f"from minute {minute}: read {_values(got, 3)}",
                   f"from minute {minute}: read {_values(got, 3)}, expected "
                   f"{_values(want, 3)}")
        out.history.append(f"seek to minute {minute}; the next poll starts at "
                           f"{got[0].decode() if got else 'nothing'}")
    out.verdict = f"{len(out.right)} of 2 replays started at the right record"
    return out


# -- lesson 9 -------------------------------------------------------------------------------------

RANGE_CASES = (({"orders": 3}, 2), ({"orders": 7}, 3), ({"orders": 2}, 3),
               ({"orders": 3, "payments": 3}, 2))


@exercise("09-range", "Lesson 9 · the range assignor",
          hint="Range works topic by topic: each member (in the order given) gets "
               "partitions // members contiguous partitions, and the first "
               "partitions % members members get one more. Members beyond the partition "
               "count get none.",
          solution=solutions.range_assign)
def check_range(range_assign: Callable[[list, int], dict]) -> Outcome:
    from ..cluster import settle_group

    out = Outcome()
    for topics, n in RANGE_CASES:
        trial = Cluster(brokers=3, seed=9)
        for topic, partitions in topics.items():
            trial.create_topic(topic, partitions=partitions, replication_factor=3)
        group = [trial.consumer(*topics, group_id="billing", client_id=f"c{i}",
                                partition_assignment_strategy=["range"]) for i in range(1, n + 1)]
        settle_group(group)
        member = {c.group_metadata().member_id: c for c in group}
        order = sorted(member)  # the leader orders members by member id
        real = {m: sorted((tp.topic, tp.partition) for tp in member[m].assignment())
                for m in order}
        yours: dict[str, list] = {m: [] for m in order}
        for topic, partitions in topics.items():
            for m, owned in (range_assign(list(order), partitions) or {}).items():
                yours.setdefault(m, []).extend((topic, int(p)) for p in owned)
        yours = {m: sorted(v) for m, v in yours.items()}
        names = {m: c.config["client_id"] for m, c in member.items()}
        case = (", ".join(f"{t} ({p} partitions)" for t, p in topics.items())
                + f" over {n} consumers")
        out.expect(yours == real, f"{case}: {_owners(real, names)}",
                   f"{case}: you gave {_owners(yours, names)}; the group's range assignor "
                   f"gave {_owners(real, names)}")
        out.history.append(f"{case}: the coordinator's leader assigned {_owners(real, names)}")
    out.verdict = f"{len(out.right)} of {len(RANGE_CASES)} groups assigned as range does"
    return out


def _owners(assignment: dict, names: dict) -> str:
    """c1: orders-0, orders-1; c2: orders-2 (member ids shown by client id)."""
    return "; ".join(f"{names.get(m, m)}: " + (", ".join(f"{t}-{p}" for t, p in owned) or "-")
                     for m, owned in assignment.items())


# -- lesson 10 ------------------------------------------------------------------------------------

@exercise("10-commit-offsets", "Lesson 10 · commit the right offsets",
          hint="A committed offset is the position of the next record to read, not of the "
               "last one read: one past the last record processed, per partition.",
          solution=solutions.offsets_to_commit)
def check_commit_offsets(offsets_to_commit: Callable[[dict], dict]) -> Outcome:
    out = Outcome()
    cluster = Cluster(brokers=3, seed=10)
    cluster.create_topic("orders", partitions=2, replication_factor=3)
    orders = [b"order-%d" % i for i in range(12)]
    producer = cluster.producer()
    for i, value in enumerate(orders):
        producer.send("orders", value=value, partition=i % 2)
    producer.flush()
    effects: list[bytes] = []
    commits: list[str] = []
    for instance in (1, 2):
        consumer = cluster.consumer("orders", group_id="billing", client_id=f"billing-{instance}",
                                    auto_offset_reset="earliest", enable_auto_commit=False,
                                    max_poll_records=3)
        for batch_no in range(200):
            if caught_up(consumer, "orders"):
                break
            batch = consumer.poll(timeout_ms=500)
            if not batch:
                continue
            effects.extend(r.value for rs in batch.values() for r in rs)
            offsets = offsets_to_commit(batch)
            consumer.commit(offsets)
            commits.append(f"instance {instance} processed "
                           + ", ".join(f"p{tp.partition}@{rs[0].offset}-{rs[-1].offset}"
                                       for tp, rs in batch.items())
                           + " and committed "
                           + ", ".join(f"p{tp.partition}={om.offset}"
                                       for tp, om in offsets.items()))
            if instance == 1 and batch_no >= 2:
                break  # the first instance is stopped (a deploy) after a few batches
        consumer.close(autocommit=False)
    report = check_effects(orders, effects)
    out.expect(not report.lost, "no order skipped after the restart",
               f"orders skipped after the restart: {_values(report.lost)}")
    out.expect(not report.duplicated, "no order processed twice after the restart",
               "processed twice after the restart: "
               f"{_values(v for v, _ in report.duplicated)}")
    out.verdict = _report(report, "orders")
    out.history = commits[:6]
    return out


# -- lesson 11 ------------------------------------------------------------------------------------

@exercise("11-retention", "Lesson 11 · a week of data in a size budget",
          hint="Retention deletes whole segments, and only once a segment's newest record is "
               "older than retention.ms. With the default segment.ms (7 days) a segment can "
               "hold a week on its own: roll segments more often.",
          solution=solutions.retention_config)
def check_retention(retention_config: Callable[[], dict]) -> Outcome:
    config = {k: str(v) for k, v in _settings(retention_config).items()}
    out = Outcome()
    cluster = Cluster(brokers=3, seed=11)
    cluster.create_topic("trucks_gps", partitions=1, replication_factor=3, config=config)
    producer = cluster.producer()
    oldest_days, bytes_kept = [], []
    for half_hour in range(1, 14 * 48 + 1):
        producer.send("trucks_gps", key=b"truck-01", value=b'{"half_hour": %05d}' % half_hour)
        cluster.advance(1_800_000)
        if half_hour % 48 == 0 and half_hour >= 8 * 48:  # once a day from day 8
            leader = cluster.leader_replica("trucks_gps", 0)
            batches = list(leader.log.batches())
            oldest = (cluster.now_ms - min(b.max_timestamp for b in batches)) / DAY_MS
            oldest_days.append(round(oldest, 1))
            bytes_kept.append(sum(b.size_bytes for b in batches))
            out.history.append(f"day {half_hour // 48}: oldest record {oldest:.1f} days old, "
                               f"{bytes_kept[-1]} bytes kept, log start offset "
                               f"{leader.log.log_start_offset}")
    per_day = bytes_kept[-1] / max(oldest_days[-1], 1)
    budget = int(8.5 * 48 * _record_bytes(cluster))
    out.expect(min(oldest_days) >= 7, "at least a week of data was always kept",
               f"only {min(oldest_days)} days kept at one point: a week is required")
    out.expect(max(bytes_kept) <= budget, f"at most {max(bytes_kept)} bytes kept (budget "
               f"{budget})", f"up to {max(bytes_kept)} bytes kept: the budget is {budget} "
               f"(8.5 days at about {per_day:.0f} bytes a day)")
    out.verdict = (f"kept between {min(oldest_days)} and {max(oldest_days)} days of data, "
                   f"{min(bytes_kept)} to {max(bytes_kept)} bytes")
    return out


def _record_bytes(cluster: Cluster) -> int:
    batches = list(cluster.leader_replica("trucks_gps", 0).log.batches())
    return max(b.size_bytes for b in batches)


# -- lesson 12 ------------------------------------------------------------------------------------

@exercise("12-quorum", "Lesson 12 · how many controllers?",
          hint="The active controller needs votes from a majority of the voters. How many "
               "voters leave a majority standing after f of them fail, with none to spare?",
          solution=solutions.voters_needed)
def check_quorum(voters_needed: Callable[[int], int]) -> Outcome:
    out = Outcome()
    for failures in (1, 2):
        n = int(voters_needed(failures))
        if n < 1:
            out.wrong.append(f"{failures} failure(s): {n} voters is not a quorum")
            continue
        cluster = Cluster(brokers=max(n, 3), seed=12, controllers=range(1, n + 1))
        cluster.create_topic("trucks_gps", partitions=1, replication_factor=1)
        # The active controller goes first, then other voters.
        voters = [cluster.active_controller] + [b for b in range(1, n + 1)
                                                if b != cluster.active_controller]
        for b in voters[:failures]:
            cluster.crash_broker(b)
        cluster.advance(15_000)
        active = cluster.active_controller
        out.history.append(f"{n} voters, {failures} crash(es): active controller "
                           f"{active if active is not None else 'none (no majority)'}")
        if out.expect(active is not None, f"{n} voters survive {failures} failure(s)",
                      f"{n} voters, {failures} failure(s): only {max(n - failures, 0)} of {n} "
                      "voters are left, no majority, so no controller is elected"):
            out.expect(n == 2 * failures + 1, f"{n} is the fewest voters that do it",
                       f"{n} voters work for {failures} failure(s), but fewer would do: "
                       "every voter is another machine in every vote")
    out.verdict = f"{len(out.right)} findings held, {len(out.wrong)} did not"
    return out


# -- lesson 13 ------------------------------------------------------------------------------------

@exercise("13-sink-ids", "Lesson 13 · a sink that replays without duplicates",
          hint="The sink writes at least once, so a replay writes the same record again: give "
               "each document an id that is the same on every replay and different for "
               "different records, even records with equal values. Where does a record live "
               "in Kafka?",
          solution=solutions.document_id)
def check_sink_ids(document_id: Callable[[Any], Any]) -> Outcome:
    out = Outcome()
    cluster = Cluster(brokers=3, seed=13)
    cluster.create_topic("orders", partitions=2, replication_factor=3)
    # Customers order the same things: equal values, different orders, in the same
    # order in both partitions, so neither the value nor (value, offset) tells them apart.
    orders = [b'{"item": "tea", "n": %d}' % (i // 2 % 3) for i in range(12)]
    producer = cluster.producer()
    for i, value in enumerate(orders):
        producer.send("orders", value=value, partition=i % 2)
    producer.flush()
    index: dict[Any, bytes] = {}
    writes = 0
    for instance in (1, 2):
        consumer = cluster.consumer("orders", group_id="sink", auto_offset_reset="earliest",
                                    enable_auto_commit=False, max_poll_records=4)
        crashed = False
        for _ in range(200):
            if caught_up(consumer, "orders"):
                break
            batch = consumer.poll(timeout_ms=500)
            for records in batch.values():
                for r in records:
                    index[_document_id(document_id, r)] = r.value
                    writes += 1
            if batch and instance == 1:
                consumer.crash()  # dies after writing, before committing
                crashed = True
                break
            if batch:
                consumer.commit()
        if not crashed:
            consumer.close()
    want = len(orders)
    out.history = [f"{want} orders (only {len(set(orders))} distinct values); the sink wrote "
                   f"{writes} times, one crash before a commit; the index holds {len(index)} "
                   "documents"]
    out.expect(len(index) <= want, "the replay after the crash added no duplicate document",
               f"the index holds {len(index)} documents for {want} orders: replayed records "
               "got new ids")
    out.expect(len(index) >= want, "every order has its own document",
               f"the index holds {len(index)} documents for {want} orders: different orders "
               "with equal values overwrote each other")
    out.verdict = f"{want} orders, {writes} writes, {len(index)} documents"
    return out


def _document_id(document_id: Callable[[Any], Any], record: Any) -> Any:
    """The student's id for ``record``; an index takes strings, numbers or tuples of them,
    not the record object itself."""
    doc_id = document_id(record)
    parts = doc_id if type(doc_id) is tuple else (doc_id,)
    if not all(isinstance(part, (str, bytes, int)) for part in parts):
        raise TypeError(f"return a str (or int, or a tuple of them) as the id, not "
                        f"{type(doc_id).__name__}")
    return doc_id


# -- lesson 15 ------------------------------------------------------------------------------------

def _clients_hurt(cluster: Cluster, topic: str) -> list[str]:
    """What a client of `topic` would notice, read from the cluster's state, not from
    the metrics: no controller, partitions without a leader, acks=all refused."""
    hurt = []
    if cluster.active_controller is None:
        hurt.append("no active controller: no elections, no topic changes")
    desc = cluster.describe_topic(topic)
    min_isr = int(desc.config["min.insync.replicas"])
    offline = [p.partition for p in desc.partitions if p.leader is None]
    if offline:
        hurt.append(f"partitions {offline} have no leader")
    refused = [p.partition for p in desc.partitions
               if p.leader is not None and len(p.isr) < min_isr]
    if refused:
        hurt.append(f"acks=all writes to partitions {refused} are refused")
    return hurt


@exercise("15-page", "Lesson 15 · when to wake someone up",
          hint="Page when clients are hurt now: acks=all writes refused "
               "(UnderMinIsrPartitionCount above 0 on any broker), partitions without a "
               "leader (OfflinePartitionsCount above 0), or no active controller. Every "
               "controller publishes ActiveControllerCount (1 on the active one, 0 on the "
               "others): add it up over the nodes, the sum must be 1. UnderReplicatedPartitions "
               "alone is a warning: it is normal while a broker restarts.",
          solution=solutions.should_page)
def check_page(should_page: Callable[[dict], bool]) -> Outcome:
    from ..core import metrics as m

    out = Outcome()
    cluster = Cluster(brokers=3, seed=15, controllers=[1001, 1002, 1003])
    cluster.create_topic("readings", partitions=3, replication_factor=3,
                         config={"min.insync.replicas": "2"})
    controllers = [cluster.active_controller] + [c for c in (1001, 1002, 1003)
                                                 if c != cluster.active_controller]

    def controllers_down(n: int) -> None:
        cluster.network.down.difference_update(controllers)
        cluster.network.down.update(controllers[:n])
        cluster._topology_changed()

    moments = [
        ("all healthy", lambda: None),
        ("broker 3 stopped for a rolling restart", lambda: cluster.stop_broker(3)),
        ("broker 2 crashed while broker 3 was down", lambda: cluster.crash_broker(2)),
        ("brokers 2 and 3 back and caught up",
         lambda: (cluster.start_broker(2), cluster.start_broker(3))),
        ("one of three controllers down", lambda: controllers_down(1)),
        ("two of three controllers down", lambda: controllers_down(2)),
        ("controllers back; every replica of the topic down",
         lambda: (controllers_down(0), cluster.advance(5_000),
                  [cluster.crash_broker(b) for b in (1, 2, 3)])),
    ]
    paged = 0
    for label, action in moments:
        action()
        cluster.advance(20_000)
        metrics = m.cluster_metrics(cluster)
        hurt = _clients_hurt(cluster, "readings")
        answer = bool(should_page(json.loads(json.dumps(metrics))))  # a copy, as JSON gives it
        paged += answer
        totals = m.totals(metrics)
        out.history.append(
            f"{label}: {len(metrics)} nodes answer; URP {totals.get(m.URP, 0)}, "
            f"UnderMinIsr {totals.get(m.UNDER_MIN_ISR, 0)}, Offline "
            f"{totals.get(m.OFFLINE_PARTITIONS, 0)}, ActiveControllerCount sum "
            f"{totals.get(m.ACTIVE_CONTROLLER, 0)}; you {'paged' if answer else 'stayed quiet'}")
        if hurt:
            out.expect(answer, f"{label}: you paged ({'; '.join(hurt)})",
                       f"{label}: you stayed quiet while clients were hurt: {'; '.join(hurt)}")
        else:
            out.expect(not answer, f"{label}: you stayed quiet, nothing was hurt",
                       f"{label}: you paged while every client was served: a false alarm "
                       "at 3 a.m.")
    out.verdict = f"{len(out.right)} of {len(moments)} moments judged right; paged {paged} times"
    return out


# -- lesson 16 ------------------------------------------------------------------------------------

def _drops_bad_records(record: Any, producer: Any, price: Callable, sleep: Callable) -> Any:
    from ..examples import orders_app

    try:
        order = orders_app.parse(record.value)
        order["total"] = orders_app.with_retries(lambda: price(order), sleep=sleep)
    except (ValueError, orders_app.TemporaryError) as error:
        return orders_app.Handled(record.offset, record.value, "parked", str(error))
    producer.send(orders_app.VALID, key=record.key, value=json.dumps(order).encode())
    return orders_app.Handled(record.offset, record.value, "valid")


def _stops_at_a_poison_pill(record: Any, producer: Any, price: Callable,
                            sleep: Callable) -> Any:
    from ..examples import orders_app

    order = orders_app.parse(record.value)  # a bad record raises out of the poll loop
    order["total"] = orders_app.with_retries(lambda: price(order), sleep=sleep)
    producer.send(orders_app.VALID, key=record.key, value=json.dumps(order).encode())
    return orders_app.Handled(record.offset, record.value, "valid")


def _parks_without_headers(record: Any, producer: Any, price: Callable,
                           sleep: Callable) -> Any:
    from ..examples import orders_app

    try:
        order = orders_app.parse(record.value)
        order["total"] = orders_app.with_retries(lambda: price(order), sleep=sleep)
    except (ValueError, orders_app.TemporaryError) as error:
        producer.send(orders_app.DEAD_LETTERS, key=record.key, value=record.value)
        return orders_app.Handled(record.offset, record.value, "parked", str(error))
    producer.send(orders_app.VALID, key=record.key, value=json.dumps(order).encode())
    return orders_app.Handled(record.offset, record.value, "valid")


APP_VARIANTS = (("orders_app as it is", None),
                ("drops bad records without parking them", _drops_bad_records),
                ("stops at the first poison pill", _stops_at_a_poison_pill),
                ("parks bad records without saying why (no headers)", _parks_without_headers))


@exercise("16-test", "Lesson 16 · a test that catches the bugs",
          hint="Write inputs with a poison pill among good orders, call run_app(), then read "
               "BOTH output topics back (read_topic(cluster, 'orders.valid'), "
               "read_topic(cluster, 'orders.DLT')) and assert what each must hold: the good "
               "orders priced, the bad record parked unchanged, with an error.class header. "
               "A test that looks at one topic only cannot see a record go missing.",
          solution=solutions.test_bad_orders_are_parked)
def check_app_test(test: Callable[[Cluster, Callable[[], Any]], None]) -> Outcome:
    from ..examples import orders_app

    out = Outcome()
    for label, handle in APP_VARIANTS:
        cluster = Cluster(brokers=3, seed=16)
        for topic in (orders_app.SOURCE, orders_app.VALID, orders_app.DEAD_LETTERS):
            cluster.create_topic(topic, partitions=1, replication_factor=3)
        runs: list[list] = []

        def run_app(cluster: Cluster = cluster, handle: Any = handle, runs: list = runs) -> list:
            consumer = cluster.consumer(orders_app.SOURCE, group_id="orders-app",
                                        auto_offset_reset="earliest", enable_auto_commit=False)
            kwargs = {} if handle is None else {"handle": handle}
            try:
                done = orders_app.run(consumer, cluster.producer(), orders_app.Pricing(),
                                      sleep=lambda s: cluster.advance(int(s * 1000)), **kwargs)
            finally:
                consumer.close()
            runs.append(done)
            return done

        try:
            test(cluster, run_app)
            failed = ""
        except NotImplementedError:
            raise
        except AssertionError as exc:
            failed = f"an assert failed{': ' + str(exc) if str(exc) else ''}"
        except Exception as exc:  # the application (or the test) raised
            failed = f"{type(exc).__name__}: {exc}"
        handled = [h for done in runs for h in done]
        out.history.append(f"{label}: {len(handled)} records handled, "
                           f"{sum(h.outcome == 'parked' for h in handled)} parked; your test "
                           + ("passed" if not failed else f"failed ({failed})"))
        if handle is None:
            out.expect(not failed and bool(runs), "your test passes on the real orders_app",
                       "your test does not pass on the real orders_app: "
                       + (failed or "it never called run_app()"))
        else:
            out.expect(bool(failed), f"your test catches the bug: an application that {label}",
                       f"the bug was not caught: your test passed on an application that {label}")
    caught = sum(1 for r in out.right if r.startswith("your test catches"))
    out.verdict = f"{caught} of {len(APP_VARIANTS) - 1} buggy applications caught"
    return out


# -- lesson 14 ------------------------------------------------------------------------------------

@exercise("14-rolling-restart", "Lesson 14 · a rolling restart nobody notices",
          hint="One broker at a time: stop it cleanly (stop_broker, a controlled shutdown, "
               "moves its leaderships away first), start it again, and before the next one "
               "wait (cluster.advance) until UnderReplicatedPartitions is 0 again: until then "
               "the restarted broker is not back in the ISR, and stopping another one leaves "
               "fewer in-sync replicas than min.insync.replicas=2.",
          solution=solutions.rolling_restart)
def check_rolling_restart(rolling_restart: Callable[[Cluster], None]) -> Outcome:
    from ..core import metrics as m
    from ..operations import availability, steady_traffic

    out = Outcome()
    cluster = Cluster(brokers=3, seed=14, controllers=[1001, 1002, 1003])
    cluster.create_topic("payments", partitions=3, replication_factor=3,
                         config={"min.insync.replicas": "2"})
    traffic = steady_traffic(cluster, "payments", every_ms=100, count=3_000)
    cluster.advance(2_000)
    start, mark = cluster.now_ms, cluster.journal.next_seq
    rolling_restart(cluster)
    took = cluster.now_ms - start
    cluster.advance(max(30_000, start + 300_000 - cluster.now_ms))
    report = availability(cluster, traffic)
    events = cluster.journal.since(mark)
    stopped = [(e.fields["broker"], e.fields["clean"]) for e in events
               if e.kind == "broker.stopped"]
    started = [e.fields["broker"] for e in events if e.kind == "broker.started"]
    out.history = [f"your restart took {took / 1000:g} s of simulated time: stopped "
                   f"{stopped} (broker, clean), started {started}",
                   f"traffic: {report['sent']} sent, {report['acknowledged']} acknowledged, "
                   f"{report['refused']} refused (NOT_ENOUGH_REPLICAS), longest pause "
                   f"{report['longest pause ms'] / 1000:g} s, {report['failed']} failed"]
    out.expect(sorted(set(started)) == [1, 2, 3] and sorted({b for b, _ in stopped}) == [1, 2, 3],
               "every broker was restarted",
               f"not every broker was restarted: stopped {sorted({b for b, _ in stopped})}, "
               f"started {sorted(set(started))}")
    out.expect(all(clean for _, clean in stopped),
               "every broker stopped cleanly (a controlled shutdown)",
               "a broker was crashed rather than stopped: its partitions waited "
               "broker.session.timeout.ms for a new leader")
    out.expect(report["refused"] == 0, "no acks=all write was refused",
               f"{report['refused']} acks=all writes were refused with NOT_ENOUGH_REPLICAS: "
               "a broker went down before the one restarted before it was back in the ISR")
    out.expect(report["longest pause ms"] <= 3_000, "writes never paused for more than 3 s",
               f"writes paused for {report['longest pause ms'] / 1000:g} s")
    out.expect(report["lost"] == 0 and report["failed"] == 0, "nothing was lost or failed",
               f"{report['lost']} acknowledged writes lost, {report['failed']} sends failed")
    urp = m.totals(m.cluster_metrics(cluster)).get(m.URP, 0)
    out.expect(urp == 0, "the cluster ended fully replicated",
               f"{urp} partitions are still under-replicated at the end")
    out.verdict = (f"{report['refused']} writes refused, longest pause "
                   f"{report['longest pause ms'] / 1000:g} s, {report['lost']} lost")
    return out


# -- lesson 17 ------------------------------------------------------------------------------------

def _librdkafka_refusal(config: dict) -> str | None:
    """What librdkafka (confluent-kafka) says when it is given this consumer config, or
    None when it takes it. Only the configuration is checked: nothing connects."""
    import logging

    try:
        import confluent_kafka
    except ImportError:  # without confluent-kafka, the same rules as Kafka's Java client
        from .group_protocols import CONSUMER_PROTOCOL_UNSUPPORTED
        if str(config.get("group.protocol", "classic")).lower() == "consumer":
            for key in CONSUMER_PROTOCOL_UNSUPPORTED:
                if key in config:
                    return f"`{key}` is not supported for `group.protocol=consumer`"
        return None
    quiet = logging.getLogger("minikafka.exercise.librdkafka")
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    settings = {**config, "bootstrap.servers": "127.0.0.1:9"}  # never contacted
    try:
        consumer = confluent_kafka.Consumer(settings, logger=quiet)
    except Exception as exc:  # KafkaException / ValueError / TypeError from librdkafka
        return str(exc.args[0].str() if exc.args and hasattr(exc.args[0], "str") else exc)
    consumer.close()
    return None


@exercise("17-consumer-protocol", "Lesson 17 · move a consumer to the new protocol",
          hint="Set group.protocol to consumer. Three settings are the broker's now: drop "
               "partition.assignment.strategy (name a broker assignor, uniform or range, "
               "with group.remote.assignor instead), session.timeout.ms and "
               "heartbeat.interval.ms. Keep everything else as it was.",
          solution=solutions.to_consumer_protocol)
def check_consumer_protocol(to_consumer_protocol: Callable[[dict], dict]) -> Outcome:
    from ..cluster import settle_group
    from .group_protocols import (
        CLASSIC_CONSUMER_CONFIG,
        CONSUMER_PROTOCOL_UNSUPPORTED,
        REMOTE_ASSIGNORS,
        in_process_settings,
    )

    out = Outcome()
    config = to_consumer_protocol(dict(CLASSIC_CONSUMER_CONFIG))
    if not isinstance(config, dict):
        raise TypeError(f"return the new config as a dict, not {type(config).__name__}")
    out.expect(config.get("group.protocol") == "consumer",
               "group.protocol=consumer: the new protocol",
               f"group.protocol is {config.get('group.protocol', 'not set (classic)')!r}: "
               "the consumer stays in a classic group")
    for key, why in CONSUMER_PROTOCOL_UNSUPPORTED.items():
        out.expect(key not in config, f"no {key}: {why}",
                   f"{key} is still set: with group.protocol=consumer {why}")
    kept = [k for k in CLASSIC_CONSUMER_CONFIG if k not in CONSUMER_PROTOCOL_UNSUPPORTED]
    changed = [k for k in kept if config.get(k) != CLASSIC_CONSUMER_CONFIG[k]]
    out.expect(not changed, "the other settings are kept (they still work as before)",
               f"changed or dropped: {', '.join(changed)}; they still apply to the new "
               "protocol")
    assignor = config.get("group.remote.assignor")
    out.expect(assignor is None or assignor in REMOTE_ASSIGNORS,
               f"group.remote.assignor {assignor or 'unset (the broker picks uniform)'}",
               f"group.remote.assignor={assignor!r}: the broker knows "
               f"{' and '.join(REMOTE_ASSIGNORS)} (UNSUPPORTED_ASSIGNOR)")
    refusal = _librdkafka_refusal(config)
    out.expect(refusal is None, "confluent-kafka (librdkafka) accepts the configuration",
               f"confluent-kafka refuses the configuration: {refusal}")
    out.history.append("librdkafka: " + (refusal or "Consumer(config) created"))
    if not out.passed:
        out.verdict = "the group was not started: fix the configuration first"
        return out
    # The same settings in process: three members and a fourth joining, as in the lesson.
    cluster = Cluster(brokers=3, seed=17)
    cluster.create_topic("orders", partitions=6, replication_factor=3)
    settings = in_process_settings({k: v for k, v in config.items() if k != "client.id"})
    group = [cluster.consumer("orders", client_id=f"c{i}", **settings) for i in (1, 2, 3)]
    settle_group(group)
    group.append(cluster.consumer("orders", client_id="c4", **settings))
    settle_group(group)
    snap = cluster.groups.snapshot()[config["group.id"]]
    out.expect(snap.get("type") == "consumer", "the coordinator formed a consumer group "
               "(type consumer) and assigned it",
               f"the coordinator formed a {snap.get('type', 'classic')} group")
    for m in sorted(snap["members"].values(), key=lambda m: m.get("client_id") or ""):
        owned = ", ".join(m.get("assignment", [])) or "-"
        out.history.append(f"{m.get('client_id')}: member epoch {m.get('epoch')}, owns {owned}")
    out.verdict = (f"group {config['group.id']}: type {snap.get('type', 'classic')}, group "
                   f"epoch {snap.get('group_epoch')}, {len(snap['members'])} members")
    for c in group:
        c.close(autocommit=False)
    return out


# -- lesson 18 ------------------------------------------------------------------------------------

POISON_OFFSET = 3
SLOW_JOBS = (5, 7)  # the mail server times out on their first delivery


def _send_email(record: Any, sent: list) -> Exception | None:
    """Lesson 18's worker: parse the job, send the e-mail; the error, if any."""
    try:
        job = json.loads(record.value)
    except ValueError as exc:
        return exc
    if job["id"] in SLOW_JOBS and record.delivery_count == 1:
        return TimeoutError("the mail server did not answer within 10 s")
    sent.append(job["id"])
    return None


@exercise("18-acknowledge", "Lesson 18 · accept, release or reject",
          hint="ACCEPT what was processed. RELEASE what failed for a passing reason (a "
               "timeout): it comes again, to this or another consumer. REJECT what can "
               "never succeed (a record that does not parse): released, it would come back "
               "until group.share.delivery.count.limit.",
          solution=solutions.acknowledge_type)
def check_acknowledge(acknowledge_type: Callable[[Any, Exception | None], Any]) -> Outcome:
    from ..core.share.partition import AcknowledgeType

    out = Outcome()
    cluster = Cluster(brokers=3, seed=18)
    cluster.create_topic("emails", partitions=1, replication_factor=3)
    cluster.alter_share_group_config("mailers", {"share.auto.offset.reset": "earliest"})
    producer = cluster.producer()
    jobs = 10
    for i in range(jobs):
        value = b"{not json" if i == POISON_OFFSET else json.dumps(
            {"id": i, "to": f"customer-{i}@example.com"}).encode()
        producer.send("emails", value=value)
    producer.flush()
    workers = {name: cluster.share_consumer("mailers", ["emails"], client_id=name,
                                            share_acknowledgement_mode="explicit",
                                            max_poll_records=3) for name in ("w1", "w2")}
    sent: list[int] = []
    deliveries: dict[int, int] = {}
    for _ in range(12):
        for name, worker in workers.items():
            for record in worker.poll(timeout_ms=1_000).get(TopicPartition("emails", 0), []):
                error = _send_email(record, sent)
                kind = acknowledge_type(record, error)
                if kind not in (AcknowledgeType.ACCEPT, AcknowledgeType.RELEASE,
                                AcknowledgeType.REJECT):
                    raise TypeError(f"return AcknowledgeType.ACCEPT, RELEASE or REJECT, "
                                    f"not {kind!r}")
                kind = AcknowledgeType(kind)
                worker.acknowledge(record, kind)
                deliveries[record.offset] = record.delivery_count
                said = "ok" if error is None else f"{type(error).__name__}"
                out.history.append(f"{name} got offset {record.offset} (delivery "
                                   f"{record.delivery_count}): {said} → {kind.name}")
            worker.commit_sync()
    sp = cluster.share_groups.partitions[("mailers", "emails", 0)]
    good = [i for i in range(jobs) if i != POISON_OFFSET]
    twice = sorted({i for i in sent if sent.count(i) > 1})
    missing = [i for i in good if i not in sent]
    out.expect(not missing, f"every good job sent ({len(good)} e-mails)",
               f"jobs {missing} were never sent: a record that failed for a passing reason "
               "was given up on")
    out.expect(not twice, "no e-mail sent twice",
               f"jobs {twice} were sent more than once: a processed record was not accepted")
    slow_ok = all(deliveries.get(i, 0) >= 2 for i in SLOW_JOBS) and not missing
    out.expect(slow_ok, f"the timed-out jobs {list(SLOW_JOBS)} came again and were sent on "
               "their second delivery",
               f"the timed-out jobs {list(SLOW_JOBS)} were not delivered again")
    poison = deliveries.get(POISON_OFFSET, 0)
    out.expect(poison == 1, "the unparsable record was archived after one delivery",
               f"the unparsable record (offset {POISON_OFFSET}) was delivered {poison} times "
               f"before it was archived (group.share.delivery.count.limit is "
               f"{cluster.share_groups.settings('mailers').delivery_count_limit})")
    out.expect(sp.start_offset == jobs, f"the share-partition start offset reached {jobs}: "
               "nothing left in flight",
               f"the share-partition start offset is {sp.start_offset}, not {jobs}: records "
               "are still in flight")
    out.verdict = (f"{len(sent)} e-mails sent for {len(good)} jobs; the poison record was "
                   f"delivered {poison}×; start offset {sp.start_offset} of {jobs}")
    for worker in workers.values():
        worker.close()
    return out


# -- lesson 19 ------------------------------------------------------------------------------------

BILLING = {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "SCRAM-SHA-256",
           "sasl_plain_username": "billing", "sasl_plain_password": "billing-secret"}
BILLING_TOPICS = ("orders-eu", "orders-us")
# What billing must not be able to do: (principal, operation, resource type, name).
BILLING_REFUSED = (
    ("User:billing", "READ", "TOPIC", "payments"),
    ("User:billing", "READ", "TOPIC", "orders_archive"),
    ("User:billing", "DESCRIBE", "TOPIC", "payments"),
    ("User:billing", "WRITE", "TOPIC", "orders-eu"),
    ("User:billing", "DELETE", "TOPIC", "orders-eu"),
    ("User:billing", "ALTER_CONFIGS", "TOPIC", "orders-us"),
    ("User:billing", "READ", "GROUP", "billing-app-v2"),
    ("User:billing", "DELETE", "GROUP", "billing-app"),
    ("User:billing", "CREATE", "CLUSTER", "kafka-cluster"),
    ("User:shipping", "READ", "TOPIC", "orders-eu"),
    ("User:shipping", "READ", "GROUP", "billing-app"),
)


@exercise("19-acls", "Lesson 19 · the fewest ACLs for one application",
          hint="A consumer in a group needs READ on each topic it reads and READ on its "
               "group; READ implies DESCRIBE. Name the principal User:billing (not User:*), "
               "a PREFIXED pattern 'orders-' (with the dash: 'orders' also covers "
               "orders_archive) and the group as a LITERAL name.",
          solution=solutions.billing_acls)
def check_billing_acls(billing_acls: Callable[[], list]) -> Outcome:
    from kafka.errors import KafkaError

    from ..core.acl import AclBindingFilter, AclOperation, ResourceType

    acls = list(billing_acls() or [])
    out = Outcome()
    cluster = Cluster(brokers=3, seed=19)
    cluster.enable_acls(super_users=["User:admin"])
    for user in ("admin", "billing", "shipping"):
        cluster.set_scram_credential(user, f"{user}-secret")
    admin_login = {**BILLING, "sasl_plain_username": "admin", "sasl_plain_password": "admin-secret"}
    admin = cluster.admin(**admin_login)
    names = (*BILLING_TOPICS, "orders_archive", "payments")
    admin.create_topics({t: {"num_partitions": 1, "replication_factor": 3} for t in names})
    producer = cluster.producer(**admin_login)
    for topic in names:
        producer.send(topic, f"a record in {topic}".encode())
    producer.flush()
    result = admin.create_acls(acls)
    out.expect(not result["failed"], f"the broker accepted all {len(acls)} of your ACLs",
               f"the broker refused {len(result['failed'])} of your ACLs: "
               + ", ".join(getattr(e, "__name__", str(e)) for e in result["failed"]))
    out.history.append(f"admin created {len(result['succeeded'])} ACLs: "
                       + "; ".join(str(b) for b in cluster.describe_acls(AclBindingFilter())))
    consumer = cluster.consumer(*BILLING_TOPICS, group_id="billing-app",
                                auto_offset_reset="earliest", **BILLING)
    try:
        read: set[str] = set()
        for _ in range(10):  # a poll may bring one partition's records; poll for both
            read |= {tp.topic for tp in consumer.poll(timeout_ms=1000)}
            if read == set(BILLING_TOPICS):
                break
        consumer.commit()
        outcome = "read from " + ", ".join(sorted(read)) + " and committed"
    except KafkaError as exc:
        read, outcome = set(), f"refused: {type(exc).__name__}"
    finally:
        consumer.close()
    out.history.append(f"billing's consumer in group billing-app, subscribed to "
                       f"{', '.join(BILLING_TOPICS)}: {outcome}")
    out.expect(read == set(BILLING_TOPICS),
               "billing's consumer read orders-eu and orders-us and committed its offsets",
               f"billing's consumer could not do its job: {outcome}")
    too_much = []
    for principal, op, kind, name in BILLING_REFUSED:
        decision = cluster.authorizer.decide(principal, "127.0.0.1", AclOperation[op],
                                             ResourceType[kind], name)
        if decision.allowed:
            too_much.append(f"{principal} may {op} {kind.lower()} {name} (allowed by "
                            f"{decision.acl})")
    out.history.append(f"asked the authorizer {len(BILLING_REFUSED)} questions billing's "
                       f"ACLs must answer no: {len(too_much)} answered yes")
    out.expect(not too_much, "nothing else is allowed: no other topic, group, operation or "
                             "principal", "your ACLs allow more than the job: "
               + "; ".join(too_much))
    out.expect(len(acls) <= 2, f"{len(acls)} ACLs: nothing to spare",
               f"{len(acls)} ACLs where two do the job")
    out.verdict = (f"billing {outcome}; {len(too_much)} of {len(BILLING_REFUSED)} things it "
                   "must not do were allowed")
    return out


# -- lesson 20 ------------------------------------------------------------------------------------

MINUTE_MS = 60_000
REPORTS_PER_MINUTE = 6  # one truck report every 10 s


@exercise("20-tiers", "Lesson 20 · a long replay on a small disk",
          hint="Three settings do it: remote.storage.enable turns tiered storage on for the "
               "topic; retention.ms is the total (how long anything can be replayed, and when "
               "it is deleted everywhere); local.retention.ms is what stays on the broker's "
               "disk, and must not exceed retention.ms. Segments roll every minute here.",
          solution=solutions.tiered_config)
def check_tiered(tiered_config: Callable[[], dict]) -> Outcome:
    from .. import errors as kerrors
    from .tiered_storage import TOPIC, tiered_cluster

    config = {k: str(v) for k, v in _settings(tiered_config).items()}
    out = Outcome()
    try:
        # Kafka's defaults for what the answer leaves out; segments roll every minute.
        cluster = tiered_cluster(seed=20, config={
            "remote.storage.enable": "false", "local.retention.ms": "-2",
            "retention.ms": str(7 * DAY_MS), **config, "segment.ms": "60000"})
    except kerrors.KafkaError as exc:
        out.expect(False, "", f"Kafka refuses the topic's configs: {exc}")
        out.verdict = "no topic"
        return out
    producer = cluster.producer(linger_ms=0)
    local_minutes, minutes = [], 50
    for i, (key, value) in enumerate(truck_reports(trucks=1, reports=minutes * 6,
                                                   every_ms=10_000)):
        producer.send(TOPIC, key=key, value=value).get()
        cluster.advance(10_000)
        if (i + 1) % REPORTS_PER_MINUTE == 0:
            leader = cluster.leader_replica(TOPIC, 0)
            tier = leader.tier
            start = tier.log_start_offset if tier is not None else leader.log.log_start_offset
            local = (leader.log.log_end_offset - leader.log.log_start_offset) / REPORTS_PER_MINUTE
            local_minutes.append(local)
            if (i + 1) % (10 * REPORTS_PER_MINUTE) == 0:
                out.history.append(
                    f"minute {(i + 1) // 6}: offsets {start}-{leader.log.log_end_offset - 1} "
                    f"readable, {leader.log.log_start_offset}-{leader.log.log_end_offset - 1} "
                    f"on the broker's disk ({local:g} minutes)")
    leader = cluster.leader_replica(TOPIC, 0)
    start = leader.tier.log_start_offset if leader.tier is not None \
        else leader.log.log_start_offset
    readable = (leader.log.log_end_offset - start) / REPORTS_PER_MINUTE
    out.expect(readable >= 20, f"the last {readable:g} minutes can be replayed (20 needed)",
               f"only the last {readable:g} minutes can be replayed: 20 are needed")
    out.expect(readable <= 41, f"nothing older than {readable:g} minutes is kept anywhere "
               "(the limit is 40, plus the segment being deleted)",
               f"reports {readable:g} minutes old are still kept: after 40 minutes they "
               "must be gone from both tiers")
    worst = max(local_minutes)
    out.expect(worst <= 7, f"the broker's disk never held more than {worst:g} minutes "
               "(5 allowed, plus the active segment and the pass that deletes)",
               f"the broker's disk held {worst:g} minutes of reports: the budget is 5 "
               "(7 with the active segment and the 30 s until a pass deletes)")
    out.verdict = (f"{readable:g} minutes replayable, at most {worst:g} minutes on the "
                   "broker's disk")
    return out


# -- lesson 21 ------------------------------------------------------------------------------------

# Reports held back on their way (a truck in a tunnel): (truck, n-th report) -> delay in ms.
# None is more than 40 s late; the two measured ten seconds before their minute ended need
# a grace over 30 s.
TUNNEL_DELAYS = {("truck-01", 5): 40_000, ("truck-02", 13): 30_000, ("truck-03", 22): 12_000,
                 ("truck-04", 17): 39_000, ("truck-01", 26): 25_000}
DASHBOARD_WAIT_MS = 60_000  # a minute's counts must be final a minute after it ends


@exercise("21-grace", "Lesson 21 · windows for a dashboard",
          hint="Counts per minute are tumbling windows of 60 s (a hopping window counts a "
               "report once in each window it overlaps). A report that arrives up to 40 s "
               "late needs a grace of at least 40 s, or its window has closed; a window "
               "closes grace after its end, so a grace over 60 s keeps the dashboard "
               "waiting too long: TimeWindows(size_ms=60_000, grace_ms=...).",
          solution=solutions.truck_windows)
def check_truck_windows(truck_windows: Callable[[], Any]) -> Outcome:
    from .streams import TimeWindows, arriving_late, run_windowed
    from .trucks import truck_positions

    windows = truck_windows()
    if not isinstance(windows, TimeWindows):
        raise TypeError(f"return a TimeWindows(...), not {windows!r}")
    out = Outcome()
    reports = arriving_late(truck_positions(trucks=4, minutes=5, every_s=10, seed=21,
                                            max_delay_s=0), TUNNEL_DELAYS)
    app = run_windowed(reports, windows)
    app.close()
    expected: dict[tuple[str, int], int] = {}
    for r in reports:
        minute = r.event_time_ms // 60_000 * 60_000
        expected[(r.truck_id, minute)] = expected.get((r.truck_id, minute), 0) + 1
    got = {(k, s): n for (k, s, e), n in app.counts().items()}
    out.history.append(f"{len(reports)} reports of 4 trucks over 5 minutes; "
                       f"{len(TUNNEL_DELAYS)} of them 12-40 s late ({windows.describe()})")
    for r in app.records:
        if r["dropped"]:
            out.history.append(f"{r['key']}'s report measured at offset {r['offset']} of "
                               f"partition {r['partition']} came {r['late_by'] / 1000:.1f} s "
                               f"behind the stream time: dropped from {len(r['dropped'])} "
                               "window(s)")
    tumbling = windows.size_ms == 60_000 and windows.advance == 60_000
    out.expect(tumbling, "one window per minute: tumbling 60 s windows",
               f"{windows.describe()}: the dashboard shows counts per minute, "
               f"[0:00, 1:00), [1:00, 2:00), ..., one window each")
    dropped = len(app.dropped) + sum(1 for r in app.records if r["dropped"] and r["counted"])
    out.expect(dropped == 0, "no report dropped: every late one reached a window still open",
               f"{dropped} late report(s) dropped: their windows had closed")
    if tumbling:
        wrong = {k: (got.get(k, 0), n) for k, n in expected.items() if got.get(k, 0) != n}
        out.expect(not wrong, f"every truck's count per minute is right ({len(expected)} "
                              "windows)",
                   f"{len(wrong)} windows counted wrong (got, expected): "
                   + ", ".join(f"{t} at minute {(m - min(m for _, m in expected)) // 60_000}:"
                               f" {g} not {n}" for (t, m), (g, n) in sorted(wrong.items())[:4]))
    out.expect(windows.grace_ms <= DASHBOARD_WAIT_MS,
               f"a window is final {windows.grace_ms // 1000} s after its end, within the "
               "dashboard's minute",
               f"grace {windows.grace_ms // 1000} s: a window stays open that long after its "
               f"end, and the dashboard waits at most {DASHBOARD_WAIT_MS // 1000} s")
    out.verdict = (f"{windows.describe()}: {len(app.records)} reports read, {dropped} dropped, "
                   f"{len(got)} windows")
    return out


# -- lesson 22 ------------------------------------------------------------------------------------

# Subjects and the principal name each must get (None: its whole subject, unchanged).
MAPPING_CASES = (
    ("CN=Alice,OU=course,O=minikafka", "alice"),
    ("CN=bob,OU=course,O=minikafka", "bob"),
    ("CN=billing,OU=services,O=minikafka", "svc-billing"),
    ("CN=Payments-API,OU=services,O=minikafka", "svc-Payments-API"),
    ("CN=localhost,OU=brokers,O=minikafka", None),
    ("CN=carol,OU=course-admins,O=minikafka", None),
    ("CN=mallory,OU=course,O=elsewhere", None),
)


@exercise("22-mapping-rules", "Lesson 22 · principals for people and for services",
          hint="Two RULEs and DEFAULT, comma-separated: RULE:^CN=([^,]+),OU=course,"
               "O=minikafka$/$1/L lower-cases a person's common name; a second RULE with "
               "the replacement svc-$1 (no /L) for OU=services; DEFAULT last, or any other "
               "certificate is refused. A pattern must match the whole subject: spell out "
               "OU=course,O=minikafka rather than OU=course.*, which also takes "
               "OU=course-admins and other organizations.",
          solution=solutions.principal_mapping_rules)
def check_mapping_rules(principal_mapping_rules: Callable[[], str]) -> Outcome:
    from ..core.ssl_principal import NoMatchingRule, SslPrincipalMapper

    rules = principal_mapping_rules()
    out = Outcome()
    try:
        mapper = SslPrincipalMapper(str(rules))
    except ValueError as exc:
        out.expect(False, "", f"Kafka refuses the setting at start-up: {exc}")
        out.verdict = "the broker would not start"
        return out
    out.history.append(f"ssl.principal.mapping.rules={rules}")
    wrong = []
    for subject, name in MAPPING_CASES:
        want = name if name is not None else subject
        try:
            got = mapper.name(subject)
        except NoMatchingRule:
            got = "refused: no rule applies"
        out.history.append(f"{subject} -> {got}")
        if got != want:
            wrong.append(f"{subject} became {got}, not {want}")
    out.expect(not wrong, f"all {len(MAPPING_CASES)} subjects map as the ACLs expect",
               "; ".join(wrong))
    if not wrong and BROWSER:  # no TLS listener in a tab: the mapping alone is judged
        out.history.append("a broker with your rules over mutual TLS: skipped in the browser "
                           "edition (no sockets, no cryptography); it runs after ./setup.sh")
    served = _mapped_writes(str(rules)) if not wrong and not BROWSER else {}
    if served:
        out.history.append("a broker with your rules, ACLs for User:alice and "
                           "User:svc-billing: " + "; ".join(f"{k}: {v}" for k, v in served.items()))
        out.expect(all(v.startswith("wrote") for v in served.values()),
                   "alice's and billing's certificates write through a broker with your rules",
                   "a broker with your rules refused: " + str(served))
    out.verdict = (f"{len(MAPPING_CASES) - len(wrong)} of {len(MAPPING_CASES)} subjects "
                   "mapped as expected")
    return out


def _mapped_writes(rules: str) -> dict[str, str]:
    """A broker with RULES on a mutual-TLS listener; alice's and billing's certificates
    produce to a topic their short principals may write."""
    import tempfile

    from kafka import KafkaProducer
    from kafka.admin import (
        ACL,
        ACLOperation,
        ACLPermissionType,
        ACLResourcePatternType,
        ResourcePattern,
        ResourceType,
    )
    from kafka.errors import KafkaError

    from ..core.security_config import client_listeners
    from .authentication import listener_properties, make_certificates

    with tempfile.TemporaryDirectory(prefix="minikafka-22-") as directory:
        certs = make_certificates(directory, {"Alice": "course", "billing": "services"})
        cluster = Cluster(brokers=1, seed=22)
        cluster.create_topic("orders", partitions=1, replication_factor=1)
        cluster.enable_acls(super_users=["User:admin"])
        cluster.set_scram_credential("admin", "admin-secret")
        admin = cluster.admin(security_protocol="SASL_PLAINTEXT", sasl_mechanism="SCRAM-SHA-256",
                              sasl_plain_username="admin", sasl_plain_password="admin-secret")
        orders = ResourcePattern(ResourceType.TOPIC, "orders", ACLResourcePatternType.LITERAL)
        admin.create_acls([ACL(p, "*", ACLOperation.WRITE, ACLPermissionType.ALLOW, orders)
                           for p in ("User:alice", "User:svc-billing")])
        listener = listener_properties(certs, "SSL", client_auth="required", mapping_rules=rules)
        out = {}
        with cluster.serve(port=0, listeners=client_listeners(listener)) as server:
            for who, (cert, key) in certs.client.items():
                producer = KafkaProducer(bootstrap_servers=server.bootstrap_servers,
                                         security_protocol="SSL", ssl_cafile=str(certs.ca),
                                         ssl_certfile=str(cert), ssl_keyfile=str(key))
                try:
                    offset = producer.send("orders", who.encode()).get(timeout=10).offset
                    out[who] = f"wrote offset {offset}"
                except KafkaError as exc:
                    out[who] = type(exc).__name__
                finally:
                    producer.close()
        return out
