"""FetchResponse v4-v18 bodies, written by hand.

Fetch is the consume hot path: kafka-python's generic encoder walks the schema
for every field and copies each partition's records; this writes the fixed fields
with struct and hands the record bytes through as views, so the only copy is the
join of the whole frame. Tests check the output against kafka-python's FetchResponse decoder.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from struct import Struct
from uuid import UUID

__all__ = ["PartitionData", "encode_fetch_response"]

_TOP = Struct(">i")  # throttle_time_ms
_TOP_V7 = Struct(">ihi")  # throttle_time_ms, error_code, session_id
_PART = Struct(">ihqq")  # partition_index, error_code, high_watermark, last_stable_offset
_Q = Struct(">q")
_I = Struct(">i")
_H = Struct(">h")
_ABORTED = Struct(">qq")  # producer_id, first_offset
_FLEXIBLE = 12
_TOPIC_IDS = 13


@dataclass(slots=True)
class PartitionData:
    partition_index: int
    error_code: int = 0
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    aborted_transactions: list[tuple[int, int]] | None = None  # (producer id, first offset)
    records: list = field(default_factory=list)  # buffers, concatenated on the wire
    records_size: int = 0


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def encode_fetch_response(version: int, topics: list[tuple[str | UUID, list[PartitionData]]],
                          error_code: int = 0, session_id: int = 0,
                          throttle_time_ms: int = 0) -> list:
    """The response body (no header) at `version` (4-18), as a list of buffers to
    concatenate: the records stay views of the stored batches until the frame is
    written (Session joins a response once). Topics are named by name up to v12 and
    by id (a UUID) from v13. No v16 NodeEndpoints: a client told NOT_LEADER_OR_FOLLOWER
    finds the new leader through Metadata, as from brokers before KIP-951."""
    flexible = version >= _FLEXIBLE
    out: list = []
    put = out.append
    if version >= 7:
        put(_TOP_V7.pack(throttle_time_ms, error_code, session_id))
    else:
        put(_TOP.pack(throttle_time_ms))
    put(_uvarint(len(topics) + 1) if flexible else _I.pack(len(topics)))
    for topic, partitions in topics:
        if version >= _TOPIC_IDS:
            put(topic.bytes)
        else:
            encoded = topic.encode()
            put(_uvarint(len(encoded) + 1) if flexible else _H.pack(len(encoded)))
            put(encoded)
        put(_uvarint(len(partitions) + 1) if flexible else _I.pack(len(partitions)))
        for p in partitions:
            put(_PART.pack(p.partition_index, p.error_code, p.high_watermark,
                           p.last_stable_offset))
            if version >= 5:
                put(_Q.pack(p.log_start_offset))
            aborted = p.aborted_transactions
            if aborted is None:
                put(b"\x00" if flexible else b"\xff\xff\xff\xff")
            else:
                put(_uvarint(len(aborted) + 1) if flexible else _I.pack(len(aborted)))
                for producer_id, first_offset in aborted:
                    put(_ABORTED.pack(producer_id, first_offset))
                    if flexible:
                        put(b"\x00")
            if version >= 11:
                put(b"\xff\xff\xff\xff")  # preferred_read_replica -1: read from the leader
            put(_uvarint(p.records_size + 1) if flexible else _I.pack(p.records_size))
            out.extend(p.records)
            if flexible:
                put(b"\x00")  # no tagged fields (diverging epoch, current leader, snapshot)
        if flexible:
            put(b"\x00")
    if flexible:
        put(b"\x00")
    return out
