"""What `__consumer_offsets` holds, byte for byte as Kafka writes it.

Kafka keeps consumer groups in an internal compacted topic: every commit is a record
keyed by (group, topic, partition), and every generation of a group is a record keyed
by the group. Compaction keeps the latest value per key, a null value (tombstone)
deletes one. A new coordinator rebuilds its groups by replaying its partition.

A group lives in partition ``Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions``:

    >>> partition_for("my-group")
    12
    >>> java_string_hash("polygenelubricants")   # Integer.MIN_VALUE
    -2147483648
    >>> partition_for("polygenelubricants")      # Utils.abs(MIN_VALUE) is 0, not negative
    0

Records (schemas OffsetCommitKey/Value, GroupMetadataKey/Value in Kafka's
group-coordinator module; a key starts with an int16 version: 0/1 offset commit,
2 group metadata):

    >>> key = offset_commit_key("g", "orders", 2)
    >>> decode_key(key)
    OffsetKey(group='g', topic='orders', partition=2)
    >>> decode_value(key, offset_commit_value(42, 0, "", 1767225600000))
    OffsetValue(offset=42, leader_epoch=0, metadata='', commit_timestamp=1767225600000)

The member metadata inside GroupMetadataValue is the consumer's own protocol
(ConsumerProtocolSubscription / ConsumerProtocolAssignment), encoded here too so the
coordinator stays free of any client library.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass

from .groups import records as cg

OFFSETS_TOPIC = "__consumer_offsets"

OFFSET_KEY_VERSION = 1
GROUP_KEY_VERSION = 2
OFFSET_VALUE_VERSION = 3  # adds leaderEpoch (Kafka 2.1+); written by Kafka 3.x and 4.0
GROUP_VALUE_VERSION = 3  # adds groupInstanceId (static membership, Kafka 2.3+)
SUBSCRIPTION_VERSION = 3  # adds rackId (Kafka 3.x clients)
ASSIGNMENT_VERSION = 3

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")


# -- group placement --------------------------------------------------------------------------

def java_string_hash(text: str) -> int:
    """Java's String.hashCode: s[0]*31^(n-1) + ... + s[n-1] over UTF-16 code units, int32."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def kafka_abs(n: int) -> int:
    """Kafka's Utils.abs: like Math.abs, except Integer.MIN_VALUE becomes 0 (Math.abs
    would leave it negative and the partition index would be negative too)."""
    return 0 if n == -(1 << 31) else abs(n)


def partition_for(group_id: str, partitions: int = 50) -> int:
    """The __consumer_offsets partition (and so the coordinator) of a group."""
    return kafka_abs(java_string_hash(group_id)) % partitions


# -- primitive encoding -----------------------------------------------------------------------

class BinaryWriter:
    __slots__ = ("parts",)

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def i16(self, v: int) -> BinaryWriter:
        self.parts.append(_I16.pack(v))
        return self

    def i32(self, v: int) -> BinaryWriter:
        self.parts.append(_I32.pack(v))
        return self

    def i64(self, v: int) -> BinaryWriter:
        self.parts.append(_I64.pack(v))
        return self

    def string(self, v: str | None) -> BinaryWriter:
        if v is None:
            return self.i16(-1)
        raw = v.encode()
        self.parts.append(_I16.pack(len(raw)) + raw)
        return self

    def bytes_(self, v: bytes | None) -> BinaryWriter:
        if v is None:
            return self.i32(-1)
        self.parts.append(_I32.pack(len(v)) + bytes(v))
        return self

    def uvarint(self, v: int) -> BinaryWriter:
        out = bytearray()
        while v >= 0x80:
            out.append(v & 0x7F | 0x80)
            v >>= 7
        out.append(v)
        self.parts.append(bytes(out))
        return self

    def compact_string(self, v: str | None) -> BinaryWriter:
        if v is None:
            return self.uvarint(0)
        raw = v.encode()
        self.uvarint(len(raw) + 1).parts.append(raw)
        return self

    def done(self) -> bytes:
        return b"".join(self.parts)


class BinaryReader:
    __slots__ = ("data", "pos")

    def __init__(self, data: bytes) -> None:
        self.data = memoryview(data)
        self.pos = 0

    def _take(self, st: struct.Struct) -> int:
        (v,) = st.unpack_from(self.data, self.pos)
        self.pos += st.size
        return v

    def i16(self) -> int:
        return self._take(_I16)

    def i32(self) -> int:
        return self._take(_I32)

    def i64(self) -> int:
        return self._take(_I64)

    def string(self) -> str | None:
        n = self.i16()
        if n < 0:
            return None
        v = bytes(self.data[self.pos:self.pos + n]).decode()
        self.pos += n
        return v

    def bytes_(self) -> bytes | None:
        n = self.i32()
        if n < 0:
            return None
        v = bytes(self.data[self.pos:self.pos + n])
        self.pos += n
        return v

    def uvarint(self) -> int:
        shift = n = 0
        while True:
            b = self.data[self.pos]
            self.pos += 1
            n |= (b & 0x7F) << shift
            if b < 0x80:
                return n
            shift += 7

    def compact_string(self) -> str | None:
        n = self.uvarint()
        if n == 0:
            return None
        v = bytes(self.data[self.pos:self.pos + n - 1]).decode()
        self.pos += n - 1
        return v

    @property
    def remaining(self) -> int:
        return len(self.data) - self.pos


