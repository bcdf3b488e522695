"""Each lesson's key outcomes, asserted by the lesson's last cell (hidden, tagged
``check``) once its other cells have run, and then reported with ``checked()`` for the test
suite. They live here rather than in the notebook so that the answers to a lesson's
"Predict first" questions are not printed in the notebook a student is reading."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from minikafka.browser import BROWSER, NotInTheBrowser
from minikafka.course.checks import checked

Namespace = Mapping[str, Any]


def check_lesson(number: str, ns: Namespace) -> None:
    """Assert lesson ``number``'s outcomes against the notebook's variables ``ns`` (its
    ``globals()``) and report them. In the browser edition, a check that needs what a
    skipped cell would have made is skipped too."""
    try:
        OUTCOMES[number](ns)
    except KeyError as e:
        if not BROWSER or not e.args or e.args[0] in ns:  # a real failure, not a skip
            raise
        raise NotInTheBrowser(f"the lesson's check, which needs {e.args[0]!r} from a cell "
                              "the browser edition skipped") from None


def lesson_00(ns: Namespace) -> None:
    """Lesson 0: Why Kafka?"""
    dashboard_got = ns["dashboard_got"]
    shipping_got = ns["shipping_got"]
    billing_got = ns["billing_got"]
    tp = ns["tp"]
    analytics_got = ns["analytics_got"]
    billing = ns["billing"]
    shipping = ns["shipping"]
    q1 = ns["q1"]
    q2 = ns["q2"]
    q3 = ns["q3"]
    expected = [b"order-%d" % i for i in range(6)]
    assert billing_got[:6] == expected and shipping_got == expected
    assert billing.position(tp) == 9 and shipping.position(tp) == 6
    assert [r.value for r in analytics_got] == [b"order-%d" % i for i in range(9)]
    assert dashboard_got == []
    assert all(q.check(q.answer) for q in (q1, q2, q3))
    checked("00", shipping=len(shipping_got), analytics=len(analytics_got),
            dashboard=len(dashboard_got), billing_position=billing.position(tp))


def lesson_01(ns: Namespace) -> None:
    """Lesson 1: Topics, partitions and offsets."""
    records = ns["records"]
    partition_for_key = ns["partition_for_key"]
    late = ns["late"]
    topic_table = ns["topic_table"]
    cluster = ns["cluster"]
    q1 = ns["q1"]
    q2 = ns["q2"]
    q3 = ns["q3"]
    per_partition = {row["partition"]: row["log end"] for row in topic_table(cluster, "trucks_gps").rows}
    assert sum(1 for n in per_partition.values() if n) == 4
    assert [partition_for_key(b"truck-%02d" % t, 10) for t in range(1, 6)] == [6, 0, 3, 0, 1]
    by_truck = {}
    for r in records:
        by_truck.setdefault(r.key, []).append(json.loads(r.value)["event_time"])
    assert all(times == sorted(times) and len(times) == 3 for times in by_truck.values()) and len(by_truck) == 5
    assert [json.loads(r.value)["event_time"] for r in records] != sorted(json.loads(r.value)["event_time"] for r in records)
    p0 = cluster.describe_topic("trucks_gps").partitions[0]
    assert (late.partition, late.offset, p0.log_start_offset) == (0, 6, 6)
    assert "trucks_gps_test" in cluster.list_topics() and cluster.partitions_for("trucks_gps_test") == 1  # deleted, auto-created again
    assert all(q.check(q.answer) for q in (q1, q2, q3))
    checked("01", partitions_with_data=4, late_offset=late.offset, log_start=p0.log_start_offset)


def lesson_02(ns: Namespace) -> None:
    """Lesson 2: Brokers, bootstrap and replica placement."""
    outcome = ns["outcome"]
    placement = ns["placement"]
    broker_table = ns["broker_table"]
    big = ns["big"]
    zookeeper_era_assignment = ns["zookeeper_era_assignment"]
    q1 = ns["q1"]
    q2 = ns["q2"]
    q3 = ns["q3"]
    cluster = ns["cluster"]
    read_topic = ns["read_topic"]
    sent = ns["sent"]
    racks = ns["racks"]
    assert broker_table(cluster, "topic_b").one(broker=102)["replicas"] == 0
    assert all(b.metadata_offset == len(cluster.metadata_log) for b in cluster.brokers.values())
    assert outcome == "KafkaTimeoutError"
    assert [r.value for r in read_topic(cluster, "topic_a")[sent.partition]] == [b"hello", b"again", b"again"]
    rows = placement().rows
    assert all(row["racks"] == ["rack-1", "rack-2"] for row in rows)
    per_broker = broker_table(big, "customers").column("replicas")
    assert sum(per_broker) == 30 and max(per_broker) - min(per_broker) <= 2
    after = big.describe_topic("customers").partitions
    assert all(p.leader in (3, 4, 5) for p in after)
    assert zookeeper_era_assignment(10, 3, sorted(racks.items()), 0, 0)[0] == [0, 3, 1]
    assert all(q.check(q.answer) for q in (q1, q2, q3))
    checked("02", offline_send=outcome, leaders_after_rack_loss=sorted({p.leader for p in after}),
            racks_per_partition=min(len(r["racks"]) for r in rows))


def lesson_03(ns: Namespace) -> None:
    """Lesson 3: Producers and keys."""
    agree = ns["agree"]
    sent = ns["sent"]
    moved = ns["moved"]
    before = ns["before"]
    after = ns["after"]
    failures = ns["failures"]
    burst = ns["burst"]
    keys = ns["keys"]
    acknowledged = ns["acknowledged"]
    signed = ns["signed"]
    stamped = ns["stamped"]
    q1 = ns["q1"]
    q2 = ns["q2"]
    q3 = ns["q3"]
    assert agree == len(sent) == 60
    assert (signed & 0x7FFFFFFF) % 6 == 0 and abs(signed) % 6 == 2
    runs = "".join(str(f.get().partition) for f in burst)
    switches = sum(1 for a, b in zip(runs, runs[1:]) if a != b)
    assert 1 <= switches <= 6 and len(set(runs)) >= 2
    assert 0.6 < moved / len(keys) < 0.9
    assert before.partition != after.partition
    assert len(acknowledged) == 3 and not failures
    assert stamped["orders"][:3] == (0, 0, 60) and stamped["orders_audit"][:3] == (0, 1, 0)
    assert all(s[3] == {"trace-id": b"7f3a9c", "source": b"web-shop"} and s[4] for s in stamped.values())
    assert all(q.check(q.answer) for q in (q1, q2, q3))
    checked("03", keyed_agree=agree, burst_switches=switches, moved_3_to_4=moved,
            truck4=[before.partition, after.partition])


def lesson_04(ns: Namespace) -> None:
    """Lesson 4: Replication: leaders, followers, ISR and the high watermark."""
    readable = ns["readable"]
    in_isr_at_20s = ns["in_isr_at_20s"]
    slow_3s_in_isr = ns["slow_3s_in_isr"]
    leader = ns["leader"]
    in_isr_at_50s = ns["in_isr_at_50s"]
    slow_40s_in_isr = ns["slow_40s_in_isr"]
    leader_after_8s = ns["leader_after_8s"]
    crashed = ns["crashed"]
    leader_after_10s = ns["leader_after_10s"]
    panel = ns["panel"]
    cluster = ns["cluster"]
    q1 = ns["q1"]
    q2 = ns["q2"]
    q3 = ns["q3"]
    after_stop = [f for f in panel.history if f.label.endswith(f"stop broker {leader}")][0]
    leader_after_stop = after_stop.snapshot["topics"]["orders"][0]["leader"]
    assert leader_after_stop not in (None, leader)
    assert readable == 5
    assert in_isr_at_20s and not in_isr_at_50s
    assert slow_3s_in_isr and not slow_40s_in_isr
    assert leader_after_8s == crashed and leader_after_10s not in (None, crashed)
    final = cluster.describe_topic("orders").partitions[0]
    assert len(final.isr) == 3 and final.leader == final.replicas[0]
    assert all(q.check(q.answer) for q in (q1, q2, q3))
    checked("04", leader_before=leader, leader_after_stop=leader_after_stop, readable_below_hw=readable,
            stuck_in_isr=[in_isr_at_20s, in_isr_at_50s], slow_in_isr=[slow_3s_in_isr, slow_40s_in_isr],
            crash_leader=[crashed, leader_after_8s, leader_after_10s])


def lesson_05(ns: Namespace) -> None:
    """Lesson 5: Durability: acks, min.insync.replicas and unclean elections."""
    refused = ns["refused"]
    clean = ns["clean"]
    p = ns["p"]
    table = ns["table"]
    stories = ns["stories"]
    runs = ns["runs"]
    unclean = ns["unclean"]
    q1 = ns["q1"]
    q2 = ns["q2"]
    q3 = ns["q3"]
    q4 = ns["q4"]
    assert [w.value for w in stories[1][1].lost] == [b"payment-2"]
    assert stories["all"][1].ok and stories["all"][1].acknowledged == 2
    assert refused == "NotEnoughReplicasError" and p.high_watermark == 0
    assert runs["ELR on"][0].leader is not None and runs["ELR on"][1] == [b"p0", b"p1", b"p2"]
    assert runs["ELR off"][0].leader is None and runs["ELR on, crash"][0].leader is None
    assert clean.ok and len(unclean.lost) > 0
    rows = {(r["acks"], r["min.insync.replicas"]): r for r in table.rows}
    assert rows[("all", 2)]["lost"] == 0 and rows[("all", 1)]["lost"] == 0
    assert rows[("1", 1)]["lost"] > 0 and rows[("1", 2)]["lost"] > 0
    assert rows[("0", 1)]["acknowledged"] == 0 and rows[("0", 1)]["read back"] < rows[("0", 1)]["sent"]
    assert rows[("all", 2)]["acknowledged"] < rows[("all", 1)]["acknowledged"]
    assert all(q.check(q.answer) for q in (q1, q2, q3, q4))
    checked("05", all_isr2_lost=rows[("all", 2)]["lost"], acks1_lost=rows[("1", 1)]["lost"],
            acks0_missing=rows[("0", 1)]["sent"] - rows[("0", 1)]["read back"],
            unclean_lost=len(unclean.lost), clean_lost=len(clean.lost), refused=refused,
            elr_leader=runs["ELR on"][0].leader)


def lesson_06(ns: Namespace) -> None:
    """Lesson 6: Retries, ordering, idempotence and transactions."""
    fenced = ns["fenced"]
    uncommitted_view = ns["uncommitted_view"]
    committed_view = ns["committed_view"]
    copies = ns["copies"]
    retries_table = ns["retries_table"]
    batches_table = ns["batches_table"]
    c = ns["c"]
    q1 = ns["q1"]
    q2 = ns["q2"]
    q3 = ns["q3"]
    assert copies[False] == [b"pay-42", b"pay-42"] and copies[True] == [b"pay-42"]
    off, on = retries_table.one(idempotence=False), retries_table.one(idempotence=True)
    assert off["duplicated"] > 0 and off["reordered"] > 0
    assert on["duplicated"] == 0 and on["reordered"] == 0 and on["lost"] == 0
    assert uncommitted_view == [b"invoice-1", b"invoice-2"] and committed_view == [b"invoice-1"]
    assert batches_table(c, "invoices").column("control") == [False, True, False, True]
    assert fenced == "InvalidProducerEpochError"  # transaction version 2 (lesson text)
    assert all(q.check(q.answer) for q in (q1, q2, q3))
    checked("06", copies_without=len(copies[False]), copies_with=len(copies[True]),
            dup_off=off["duplicated"], reorder_off=off["reordered"], dup_on=on["duplicated"],
            reorder_on=on["reordered"], read_committed=len(committed_view), fenced=fenced)


def lesson_07(ns: Namespace) -> None:
    """Lesson 7: Batching and compression."""
    zstd_batches = ns["zstd_batches"]
    blocked = ns["blocked"]
    accepted = ns["accepted"]
    lingers = ns["lingers"]
    codecs = ns["codecs"]
    q1 = ns["q1"]
    q2 = ns["q2"]
    q3 = ns["q3"]
    by_linger = {r["linger.ms"]: r for r in lingers.rows}
    assert by_linger[0]["batches"] == 300
    assert by_linger[0]["batches"] > by_linger[5]["batches"] > by_linger[20]["batches"] > by_linger[100]["batches"]
    assert by_linger[0]["avg latency ms"] < by_linger[20]["avg latency ms"] < by_linger[100]["avg latency ms"]
    ratios = {r["compression"]: r["ratio"] for r in codecs.rows}
    assert ratios["none"] < 1 and all(ratios[c] > 1.5 for c in ("gzip", "snappy", "lz4", "zstd"))
    small, big = zstd_batches.rows
    assert small["ratio"] < 1 < 3 < big["ratio"]
    assert blocked == "KafkaTimeoutError" and 0 < accepted < 100
    assert all(q.check(q.answer) for q in (q1, q2, q3))
    checked("07", batches=[by_linger[x]["batches"] for x in (0, 5, 20, 100)],
            latency=[by_linger[x]["avg latency ms"] for x in (0, 5, 20, 100)],
            ratios=ratios, zstd_small_big=[small["ratio"], big["ratio"]], blocked=blocked, accepted=accepted)


def lesson_08(ns: Namespace) -> None:
    """Lesson 8: Consumers and the poll loop."""
    measured = ns["measured"]
    seen_after_1_min = ns["seen_after_1_min"]
    seen_after_6_min = ns["seen_after_6_min"]
    per_poll = ns["per_poll"]
    fetch_sizes = ns["fetch_sizes"]
    long_poll = ns["long_poll"]
    reports = ns["reports"]
    replayed = ns["replayed"]
    ends = ns["ends"]
    again = ns["again"]
    q1 = ns["q1"]
    q2 = ns["q2"]
    q3 = ns["q3"]
    assert max(per_poll) == 50 and sum(per_poll) == 300 and per_poll[-1] == 0
    assert sum(ends.values()) == 300
    assert fetch_sizes[1_048_576][:3] == [3, 3, 3] and fetch_sizes[100_000] == [1, 1, 1, 1, 1]
    assert [r.offset for r in again[:5]] == [5, 6, 7, 8, 9]
    assert long_poll[1][0] == 1 and long_poll[1][1] < 100 and long_poll[1_000][0] == 6
    assert long_poll[100_000][1] >= 500 and long_poll[100_000][0] < 11
    round_times = sorted({json.loads(value)["event_time"] for _, value in reports})
    rounds = [round_times.index(t) for t in measured]
    assert rounds == list(range(25, 30)) and len(replayed) == 50
    assert "orders-asia" not in seen_after_1_min and "orders-asia" in seen_after_6_min and "payments" not in seen_after_6_min
    assert all(q.check(q.answer) for q in (q1, q2, q3))
    checked("08", per_poll=per_poll, big_records=fetch_sizes, long_poll=long_poll, seek_first=again[0].offset,
            replayed_rounds=rounds)


def lesson_09(ns: Namespace) -> None:
    """Lesson 9: Consumer groups and rebalancing."""
    kip848_epochs = ns["kip848_epochs"]
    generations = ns["generations"]
    kip848_log = ns["kip848_log"]
    generation_before = ns["generation_before"]
    generation_after = ns["generation_after"]
    owned_before = ns["owned_before"]
    takeover_ms = ns["takeover_ms"]
    listener_events = ns["listener_events"]
    stuck_trial = ns["stuck_trial"]
    assignments = ns["assignments"]
    q1 = ns["q1"]
    q2 = ns["q2"]
    q3 = ns["q3"]
    group_table = ns["group_table"]
    assignment_table = ns["assignment_table"]
    owned = ns["owned"]
    panel = ns["panel"]
    a = ns["a"]
    b = ns["b"]
    assert sorted(len(v) for v in owned.values()) == [0, 0, 1, 1, 1]
    assert panel.history[-1].groups[0]["generation"] == 5
    assert sorted(assignments["range"].column("count")) == [2, 4]
    assert assignments["roundrobin"].column("count") == [3, 3]
    assert listener_events["range"][:2] == [("assigned", [0, 1, 2, 3]), ("revoked", [0, 1, 2, 3])]
    assert kip848_log.events == [("assigned", [0, 1, 2, 3]), ("revoked", [2, 3]), ("assigned", [])]
    assert kip848_epochs == {"a": 3, "b": 3}
    assert listener_events["cooperative-sticky"][1][0] == "revoked" and len(listener_events["cooperative-sticky"][1][1]) == 2
    assert generations == {"range": 2, "cooperative-sticky": 3}
    assert takeover_ms["close"] <= 3_500 and takeover_ms["crash"] >= 45_000
    removed = stuck_trial.journal.of_kind("group.member.removed")
    assert removed and removed[-1].fields["reason"] == "consumer poll timeout has expired"
    assert {r["owner"] for r in group_table(stuck_trial, "g").rows} == {"consumer-1"}
    assert generation_before == generation_after and owned_before == assignment_table([a, b]).column("partitions")
    # The served group of two (absent where the cell was skipped, in the browser edition).
    shares = ns.get("shares")
    if shares is not None:
        assert sorted(len(ps) for ps in shares.values()) == [3, 3], shares
    assert all(q.check(q.answer) for q in (q1, q2, q3))
    checked("09", idle=sum(1 for v in owned.values() if not v), range_counts=sorted(assignments["range"].column("count")),
            roundrobin_counts=assignments["roundrobin"].column("count"), generations=generations,
            takeover_ms=takeover_ms, poll_timeout_removed=True, static_same_generation=generation_before == generation_after)


def lesson_10(ns: Namespace) -> None:
    """Lesson 10: Offsets and delivery semantics."""
    no_offset = ns["no_offset"]
    coordinator = ns["coordinator"]
    refused = ns["refused"]
    done_by_first = ns["done_by_first"]
    done_by_second = ns["done_by_second"]
    done_before_crash = ns["done_before_crash"]
    repeated = ns["repeated"]
    replayed = ns["replayed"]
    verdicts = ns["verdicts"]
    cluster = ns["cluster"]
    q1 = ns["q1"]
    q2 = ns["q2"]
    q3 = ns["q3"]
    commits = ns["commits"]
    assert 0 < len(done_by_first) <= 10 and len(done_by_first) + len(done_by_second) == 30
    assert not set(done_by_first) & set(done_by_second)
    assert coordinator is not None and len([c for c in commits if c["key"]["type"] == 1]) >= 3
    assert len(done_before_crash) == 16 and len(repeated) == 4
    lost = {s: len(v.report.lost) for (s, _), v in verdicts.items()}
    dups = {s: sum(n - 1 for _, n in v.report.duplicated) for (s, _), v in verdicts.items()}
    assert lost["at-most-once"] > 0 and dups["at-most-once"] == 0
    assert dups["at-least-once"] > 0 and lost["at-least-once"] == 0
    assert lost["exactly-once"] == dups["exactly-once"] == 0 and lost["idempotent-sink"] == dups["idempotent-sink"] == 0
    assert refused == "NonEmptyGroupError" and len(replayed) == 6
    assert no_offset == "NoOffsetForPartitionError"
    assert cluster.journal.of_kind("offsets.expired") and cluster.admin().list_consumer_group_offsets("billing") == {}
    assert all(q.check(q.answer) for q in (q1, q2, q3))
    checked("10", resumed=len(done_by_second), auto_commit_repeats=len(repeated), lost=lost, duplicated=dups,
            reset_refused=refused, replayed=len(replayed), no_offset=no_offset, expired=True)


def lesson_11(ns: Namespace) -> None:
    """Lesson 11: Storage: segments, indexes, retention and compaction."""
    flush_settings = ns["flush_settings"]
    files = ns["files"]
    history = ns["history"]
    after = ns["after"]
    final = ns["final"]
    q1 = ns["q1"]
    q2 = ns["q2"]
    q3 = ns["q3"]
    assert [f for f in files if f.endswith(".log")] == ["00000000000000000000.log", "00000000000000000010.log",
                                                         "00000000000000000020.log"]
    segment_files = [f for f in files if f.split(".")[-1] in ("log", "index", "timeindex")]
    assert len(segment_files) == 9 and set(files) - set(segment_files) <= {"partition.metadata", "leader-epoch-checkpoint"}
    kept = [h["records kept"] for h in history]
    assert kept[:4] == [15, 30, 45, 60] and all(60 <= k <= 80 for k in kept[4:])
    starts = [h["log start"] for h in history]
    assert starts == sorted(starts) and starts[-1] > 0
    survivors = {k: v for _, k, v in after}
    assert survivors["alice"] == "Aachen" and survivors["bob"] == "Bremen" and survivors["carol"] is None
    assert [o for o, _, _ in after] == [6, 7, 8, 9, 10, 11, 12, 13, 14]
    assert "carol" not in {k for _, k, _ in final} and {k: v for _, k, v in final}["alice"] == "Arnhem"
    assert flush_settings == {"flush.messages": 2**63 - 1, "flush.ms": 2**63 - 1}
    assert all(q.check(q.answer) for q in (q1, q2, q3))
    checked("11", segment_files=[f for f in files if f.endswith(".log")], kept=kept,
            after_compaction=[o for o, _, _ in after], tombstone_gone="carol" not in {k for _, k, _ in final})


def lesson_12(ns: Namespace) -> None:
    """Lesson 12: The controller: KRaft and the metadata log."""
    outcomes = ns["outcomes"]
    first = ns["first"]
    second = ns["second"]
    snapshot = ns["snapshot"]
    log_records = ns["log_records"]
    cluster = ns["cluster"]
    q1 = ns["q1"]
    q2 = ns["q2"]
    q3 = ns["q3"]
    q4 = ns["q4"]
    describe_status = ns["describe_status"]
    describe_replication = ns["describe_replication"]
    kinds = [e.kind for e in cluster.journal]
    assert first == 1 and second not in (None, first)
    lost_at = next(e.time_ms for e in cluster.journal if e.kind == "controller.lost")
    elected_at = next(e.time_ms for e in cluster.journal if e.kind == "controller.elected" and e.fields["controller"] == second)
    assert 2_000 <= elected_at - lost_at <= 3_000
    assert "controller.unavailable" in kinds
    assert len(snapshot) < log_records // 2
    assert not any(r.type == "TopicRecord" and r.fields["name"].startswith("scratch") for r in snapshot)
    assert outcomes == {(1, 0): "written", (1, 1): "written", (1, 2): "written",
                        ("all", 0): "written", ("all", 1): "KafkaTimeoutError", ("all", 2): "KafkaTimeoutError"}
    assert cluster.active_controller == first and cluster.controller.quorum.term == 3
    status = dict(line.split(":", 1) for line in describe_status(cluster).splitlines())
    assert status["LeaderId"].strip() == "1" and '"id": 4' in status["CurrentObservers"]
    replication = {line.split()[0]: line.split()[1:] for line in describe_replication(cluster).splitlines()[1:]}
    assert replication["3"][0] == "-1" and replication["4"][2] == "Observer" and replication["1"][2] == "Leader"
    assert all(q.check(q.answer) for q in (q1, q2, q3, q4))
    checked("12", first=first, second=second, failover_ms=elected_at - lost_at,
            quorum_lost="controller.unavailable" in kinds, acks1_live_leader=outcomes[(1, 2)],
            acks_all=[outcomes[("all", p)] for p in range(3)], final_term=cluster.controller.quorum.term,
            snapshot_records=len(snapshot), log_records=log_records,
            observers=[r for r, v in replication.items() if v[2] == "Observer"])


def lesson_13(ns: Namespace) -> None:
    """Lesson 13: The wider ecosystem: Connect, Schema Registry, Streams, MirrorMaker."""
    restored_equal = ns["restored_equal"]
    copied = ns["copied"]
    first_run = ns["first_run"]
    resumed_at = ns["resumed_at"]
    second_run = ns["second_run"]
    in_topic = ns["in_topic"]
    written_before_crash = ns["written_before_crash"]
    read_on_primary = ns["read_on_primary"]
    read_on_backup = ns["read_on_backup"]
    values = ns["values"]
    copy_lines = ns["copy_lines"]
    encoded = ns["encoded"]
    outcomes = ns["outcomes"]
    as_v1 = ns["as_v1"]
    before_crash = ns["before_crash"]
    replacement = ns["replacement"]
    after = ns["after"]
    as_v2 = ns["as_v2"]
    q1 = ns["q1"]
    q2 = ns["q2"]
    q3 = ns["q3"]
    q4 = ns["q4"]
    stored_offsets = ns["stored_offsets"]
    assert (first_run, resumed_at, second_run, in_topic) == (3, 55, 1, 4)
    assert list(stored_offsets.values()) == [{"position": 72}] and json.loads(list(stored_offsets)[0])[0] == "orders-file-source"
    assert json.loads(values[0]) == {"schema": {"type": "string", "optional": False}, "payload": "order 1: 2 x tea"}
    assert len(set(copy_lines)) == 4 and len(copy_lines) == 4 + written_before_crash and written_before_crash > 0
    assert encoded[:5] == b"\x00\x00\x00\x00\x01" and len(encoded) == 11
    assert outcomes["currency with a default"] == "registered" and outcomes["coupon without a default"].startswith("refused")
    assert as_v2[0]["currency"] == "EUR" and as_v2[1]["currency"] == "USD" and "currency" not in as_v1[1]
    assert restored_equal and before_crash["cat"] == 4 and replacement.restored >= len(before_crash) and after["the"] == 5 and after["end"] == 1
    assert copied == 9
    twice = set(read_on_primary) & set(read_on_backup)
    never = 11 - len(set(read_on_primary) | set(read_on_backup))
    assert not twice and never == 2 and len(read_on_primary) + len(read_on_backup) == 9
    assert all(q.check(q.answer) for q in (q1, q2, q3, q4))
    checked("13", source_runs=[first_run, second_run], in_topic=in_topic, resumed_at=resumed_at,
            sink_lines=len(copy_lines), sink_distinct=len(set(copy_lines)), wire_header=list(encoded[:5]),
            schema_outcomes={k: v.split(":")[0] for k, v in outcomes.items()}, default_filled=as_v2[0]["currency"],
            restored_same=restored_equal,
            counts_after={w: after[w] for w in ("the", "cat", "end")},
            mirrored=copied, dr_twice=len(twice), dr_never=never)


def lesson_14(ns: Namespace) -> None:
    """Lesson 14: Operating a cluster: configs, rolling restarts, moving partitions, the quorum."""
    exit_codes = ns["exit_codes"]
    payments_retention = ns["payments_retention"]
    audit_retention = ns["audit_retention"]
    watch = ns["watch"]
    m = ns["m"]
    throttled_states = ns["throttled_states"]
    throttle_left = ns["throttle_left"]
    new_leader = ns["new_leader"]
    new_epoch = ns["new_epoch"]
    throttle_set = ns["throttle_set"]
    impatient = ns["impatient"]
    unthrottled_states = ns["unthrottled_states"]
    admin = ns["admin"]
    first_leader = ns["first_leader"]
    first_epoch = ns["first_epoch"]
    cluster = ns["cluster"]
    q1 = ns["q1"]
    q2 = ns["q2"]
    q3 = ns["q3"]
    assert exit_codes == [0, 0, 0, 0, 0]
    assert payments_retention == 86_400_000 and audit_retention == 259_200_000
    assert impatient["refused"] > 0 and impatient["lost"] == 0 and impatient["failed"] == 0
    urp = watch.column(m.URP)
    first_stop = next(i for i, s in enumerate(watch.samples) if s.label == "stop broker 1")
    last_start = next(i for i, s in enumerate(watch.samples) if s.label == "start broker 3")
    assert all(v > 0 for v in urp[first_stop:last_start]) and urp[-1] == 0
    moved = {k: throttled_states[-1][k] for k in ("replicas", "isr", "leader")}
    adding_seen = [s["ms"] for s in throttled_states if s["adding"] == [4] and s["removing"] == [1]]
    move_ms = [unthrottled_states[-1]["ms"], throttled_states[-1]["ms"]]
    assert moved == {"replicas": [2, 3, 4], "isr": [2, 3, 4], "leader": 2} and adding_seen[0] == 0
    assert unthrottled_states[-1]["replicas"] == [2, 3, 4] and move_ms[0] < move_ms[1]
    assert admin.list_partition_reassignments() == {}
    assert len(throttle_set) == 4 and throttle_left == []
    assert new_leader not in (None, first_leader) and new_epoch == first_epoch + 1
    assert cluster.controller.quorum.leader is not None
    assert all(q.check(q.answer) for q in (q1, q2, q3))
    checked("14", exit_codes=exit_codes, retention=[payments_retention, audit_retention],
            refused=impatient["refused"], lost=impatient["lost"], failed=impatient["failed"],
            leaders=[first_leader, new_leader], epochs=[first_epoch, new_epoch],
            moved=moved, adding_seen=adding_seen, move_ms=move_ms, throttle_set=throttle_set, throttle_left=throttle_left)


def lesson_15(ns: Namespace) -> None:
    """Lesson 15: Monitoring: the numbers a team watches."""
    urp_at = ns["urp_at"]
    crashed_at = ns["crashed_at"]
    slowest = ns["slowest"]
    min_isr_seen = ns["min_isr_seen"]
    lag_one_consumer = ns["lag_one_consumer"]
    m = ns["m"]
    cluster = ns["cluster"]
    watch = ns["watch"]
    lag = ns["lag"]
    dashboard = ns["dashboard"]
    helper = ns["helper"]
    totals = ns["totals"]
    scraped = ns["scraped"]
    q1 = ns["q1"]
    q2 = ns["q2"]
    q3 = ns["q3"]
    assert 8_000 <= urp_at - crashed_at <= 10_000
    assert slowest > 1_000 and min_isr_seen == 3 and not watch.failed_sends
    assert max(lag) > lag_one_consumer > 0 and lag[-1] < max(lag)
    assert dashboard.assignment() and helper.assignment()
    final = m.totals(m.cluster_metrics(cluster))
    assert (final[m.URP], final[m.UNDER_MIN_ISR], final[m.OFFLINE_PARTITIONS], final[m.ACTIVE_CONTROLLER]) == (0, 0, 0, 1)
    assert totals[m.ACTIVE_CONTROLLER] == 1 and len(scraped["nodes"]) == 6
    assert all(q.check(q.answer) for q in (q1, q2, q3))
    checked("15", urp_delay_ms=urp_at - crashed_at, slowest_produce_ms=round(slowest),
            under_min_isr=min_isr_seen, failed_sends=len(watch.failed_sends),
            lag=[round(lag_one_consumer), round(max(lag)), round(lag[-1])],
            final=[final[m.URP], final[m.UNDER_MIN_ISR], final[m.OFFLINE_PARTITIONS], final[m.ACTIVE_CONTROLLER]],
            scraped_nodes=len(scraped["nodes"]))


def lesson_16(ns: Namespace) -> None:
    """Lesson 16: Failures in applications: poison pills, retries, dead letters and tests."""
    app_waits = ns["app_waits"]
    after_seek = ns["after_seek"]
    waits_for_8 = ns["waits_for_8"]
    pytest_summary = ns["pytest_summary"]
    result = ns["result"]
    pricing = ns["pricing"]
    parked = ns["parked"]
    valid = ns["valid"]
    polls = ns["polls"]
    q1 = ns["q1"]
    q2 = ns["q2"]
    q3 = ns["q3"]
    handled = ns["handled"]
    assert polls[0]["returned offsets"] == [0, 1] and polls[0]["position after"] == 2
    assert [p["error"] for p in polls[1:]] == ["JSONDecodeError", "JSONDecodeError"]
    assert [p["position after"] for p in polls[1:]] == [2, 2] and after_seek == [3, 4]
    assert pricing.calls == {7: 3, 8: 5} and waits_for_8 == [0.1, 0.2, 0.4, 0.8]
    assert [h.outcome for h in handled].count("parked") == 3 == len(parked) and len(valid) == 5
    assert [r.value for r in parked] == [b"oops, not json", b'{"id": 6}', b'{"id": 8, "amount": 12}']
    assert app_waits == [0.1, 0.2] + [0.1, 0.2, 0.4, 0.8]
    assert pytest_summary.startswith("5 passed"), result.stdout + result.stderr
    assert all(q.check(q.answer) for q in (q1, q2, q3))
    checked("16", poison_polls=[p["error"] for p in polls], stuck_at=polls[-1]["position after"],
            after_seek=after_seek, calls=[pricing.calls[7], pricing.calls[8]],
            parked=[h.offset for h in handled if h.outcome == "parked"], valid=len(valid),
            pytest=pytest_summary.split(" in ")[0])


def lesson_17(ns: Namespace) -> None:
    """Lesson 17: The new consumer group protocol (KIP-848)."""
    timelines = ns["timelines"]
    crash_rows = ns["crash_rows"]
    received = ns["received"]
    mid_change = ns["mid_change"]
    epochs = ns["epochs"]
    timeline_summary = ns["timeline_summary"]
    after = ns["after"]
    q1 = ns["q1"]
    q2 = ns["q2"]
    q3 = ns["q3"]
    before = ns["before"]
    shares = ns["shares"]
    # c4 reached the new epoch but waits for c2's partition; c1 and c3 were never disturbed.
    c4 = next(m for m in mid_change["members"] if m["client_id"] == "c4")
    assert c4["epoch"] == mid_change["group_epoch"] and c4["assignment"] == [] and len(c4["target"]) == 1
    waiting_for = next(m["client_id"] for m in mid_change["members"] if c4["target"][0] in m["assignment"])
    assert waiting_for == "c2"
    untouched = sorted(n for n in ("c1", "c2", "c3") if after[n] == before[n])
    assert untouched == ["c1", "c3"] and len(after["c4"]) == 1
    assert any("revoking" in r["detail"] for r in epochs if r["member"] == "c2")
    by = {t["label"].split(" ")[2]: t for t in timelines}
    stopped = {k: t["stopped_at_once"] for k, t in by.items()}
    idle = {k: sum(t["idle_ms"].values()) for k, t in by.items()}
    assert stopped["eager"] == 6 and stopped["KIP-848"] <= 1 < stopped["cooperative"] < 6
    assert idle["eager"] > idle["cooperative"] > idle["KIP-848"]
    longest = {r["protocol"].split(" ")[2]: r["longest pause of one partition (s)"]
               for r in timeline_summary(timelines)}
    assert longest["cooperative"] > longest["eager"] > longest["KIP-848"]
    removed = [r for r in crash_rows if r["event"] == "member.removed"]
    assert [r["member"] for r in removed] == ["c4"] and 40 <= removed[0]["time (s)"] <= 45
    taken_over = [r for r in crash_rows if r["event"] == "member.epoch" and "owns" in r["detail"]
                  and c4["target"][0].split("-")[1] in r["detail"].split("owns ")[1].split(";")[0].split(",")]
    assert taken_over and taken_over[0]["time (s)"] <= 51
    assert sorted(p for ps in shares.values() for p in ps) == list(range(6)) and received >= 30
    assert all(q.check(q.answer) for q in (q1, q2, q3))
    checked("17", removed_after_s=removed[0]["time (s)"], waiting_for=waiting_for, untouched=untouched, stopped_at_once=stopped,
            idle_ms=idle, longest_pause_s=longest, shares=sorted(len(ps) for ps in shares.values()), received=received)


def lesson_18(ns: Namespace) -> None:
    """Lesson 18: Share groups: queues on Kafka (KIP-932)."""
    after_acks = ns["after_acks"]
    deliveries = ns["deliveries"]
    attempts = ns["attempts"]
    poison_state = ns["poison_state"]
    accepted = ns["accepted"]
    again = ns["again"]
    meanwhile = ns["meanwhile"]
    retried = ns["retried"]
    last_try = ns["last_try"]
    real_deliveries = ns["real_deliveries"]
    q1 = ns["q1"]
    q2 = ns["q2"]
    q3 = ns["q3"]
    polled = ns["polled"]
    held = ns["held"]
    assert [r.offset for r in polled["w1"]] == [0, 1, 2] and [r.offset for r in polled["w2"]] == [3, 4, 5]
    states = {r["offset"]: r["state"] for r in after_acks["records"]}
    assert after_acks["start_offset"] == 1
    assert states == {1: "AVAILABLE", 2: "ARCHIVED", 3: "ACKNOWLEDGED", 4: "ACQUIRED", 5: "ACKNOWLEDGED"}
    assert [(r.offset, r.delivery_count) for r in again][0] == (1, 2)
    assert next(r for r in held if r["offset"] == 4)["held by"] == "w2"
    assert 4 not in [r.offset for r in meanwhile] and (4, 2) in [(r.offset, r.delivery_count) for r in retried]
    assert [c for o, c in attempts if o == 1] == [1, 2, 3, 4, 5]
    assert poison_state["start_offset"] == 3 and poison_state["records"] == []
    assert [(r["offset"], r["state"], r["delivery_count"]) for r in last_try["records"]] == [
        (1, "ACQUIRED", 5), (2, "ACKNOWLEDGED", 1)]
    order = [o for _, o, _ in deliveries]
    assert order != sorted(order)
    assert len(accepted) == 12 and [d[2] for d in real_deliveries if d[1] == 3] == [1, 2]
    assert all(q.check(q.answer) for q in (q1, q2, q3))
    checked("18", first_polls=[[r.offset for r in polled[n]] for n in ("w1", "w2")],
            spso_after_acks=after_acks["start_offset"], states=states,
            released_again=[(r.offset, r.delivery_count) for r in again][0],
            lock_retry=(4, 2) in [(r.offset, r.delivery_count) for r in retried],
            poison_deliveries=[c for o, c in attempts if o == 1], delivery_order=order,
            real_accepted=len(accepted))


def lesson_19(ns: Namespace) -> None:
    """Lesson 19: Security: listeners, SASL, TLS, ACLs and quotas."""
    served_refusal = ns["served_refusal"]
    served_read = ns["served_read"]
    first_try = ns["first_try"]
    alice_read = ns["alice_read"]
    wrong_password = ns["wrong_password"]
    acl = ns["acl"]
    ask = ns["ask"]
    second_try = ns["second_try"]
    plain_login = ns["plain_login"]
    scram_login = ns["scram_login"]
    cluster = ns["cluster"]
    q1 = ns["q1"]
    q2 = ns["q2"]
    q3 = ns["q3"]
    matrix = ns["matrix"]
    bob_reads_audit = ns["bob_reads_audit"]
    assert type(first_try).__name__ == "GroupAuthorizationFailedError"
    assert type(second_try).__name__ == "TopicAuthorizationFailedError" and second_try.args[0] == {"orders-eu"}
    assert sorted({t for t, _ in alice_read}) == ["orders-eu", "orders-us"] and len(alice_read) == 4
    assert plain_login.rows[0]["message"] == "alice\\x00alice\\x00alice-secret"
    assert not any("alice-secret" in r["message"] for r in scram_login.rows) and len(scram_login.rows) == 4
    assert type(wrong_password).__name__ == "SaslAuthenticationFailedError"
    cells = {p: dict(zip([r["name"] for r in matrix["resources"]], row)) for p, row in matrix["cells"].items()}
    alice_internal = {a["operation"]: a for a in cells["User:alice"]["orders-internal"]}
    assert not alice_internal["READ"]["allowed"] and alice_internal["READ"]["rule"] == acl.DENIED
    assert alice_internal["DESCRIBE"]["allowed"]
    assert all(a["allowed"] for row in cells["User:admin"].values() for a in row)
    assert not any(a["allowed"] for row in cells["User:bob"].values() for a in row)
    assert [d.allowed for d in bob_reads_audit.values()] == [True, False]
    assert ask(cluster.authorizer, "User:alice", "READ", "TOPIC", "orders-2027").startswith("User:alice may READ")
    assert served_refusal == "GroupAuthorizationFailedError" and served_read == [b"order-1"]
    assert all(q.check(q.answer) for q in (q1, q2, q3))
    checked("19", first_refusal=type(first_try).__name__, second_refusal=type(second_try).__name__,
            alice_topics=sorted({t for t, _ in alice_read}), plain_sends_password=True,
            deny_wins=not alice_internal["READ"]["allowed"], bob_allowed=0,
            open_then_closed=[d.allowed for d in bob_reads_audit.values()],
            served=[served_refusal, len(served_read)])


def lesson_20(ns: Namespace) -> None:
    """Lesson 20: Tiered storage: old segments in a remote store (KIP-405)."""
    first = ns["first"]
    replayed = ns["replayed"]
    during = ns["during"]
    samples = ns["samples"]
    refusals = ns["refusals"]
    answers = ns["answers"]
    q1 = ns["q1"]
    q2 = ns["q2"]
    q3 = ns["q3"]
    minute6 = first[-1]
    assert (minute6.log_start, minute6.local_start, minute6.highest_remote, minute6.log_end) == (0, 24, 29, 36)
    assert [a.offset for a in answers] == [0, 24, 29, 36]
    assert replayed == list(range(36))
    down = [s for s in samples if not s.store_up]
    assert [s.highest_remote for s in down] == [29, 29, 29] and [s.lag_segments for s in down] == [1, 2, 3]
    assert all(s.local_start == 30 for s in down)
    assert samples[9].lag_segments == 0 and samples[9].local_start == 48
    assert (samples[10].log_start, samples[-1].log_start) == (6, 24)
    assert during == {24: "UNKNOWN_SERVER_ERROR", 72: "NONE"}
    assert set(refusals) == {"local over total", "compacted"}
    assert all(q.check(q.answer) for q in (q1, q2, q3))
    checked("20", minute6=[minute6.log_start, minute6.local_start, minute6.highest_remote, minute6.log_end],
            replayed=len(replayed), outage_local_start=[s.local_start for s in down],
            outage_lag=[s.lag_segments for s in down], log_start_after=[samples[10].log_start, samples[-1].log_start],
            during_outage=during, refused=sorted(refusals))


def lesson_21(ns: Namespace) -> None:
    """Lesson 21: Stream processing in depth: windows, late records, joins and exactly-once."""
    copartition_error = ns["copartition_error"]
    joins = ns["joins"]
    hopping = ns["hopping"]
    fleet = ns["fleet"]
    joined = ns["joined"]
    misjoined = ns["misjoined"]
    pairs = ns["pairs"]
    changelog = ns["changelog"]
    graces = ns["graces"]
    q1 = ns["q1"]
    q2 = ns["q2"]
    q3 = ns["q3"]
    no_grace = ns["no_grace"]
    sessions = ns["sessions"]
    parked = ns["parked"]
    start = ns["start"]
    reports = ns["reports"]
    dropped_by_grace = {g: row["dropped"] for g, row in graces.items()}
    assert dropped_by_grace == {0: 2, 30: 1, 60: 0}
    assert [n for (k, s, e), n in no_grace.counts("truck-01").items()] == [5, 5, 6]
    assert sorted((r["timestamp"] - start) // 10_000 * 10 for r in no_grace.dropped) == [50, 110]
    hop_total = sum(n for (k, s, e), n in hopping.counts("truck-01").items())
    assert hop_total == 3 * len([r for r in reports if r.truck_id == "truck-01"]) - 1
    late_hop = [r for r in hopping.records if r["dropped"]]
    assert [(len(r["dropped"]), len(r["counted"])) for r in late_hop] == [(1, 2)]
    truck1_sessions = list(sessions.counts("truck-01").values())
    assert len(truck1_sessions) == 2 and sum(truck1_sessions) == len(
        [r for r in parked if r.truck_id == "truck-01"])
    assert len(joined["joined"]) == len(fleet) and not joined["missed"]
    assert len(misjoined["missed"]) > len(misjoined["joined"])
    assert copartition_error(joins, "truck-positions", "drivers") is None
    assert "drivers-v2=4, truck-positions=3" in copartition_error(joins, "truck-positions", "drivers-v2")
    assert [key for key, left, right in pairs] == ["truck-02"]
    assert changelog["records"] == 54 and changelog["cleanup.policy"] == "compact,delete"
    assert all(q.check(q.answer) for q in (q1, q2, q3))
    checked("21", dropped_by_grace={str(g): n for g, n in dropped_by_grace.items()},
            hop_total=hop_total, sessions=truck1_sessions, joined=len(joined["joined"]),
            misjoined=len(misjoined["joined"]), pairs=[key for key, left, right in pairs],
            changelog=changelog["records"])


def lesson_22(ns: Namespace) -> None:
    """Lesson 22: Authentication in practice: certificates, SCRAM, tokens, principals and quotas."""
    without_certificate = ns["without_certificate"]
    q1 = ns["q1"]
    q2 = ns["q2"]
    q3 = ns["q3"]
    q4 = ns["q4"]
    short_names = ns["short_names"]
    over_tls = ns["over_tls"]
    handshakes = ns["handshakes"]
    mapped = ns["mapped"]
    logins = ns["logins"]
    throttles = ns["throttles"]
    alice_refused = ns["alice_refused"]
    tokens = ns["tokens"]
    served = ns["served"]
    token = ns["token"]
    by_token = ns["by_token"]
    assert handshakes["with the course CA"]["version"] == "TLSv1.3" and over_tls.offset == 0
    assert "CERTIFICATE_VERIFY_FAILED" in handshakes["with the system's CAs"]["error"]
    assert "error" in without_certificate and type(alice_refused).__name__ == "TopicAuthorizationFailedError"
    assert [m["with DEFAULT"] for m in mapped] == ["CN=localhost,OU=brokers,O=minikafka", "alice", "bob",
                                                   "CN=billing,OU=services,O=minikafka"]
    assert [m["without DEFAULT"].startswith("refused") for m in mapped] == [True, False, False, True]
    assert short_names["alice"].startswith("wrote") and short_names["bob"] == "TopicAuthorizationFailedError"
    assert logins[0]["producing to orders"].startswith("wrote")
    assert "ClusterAuthorizationFailedError" in logins[1]["producing to orders"]
    producer_ms = [ms for _, ms in throttles["producer"]]
    consumer_ms = [ms for _, ms in throttles["consumer"]]
    assert producer_ms[:3] == [0, 0, 0] and max(producer_ms) > 0 and max(consumer_ms) > 0
    assert list(tokens.values())[0].startswith("wrote")
    assert list(tokens.values())[1] == '{"status":"invalid_token"}'
    assert token.owner == "User:alice" and (token.expires_in_h, token.lifetime_h) == (24, 168)
    assert by_token.startswith("wrote")
    throttled = {row["client"]: row["throttle-time-max (ms)"] for row in served}
    assert 0 < throttled["truck-loader"] < throttled["truck-reader"]
    assert all(q.check(q.answer) for q in (q1, q2, q3, q4))
    checked("22", tls=[sorted(a) for a in handshakes.values()], short_names=short_names,
            oauthbearer=list(tokens.values()), served_throttle_ms=throttled,
            delegation_token=[token.owner, token.expires_in_h, token.lifetime_h, by_token.split()[0]],
            logins=[row["producing to orders"].split()[-1] for row in logins],
            first_producer_throttle_s=next(s for s, ms in throttles["producer"] if ms),
            producer_throttled_s=sum(1 for ms in producer_ms if ms), consumer_throttled_s=sum(1 for ms in consumer_ms if ms))


def lesson_23(ns: Namespace) -> None:
    """Lesson 23: Transactions in operation."""
    after_timeout = ns["after_timeout"]
    cleared_reads = ns["cleared_reads"]
    tv2_error = ns["tv2_error"]
    served_reads = ns["served_reads"]
    stuck_committed = ns["stuck_committed"]
    late_error = ns["late_error"]
    hanging_reads = ns["hanging_reads"]
    stuck_uncommitted = ns["stuck_uncommitted"]
    timed_out = ns["timed_out"]
    hanging = ns["hanging"]
    verified_error = ns["verified_error"]
    q1 = ns["q1"]
    q2 = ns["q2"]
    q3 = ns["q3"]
    assert stuck_committed == [] and len(stuck_uncommitted) == 2
    assert after_timeout == [b"refund-1"]
    assert timed_out.state.value == "CompleteAbort" and timed_out.producer_epoch == 1
    assert late_error == 0 and hanging_reads == [] and len(hanging) == 1
    assert (hanging[0].partition, hanging[0].start_offset) == (1, 0)
    assert cleared_reads == [b"pay-1", b"pay-2"]
    assert verified_error == 48 and ns["v"].describe_topic("payments").partitions[1].high_watermark == 0
    assert tv2_error == 47
    assert served_reads == [b"refund-1"]
    assert all(q.check(q.answer) for q in (q1, q2, q3))
    checked("23", stuck_reads=len(stuck_committed), after_timeout=len(after_timeout),
            hanging=len(hanging), cleared=len(cleared_reads), verified_error=verified_error,
            tv2_error=tv2_error,
            served_reads=len(served_reads))


OUTCOMES: dict[str, Callable[[Namespace], None]] = {
    "00": lesson_00,
    "01": lesson_01,
    "02": lesson_02,
    "03": lesson_03,
    "04": lesson_04,
    "05": lesson_05,
    "06": lesson_06,
    "07": lesson_07,
    "08": lesson_08,
    "09": lesson_09,
    "10": lesson_10,
    "11": lesson_11,
    "12": lesson_12,
    "13": lesson_13,
    "14": lesson_14,
    "15": lesson_15,
    "16": lesson_16,
    "17": lesson_17,
    "18": lesson_18,
    "19": lesson_19,
    "20": lesson_20,
    "21": lesson_21,
    "22": lesson_22,
    "23": lesson_23,
}
