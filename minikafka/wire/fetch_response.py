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

from .compact import NodeEndpoint, leader_tag, node_endpoints_tag, uvarint

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
_NODE_ENDPOINTS = 16


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
    current_leader: tuple[int, int] | None = None  # (id, epoch): KIP-951's hint, v12+


def encode_fetch_response(version: int, topics: list[tuple[str | UUID, list[PartitionData]]],
                          error_code: int = 0, session_id: int = 0,
                          throttle_time_ms: int = 0,
                          node_endpoints: list[NodeEndpoint] | None = None) -> list:
    """The response body (no header) at `version` (4-18), as a list of buffers to
    concatenate: the records stay views of the stored batches until the frame is
    written (Session joins a response once). Topics are named by name up to v12 and
    by id (a UUID) from v13. A partition's `current_leader` goes out as its CurrentLeader
    tagged field and `node_endpoints` (v16+) as NodeEndpoints (KIP-951)."""
    flexible = version >= _FLEXIBLE
    out: list = []
    put = out.append
    if version >= 7:
        put(_TOP_V7.pack(throttle_time_ms, error_code, session_id))
    else:
        put(_TOP.pack(throttle_time_ms))
    put(uvarint(len(topics) + 1) if flexible else _I.pack(len(topics)))
    for topic, partitions in topics:
        if version >= _TOPIC_IDS:
            put(topic.bytes)
        else:
            encoded = topic.encode()
            put(uvarint(len(encoded) + 1) if flexible else _H.pack(len(encoded)))
            put(encoded)
        put(uvarint(len(partitions) + 1) if flexible else _I.pack(len(partitions)))
        for p in partitions:
            put(_PART.pack(p.partition_index, p.error_code, p.high_watermark,
                           p.last_stable_offset))
            if version >= 5:
                put(_Q.pack(p.log_start_offset))
            aborted = p.aborted_transactions
            if aborted is None:
                put(b"\x00" if flexible else b"\xff\xff\xff\xff")
            else:
                put(uvarint(len(aborted) + 1) if flexible else _I.pack(len(aborted)))
                for producer_id, first_offset in aborted:
                    put(_ABORTED.pack(producer_id, first_offset))
                    if flexible:
                        put(b"\x00")
            if version >= 11:
                put(b"\xff\xff\xff\xff")  # preferred_read_replica -1: read from the leader
            put(uvarint(p.records_size + 1) if flexible else _I.pack(p.records_size))
            out.extend(p.records)
            if flexible:  # tagged fields: only CurrentLeader (no diverging epoch, snapshot)
                leader = p.current_leader
                put(b"\x01" + leader_tag(1, leader) if leader is not None else b"\x00")
        if flexible:
            put(b"\x00")
    if flexible:
        put(b"\x01" + node_endpoints_tag(0, node_endpoints)
            if node_endpoints and version >= _NODE_ENDPOINTS else b"\x00")
    return out
