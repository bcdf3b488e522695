"""The journal's bounded window: memory follows the records it holds, not the event count."""
from __future__ import annotations

from minikafka.core.journal import Journal


def test_a_bounded_journal_counts_the_records_an_event_carries():
    journal = Journal(max_events=1_000)
    for i in range(50):
        journal.record(i, "produce.acked", topic="t", partition=0, base_offset=i * 100,
                       records=[(d, i, None, b"v", ()) for d in range(100)])
    # 50 batches of 100 records: only the newest nine fit in a weight of 1,000 (101 each)
    assert len(journal) == 9
    assert [e.seq for e in journal] == list(range(41, 50))
    assert journal.first_seq == 41 and journal.next_seq == 50
    assert journal.since(45)[0].seq == 45


def test_an_event_heavier_than_the_bound_is_still_kept_alone():
    journal = Journal(max_events=10)
    journal.record(0, "broker.stopped", broker=1)
    journal.record(1, "produce.acked", records=[(d, 0, None, b"v", ()) for d in range(50)])
    assert [e.kind for e in journal] == ["produce.acked"]


def test_an_unbounded_journal_keeps_everything():
    journal = Journal()
    for i in range(10):
        journal.record(i, "produce.acked", records=[(0, i, None, b"v", ())] * 1000)
    assert len(journal) == 10 and journal.first_seq == 0
