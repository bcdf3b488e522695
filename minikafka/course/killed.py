"""A loop killed for real: the loop runs in a child process that is sent SIGKILL at the
planted point, while the clients, the charges and the record of the kill stay in the parent,
where the loop's code never runs.

The child gets stand-ins (`Remote`): objects whose calls the parent makes on the real ones.
What the child sends is plain data (autograde's codec and Kafka's small structs), never a
pickle, so nothing it sends runs code in the parent; what the parent sends back is pickled.
A loop that raises, returns or exits on its own is not a kill: only the parent decides that
one happened, and nothing the child holds (a stand-in's attributes, its class) says where.
Forked from the parent, the child would still hold the parent's memory: the grader's call
that planted the point (its stack, its arguments). So where grading runs the parent forks a
spawner first (`start_spawner`), before any call's arguments exist, and each loop's process
is forked from that spawner, its loop found there by name.

Two kinds of loop:

* `run_killed` (assignment 3): loop(consumer, process, stop) with the graders' consumer.
  Crash points: poll (just after a poll returned records), process-before, process-after
  (around a charge), commit-before (inside commit, before the broker sees it), commit-after
  (just after a commit succeeded).
* `run_killed_clients` (assignment 4): loop(cluster, stop), where the loop makes its own
  consumers and producers with `cluster.consumer(...)` and `cluster.producer(...)` (plain
  settings); the parent makes them on the real cluster. Crash points, on any producer: send
  (just after a send), offsets (just after send_offsets_to_transaction), commit-before and
  commit-after (around commit_transaction).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import pickle
import select
import signal
import socket
import struct
import sys
import time
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition

from minikafka.course.autograde import NotPlain, decode, encode

if TYPE_CHECKING:
    from minikafka.cluster import Cluster

MAX_MESSAGE = 1 << 20  # one request from the loop; more and the loop is stopped
MAX_PRINTED = 64 * 1024
MAX_EVIDENCE = 200
_HEADER = struct.Struct("!I")
CLUSTER = 0  # the handle of run_killed_clients' cluster stand-in
CONSUMER = 1  # the handle of run_killed's consumer stand-in

# Set by the grading sandbox's harness: where the child's audit events go (in the parent).
evidence_sink: Callable[[dict], None] | None = None
_to_parent: socket.socket | None = None  # in the child: its end of the socket
_spawner: socket.socket | None = None  # in the parent: see start_spawner


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


# -- plain data across the socket: dicts as pairs, Kafka's structs a loop passes, tagged --------

def _plain(value: Any) -> Any:
    if type(value) is TopicPartition:
        return {"__tp": [value.topic, value.partition]}
    if type(value) is OffsetAndMetadata:
        return {"__om": [value.offset, value.metadata, value.leader_epoch]}
    if type(value) is ConsumerGroupMetadata:
        return {"__gm": [_plain(v) for v in value]}
    if type(value) is Remote:
        return {"__remote": object.__getattribute__(value, "_handle")}
    if type(value) in (list, tuple):
        return type(value)(_plain(v) for v in value)
    if type(value) is dict:
        return {"__items": [[_plain(k), _plain(v)] for k, v in value.items()]}
    return value


def _unplain(value: Any, objects: dict[int, Any]) -> Any:
    if type(value) in (list, tuple):
        return type(value)(_unplain(v, objects) for v in value)
    if type(value) is not dict or len(value) != 1:
        return value
    (tag, data), = value.items()
    if tag == "__tp":
        topic, partition = data
        return TopicPartition(str(topic), int(partition))
    if tag == "__om":
        offset, metadata, epoch = data
        return OffsetAndMetadata(int(offset), metadata, epoch)
    if tag == "__gm":
        if any(v is not None and type(v) not in (str, int) for v in data):
            raise TypeError("malformed group metadata")
        return ConsumerGroupMetadata(*data[:5])
    if tag == "__remote":
        if data not in objects:  # the cluster stand-in is never an argument
            raise ValueError(f"no object {data!r} of the graders' here")
        return objects[data]
    if tag == "__items":
        return {_unplain(k, objects): _unplain(v, objects) for k, v in data}
    return value


# -- the child's stand-ins -----------------------------------------------------------------------

def _ask(*request: Any) -> Any:
    try:
        data = json.dumps(encode(_plain(list(request)))).encode()
    except NotPlain as exc:
        raise TypeError("only plain data (no functions or objects of your own) can be passed "
                        f"to the graders' clients here: {exc}") from None
    _send(_to_parent, data)
    reply = _recv(_to_parent)
    if reply is None:
        os._exit(0)  # the parent is gone (the graders killed this loop)
    ok, value = pickle.loads(reply)
    if not ok:
        raise value
    return value


def _tampered(what: str) -> None:
    """A write to a stand-in: it changes nothing in the parent, but the instructor hears of it."""
    to_parent("evidence", {"kind": "harness tampering", "detail": what})
    raise AttributeError(f"the graders' objects cannot be changed here ({what})")


class _Sealed(type):
    def __setattr__(cls, name: str, value: Any) -> None:
        _tampered(f"set {name!r} on the stand-ins' class")

    def __delattr__(cls, name: str) -> None:
        _tampered(f"deleted {name!r} from the stand-ins' class")


class Remote(metaclass=_Sealed):
    """An object of the parent's (a consumer, a producer, a send's future, the cluster) as
    the loop in the child sees it: each call is made by the parent on the real one."""

    __slots__ = ("_handle",)

    def __init__(self, handle: int) -> None:
        object.__setattr__(self, "_handle", handle)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        handle = object.__getattribute__(self, "_handle")
        return lambda *args, **kwargs: _ask("call", handle, name, args, kwargs)

    def __setattr__(self, name: str, value: Any) -> None:
        _tampered(f"set {name!r} on the graders' client")

    def __delattr__(self, name: str) -> None:
        _tampered(f"deleted {name!r} from the graders' client")

    def __reduce__(self) -> tuple:
        return Remote, (object.__getattribute__(self, "_handle"),)


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


def _child(sock: socket.socket, main: Callable[[], None]) -> None:
    global _to_parent
    _to_parent = sock
    sys.stdout = sys.stderr = _Printed()
    try:
        main()
        message = ["done"]
    except BaseException as exc:  # any exception is the loop's own
        message = ["error", type(exc).__name__, str(exc)[:2000]]
    try:
        _send(sock, json.dumps(message).encode())
    finally:
        os._exit(0)


# -- the parent: the real objects, the planted point and the kill --------------------------------

def _fork() -> int:
    """The harness of the grading sandbox allows this fork (and only this one) in tests."""
    return os.fork()


# The loop's call in its process, with stand-ins for the graders' objects.
_STAND_INS = {"consumer": lambda loop: loop(Remote(CONSUMER), _process, _stop),
              "clients": lambda loop: loop(Remote(CLUSTER), _stop)}


def start_spawner(namespace: dict) -> int:
    """Fork now the process that every later loop's process is forked from; its pid.

    Call it before any test's inputs exist in this process (the grading harness does, once
    the answers' definitions ran and before the first call): a loop's process then starts
    from memory that never held a crash point, its count or a call's arguments, and the
    loop is the function of that name in `namespace` as it was at this fork."""
    global _spawner
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = _fork()
    if pid == 0:
        ours.close()
        _spawn_loops(theirs, namespace)
    theirs.close()
    _spawner = ours
    return pid


def stop_spawner() -> None:
    """Close the spawner's socket: it exits (a test's; the harness's ends with its worker)."""
    global _spawner
    if _spawner is not None:
        _spawner.close()
        _spawner = None


