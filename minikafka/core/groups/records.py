"""The records a consumer group (KIP-848) keeps in ``__consumer_offsets``, byte for byte.

Kafka's group coordinator writes six kinds of records per consumer group (schemas
ConsumerGroup*Key/Value in its group-coordinator module; a key starts with an int16
type, 3 to 8, then the group id and, for per-member records, the member id). Values
are "flexible" (compact strings and arrays, tagged fields):

    3 ConsumerGroupMetadata            the group epoch
    5 ConsumerGroupMemberMetadata      a member's subscription, client, rebalance timeout
    6 ConsumerGroupTargetAssignmentMetadata   the assignment epoch
    7 ConsumerGroupTargetAssignmentMember     a member's target partitions
    8 ConsumerGroupCurrentMemberAssignment    a member's epoch, state, owned partitions

(type 4, ConsumerGroupPartitionMetadata, is no longer written by Kafka 4.x.) A null
value is a tombstone: the member (or the group) is gone.

    >>> key = member_key(MEMBER_METADATA, "g", "m1")
    >>> decode_key(key)
    ConsumerGroupKey(type=5, group='g', member='m1')
    >>> v = MemberValue(None, None, "c", "/127.0.0.1", ("orders",), None, 45000, "uniform")
    >>> decode_value(key, encode_value(key, v)) == v
    True
"""
from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass

GROUP_METADATA = 3
PARTITION_METADATA = 4
MEMBER_METADATA = 5
TARGET_METADATA = 6
TARGET_MEMBER = 7
CURRENT_ASSIGNMENT = 8
KEY_TYPES = (GROUP_METADATA, PARTITION_METADATA, MEMBER_METADATA, TARGET_METADATA,
             TARGET_MEMBER, CURRENT_ASSIGNMENT)
_PER_MEMBER = (MEMBER_METADATA, TARGET_MEMBER, CURRENT_ASSIGNMENT)

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")

# topic id (the controller's canonical uuid string) -> partitions
Partitions = dict[str, frozenset[int]]


@dataclass(frozen=True)
class ConsumerGroupKey:
    type: int
    group: str
    member: str | None = None


@dataclass(frozen=True)
class GroupEpochValue:
    epoch: int
    metadata_hash: int = 0


@dataclass(frozen=True)
class MemberValue:
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    rebalance_timeout_ms: int
    server_assignor: str | None
    # tagged field 0, ClassicMemberMetadata: (session timeout, ((assignor, metadata), ...))
    # for a classic member of a consumer group; None for a consumer-protocol member
    classic: tuple[int, tuple[tuple[str, bytes], ...]] | None = None


@dataclass(frozen=True)
class TargetMetadataValue:
    assignment_epoch: int
    assignment_timestamp: int = 0


@dataclass(frozen=True)
class TargetMemberValue:
    partitions: tuple[tuple[str, tuple[int, ...]], ...]


@dataclass(frozen=True)
class CurrentAssignmentValue:
    member_epoch: int
    previous_member_epoch: int
    state: int
    assigned: tuple[tuple[str, tuple[int, ...]], ...]
    pending_revocation: tuple[tuple[str, tuple[int, ...]], ...]


Value = (GroupEpochValue | MemberValue | TargetMetadataValue | TargetMemberValue
         | CurrentAssignmentValue)


def as_rows(partitions: Partitions) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """A partition map as records carry it: topics and partitions in a stable order."""
    return tuple((t, tuple(sorted(ps))) for t, ps in sorted(partitions.items()) if ps)


def from_rows(rows: tuple[tuple[str, tuple[int, ...]], ...]) -> Partitions:
    return {t: frozenset(ps) for t, ps in rows if ps}


# -- keys (not flexible: int16 type, int16-length strings) --------------------------------------

def _string(v: str) -> bytes:
    raw = v.encode()
    return _I16.pack(len(raw)) + raw


def group_key(key_type: int, group: str) -> bytes:
    return _I16.pack(key_type) + _string(group)


def member_key(key_type: int, group: str, member: str) -> bytes:
    return _I16.pack(key_type) + _string(group) + _string(member)


def decode_key(data: bytes) -> ConsumerGroupKey:
    view = memoryview(data)
    (key_type,) = _I16.unpack_from(view, 0)
    pos = 2
    fields = []
    for _ in range(2 if key_type in _PER_MEMBER else 1):
        (n,) = _I16.unpack_from(view, pos)
        fields.append(bytes(view[pos + 2:pos + 2 + n]).decode())
        pos += 2 + n
    return ConsumerGroupKey(key_type, *fields)


# -- values (flexible: compact strings and arrays, tagged fields) -------------------------------

class _Out:
    def __init__(self) -> None:
        self.parts: list[bytes] = [_I16.pack(0)]  # every value is at version 0

    def uvarint(self, n: int) -> _Out:
        out = bytearray()
        while n >= 0x80:
            out.append((n & 0x7F) | 0x80)
            n >>= 7
        out.append(n)
        self.parts.append(bytes(out))
        return self

    def int(self, st: struct.Struct, v: int) -> _Out:
        self.parts.append(st.pack(v))
        return self

    def string(self, v: str | None) -> _Out:
        if v is None:
            return self.uvarint(0)
        raw = v.encode()
        self.uvarint(len(raw) + 1)
        self.parts.append(raw)
        return self

    def partitions(self, rows: tuple[tuple[str, tuple[int, ...]], ...]) -> _Out:
        self.uvarint(len(rows) + 1)
        for topic_id, parts in rows:
            self.parts.append(uuid.UUID(topic_id).bytes)
            self.uvarint(len(parts) + 1)
            for p in parts:
                self.int(_I32, p)
            self.uvarint(0)  # no tagged fields
        return self

    def tags(self, tagged: dict[int, bytes] | None = None) -> bytes:
        tagged = tagged or {}
        self.uvarint(len(tagged))
        for tag, data in sorted(tagged.items()):
            self.uvarint(tag).uvarint(len(data))
            self.parts.append(data)
        return b"".join(self.parts)


