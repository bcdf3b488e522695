"""The lesson pictures of minikafka.viz (key placement, a transaction, one batch, a
consumer's offsets over time, eager vs cooperative rebalances, the ecosystem pipeline):
the data each reads from a seeded scenario, and what its picture must say. Also: every
lesson draws at least one picture or panel."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from lesson_pictures import picture_cells
from test_viz import node_label, rows, text

from minikafka import AcknowledgeType
from minikafka.client.partitioner import partition_for_key
from minikafka.cluster import Cluster
from minikafka.course.connectors import SinkConnector, SourceConnector
from minikafka.course.group_protocols import (
    protocol_timelines,
    timeline_summary,
    unowned_intervals,
)
from minikafka.course.reading import read_topic
from minikafka.course.rebalance import rebalance_timeline
from minikafka.course.share_groups import share_partition_state, share_table_rows
from minikafka.course.trucks import truck_reports
from minikafka.viz import (
    acl_matrix,
    acl_matrix_view,
    batch_anatomy,
    batch_view,
    has_dot,
    key_placement,
    key_placement_view,
    pipeline_state,
    pipeline_view,
    poll_commit_timeline,
    position_timeline_view,
    protocol_timeline_view,
    rebalance_view,
    share_partition_view,
    to_svg,
    transaction_state,
    transaction_view,
)
from minikafka.viz.protocols import slot_owners
from minikafka.viz.sharepartition import window_cells

LESSONS = sorted((Path(__file__).resolve().parent.parent / "lessons").glob("[0-9][0-9]-*.ipynb"))
needs_dot = pytest.mark.skipif(not has_dot(), reason="Graphviz's dot is not installed")


def edges(graph) -> list[str]:
    return [line.strip() for line in graph.body if " -> " in line]


# -- lesson 03: keys -> murmur2 -> partitions ------------------------------------------

@pytest.fixture(scope="module")
def trucks() -> Cluster:
    c = Cluster(brokers=3, seed=3)
    c.create_topic("trucks_gps", partitions=6, replication_factor=3)
    p = c.producer()
    for key, value in truck_reports(trucks=20, reports=3):
        p.send("trucks_gps", key=key, value=value)
    p.flush()
    return c


def test_key_placement_reads_where_each_key_is_stored(trucks: Cluster) -> None:
    placement = key_placement(trucks, "trucks_gps")
    keys = {e["key"]: e for e in placement["keys"]}
    assert len(keys) == 20
    assert all(len(e["offsets"]) == 3 for e in keys.values())
    assert all(e["stored"] == e["predicted"] == partition_for_key(e["key"].encode(), 6)
               for e in keys.values())
    # The lesson's worked example: truck-01's hash is negative as a Java int.
    assert keys["truck-01"]["murmur2"] == -681923822 and keys["truck-01"]["stored"] == 0


def test_key_placement_view_draws_every_key_and_partition(trucks: Cluster) -> None:
    placement = key_placement(trucks, "trucks_gps")
    g = key_placement_view(placement)
    keys = text(node_label(g, "keys"))
    assert "truck-01 -681,923,822 1,465,559,826 → 0" in keys
    for p in range(6):
        label = text(node_label(g, f"p{p}"))
        assert label.startswith(f"partition {p} leader broker")
    assert len([e for e in edges(g) if e.startswith("keys:")]) == 20
    stored_in_5 = [e["key"] for e in placement["keys"] if e["stored"] == 5]
    assert all(k in text(node_label(g, "p5")) for k in stored_in_5)
    g = key_placement_view(placement, max_keys=5)
    assert "… and 15 more keys" in text(node_label(g, "keys"))


# -- lesson 06: the transaction coordinator, markers and the LSO -----------------------

@pytest.fixture()
def billing() -> tuple[Cluster, object]:
    c = Cluster(brokers=3, seed=11, controllers=[1001, 1002, 1003])
    c.create_topic("orders", partitions=2, replication_factor=3)
    c.create_topic("invoices", partitions=1, replication_factor=3)
    producer = c.producer(transactional_id="billing-1")
    producer.init_transactions()
    for n in (1, 2):
        producer.begin_transaction()
        producer.send("orders", key=b"o%d" % n, value=b"order")
        producer.send("invoices", key=b"o%d" % n, value=b"invoice")
        if n == 1:
            producer.commit_transaction()
    producer.flush()  # transaction 2 written, still open
    return c, producer


def _strip_text(g, topic_partition: str) -> str:
    for line in g.body:
        if "[label=<" in line and f">{topic_partition}<" in line:
            return text(re.search(r"label=<(.*)>", line, re.S).group(1))
    raise AssertionError(topic_partition)


def test_transaction_view_shows_the_open_transaction_and_its_lso(billing) -> None:
    c, _ = billing
    state = transaction_state(c, "billing-1", ["orders", "invoices"])
    # The commit of transaction 1 bumped the epoch (transaction version 2).
    assert state["state"] == "Ongoing" and state["producer_epoch"] == 1
    assert state["partitions"] == ["invoices-0", "orders-0"]
    invoices = state["logs"][-1]
    assert (invoices["last_stable_offset"], invoices["high_watermark"]) == (2, 3)
    g = transaction_view(state)
    coordinator = text(node_label(g, "coordinator"))
    assert "transactional.id billing-1" in coordinator and "state Ongoing" in coordinator
    assert "LSO ▼ HW ▼" in _strip_text(g, "invoices-0")
    # offset 0 committed, 1 the commit marker, 2 open
    assert "0 o1 1 ✦ 2 o2 next" in _strip_text(g, "invoices-0")
    marker_edges = [e for e in edges(g) if e.startswith("coordinator") and "invis" not in e]
    assert len(marker_edges) == 2  # orders-0 and invoices-0, not orders-1
    assert "open transaction" in text(node_label(g, "legend"))


def test_after_an_abort_the_lso_catches_up_and_the_records_are_aborted(billing) -> None:
    c, producer = billing
    producer.abort_transaction()
    state = transaction_state(c, "billing-1", ["orders", "invoices"])
    assert state["state"] == "CompleteAbort" and state["partitions"] == []
    invoices = state["logs"][-1]
    # Nothing open any more: the LSO is the HW again (the abort marker is offset 3).
    assert invoices["last_stable_offset"] == invoices["high_watermark"]
    assert invoices["log_end_offset"] == 4
    g = transaction_view(state)
    legend = text(node_label(g, "legend"))
    assert "abort marker" in legend and "aborted" in legend
    assert "open transaction" not in legend
    assert not [e for e in edges(g) if e.startswith("coordinator") and "invis" not in e]


# -- lesson 07: one batch --------------------------------------------------------------

def test_batch_anatomy_of_a_compressed_batch() -> None:
    c = Cluster(brokers=3, seed=7)
    c.create_topic("trucks_gps", partitions=1, replication_factor=3)
    p = c.producer(linger_ms=100, compression_type="zstd")
    for key, value in truck_reports(trucks=10, reports=3):
        p.send("trucks_gps", key=key, value=value)
        c.advance(1)
    p.flush()
    anatomy = batch_anatomy(c, "trucks_gps", 0)
    header = anatomy["header"]
    assert header["recordsCount"] == 30 and header["lastOffsetDelta"] == 29
    assert header["attributes"] == "compression=zstd" and header["baseSequence"] == 0
    assert header["batchLength"] == anatomy["stored_bytes"] < anatomy["uncompressed_bytes"] / 3
    assert [r["offset_delta"] for r in anatomy["records"]] == list(range(30))
    assert anatomy["records"][5]["timestamp_delta"] == 5
    label = text(node_label(batch_view(anatomy), "batch"))
    assert "30 records, compression zstd" in label and "baseOffset 0" in label
    assert "… 24 more records" in label
    assert f"{anatomy['stored_bytes']:,} bytes" in label
    ratio = anatomy["uncompressed_bytes"] / anatomy["stored_bytes"]
    assert f"ratio {ratio:.2f}" in label


# -- lesson 08: position vs committed vs high watermark -------------------------------

def test_poll_commit_timeline_orders_its_three_numbers() -> None:
    samples = poll_commit_timeline()
    assert len(samples) == 8
    assert all((s.committed or 0) <= s.position <= s.high_watermark for s in samples)
    assert [s.committed for s in samples[:2]] == [None, None]
    for before, after in zip(samples, samples[1:]):
        if not after.action.endswith("commit"):
            assert after.committed == before.committed
        else:
            assert after.committed == after.position
    assert samples[-1].high_watermark - samples[-1].position > samples[0].high_watermark - \
        samples[0].position  # the consumer falls behind
    g = position_timeline_view(samples)
    label = node_label(g, "positions")
    assert len(rows(label)) >= 2 + len(samples)
    last = samples[-1]
    assert (f"C {last.committed} · P {last.position} · HW {last.high_watermark} · lag "
            f"{last.high_watermark - last.position}") in text(label)
    assert "no commit · P" in text(label)


# -- lesson 10: eager vs cooperative ---------------------------------------------------

def test_eager_stops_every_partition_cooperative_only_those_that_move() -> None:
    eager = rebalance_timeline("range")
    coop = rebalance_timeline("cooperative-sticky")
    assert eager["protocol"] == "eager" and coop["protocol"] == "cooperative"
    for tl in (eager, coop):
        assert tl["moments"][0]["owners"] == dict.fromkeys(range(4), "a")
        final = tl["moments"][-1]["owners"]
        assert sorted(final.values()) == ["a", "a", "b", "b"]
    assert any(all(o is None for o in m["owners"].values()) for m in eager["moments"])
    assert not any(all(o is None for o in m["owners"].values()) for m in coop["moments"])
    kept = [p for p, o in coop["moments"][-1]["owners"].items() if o == "a"]
    assert all(m["owners"][p] == "a" for m in coop["moments"] for p in kept)
    assert coop["moments"][1]["what"].startswith("a revoked")
    g = rebalance_view([eager, coop])
    first, second = text(node_label(g, "t0")), text(node_label(g, "t1"))
    assert first.startswith("range · eager protocol") and "nobody" in first
    assert "a revoked [0, 1, 2, 3]" in first
    assert f"read throughout: {kept}" in second


# -- lesson 17: one group under three protocols ----------------------------------------

@pytest.fixture(scope="module")
def protocol_runs() -> list[dict]:
    return protocol_timelines()


def test_protocol_timelines_follow_who_owns_what(protocol_runs: list[dict]) -> None:
    eager, coop, kip848 = protocol_runs
    for tl in protocol_runs:
        owners = [m["owners"] for m in tl["moments"]]
        # three members share all six partitions, c2 ends with none, c4 with some
        assert all(o is not None for o in owners[0].values()) and len(owners[0]) == 6
        assert "c2" not in owners[-1].values() and "c4" in owners[-1].values()
        assert all(o is not None for o in owners[-1].values())
        whats = [m["what"] for m in tl["moments"]]
        assert "c4 joins" in whats and "c2 leaves" in whats
        # idle time is the sum of the unowned stretches
        assert sum(tl["idle_ms"].values()) == sum(
            e - b for _, b, e in unowned_intervals(tl["moments"], tl["end_ms"]))
    assert eager["stopped_at_once"] == 6 and kip848["stopped_at_once"] == 1
    assert kip848["protocol"] == "consumer" and eager["protocol"] == "classic"
    # KIP-848: a partition that stays with its member is never unowned
    stays = [p for p in range(6) if len({m["owners"][p] for m in kip848["moments"]}) == 1]
    assert stays and all(kip848["idle_ms"][p] == 0 for p in stays)
    assert protocol_timelines() == protocol_runs  # seeded: the same story every time
    rows_ = {r["protocol"]: r for r in timeline_summary(protocol_runs)}
    assert rows_["classic · eager (range)"]["most partitions unread at once"] == 6


def test_protocol_timeline_view_marks_unread_slots(protocol_runs: list[dict]) -> None:
    eager, _, kip848 = protocol_runs
    assert any(None in row for row in slot_owners(eager, 500))
    kip_slots = slot_owners(kip848, 500)
    # at most one ✕ per time slot under KIP-848
    assert max(sum(row[i] is None for row in kip_slots) for i in range(len(kip_slots[0]))) == 1
    g = protocol_timeline_view(protocol_runs)
    first, third = text(node_label(g, "t0")), text(node_label(g, "t2"))
    assert first.startswith("classic · eager (range) at most 6 of 6 partitions unread")
    assert "consumer · KIP-848 (uniform) at most 1 of 6" in third
    assert "joins" in first and "leaves" in first
    assert first.count("✕") > third.count("✕") > 0
    assert "1 = c1" in text(node_label(g, "legend"))


def test_a_kip848_group_picture_stays_narrow_and_shows_the_target() -> None:
    from minikafka.cluster import settle_group
    from minikafka.course.reading import keep_polling
    from minikafka.viz import group_description, group_view

    c = Cluster(brokers=3, seed=17)
    c.create_topic("orders", partitions=6, replication_factor=3)
    group = [c.consumer("orders", group_id="g", client_id=f"c{i}", group_protocol="consumer")
             for i in (1, 2, 3)]
    settle_group(group)
    group.append(c.consumer("orders", group_id="g", client_id="c4", group_protocol="consumer"))
    keep_polling(group, 500)
    g = group_view(group_description(c, "g", ["orders"]))
    label = g.graph_attr["label"]
    # the epochs make the heading long: it takes two left-justified lines
    assert label.count("\\l") == 2 and "group epoch 5 · target epoch 5\\l" in label
    targets = [e for e in edges(g) if "target" in e]
    assert len(targets) == 1 and "fontsize=10" in targets[0]


# -- lesson 18: a share partition -------------------------------------------------------

def test_share_partition_state_and_view() -> None:
    c = Cluster(brokers=3, seed=18)
    c.create_topic("jobs", partitions=1, replication_factor=3)
    c.alter_share_group_config("workers", {"share.auto.offset.reset": "earliest"})
    producer = c.producer()
    for i in range(8):
        producer.send("jobs", value=b"job-%d" % i)
    producer.flush()
    assert share_partition_state(c, "workers", "jobs")["start_offset"] is None  # no member
    w1 = c.share_consumer("workers", ["jobs"], max_poll_records=3,
                          share_acknowledgement_mode="explicit")
    records = [r for rs in w1.poll(timeout_ms=1_000).values() for r in rs]
    w1.acknowledge(records[0], AcknowledgeType.ACCEPT)
    w1.acknowledge(records[1], AcknowledgeType.REJECT)
    w1.commit_sync()
    c.advance(10_000)
    state = share_partition_state(c, "workers", "jobs", names={"w1": w1})
    assert (state["start_offset"], state["next_offset"], state["log_end_offset"]) == (2, 3, 8)
    assert state["records"] == [{"offset": 2, "state": "ACQUIRED", "delivery_count": 1,
                                 "member": "w1", "lock_left_ms": 20_000}]
    rows_ = share_table_rows(state)
    assert [r["offset"] for r in rows_] == list(range(2, 8))
    assert rows_[1]["state"] == "not delivered yet"
    cells = window_cells(state)
    assert [c_["kind"] for c_ in cells] == ["DONE", "DONE", "ACQUIRED"] + ["NEW"] * 5
    g = share_partition_view(state)
    label = text(node_label(g, "window"))
    assert "delivery count limit 5 · lock 30 s" in text(node_label(g, "title"))
    assert "SPSO ▼ SPEO ▼ offset 0 1 2 " in label  # one record in flight: both marks on 2
    assert "w1 · 20 s" in label and "● acquired" in label and "· not yet" in label
    assert "delivered 1× delivered 0×" in label


# -- lesson 13: the pipeline -----------------------------------------------------------

def test_pipeline_state_counts_what_each_stage_holds() -> None:
    c = Cluster(brokers=3, seed=13)
    c.create_topic("customers", partitions=3, replication_factor=3)
    c.create_topic("customers_clean", partitions=3, replication_factor=3)
    rows_ = [{"id": i, "name": f"n{i}"} for i in range(1, 6)]
    source = SourceConnector(c, "customers-db", rows_, "customers", key_field="id")
    source.poll()
    copier = c.producer()
    for records in read_topic(c, "customers").values():
        for r in records:
            copier.send("customers_clean", key=r.key, value=json.dumps({"ok": 1}).encode())
    copier.flush()
    sink = SinkConnector(c, "customers_clean", group_id="search-index")
    sink.run(rounds=20)
    state = pipeline_state(c, source, "cleaner", "customers_clean", sink, "search-index")
    lines = {s["name"]: " ".join(s["lines"]) for s in state["stages"]}
    assert list(lines)[0] == "customers table" and list(lines)[-1] == "search index"
    assert "5 rows" in lines["customers table"]
    assert "5 rows copied" in lines["source connector customers-db"]
    assert "3 partitions · 5 records" in lines["topic customers"]
    assert "committed offsets sum to 0" in lines["cleaner (group cleaner)"]
    assert "committed offsets sum to 5" in lines["sink connector (group search-index)"]
    assert "5 documents" in lines["search index"]
    g = pipeline_view(state)
    assert len([e for e in edges(g) if "dashed" not in e]) == len(state["stages"]) - 1
    assert "compacted · 1 records" in text(node_label(g, "side0"))


# -- lesson 19: who may do what -----------------------------------------------------------

def test_acl_matrix_shows_each_answer_and_why() -> None:
    from minikafka.core.acl import (
        AclBinding,
        AclOperation,
        AclPermissionType,
        PatternType,
        ResourceType,
    )

    c = Cluster(brokers=3, seed=19)
    auth = c.enable_acls(super_users=["User:admin"])
    c.create_acls([
        AclBinding(ResourceType.TOPIC, "orders-", PatternType.PREFIXED, "User:alice", "*",
                   AclOperation.READ, AclPermissionType.ALLOW),
        AclBinding(ResourceType.TOPIC, "orders-internal", PatternType.LITERAL, "User:*", "*",
                   AclOperation.READ, AclPermissionType.DENY)])
    m = acl_matrix(auth, ["User:admin", "User:alice", "User:bob"],
                   [("TOPIC", "orders-eu"), ("TOPIC", "orders-internal"), ("GROUP", "g")])
    alice = [{a["operation"]: a for a in cell} for cell in m["cells"]["User:alice"]]
    assert alice[0]["READ"]["why"] == "allow prefixed orders-"
    assert alice[0]["DESCRIBE"]["why"] == "allow prefixed orders- (via READ)"
    assert not alice[0]["WRITE"]["allowed"] and alice[0]["WRITE"]["why"] == "no ACL"
    assert not alice[1]["READ"]["allowed"] and alice[1]["READ"]["why"] == "deny literal orders-internal"
    assert all(a["why"] == "super user" for cell in m["cells"]["User:admin"] for a in cell)
    assert not any(a["allowed"] for cell in m["cells"]["User:bob"] for a in cell)
    assert len(m["acls"]) == 2 and m["super_users"] == ["User:admin"]
    label = text(node_label(acl_matrix_view(m), "matrix"))
    assert "User:admin (super user)" in label and "deny literal orders-internal" in label
    assert "✖ READ" in label and "✔ READ" in label and "· WRITE" in label
    assert "allow.everyone.if.no.acl.found=false" in label


@needs_dot
def test_lesson_pictures_draw_with_dot(trucks: Cluster) -> None:
    svg = to_svg(key_placement_view(key_placement(trucks, "trucks_gps")))
    assert "truck&#45;20" in svg and "partition 5" in svg


# -- the notebooks ---------------------------------------------------------------------

@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_every_lesson_draws_a_picture_or_panel(path: Path) -> None:
    # A chart over time (minikafka.course.charts) counts as the lesson's picture.
    charts = [c for c in nbformat.read(path, as_version=4).cells
              if c.cell_type == "code" and re.search(r"^(lines|bars)\(", c.source, re.M)]
    assert picture_cells(path) or charts, \
        f"{path.name} has no cell that calls show(...), Panel(...), lines(...) or bars(...)"


def test_the_new_pictures_sit_in_their_lessons() -> None:
    wanted = {"03": "key_placement_view", "06": "transaction_view", "07": "batch_view",
              "08": "position_timeline_view", "10": "rebalance_view", "13": "pipeline_view",
              "14": "cluster_view", "15": "metrics_view", "16": "dead_letter_view",
              "17": "protocol_timeline_view", "18": "share_partition_view",
              "19": "acl_matrix_view", "20": "tiered_log_view", "21": "windows_view"}
    import nbformat

    for path in LESSONS:
        name = wanted.get(path.name[:2])
        if name:
            sources = [nbformat.read(path, as_version=4).cells[i].source
                       for i in picture_cells(path)]
            assert any(name in s for s in sources), path.name