def _spawn_loops(sock: socket.socket, namespace: dict) -> None:
    """The spawner: for each request (a loop's name, its stand-ins and the socket to its
    parent), fork a process that runs that loop; reply with the process's pidfd."""
    import ctypes
    with contextlib.suppress(OSError, AttributeError):  # PR_SET_PDEATHSIG: gone with its parent
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the loops' processes
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(sock, 4096, 1)
        except OSError:
            os._exit(0)
        if not data:
            os._exit(0)  # the parent is gone
        try:
            name, kind = json.loads(data)
        except (ValueError, TypeError):
            name = kind = None
        loop = namespace.get(name) if isinstance(name, str) else None
        if len(fds) != 1 or not isinstance(loop, types.FunctionType) or kind not in _STAND_INS:
            for fd in fds:
                os.close(fd)
            sock.send(json.dumps(["error", f"no function {name!r} at the top level of the "
                                           "notebook to run in a process of its own"]).encode())
            continue
        pid = _fork()
        if pid == 0:
            sock.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            _child(socket.socket(fileno=fds[0]), functools.partial(_STAND_INS[kind], loop))
        os.close(fds[0])
        try:
            pidfd = [os.pidfd_open(pid)]
        except (OSError, AttributeError):  # no pidfds here: the parent kills by pid
            pidfd = []
        socket.send_fds(sock, [json.dumps(["ok", pid]).encode()], pidfd)
        for fd in pidfd:
            os.close(fd)


