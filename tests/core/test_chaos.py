"""The durability experiment over seeded fault schedules, judged by the history checker."""

from minikafka.chaos import run_trial, schedule
from minikafka.core.checkers import Write, check


def test_checker_finds_lost_duplicated_and_reordered():
    acked = [Write("t", 0, 0, b"a"), Write("t", 0, 1, b"b"), Write("t", 0, 2, b"c")]
    result = check(acked, {("t", 0): [(0, b"a"), (1, b"c"), (2, b"b"), (3, b"a")]},
                   sent={("t", 0): [b"a", b"b", b"c"]})
    assert result.lost == []
    assert result.duplicated == [b"a"]
    assert result.reordered == [(b"b", b"c")]  # b was sent before c but stored after it
    lost = check(acked, {("t", 0): [(0, b"a")]})
    assert [w.value for w in lost.lost] == [b"b", b"c"] and not lost.ok


def test_schedules_are_reproducible():
    assert schedule(42) == schedule(42)
    assert run_trial(3, acks=1, min_insync_replicas=1).summary() == \
        run_trial(3, acks=1, min_insync_replicas=1).summary()


def test_safe_configuration_loses_nothing_over_200_schedules():
    results = [run_trial(seed, acks="all", min_insync_replicas=2) for seed in range(200)]
    assert sum(r.acknowledged for r in results) > 3000
    assert [r.lost for r in results if r.lost] == []
    assert all(not r.duplicated for r in results)


def test_acks_1_loses_acknowledged_writes_in_some_schedules():
    results = [run_trial(seed, acks=1, min_insync_replicas=1) for seed in range(100)]
    losing = [r for r in results if r.lost]
    assert 5 <= len(losing) < 100


def test_unclean_election_loses_acknowledged_writes_in_some_schedules():
    results = [run_trial(seed, acks="all", min_insync_replicas=1, unclean=True, steps=16)
               for seed in range(200)]
    assert any(r.lost for r in results)


def test_lost_responses_duplicate_only_without_idempotence():
    plain = [run_trial(s, idempotent=False, lose_responses=True) for s in range(20)]
    idem = [run_trial(s, idempotent=True, lose_responses=True) for s in range(20)]
    assert any(r.duplicated for r in plain)
    assert not any(r.duplicated for r in idem)
    assert not any(r.lost for r in idem)