class _In:
    def __init__(self, data: bytes) -> None:
        self.view = memoryview(data)
        self.pos = 2  # the value's version

    def uvarint(self) -> int:
        shift = n = 0
        while True:
            b = self.view[self.pos]
            self.pos += 1
            n |= (b & 0x7F) << shift
            if b < 0x80:
                return n
            shift += 7

    def int(self, st: struct.Struct) -> int:
        (v,) = st.unpack_from(self.view, self.pos)
        self.pos += st.size
        return v

    def string(self) -> str | None:
        n = self.uvarint()
        if n == 0:
            return None
        v = bytes(self.view[self.pos:self.pos + n - 1]).decode()
        self.pos += n - 1
        return v

    def partitions(self) -> tuple[tuple[str, tuple[int, ...]], ...]:
        rows = []
        for _ in range(self.uvarint() - 1):
            topic_id = str(uuid.UUID(bytes=bytes(self.view[self.pos:self.pos + 16])))
            self.pos += 16
            parts = tuple(self.int(_I32) for _ in range(self.uvarint() - 1))
            self.tags()
            rows.append((topic_id, parts))
        return tuple(rows)

    def tags(self) -> dict[int, bytes]:
        out = {}
        for _ in range(self.uvarint()):
            tag, size = self.uvarint(), self.uvarint()
            out[tag] = bytes(self.view[self.pos:self.pos + size])
            self.pos += size
        return out


def encode_value(key: bytes | ConsumerGroupKey, value: Value) -> bytes:
    if isinstance(value, GroupEpochValue):
        out = _Out().int(_I32, value.epoch)
        return out.tags({0: _I64.pack(value.metadata_hash)} if value.metadata_hash else None)
    if isinstance(value, MemberValue):
        out = (_Out().string(value.instance_id).string(value.rack_id).string(value.client_id)
               .string(value.client_host).uvarint(len(value.subscribed_topic_names) + 1))
        for name in value.subscribed_topic_names:
            out.string(name)
        out = (out.string(value.subscribed_topic_regex).int(_I32, value.rebalance_timeout_ms)
               .string(value.server_assignor))
        return out.tags({0: _classic_metadata(value.classic)} if value.classic else None)
    if isinstance(value, TargetMetadataValue):
        out = _Out().int(_I32, value.assignment_epoch)
        return out.tags({0: _I64.pack(value.assignment_timestamp)}
                        if value.assignment_timestamp else None)
    if isinstance(value, TargetMemberValue):
        return _Out().partitions(value.partitions).tags()
    return (_Out().int(_I32, value.member_epoch).int(_I32, value.previous_member_epoch)
            .int(_I8, value.state).partitions(value.assigned)
            .partitions(value.pending_revocation).tags())


def _classic_metadata(classic: tuple[int, tuple[tuple[str, bytes], ...]]) -> bytes:
    # A nullable struct (KIP-893): an int8 marker (1: present), then the struct.
    session_timeout, protocols = classic
    out = _Out()
    out.parts = [_I8.pack(1), _I32.pack(session_timeout)]
    out.uvarint(len(protocols) + 1)
    for name, metadata in protocols:
        out.string(name).uvarint(len(metadata) + 1)
        out.parts.append(bytes(metadata))
        out.uvarint(0)
    return out.tags()


def _read_classic_metadata(data: bytes) -> tuple[int, tuple[tuple[str, bytes], ...]] | None:
    if not data or data[0] != 1:
        return None
    r = _In(data)
    r.pos = 1  # after the marker
    session_timeout = r.int(_I32)
    protocols = []
    for _ in range(r.uvarint() - 1):
        name = r.string() or ""
        size = r.uvarint() - 1
        protocols.append((name, bytes(r.view[r.pos:r.pos + size])))
        r.pos += size
        r.tags()
    return session_timeout, tuple(protocols)


def decode_value(key: bytes | ConsumerGroupKey, data: bytes | None) -> Value | None:
    """The value of a consumer-group record; None for a tombstone (and for type 4,
    which Kafka 4.x no longer reads)."""
    if data is None:
        return None
    k = decode_key(key) if isinstance(key, bytes | bytearray | memoryview) else key
    r = _In(data)
    if k.type == GROUP_METADATA:
        epoch = r.int(_I32)
        tags = r.tags()
        return GroupEpochValue(epoch, _I64.unpack(tags[0])[0] if 0 in tags else 0)
    if k.type == MEMBER_METADATA:
        instance, rack, client, host = r.string(), r.string(), r.string() or "", r.string() or ""
        names = tuple(r.string() or "" for _ in range(r.uvarint() - 1))
        regex, timeout, assignor = r.string(), r.int(_I32), r.string()
        classic = _read_classic_metadata(r.tags().get(0, b""))
        return MemberValue(instance, rack, client, host, names, regex, timeout, assignor,
                           classic)
    if k.type == TARGET_METADATA:
        epoch = r.int(_I32)
        tags = r.tags()
        return TargetMetadataValue(epoch, _I64.unpack(tags[0])[0] if 0 in tags else 0)
    if k.type == TARGET_MEMBER:
        return TargetMemberValue(r.partitions())
    if k.type == CURRENT_ASSIGNMENT:
        epoch, previous, state = r.int(_I32), r.int(_I32), r.int(_I8)
        return CurrentAssignmentValue(epoch, previous, state, r.partitions(), r.partitions())
    return None