def _spawned(loop: Callable, kind: str, child: socket.socket) -> tuple[int, int | None]:
    """A process running `loop` forked from the spawner, its end of the socket `child`:
    the process's pid and pidfd (None where there are no pidfds)."""
    name = getattr(loop, "__qualname__", None)
    try:
        socket.send_fds(_spawner, [json.dumps([name, kind]).encode()], [child.fileno()])
        data, fds, _, _ = socket.recv_fds(_spawner, 4096, 1)
    except OSError:
        data, fds = b"", []
    try:
        status, detail = json.loads(data) if data else ["error", "the spawner is gone"]
    except (ValueError, TypeError):
        status, detail = "error", "the spawner sent something unreadable"
    if status != "ok" or type(detail) is not int:
        for fd in fds:
            os.close(fd)
        raise LoopError(f"the graders could not start your loop: {detail}")
    return detail, fds[0] if fds else None


@dataclass
class _Served:
    """The parent's side of one killed loop: its objects by handle and the planted point."""
    point: str | None
    left: int
    objects: dict[int, Any] = field(default_factory=dict)
    handed: dict[tuple, Any] = field(default_factory=dict)  # records polled, by position

    def reached(self, here: str) -> None:
        if here == self.point:
            self.left -= 1
            if self.left == 0:
                raise _Kill

    def keep(self, obj: Any) -> Remote:
        handle = len(self.objects) + 1
        self.objects[handle] = obj
        return Remote(handle)


def _run(loop: Callable, kind: str, served: _Served,
         serve: Callable[[str, list], Any]) -> bool:
    """Start a process running `loop` with the stand-ins of `kind` (forked from the spawner
    when there is one, else from this process); answer its requests with serve(kind, args)
    until serve reaches the planted point (True: the child is killed) or the loop returns."""
    parent, child = socket.socketpair()
    if _spawner is None:
        pid, pidfd = _fork(), None
        if pid == 0:
            parent.close()
            _child(child, functools.partial(_STAND_INS[kind], loop))
    else:
        try:
            pid, pidfd = _spawned(loop, kind, child)
        except LoopError:
            parent.close()
            child.close()
            raise
    child.close()
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
                args = _unplain(decode(request), served.objects)[1:]
                ok, value = True, serve(kind, args)
            except _Kill:
                raise
            except Exception as exc:  # the client's error, for the loop
                ok, value = False, exc
            try:
                reply = pickle.dumps((ok, value))
            except Exception:  # an exception or value that does not pickle
                reply = pickle.dumps((False, RuntimeError(f"{type(value).__name__}: {value}")))
            _send(parent, reply)
    except _Kill:
        return True
    finally:
        parent.close()
        _end(pid, pidfd)


def _method(served: _Served, args: list) -> tuple[Any, str, list, dict]:
    handle, name, call_args, call_kwargs = args
    if not isinstance(name, str) or name.startswith("_") or handle not in served.objects:
        raise AttributeError(name)
    return served.objects[handle], name, call_args, call_kwargs


# -- assignment 3: the graders' consumer, process and stop ---------------------------------------

