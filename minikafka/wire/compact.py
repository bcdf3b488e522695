"""Kafka's wire primitives for the hand-written hot-path codecs (Produce, Fetch):
unsigned varints and the compact (flexible-version) string, bytes and array forms,
next to their classic int16/int32-length forms."""
from __future__ import annotations

import sys
from struct import Struct
from uuid import UUID

__all__ = ["I16", "I32", "I64", "NodeEndpoint", "Reader", "array_len", "leader_tag",
           "node_endpoints_tag", "nullable_string", "uvarint"]

I16 = Struct(">h")
I32 = Struct(">i")
I64 = Struct(">q")


def uvarint(n: int) -> bytes:
    if n < 0x80:
        return bytes((n,))
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def array_len(n: int, flexible: bool) -> bytes:
    return uvarint(n + 1) if flexible else I32.pack(n)


def nullable_string(text: str | None, flexible: bool) -> bytes:
    if text is None:
        return b"\x00" if flexible else b"\xff\xff"
    data = text.encode()
    return (uvarint(len(data) + 1) if flexible else I16.pack(len(data))) + data


# (node id, host, port, rack): a broker as KIP-951's NodeEndpoints list it
NodeEndpoint = tuple[int, str, int, "str | None"]
_LEADER_AND_EPOCH = Struct(">ii")


def leader_tag(tag: int, leader: tuple[int, int]) -> bytes:
    """A LeaderIdAndEpoch tagged field (KIP-951): tag, size, leader id, epoch, no tags."""
    return uvarint(tag) + b"\x09" + _LEADER_AND_EPOCH.pack(*leader) + b"\x00"


def node_endpoints_tag(tag: int, nodes: list[NodeEndpoint]) -> bytes:
    """A NodeEndpoints tagged field (KIP-951): where the leaders named in a response listen."""
    body = [array_len(len(nodes), True)]
    for node_id, host, port, rack in nodes:
        body += [I32.pack(node_id), nullable_string(host, True), I32.pack(port),
                 nullable_string(rack, True), b"\x00"]
    data = b"".join(body)
    return uvarint(tag) + uvarint(len(data)) + data


class Reader:
    """A cursor over a request body; every read checks the bounds (ValueError)."""

    __slots__ = ("buf", "pos", "end")

    def __init__(self, buf: memoryview) -> None:
        self.buf = buf
        self.pos = 0
        self.end = len(buf)

    def _take(self, n: int) -> int:
        start = self.pos
        if n < 0 or start + n > self.end:
            raise ValueError(f"need {n} bytes at {start}, have {self.end - start}")
        self.pos = start + n
        return start

    def int16(self) -> int:
        return I16.unpack_from(self.buf, self._take(2))[0]

    def int32(self) -> int:
        return I32.unpack_from(self.buf, self._take(4))[0]

    def uuid(self) -> UUID:
        start = self._take(16)
        return UUID(bytes=bytes(self.buf[start:start + 16]))

    def uvarint(self) -> int:
        value = shift = 0
        while True:
            byte = self.buf[self._take(1)]
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7
            if shift > 35:
                raise ValueError("varint too long")

    def length(self, flexible: bool, wide: bool) -> int:
        """A length prefix: -1 for null. `wide` is int32 (bytes, arrays), else int16."""
        if flexible:
            return self.uvarint() - 1
        return self.int32() if wide else self.int16()

    def string(self, flexible: bool) -> str | None:
        n = self.length(flexible, False)
        if n < 0:
            return None
        start = self._take(n)
        # Interned: names (topics, groups) come again in every request, and the log, the
        # journal and the producer state keep them; one copy each, not one a request.
        return sys.intern(bytes(self.buf[start:start + n]).decode())

    def bytes(self, flexible: bool) -> bytes | None:
        n = self.length(flexible, True)
        if n < 0:
            return None
        start = self._take(n)
        return bytes(self.buf[start:start + n])

    def skip_tags(self) -> None:
        for _ in range(self.uvarint()):
            self.uvarint()
            self._take(self.uvarint())
