"""minikafka.course.waiting: the labs wait for the state they check, steadily."""

from __future__ import annotations

import itertools

import pytest

from minikafka.course.waiting import wait_for


def test_returns_the_reading_that_held_steady() -> None:
    # A group that looks balanced for one reading, rebalances, then settles.
    readings = iter([[3, 3], [2, 2, 2], [0, 3, 3], [2, 2, 2], [2, 2, 2], [2, 2, 2]])
    last = [2, 2, 2]
    state = wait_for(lambda: next(readings, last), lambda s: s == [2, 2, 2],
                     what="every consumer owns 2", steady_s=0.05, every_s=0.02)
    assert state == [2, 2, 2] and next(readings, None) is None


def test_a_state_that_never_settles_times_out_with_what_it_saw() -> None:
    flip = itertools.cycle([[2, 2, 2], [0, 3, 3]])
    with pytest.raises(TimeoutError, match=r"every consumer owns 2; last seen: \[") as caught:
        wait_for(lambda: next(flip), lambda s: s == [2, 2, 2], what="every consumer owns 2",
                 timeout_s=0.3, steady_s=0.1, every_s=0.02)
    assert "waited 0.3 s" in str(caught.value)


def test_without_steady_the_first_good_reading_returns() -> None:
    readings = iter([1, 2, 5, 9])
    assert wait_for(lambda: next(readings), lambda n: n > 3, what="n > 3", every_s=0) == 5
