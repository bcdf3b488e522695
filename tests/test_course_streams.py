"""Lesson 21's stream processing model (minikafka.course.streams): windows as Kafka
Streams computes them (TimeWindows.windowsFor, KStreamWindowAggregate's and
KStreamSessionWindowAggregate's close rules), joins task by task, and the picture."""

from __future__ import annotations

import pytest

from minikafka import Cluster
from minikafka.course.streams import (
    SessionWindows,
    TimeWindows,
    WindowedCount,
    arriving_late,
    copartition_error,
    run_windowed,
    stream_stream_join,
    stream_table_join,
    window_state,
)
from minikafka.course.trucks import truck_positions
from minikafka.viz import to_svg, windows_view


def test_windows_for_follows_kafkas_formula() -> None:
    # TimeWindows.windowsFor: start = max(0, ts - size + advance) / advance * advance, then
    # every advance while start <= ts; windows are [start, start + size).
    assert TimeWindows(60_000).windows_for(59_999) == [(0, 60_000)]
    assert TimeWindows(60_000).windows_for(60_000) == [(60_000, 120_000)]
    assert TimeWindows(60_000, 20_000).windows_for(65_000) == [
        (20_000, 80_000), (40_000, 100_000), (60_000, 120_000)]
    assert TimeWindows(60_000, 20_000).windows_for(5_000) == [(0, 60_000)]


@pytest.mark.parametrize("kwargs", [{"size_ms": 0}, {"size_ms": 10, "advance_ms": 11},
                                    {"size_ms": 10, "advance_ms": 0},
                                    {"size_ms": 10, "grace_ms": -1}])
def test_windows_refuse_what_kafka_refuses(kwargs) -> None:
    with pytest.raises(ValueError):
        TimeWindows(**kwargs)


def app_on(windows) -> WindowedCount:
    cluster = Cluster(brokers=3, seed=1)
    cluster.create_topic("truck-positions", partitions=1, replication_factor=3)
    return WindowedCount(cluster, windows)


def test_a_window_closes_at_its_end_plus_grace_in_stream_time() -> None:
    app = app_on(TimeWindows(60_000, grace_ms=10_000))
    app.process(0, 0, "k", 50_000)
    app.process(0, 1, "k", 70_000)  # stream time 70 s: [0, 60) closes at 70 s
    late = app.process(0, 2, "k", 59_000)
    assert late["dropped"] == [(0, 60_000)] and not late["counted"]
    app2 = app_on(TimeWindows(60_000, grace_ms=10_000))
    app2.process(0, 0, "k", 69_999)
    assert app2.process(0, 1, "k", 59_000)["counted"] == [(0, 60_000)]  # 60 s > 59.999 s
    assert app.counts() == {("k", 0, 60_000): 1, ("k", 60_000, 120_000): 1}
    assert [r["late_by"] for r in app.dropped] == [11_000]


def test_sessions_merge_across_a_gap_and_close_inclusively() -> None:
    app = app_on(SessionWindows(gap_ms=10_000))
    for offset, ts in enumerate((0, 5_000, 30_000, 38_000)):
        app.process(0, offset, "k", ts)
    assert app.counts() == {("k", 0, 5_000): 2, ("k", 30_000, 38_000): 2}
    app.process(0, 4, "k", 48_000)  # within the gap of 38 s: the session grows
    assert app.counts()[("k", 30_000, 48_000)] == 3
    # With no grace, a record for an older session whose end is before the stream time
    # is dropped (KStreamSessionWindowAggregate: mergedWindow.end() < closeTime).
    assert app.process(0, 5, "k", 12_000)["dropped"] == [(0, 12_000)]
    grace = app_on(SessionWindows(gap_ms=20_000, grace_ms=60_000))
    for offset, ts in enumerate((0, 30_000, 15_000)):  # 15 s bridges both sessions
        grace.process(0, offset, "k", ts)
    assert grace.counts() == {("k", 0, 30_000): 3}


def test_changelog_holds_every_update_and_a_tombstone_for_a_merged_session() -> None:
    app = app_on(SessionWindows(gap_ms=20_000, grace_ms=60_000))
    for offset, ts in enumerate((0, 30_000, 15_000)):
        app.process(0, offset, "k", ts)
    app.step(timeout_ms=0)  # flushes the changelog
    consumer = app.cluster.consumer(app.changelog, auto_offset_reset="earliest")
    records = [r for rs in consumer.poll(timeout_ms=1_000).values() for r in rs]
    assert [(r.key, r.value is None) for r in records] == [
        (b"k@0", False), (b"k@30000", False), (b"k@0", True), (b"k@30000", True),
        (b"k@0", False)]
    assert app.cluster.topic_config(app.changelog)["cleanup.policy"] == "compact,delete"


def test_lateness_decides_window_by_window_and_the_picture_fits() -> None:
    measured = truck_positions(trucks=3, minutes=3, every_s=10, seed=21, max_delay_s=0)
    reports = arriving_late(measured, {("truck-01", 11): 45_000})
    assert [r.truck_id for r in reports].count("truck-01") == 18
    hopping = run_windowed(reports, TimeWindows(60_000, 20_000, grace_ms=30_000))
    [late] = [r for r in hopping.records if r["dropped"]]
    assert len(late["dropped"]) == 1 and len(late["counted"]) == 2
    svg = to_svg(windows_view(window_state(hopping, "truck-01"), slot_ms=20_000))
    width_pt = float(svg.split('width="')[1].split("pt")[0])
    assert width_pt <= 628 and "window closed" in svg and "window open" in svg
    tumbling = run_windowed(reports, TimeWindows(60_000))
    svg = to_svg(windows_view(window_state(tumbling, "truck-01")))
    assert "dropped (too late)" in svg and float(svg.split('width="')[1].split("pt")[0]) <= 628


def test_joins_run_task_by_task() -> None:
    cluster = Cluster(brokers=3, seed=2)
    for topic, n in (("left", 3), ("right", 3), ("right4", 4)):
        cluster.create_topic(topic, partitions=n, replication_factor=3)
    producer = cluster.producer()
    keys = [f"k{i}".encode() for i in range(8)]
    for i, key in enumerate(keys):
        producer.send("left", key=key, value=b"L", timestamp_ms=1_000 * i)
        producer.send("right", key=key, value=b"R", timestamp_ms=1_000 * i + 3_000)
        producer.send("right4", key=key, value=b"R")
    producer.flush()
    assert len(stream_table_join(cluster, "left", "right")["joined"]) == 8
    misjoined = stream_table_join(cluster, "left", "right4")
    assert len(misjoined["joined"]) + len(misjoined["missed"]) == 8 and misjoined["missed"]
    assert copartition_error(cluster, "left", "right") is None
    assert copartition_error(cluster, "right4", "left") == (
        "Following topics do not have the same number of partitions: [{left=3, right4=4}]")
    # Same key, right 3 s after left: within 3 s pairs all eight, within 2 s none.
    assert len(stream_stream_join(cluster, "left", "right", within_ms=3_000)) == 8
    assert stream_stream_join(cluster, "left", "right", within_ms=2_000) == []