def run_killed(loop: Callable, consumer: Any, charge: Callable[[Any], None],
               stop: Callable[[], bool], point: str | None = None, nth: int = 1) -> bool:
    """Run loop(consumer, process, stop) in a child process, killed with SIGKILL the `nth`
    time `point` is reached. Returns True when it was killed there, False when the loop
    returned; raises LoopError when the loop raised or its process ended by itself."""
    served = _Served(point, nth)
    served.keep(consumer)  # handle CONSUMER

    def serve(kind: str, args: list) -> Any:
        if kind == "stop":
            return bool(stop())
        if kind == "process":
            key = tuple(args[0])
            if key not in served.handed:
                raise RuntimeError(f"order at {key[0]}-{key[1]}@{key[2]} was not polled from "
                                   "the consumer your loop was given")
            served.reached("process-before")
            charge(served.handed[key])
            served.reached("process-after")
            return None
        if kind != "call":
            raise ValueError(f"unknown request {kind!r}")
        obj, name, call_args, call_kwargs = _method(served, args)
        if name == "poll":
            batch = obj.poll(*call_args, **call_kwargs)
            if batch:
                served.handed.update(((r.topic, r.partition, r.offset), r)
                                     for records in batch.values() for r in records)
                served.reached("poll")
            return batch
        if name in ("commit", "commit_async"):
            served.reached("commit-before")
            result = getattr(obj, name)(*call_args, **call_kwargs)
            served.reached("commit-after")
            return _kept(served, result)
        return _kept(served, getattr(obj, name)(*call_args, **call_kwargs))

    return _run(loop, "consumer", served, serve)


# -- assignment 4: the loop's own clients, made on the graders' cluster --------------------------

@dataclass
class Clients:
    """The clients a killed loop made through its cluster stand-in: real ones, on `cluster`,
    in the parent (to crash or close after the run). Each poll returns at most
    `max_poll_records` records when it is set."""
    cluster: Cluster
    max_poll_records: int | None = None
    consumers: list = field(default_factory=list)
    producers: list = field(default_factory=list)


_AROUND = {"send": (None, "send"), "send_offsets_to_transaction": (None, "offsets"),
           "commit_transaction": ("commit-before", "commit-after")}


def run_killed_clients(loop: Callable, clients: Clients, stop: Callable[[], bool],
                       point: str | None = None, nth: int = 1) -> bool:
    """Run loop(cluster, stop) in a child process, killed with SIGKILL the `nth` time any
    producer it made reaches `point`. Returns True when it was killed there, False when the
    loop returned; raises LoopError when the loop raised or its process ended by itself."""
    from minikafka.client.consumer import KafkaConsumer
    from minikafka.client.producer import KafkaProducer
    served = _Served(point, nth)

    def serve(kind: str, args: list) -> Any:
        if kind == "stop":
            return bool(stop())
        if kind != "call":
            raise ValueError(f"unknown request {kind!r}")
        if args and args[0] == CLUSTER:
            _, name, call_args, call_kwargs = args
            if name == "consumer":
                clients.consumers.append(clients.cluster.consumer(*call_args, **call_kwargs))
                return served.keep(clients.consumers[-1])
            if name == "producer":
                clients.producers.append(clients.cluster.producer(*call_args, **call_kwargs))
                return served.keep(clients.producers[-1])
            raise AttributeError(f"the graders' cluster only makes clients here: "
                                 f"cluster.consumer(...) and cluster.producer(...), not {name}")
        obj, name, call_args, call_kwargs = _method(served, args)
        if isinstance(obj, KafkaConsumer) and name == "poll" and clients.max_poll_records:
            return _small_poll(obj, clients.max_poll_records, *call_args, **call_kwargs)
        before, after = _AROUND.get(name, (None, None)) if isinstance(obj, KafkaProducer) \
            else (None, None)
        if before:
            served.reached(before)
        result = _kept(served, getattr(obj, name)(*call_args, **call_kwargs))
        if after:
            served.reached(after)
        return result

    return _run(loop, "clients", served, serve)


def _small_poll(consumer: Any, cap: int, timeout_ms: int = 0, max_records: int | None = None,
                **kwargs: Any) -> dict:
    return consumer.poll(timeout_ms=timeout_ms, max_records=min(max_records or cap, cap), **kwargs)


def _kept(served: _Served, value: Any) -> Any:
    """A client, a future or the like stays in the parent: the child gets a stand-in."""
    from minikafka.client.consumer import KafkaConsumer
    from minikafka.client.future import Future
    from minikafka.client.producer import FutureRecordMetadata, KafkaProducer
    if isinstance(value, (KafkaConsumer, KafkaProducer, FutureRecordMetadata, Future)):
        return served.keep(value)
    return value


def _end(pid: int, pidfd: int | None = None) -> None:
    """SIGKILL the loop's process and wait for its end: by its pidfd when the spawner forked
    it (the spawner reaps it), else as this process's own child."""
    if pidfd is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        return
    try:
        with contextlib.suppress(ProcessLookupError):
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        select.select([pidfd], [], [], 10)  # readable once the process has died
    finally:
        os.close(pidfd)
