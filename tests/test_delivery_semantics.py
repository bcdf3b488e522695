"""The delivery-semantics matrix: each loop crashed at each of its points, then finished
by a second consumer of the group; the checker counts what was lost and duplicated."""

from __future__ import annotations

import doctest

import pytest

from minikafka import semantics
from minikafka.cluster import Cluster
from minikafka.semantics import (
    POINTS,
    Crash,
    CrashAt,
    IdempotentSink,
    Report,
    at_least_once,
    check,
    delivery_matrix,
    run_with_crash,
)

RECORDS = 12


@pytest.fixture(scope="module")
def matrix():
    return delivery_matrix(records=RECORDS)


def verdicts(matrix, name: str) -> dict:
    return {v.crash_point: v for v in matrix[name]}


def test_the_checker_reports_lost_and_duplicated():
    assert check([b"a", b"b", b"c"], [b"a", b"c", b"c", b"c"]) == \
        Report(lost=(b"b",), duplicated=((b"c", 3),))
    assert check([b"a"], [b"a"]).ok
    assert not check([b"a"], []).ok


def test_every_point_of_every_loop_is_crashed(matrix):
    for name, points in POINTS.items():
        assert [v.crash_point for v in matrix[name]] == [None, *points]
    assert all(v.report.ok for vs in matrix.values() for v in vs if v.crash_point is None)


def test_at_most_once_may_lose_but_never_duplicates(matrix):
    by_point = verdicts(matrix, "at-most-once")
    assert all(not v.report.duplicated for v in by_point.values())
    # Committed, then died before processing the whole batch: those records are gone.
    assert by_point["committed"].report.lost and by_point["processing"].report.lost
    assert len(by_point["processing"].report.lost) < len(by_point["committed"].report.lost)
    assert by_point["polled"].report.ok and by_point["processed"].report.ok


def test_at_least_once_never_loses_but_may_duplicate(matrix):
    by_point = verdicts(matrix, "at-least-once")
    assert all(not v.report.lost for v in by_point.values())
    # Processed, then died before the commit: the successor processes them again.
    assert by_point["processed"].report.duplicated
    assert by_point["processing"].report.duplicated
    assert by_point["committed"].report.ok
    assert by_point["processed"].deliveries > RECORDS


@pytest.mark.parametrize("name", ["exactly-once", "idempotent-sink"])
def test_exactly_once_neither_loses_nor_duplicates(matrix, name):
    by_point = verdicts(matrix, name)
    assert all(v.report.ok for v in by_point.values())
    # Work was repeated after some crashes; the repeats had no visible effect.
    assert max(v.deliveries for v in by_point.values()) > RECORDS


def test_aborted_transaction_output_stays_in_the_log_but_is_invisible():
    verdict = run_with_crash("exactly-once", "offsets_sent", records=6)
    assert verdict.report.ok and verdict.deliveries > 6
    with pytest.raises(ValueError, match="no point"):
        run_with_crash("exactly-once", "processed")
    with pytest.raises(ValueError, match="unknown semantics"):
        run_with_crash("maybe-once", None)


def test_the_outcome_depends_on_which_batch_dies_not_on_luck():
    first = run_with_crash("at-least-once", "processed", records=10, crash_batch=0, seed=3)
    again = run_with_crash("at-least-once", "processed", records=10, crash_batch=0, seed=3)
    assert first == again and first.report.duplicated


def test_crash_at_fires_once_in_the_chosen_batch():
    hook = CrashAt("processing", batch=1)
    hook("polled")
    hook("processing")  # batch 0: survives
    hook("polled")
    with pytest.raises(Crash, match="'processing' in batch 1"):
        hook("processing")
    hook("processing")  # only once


def test_loops_stop_when_the_topic_goes_quiet():
    cluster = Cluster(brokers=1, seed=2)
    cluster.create_topic("in", partitions=1)
    producer = cluster.producer()
    for i in range(5):
        producer.send("in", value=f"v{i}".encode())
    producer.flush()
    consumer = cluster.consumer("in", group_id="g", auto_offset_reset="earliest",
                                enable_auto_commit=False)
    sink = IdempotentSink()
    done = at_least_once(consumer, lambda r: sink.put(r, r.value), max_idle_polls=2)
    assert done == 5 and sink.values() == [f"v{i}".encode() for i in range(5)]
    assert consumer.committed(next(iter(consumer.assignment()))) == 5


def test_the_worked_examples_in_the_module_run():
    result = doctest.testmod(semantics, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 4 and result.failed == 0
