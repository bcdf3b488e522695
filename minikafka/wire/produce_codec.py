"""ProduceRequest v3-v13 bodies in and ProduceResponse bodies out, by hand.

Produce is the hot path of every producer: kafka-python's generic decoder and the
response objects cost ~150 us per request, several times the broker's own work.
This reads the few fields Produce has straight off the frame and writes the
answer with struct. Tests check both against kafka-python byte for byte. From v13
topics go by id (KIP-516), both ways: a request's topic then has `topic_id` and no
name, and the response names it by that id again.
"""
from __future__ import annotations

from dataclasses import dataclass
from struct import Struct
from uuid import UUID

from .compact import (
    I32,
    NodeEndpoint,
    Reader,
    array_len,
    leader_tag,
    node_endpoints_tag,
    nullable_string,
)

__all__ = ["PartitionProduceData", "ProduceRequestData", "TopicProduceData", "decode",
           "encode_produce_response"]

_FLEXIBLE = 9
_LEADER_HINTS = 10
TOPIC_IDS = 13
_HEAD = Struct(">hi")  # acks, timeout_ms
_PARTITION = Struct(">ihqq")  # index, error_code, base_offset, log_append_time_ms
_Q = Struct(">q")


@dataclass(slots=True)
class PartitionProduceData:
    index: int
    records: bytes | None


@dataclass(slots=True)
class TopicProduceData:
    name: str | None  # None from v13: the topic goes by topic_id
    partition_data: list[PartitionProduceData]
    topic_id: UUID | None = None


@dataclass(slots=True)
class ProduceRequestData:
    """What kafka-python's ProduceRequest would hold, under the same names."""

    transactional_id: str | None
    acks: int
    timeout_ms: int
    topic_data: list[TopicProduceData]
    version: int

    def expect_response(self) -> bool:
        return self.acks != 0


def decode(body: memoryview, version: int) -> ProduceRequestData:
    """A ProduceRequest body at `version`; ValueError if it does not parse."""
    flexible = version >= _FLEXIBLE
    r = Reader(body)
    transactional_id = r.string(flexible)
    acks, timeout_ms = _HEAD.unpack_from(body, r._take(6))
    topics = []
    by_id = version >= TOPIC_IDS
    for _ in range(r.length(flexible, True)):
        if by_id:
            name, topic_id = None, r.uuid()
        else:
            name, topic_id = r.string(flexible), None
            if name is None:
                raise ValueError("null topic name")
        partitions = []
        for _ in range(r.length(flexible, True)):
            index = r.int32()
            partitions.append(PartitionProduceData(index, r.bytes(flexible)))
            if flexible:
                r.skip_tags()
        if flexible:
            r.skip_tags()
        topics.append(TopicProduceData(name, partitions, topic_id))
    if flexible:
        r.skip_tags()
    return ProduceRequestData(transactional_id, acks, timeout_ms, topics, version)


def encode_produce_response(version: int, topics: list[tuple[str | UUID, list[tuple]]],
                            throttle_time_ms: int = 0,
                            leaders: dict[tuple[str | UUID, int], tuple[int, int]] | None = None,
                            node_endpoints: list[NodeEndpoint] | None = None) -> bytes:
    """The body at `version` (3-13). Each topic is (name, or from v13 its id, partitions);
    each partition is (index, error_code, base_offset, log_append_time_ms,
    log_start_offset, error_message), and optionally the records refused, as
    [(batch_index, message)] (KIP-467, v8+). From v10, `leaders` gives (leader id, epoch) for
    partitions answered NOT_LEADER_OR_FOLLOWER, keyed like the topics, and
    `node_endpoints` where those leaders listen (KIP-951's tagged fields)."""
    hints = leaders if leaders and version >= _LEADER_HINTS else {}
    flexible = version >= _FLEXIBLE
    out = [array_len(len(topics), flexible)]
    put = out.append
    by_id = version >= TOPIC_IDS
    for name, partitions in topics:
        put(name.bytes if by_id else nullable_string(name, flexible))
        put(array_len(len(partitions), flexible))
        for index, code, base, append_time, start, message, *record_errors in partitions:
            put(_PARTITION.pack(index, code, base, append_time))
            if version >= 5:
                put(_Q.pack(start))
            if version >= 8:
                bad = record_errors[0] if record_errors else ()
                put(array_len(len(bad), flexible))
                for batch_index, text in bad:
                    put(I32.pack(batch_index) + nullable_string(text, flexible))
                    if flexible:
                        put(b"\x00")
                put(nullable_string(message, flexible))
            if flexible:
                leader = hints.get((name, index))
                put(b"\x01" + leader_tag(0, leader) if leader is not None else b"\x00")
        if flexible:
            put(b"\x00")
    put(I32.pack(throttle_time_ms))
    if flexible:
        put(b"\x01" + node_endpoints_tag(0, node_endpoints)
            if hints and node_endpoints else b"\x00")
    return b"".join(out)