# -- __consumer_offsets records ---------------------------------------------------------------

@dataclass(frozen=True)
class OffsetKey:
    group: str
    topic: str
    partition: int


@dataclass(frozen=True)
class GroupKey:
    group: str


@dataclass(frozen=True)
class OffsetValue:
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int


@dataclass(frozen=True)
class MemberMetadata:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout: int
    session_timeout: int
    subscription: bytes
    assignment: bytes


@dataclass(frozen=True)
class GroupValue:
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int
    members: tuple[MemberMetadata, ...] = ()


def offset_commit_key(group: str, topic: str, partition: int) -> bytes:
    return BinaryWriter().i16(OFFSET_KEY_VERSION).string(group).string(topic).i32(partition).done()


def offset_commit_value(offset: int, leader_epoch: int, metadata: str, commit_ts: int) -> bytes:
    return (BinaryWriter().i16(OFFSET_VALUE_VERSION).i64(offset).i32(leader_epoch)
            .string(metadata or "").i64(commit_ts).done())


def group_metadata_key(group: str) -> bytes:
    return BinaryWriter().i16(GROUP_KEY_VERSION).string(group).done()


def group_metadata_value(value: GroupValue) -> bytes:
    w = (BinaryWriter().i16(GROUP_VALUE_VERSION).string(value.protocol_type).i32(value.generation)
         .string(value.protocol).string(value.leader).i64(value.current_state_timestamp)
         .i32(len(value.members)))
    for m in value.members:
        (w.string(m.member_id).string(m.group_instance_id).string(m.client_id)
         .string(m.client_host).i32(m.rebalance_timeout).i32(m.session_timeout)
         .bytes_(m.subscription).bytes_(m.assignment))
    return w.done()


def decode_key(data: bytes) -> OffsetKey | GroupKey | cg.ConsumerGroupKey:
    """The key of a __consumer_offsets record: an offset commit, a classic group, or one
    of a consumer group's (KIP-848) records (types 3-8, ``groups.records``). Other types
    (share and streams groups) raise ValueError."""
    r = BinaryReader(data)
    version = r.i16()
    if version in (0, 1):
        return OffsetKey(r.string(), r.string(), r.i32())
    if version == 2:
        return GroupKey(r.string())
    if version in cg.KEY_TYPES:
        return cg.decode_key(data)
    raise ValueError(f"unknown __consumer_offsets key version {version}")


def decode_value(key: bytes | OffsetKey | GroupKey | cg.ConsumerGroupKey, data: bytes | None
                 ) -> OffsetValue | GroupValue | cg.Value | None:
    """The value for a key; None for a tombstone."""
    if data is None:
        return None
    k = decode_key(key) if isinstance(key, bytes | bytearray | memoryview) else key
    if isinstance(k, cg.ConsumerGroupKey):
        return cg.decode_value(k, data)
    r = BinaryReader(data)
    version = r.i16()
    if isinstance(k, OffsetKey):
        offset = r.i64()
        epoch = r.i32() if version >= 3 else -1
        # v4 (Kafka 4.x, flexible) adds the topic id as a tagged field after these
        metadata = (r.compact_string() if version >= 4 else r.string()) or ""
        ts = r.i64()
        return OffsetValue(offset, epoch, metadata, ts)
    protocol_type = r.string() or ""
    generation = r.i32()
    protocol = r.string()
    leader = r.string()
    state_ts = r.i64() if version >= 2 else -1
    members = []
    for _ in range(r.i32()):
        member_id = r.string() or ""
        instance = r.string() if version >= 3 else None
        client_id = r.string() or ""
        host = r.string() or ""
        rebalance = r.i32() if version >= 1 else -1
        session = r.i32()
        members.append(MemberMetadata(member_id, instance, client_id, host, rebalance, session,
                                      r.bytes_() or b"", r.bytes_() or b""))
    return GroupValue(protocol_type, generation, protocol, leader, state_ts, tuple(members))


