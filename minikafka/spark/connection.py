"""A blocking request/response connection to one broker, for fetches only.

kafka-python's network client reads in 4 KiB pieces and copies a response three times
on its way to a Python object; for a 16 MiB fetch of records that is most of the time a
Spark task spends outside decoding. Here the response is read straight into one buffer
with `recv_into`, and kafka-python's own generated FetchResponse decodes it. Requests
are kafka-python's generated classes too, at the version its client negotiated with the
broker (ApiVersions). PLAINTEXT only: with TLS or SASL the fetcher uses kafka-python's
client for everything.
"""
from __future__ import annotations

import socket
import struct
from typing import Any

__all__ = ["BrokerConnection"]

_SIZE = struct.Struct(">i")
_CHUNK = 1 << 20


class BrokerConnection:
    def __init__(self, host: str, port: int, *, client_id: str, timeout_s: float) -> None:
        self.address = (host, port)
        self.client_id = client_id
        self.timeout_s = timeout_s
        self._sock: socket.socket | None = None
        self._correlation_id = 0

    def request(self, request: Any, version: int, response_class: Any) -> Any:
        """Send `request` at `version` and return the decoded response. A connection error
        closes the socket (the next request reconnects) and raises OSError."""
        self._correlation_id = (self._correlation_id + 1) & 0x7FFFFFFF
        request.with_header(correlation_id=self._correlation_id, client_id=self.client_id)
        frame = request.encode(version=version, header=True, framed=True)
        try:
            sock = self._connect()
            sock.sendall(frame)
            payload = self._read(_SIZE.unpack(self._read(4))[0])
        except OSError:
            self.close()
            raise
        response = response_class.decode(memoryview(payload), version=version, header=True)
        if response.header.correlation_id != self._correlation_id:
            self.close()
            raise OSError(f"broker {self.address} answered correlation id "
                          f"{response.header.correlation_id}, expected {self._correlation_id}")
        return response

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def _connect(self) -> socket.socket:
        if self._sock is None:
            sock = socket.create_connection(self.address, timeout=self.timeout_s)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._sock = sock
        return self._sock

    def _read(self, size: int) -> bytearray:
        buf = bytearray(size)
        view = memoryview(buf)
        got = 0
        sock = self._sock
        assert sock is not None
        while got < size:
            n = sock.recv_into(view[got:], min(size - got, _CHUNK))
            if n == 0:
                raise ConnectionResetError(f"broker {self.address} closed the connection")
            got += n
        return buf

