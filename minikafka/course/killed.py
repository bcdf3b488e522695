"""A consumer loop killed for real: the loop runs in a child process that is sent SIGKILL at
the planted point, while the consumer, the charges and the record of the kill stay in the
parent, where the loop's code never runs.

The child gets stand-ins: a consumer whose calls are made by the parent on the real one, a
`process` that asks the parent to charge a record the parent handed out, and `stop`. What
the child sends is plain data (autograde's codec and two Kafka structs), never a pickle, so
nothing it sends runs code in the parent; what the parent sends back is pickled. A loop that
raises, returns or exits on its own is not a kill: only the parent decides that one happened.

Crash points (as in assignment 3): poll (just after a poll returned records), process-before,
process-after (around a charge), commit-before (inside commit, before the broker sees it),
commit-after (just after a commit succeeded).
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import signal
import socket
import struct
import sys
import time
from collections.abc import Callable
from typing import Any

from kafka.structs import OffsetAndMetadata, TopicPartition

from minikafka.course.autograde import NotPlain, decode, encode

MAX_MESSAGE = 1 << 20  # one request from the loop; more and the loop is stopped
MAX_PRINTED = 64 * 1024
MAX_EVIDENCE = 200
_HEADER = struct.Struct("!I")

# Set by the grading sandbox's harness: where the child's audit events go (in the parent).
evidence_sink: Callable[[dict], None] | None = None
_to_parent: socket.socket | None = None  # in the child: its end of the socket


class LoopError(RuntimeError):
    """The loop raised, or its process ended, without the graders killing it."""


class _Kill(Exception):
    pass


def _send(sock: socket.socket, data: bytes) -> None:
    sock.sendall(_HEADER.pack(len(data)) + data)


def _recv(sock: socket.socket, limit: int | None = None,
          deadline: float | None = None) -> bytes | None:
    """One frame; None when the other end closed. Past `deadline` (time.monotonic) it
    raises TimeoutError, however slowly the other end drips its bytes."""
    head = _exactly(sock, _HEADER.size, deadline)
    if head is None:
        return None
    (size,) = _HEADER.unpack(head)
    if limit is not None and size > limit:
        raise LoopError(f"the loop sent a request of {size} bytes (limit {limit})")
    return _exactly(sock, size, deadline)


def _exactly(sock: socket.socket, size: int, deadline: float | None = None) -> bytes | None:
    data = bytearray()
    while len(data) < size:
        if deadline is not None:
            sock.settimeout(max(deadline - time.monotonic(), 0.001))
        chunk = sock.recv(min(size - len(data), 1 << 16))
        if not chunk:
            return None
        data += chunk
    return bytes(data)


# -- plain data across the socket: dicts as pairs, Kafka's two structs a loop passes, tagged ------

def _plain(value: Any) -> Any:
    if type(value) is TopicPartition:
        return {"__tp": [value.topic, value.partition]}
    if type(value) is OffsetAndMetadata:
        return {"__om": [value.offset, value.metadata, value.leader_epoch]}
    if type(value) in (list, tuple):
        return type(value)(_plain(v) for v in value)
    if type(value) is dict:
        return {"__items": [[_plain(k), _plain(v)] for k, v in value.items()]}
    return value


def _unplain(value: Any) -> Any:
    if type(value) in (list, tuple):
        return type(value)(_unplain(v) for v in value)
    if type(value) is not dict or len(value) != 1:
        return value
    (tag, data), = value.items()
    if tag == "__tp":
        topic, partition = data
        return TopicPartition(str(topic), int(partition))
    if tag == "__om":
        offset, metadata, epoch = data
        return OffsetAndMetadata(int(offset), metadata, epoch)
    if tag == "__items":
        return {_unplain(k): _unplain(v) for k, v in data}
    return value


# -- the child's stand-ins -----------------------------------------------------------------------

def _ask(*request: Any) -> Any:
    try:
        data = json.dumps(encode(_plain(list(request)))).encode()
    except NotPlain as exc:
        raise TypeError(f"only plain data can be passed to the consumer here: {exc}") from None
    _send(_to_parent, data)
    reply = _recv(_to_parent)
    if reply is None:
        os._exit(0)  # the parent is gone (the graders killed this loop)
    ok, value = pickle.loads(reply)
    if not ok:
        raise value
    return value


class RemoteConsumer:
    """The consumer as the loop in the child sees it: each call is made by the parent."""

    def poll(self, *args: Any, **kwargs: Any) -> dict:
        return _ask("poll", args, kwargs)

    def commit(self, *args: Any, **kwargs: Any) -> None:
        return _ask("commit", args, kwargs)

    def commit_async(self, *args: Any, **kwargs: Any) -> Any:
        return _ask("commit_async", args, kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: _ask("call", name, args, kwargs)


def _process(record: Any) -> None:
    _ask("process", [record.topic, record.partition, record.offset])


def _stop() -> bool:
    return _ask("stop")


class _Printed:
    """The child's print()s, sent to the parent's stdout."""

    def write(self, text: str) -> int:
        if text:
            _send(_to_parent, json.dumps(["print", str(text)[:MAX_PRINTED]]).encode())
        return len(text)

    def flush(self) -> None:
        pass


def to_parent(kind: str, item: dict) -> None:
    """In the child: send one audit event to the parent (see evidence_sink)."""
    if _to_parent is not None:
        _send(_to_parent, json.dumps([kind, item]).encode())


def _child(sock: socket.socket, loop: Callable) -> None:
    global _to_parent
    _to_parent = sock
    sys.stdout = sys.stderr = _Printed()
    try:
        loop(RemoteConsumer(), _process, _stop)
        message = ["done"]
    except BaseException as exc:  # any exception is the loop's own
        message = ["error", type(exc).__name__, str(exc)[:2000]]
    try:
        _send(sock, json.dumps(message).encode())
    finally:
        os._exit(0)


# -- the parent: the real consumer, the charges and the kill ------------------------------------

def _fork() -> int:
    """The harness of the grading sandbox allows this fork (and only this one) in tests."""
    return os.fork()


def run_killed(loop: Callable, consumer: Any, charge: Callable[[Any], None],
               stop: Callable[[], bool], point: str | None = None, nth: int = 1) -> bool:
    """Run loop(consumer, process, stop) in a child process, killed with SIGKILL the `nth`
    time `point` is reached. Returns True when it was killed there, False when the loop
    returned; raises LoopError when the loop raised or its process ended by itself."""
    parent, child = socket.socketpair()
    pid = _fork()
    if pid == 0:
        parent.close()
        _child(child, loop)
    child.close()
    left = [nth]

    def reached(here: str) -> None:
        if here == point:
            left[0] -= 1
            if left[0] == 0:
                raise _Kill

    handed: dict[tuple, Any] = {}
    printed = evidence = 0
    try:
        while True:
            data = _recv(parent, MAX_MESSAGE)
            if data is None:
                raise LoopError("the loop's process ended without returning")
            try:
                request = json.loads(data)
                kind = request[0]
            except (ValueError, IndexError, KeyError, TypeError):
                raise LoopError("the loop's process sent something unreadable") from None
            if kind == "done":
                return False
            if kind == "error":
                raise LoopError(f"your loop raised {request[1]}: {request[2]}")
            if kind == "print":
                if printed < MAX_PRINTED:
                    printed += len(str(request[1]))
                    print(str(request[1]), end="")
                continue
            if kind == "evidence":
                if evidence_sink is not None and evidence < MAX_EVIDENCE and \
                        isinstance(request[1], dict):
                    evidence += 1
                    evidence_sink({**request[1], "detail": "in the loop's process: "
                                   + str(request[1].get("detail", ""))[:300]})
                continue
            try:
                args = _unplain(decode(request))[1:]
                ok, value = True, _serve(kind, args, consumer, charge, stop, handed, reached)
            except _Kill:
                raise
            except Exception as exc:  # the consumer's error, for the loop
                ok, value = False, exc
            try:
                reply = pickle.dumps((ok, value))
            except Exception:  # an exception that does not pickle
                reply = pickle.dumps((False, RuntimeError(f"{type(value).__name__}: {value}")))
            _send(parent, reply)
    except _Kill:
        return True
    finally:
        parent.close()
        _end(pid)


def _serve(kind: str, args: list, consumer: Any, charge: Callable, stop: Callable,
           handed: dict, reached: Callable[[str], None]) -> Any:
    if kind == "stop":
        return bool(stop())
    if kind == "process":
        key = tuple(args[0])
        if key not in handed:
            raise RuntimeError(f"order at {key[0]}-{key[1]}@{key[2]} was not polled from the "
                               "consumer your loop was given")
        reached("process-before")
        charge(handed[key])
        reached("process-after")
        return None
    if kind == "poll":
        batch = consumer.poll(*args[0], **args[1])
        if batch:
            handed.update(((r.topic, r.partition, r.offset), r)
                          for records in batch.values() for r in records)
            reached("poll")
        return batch
    if kind in ("commit", "commit_async"):
        reached("commit-before")
        result = getattr(consumer, kind)(*args[0], **args[1])
        reached("commit-after")
        return result if kind == "commit_async" else None
    if kind == "call":
        name, call_args, call_kwargs = args
        if not isinstance(name, str) or name.startswith("_"):
            raise AttributeError(name)
        return getattr(consumer, name)(*call_args, **call_kwargs)
    raise ValueError(f"unknown request {kind!r}")


def _end(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