def format_record(key: bytes, value: bytes | None) -> str:
    """One record as JSON, the way kafka-console-consumer's OffsetsMessageFormatter and
    GroupMetadataMessageFormatter print __consumer_offsets (Kafka 3.8+)."""
    k = decode_key(key)
    key_version = _I16.unpack_from(key)[0]
    out: dict = {"key": {"type": key_version, "data": k.__dict__}}
    v = decode_value(k, value)
    if v is None:
        out["value"] = None
    else:
        if isinstance(k, cg.ConsumerGroupKey):
            data = _camel(v)
        elif isinstance(v, OffsetValue):
            data = {"offset": v.offset, "leaderEpoch": v.leader_epoch,
                    "metadata": v.metadata, "commitTimestamp": v.commit_timestamp}
        else:
            data = {"protocolType": v.protocol_type, "generation": v.generation,
                    "protocol": v.protocol, "leader": v.leader,
                    "currentStateTimestamp": v.current_state_timestamp,
                    "members": [{"memberId": m.member_id, "groupInstanceId": m.group_instance_id,
                                 "clientId": m.client_id, "clientHost": m.client_host,
                                 "rebalanceTimeout": m.rebalance_timeout,
                                 "sessionTimeout": m.session_timeout,
                                 "subscription": m.subscription.hex(),
                                 "assignment": m.assignment.hex()} for m in v.members]}
        out["value"] = {"version": _I16.unpack_from(value)[0], "data": data}
    return json.dumps(out)


def _camel(value: object) -> dict:
    """A consumer-group record's fields as Kafka's JSON formatter names them."""
    out = {}
    for name, v in value.__dict__.items():
        head, *rest = name.split("_")
        if isinstance(v, tuple) and v and isinstance(v[0], tuple):
            v = [{"topicId": t, "partitions": list(ps)} for t, ps in v]
        out[head + "".join(w.title() for w in rest)] = list(v) if isinstance(v, tuple) else v
    return out


# -- the consumer's embedded protocol ---------------------------------------------------------

TopicPartitions = tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class ConsumerSubscription:
    """ConsumerProtocolSubscription: what a member sends in JoinGroup, per assignor."""

    topics: tuple[str, ...]
    user_data: bytes | None = None
    owned_partitions: TopicPartitions = ()
    generation_id: int = -1
    rack_id: str | None = None


@dataclass(frozen=True)
class ConsumerAssignment:
    """ConsumerProtocolAssignment: what the leader hands each member in SyncGroup."""

    partitions: TopicPartitions = ()
    user_data: bytes | None = None


def _grouped(tps: TopicPartitions) -> list[tuple[str, list[int]]]:
    # On the wire partitions are grouped by topic, in first-seen order.
    out: dict[str, list[int]] = {}
    for topic, p in tps:
        out.setdefault(topic, []).append(p)
    return list(out.items())


def _write_partitions(w: BinaryWriter, tps: TopicPartitions) -> None:
    groups = _grouped(tps)
    w.i32(len(groups))
    for topic, parts in groups:
        w.string(topic).i32(len(parts))
        for p in parts:
            w.i32(p)


def _read_partitions(r: BinaryReader) -> TopicPartitions:
    out = []
    for _ in range(r.i32()):
        topic = r.string() or ""
        out.extend((topic, r.i32()) for _ in range(r.i32()))
    return tuple(out)


def encode_subscription(sub: ConsumerSubscription, version: int = SUBSCRIPTION_VERSION) -> bytes:
    w = BinaryWriter().i16(version).i32(len(sub.topics))
    for t in sub.topics:
        w.string(t)
    w.bytes_(sub.user_data)
    if version >= 1:
        _write_partitions(w, sub.owned_partitions)
    if version >= 2:
        w.i32(sub.generation_id)
    if version >= 3:
        w.string(sub.rack_id)
    return w.done()


def decode_subscription(data: bytes) -> ConsumerSubscription:
    r = BinaryReader(data)
    version = r.i16()
    topics = tuple(r.string() or "" for _ in range(r.i32()))
    user_data = r.bytes_()
    owned = _read_partitions(r) if version >= 1 and r.remaining else ()
    generation = r.i32() if version >= 2 and r.remaining else -1
    rack = r.string() if version >= 3 and r.remaining else None
    return ConsumerSubscription(topics, user_data, owned, generation, rack)


def encode_assignment(a: ConsumerAssignment, version: int = ASSIGNMENT_VERSION) -> bytes:
    w = BinaryWriter().i16(version)
    _write_partitions(w, a.partitions)
    return w.bytes_(a.user_data).done()


def decode_assignment(data: bytes | None) -> ConsumerAssignment:
    if not data:
        return ConsumerAssignment()
    r = BinaryReader(data)
    r.i16()
    partitions = _read_partitions(r)
    return ConsumerAssignment(partitions, r.bytes_() if r.remaining else None)


@dataclass(frozen=True)
class StickyUserData:
    """StickyAssignor's user data (version 1): the member's previous assignment and its
    generation, so an eager sticky leader knows who owned what after everyone revoked."""

    previous: TopicPartitions = ()
    generation: int = -1


def encode_sticky_user_data(data: StickyUserData) -> bytes:
    w = BinaryWriter()
    _write_partitions(w, data.previous)
    return w.i32(data.generation).done()


def decode_sticky_user_data(data: bytes | None) -> StickyUserData:
    if not data:
        return StickyUserData()
    r = BinaryReader(data)
    previous = _read_partitions(r)
    return StickyUserData(previous, r.i32() if r.remaining >= 4 else -1)
