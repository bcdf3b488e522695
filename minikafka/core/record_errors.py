"""Per-record produce errors (KIP-467): which records of a batch the leader refuses, and the
words Kafka's LogValidator uses for them.

A batch with an invalid record is refused whole (INVALID_RECORD, nothing is appended), and
the Produce response (v8+) lists each bad record's index in the batch with its message, so a
client such as librdkafka fails only those records and sends the rest again.

    >>> from minikafka.core.records import RecordBatch
    >>> batch = RecordBatch([(0, 0, b"k", b"v", ()), (1, 0, None, b"v", ())])
    >>> errors = keyless_record_errors({"cleanup.policy": "compact"}, ("t", 0), batch)
    >>> errors
    [(1, 'Compacted topic cannot accept message without key in topic partition t-0')]
    >>> rejection_message(errors)[:71]
    'One or more records have been rejected due to 1 record errors in total,'
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from .cleaner import policies
from .records import RecordBatch

RecordError = tuple[int, str]  # (index in the batch, message)


def keyless_record_errors(config: Mapping[str, object], tp: tuple[str, int],
                          batch: RecordBatch) -> list[RecordError]:
    """A compacted topic's records without a key (LogValidator.validateKey)."""
    if "compact" not in policies(config):
        return []
    message = f"Compacted topic cannot accept message without key in topic partition " \
              f"{tp[0]}-{tp[1]}"
    return [(i, message) for i, record in enumerate(batch.records) if record[2] is None]


def rejection_message(record_errors: Sequence[RecordError]) -> str:
    """The partition's error message: Kafka's RecordValidationException text."""
    shown = ", ".join(f"RecordError(batchIndex={i}, message='{m}')"
                      for i, m in record_errors[:3])
    return (f"One or more records have been rejected due to {len(record_errors)} record "
            f"errors in total, and only showing the first three errors at most: [{shown}]")
